/* atomic_add: device atomics on a range, to check that a kind of memory supports them (AMD
 * fine-grained host memory over PCIe may not) and that the count comes out exact. */
#include <cstdint>

#include "kernel_compat.h"
#include "kernel_launch.h"
#include "launch_geometry.h"

namespace {

/* Operation k adds to counter k % count: neighbouring threads hit neighbouring counters, so
 * every counter sees `iterations` adds and contention is spread across all of them. */
__global__ void add_ones(unsigned long long *counters, size_t count, size_t operations)
{
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t k = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < operations; k += stride)
        atomicAdd(&counters[k % count], 1ull);
}

} // namespace

extern "C" int tidal_kernel_atomic_add(uint64_t *counters, size_t count, uint32_t iterations, void *stream)
{
    if (count == 0 || iterations == 0)
        return hipSuccess;
    if (count > SIZE_MAX / iterations)
        return static_cast<int>(hipErrorInvalidValue);
    const size_t operations = count * iterations;
    static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "atomicAdd works on 64-bit words");
    add_ones<<<tidal::kernels::grid_blocks(operations), tidal::kernels::kBlockThreads, 0,
               static_cast<hipStream_t>(stream)>>>(reinterpret_cast<unsigned long long *>(counters), count,
                                                   operations);
    return static_cast<int>(hipGetLastError());
}
