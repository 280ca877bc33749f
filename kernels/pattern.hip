/* pattern_fill / pattern_check: the address-derived pattern of pattern.h, written and verified
 * on the device so a test can tell whether data survived a migration, an eviction or a copy. */
#include <cstdint>

#include "kernel_compat.h"
#include "kernel_launch.h"
#include "launch_geometry.h"
#include "pattern.h"

namespace {

__global__ void fill_words(uint64_t *words, size_t count, uint64_t seed)
{
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        words[i] = tidal_pattern_word(seed, i);
}

/* Words each thread checks: a block covers a contiguous tile of kCheckWordsPerThread x 256
 * words, coalesced, and pays for its reduction once per tile rather than once per word. */
constexpr unsigned kCheckWordsPerThread = 8;

/* Mismatches are summed per block by a tree in shared memory, so a range that is wrong
 * everywhere costs one global atomic per block rather than one per word, and a clean range
 * (the common case) costs none. Needs blockDim.x == kBlockThreads (a power of two). */
__global__ void check_words(const uint64_t *words, size_t count, uint64_t seed,
                            unsigned long long *mismatches)
{
    __shared__ unsigned long long partial[tidal::kernels::kBlockThreads];
    const size_t tile = static_cast<size_t>(kCheckWordsPerThread) * blockDim.x;
    unsigned long long local = 0;
    for (size_t base = static_cast<size_t>(blockIdx.x) * tile; base < count;
         base += static_cast<size_t>(gridDim.x) * tile) {
#pragma unroll
        for (unsigned u = 0; u < kCheckWordsPerThread; ++u) {
            const size_t i = base + static_cast<size_t>(u) * blockDim.x + threadIdx.x;
            if (i < count)
                local += words[i] != tidal_pattern_word(seed, i) ? 1u : 0u;
        }
    }
    partial[threadIdx.x] = local;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0 && partial[0] != 0)
        atomicAdd(mismatches, partial[0]);
}

} // namespace

extern "C" int tidal_kernel_pattern_fill(void *ptr, size_t size, uint64_t seed, void *stream)
{
    const size_t count = size / sizeof(uint64_t);
    if (count == 0)
        return hipSuccess;
    fill_words<<<tidal::kernels::grid_blocks(count), tidal::kernels::kBlockThreads, 0,
                 static_cast<hipStream_t>(stream)>>>(static_cast<uint64_t *>(ptr), count, seed);
    return static_cast<int>(hipGetLastError());
}

extern "C" int tidal_kernel_pattern_check(const void *ptr, size_t size, uint64_t seed,
                                          uint64_t *mismatches, void *stream)
{
    const size_t count = size / sizeof(uint64_t);
    if (count == 0) {
        *mismatches = 0;
        return hipSuccess;
    }
    const hipStream_t s = static_cast<hipStream_t>(stream);
    /* A counter of its own per call, so concurrent checks on different streams never share
     * one. Its free is synchronous, which this call is anyway. */
    unsigned long long *counter = nullptr;
    hipError_t status = hipMalloc(reinterpret_cast<void **>(&counter), sizeof *counter);
    if (status != hipSuccess)
        return static_cast<int>(status);
    unsigned long long found = 0;
    status = hipMemsetAsync(counter, 0, sizeof *counter, s);
    if (status == hipSuccess) {
        check_words<<<tidal::kernels::grid_blocks((count + kCheckWordsPerThread - 1) / kCheckWordsPerThread),
                      tidal::kernels::kBlockThreads, 0, s>>>(
            static_cast<const uint64_t *>(ptr), count, seed, counter);
        status = hipGetLastError();
    }
    if (status == hipSuccess)
        status = hipMemcpyAsync(&found, counter, sizeof found, hipMemcpyDeviceToHost, s);
    if (status == hipSuccess)
        status = hipStreamSynchronize(s);
    const hipError_t freed = hipFree(counter);
    if (status == hipSuccess)
        status = freed;
    if (status == hipSuccess)
        *mismatches = found;
    return static_cast<int>(status);
}
