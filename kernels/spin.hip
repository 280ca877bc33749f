/* spin: a kernel of known length that touches no memory. Benchmarks pair it with migrations to
 * check that tidal overlaps transfers with compute: the compute side must last a set time
 * whatever the GPU's clock speed, so it waits on a wall clock, not on a cycle count. */
#include <cstdint>

#include "kernel_compat.h"
#include "kernel_launch.h"

namespace {

/* Nanoseconds since an arbitrary origin, from a clock that runs at a fixed rate. */
__device__ inline uint64_t wall_ns()
{
#if defined(__CUDACC__)
    uint64_t ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
#else
    /* s_memrealtime counts at a constant 100 MHz on gfx9 and gfx10 parts. */
    return __builtin_amdgcn_s_memrealtime() * 10u;
#endif
}

/* One thread per block spins: the kernel occupies the device for `ns` without competing for
 * the memory bandwidth a concurrent migration needs. */
__global__ void spin_for(uint64_t ns)
{
    const uint64_t start = wall_ns();
    while (wall_ns() - start < ns) {
    }
}

} // namespace

extern "C" int tidal_kernel_spin(uint64_t ns, void *stream)
{
    spin_for<<<1, 1, 0, static_cast<hipStream_t>(stream)>>>(ns);
    return static_cast<int>(hipGetLastError());
}
