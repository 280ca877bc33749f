/* atomic_add: device atomics on a range, to check that a kind of memory supports them (AMD
 * fine-grained host memory over PCIe may not) and that the count comes out exact; atomic_set:
 * the whole set of integer and float atomics an application relies on (atomic_set.h). */
#include <cstdint>

#include "atomic_set.h"
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

/* ---- The atomic set (TIDAL_CHECK_ATOMIC_SET): every operation at system scope, because host
 * threads may hammer the same words while the kernel runs. Contributions: atomic_set.h. */
namespace {

namespace as = tidal::atomic_set;

template <typename T> __device__ T *word(unsigned char *words, uint32_t op)
{
    return reinterpret_cast<T *>(words + op * as::kSlotBytes);
}

__device__ unsigned long long *exchanged_sum(unsigned char *words, uint32_t op)
{
    return reinterpret_cast<unsigned long long *>(words + op * as::kSlotBytes + 8);
}

/* Increment through compare-and-swap: each failed attempt retries with the value it saw. */
template <typename T> __device__ void cas_increment(T *p, T guess)
{
    for (T seen = atomicCAS_system(p, guess, guess + 1); seen != guess; seen = atomicCAS_system(p, guess, guess + 1))
        guess = seen;
}

__global__ void atomic_set(unsigned char *words, uint32_t ops, uint32_t rounds)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= as::kDeviceThreads)
        return;
    using u32 = unsigned int;
    using u64 = unsigned long long;
    const u32 b32 = 1u << as::bit_of(t, 32);
    const u64 b64 = 1ull << as::bit_of(t, 64);
    auto on = [ops](uint32_t op) { return (ops >> op) & 1u; };
    for (uint32_t r = 0; r < rounds; ++r) {
        const u64 v = as::offer(t, r);
        if (on(as::and32)) atomicAnd_system(word<u32>(words, as::and32), ~b32);
        if (on(as::or32)) atomicOr_system(word<u32>(words, as::or32), b32);
        if (on(as::xor32)) atomicXor_system(word<u32>(words, as::xor32), b32);
        if (on(as::add32)) atomicAdd_system(word<u32>(words, as::add32), 1u);
        if (on(as::sub32)) atomicSub_system(word<u32>(words, as::sub32), 1u);
        if (on(as::min32)) atomicMin_system(word<u32>(words, as::min32), static_cast<u32>(v));
        if (on(as::max32)) atomicMax_system(word<u32>(words, as::max32), static_cast<u32>(v));
        if (on(as::exch32))
            atomicAdd_system(exchanged_sum(words, as::exch32),
                             static_cast<u64>(atomicExch_system(word<u32>(words, as::exch32), static_cast<u32>(v))));
        if (on(as::cas32)) cas_increment(word<u32>(words, as::cas32), 0u);
        if (on(as::and64)) atomicAnd_system(word<u64>(words, as::and64), ~b64);
        if (on(as::or64)) atomicOr_system(word<u64>(words, as::or64), b64);
        if (on(as::xor64)) atomicXor_system(word<u64>(words, as::xor64), b64);
        if (on(as::add64)) atomicAdd_system(word<u64>(words, as::add64), 1ull);
        /* CUDA has no 64-bit atomicSub: adding the two's complement is the same operation. */
        if (on(as::sub64)) atomicAdd_system(word<u64>(words, as::sub64), ~0ull);
        if (on(as::min64)) atomicMin_system(word<u64>(words, as::min64), v << 32 | v);
        if (on(as::max64)) atomicMax_system(word<u64>(words, as::max64), v << 32 | v);
        if (on(as::exch64))
            atomicAdd_system(exchanged_sum(words, as::exch64), atomicExch_system(word<u64>(words, as::exch64), v << 32 | v));
        if (on(as::cas64)) cas_increment(word<u64>(words, as::cas64), 0ull);
        if (on(as::fadd32)) {
#if defined(__HIPCC__) || defined(__HIP__)
            /* The hardware float add where the GPU has one (gfx90a: what -munsafe-fp-atomics
             * builds, PyTorch among them): the path that does nothing on fine-grained memory
             * on MI200. Elsewhere it is a CAS loop. */
            unsafeAtomicAdd(word<float>(words, as::fadd32), 1.0f);
#else
            atomicAdd_system(word<float>(words, as::fadd32), 1.0f);
#endif
        }
    }
}

} // namespace

extern "C" int tidal_kernel_atomic_set(void *words, uint32_t ops, uint32_t rounds, void *stream)
{
    if (rounds == 0 || (ops & ~as::kAllOps) != 0)
        return static_cast<int>(hipErrorInvalidValue);
    atomic_set<<<as::kDeviceBlocks, as::kBlockThreads, 0, static_cast<hipStream_t>(stream)>>>(
        static_cast<unsigned char *>(words), ops, rounds);
    return static_cast<int>(hipGetLastError());
}
