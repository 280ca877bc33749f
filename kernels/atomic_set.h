/* The atomic set (TIDAL_CHECK_ATOMIC_SET): the one statement of which operations it runs, where
 * each lives in the checked words and what every participant contributes, for the GPU kernel
 * (kernels/atomics.hip), the simulated device's kernel and the core's host threads and check
 * (core/validation). Every contribution is a function of (participant, round) alone, so the
 * final value of each word is known exactly whatever order the device and the host interleave.
 *
 * Participants: device threads are 0 .. kDeviceThreads-1, host threads follow them. Each
 * operation owns one 16-byte slot: its word at offset 0 (4 or 8 bytes) and, for exchange, the
 * 64-bit sum of every value the exchanges returned at offset 8 (the values written and the
 * first value are exactly those returned plus the last one left in the word). */
#ifndef TIDAL_KERNELS_ATOMIC_SET_H
#define TIDAL_KERNELS_ATOMIC_SET_H

#include <stdint.h>
#if !defined(__HIPCC__) && !defined(__CUDACC__) && !defined(__HIP__)
#  include <atomic> /* std::atomic_ref: C++20, the core's and the simulated device's side */
#endif

#if defined(__HIPCC__) || defined(__CUDACC__)
#  define TIDAL_ATOMIC_SET_FN __host__ __device__ inline
#else
#  define TIDAL_ATOMIC_SET_FN inline
#endif

namespace tidal::atomic_set {

/* In the order of the public TIDAL_ATOMIC_* bits (bit i = operation i; the core checks it). */
enum Op : uint32_t {
    and32, or32, xor32, add32, sub32, min32, max32, exch32, cas32,
    and64, or64, xor64, add64, sub64, min64, max64, exch64, cas64,
    fadd32,
    op_count
};
constexpr uint32_t kAllOps = (1u << op_count) - 1u;
constexpr uint32_t kSlotBytes = 16;
constexpr uint32_t kBytes = op_count * kSlotBytes; /* the least a checked range holds */
/* Four blocks of 64: several compute units / SMs take part, and every CAS loop stays short
 * enough (each success costs its contenders a retry) to finish in well under a second over
 * PCIe. */
constexpr uint32_t kDeviceBlocks = 4;
constexpr uint32_t kBlockThreads = 64;
constexpr uint32_t kDeviceThreads = kDeviceBlocks * kBlockThreads;
/* Float adds of 1.0f stay exact up to 2^24; more operations than this are refused. */
constexpr uint64_t kMaxFloatAdds = uint64_t{1} << 24;

TIDAL_ATOMIC_SET_FN constexpr bool wide(uint32_t op) { return op >= and64 && op <= cas64; }

/* AND clears, OR sets and XOR toggles one bit per participant: device threads the low half of
 * the word, host threads the high half, so the result shows that both sides took part. */
TIDAL_ATOMIC_SET_FN constexpr uint32_t bit_of(uint32_t participant, uint32_t width)
{
    const uint32_t half = width / 2;
    return participant < kDeviceThreads ? participant % half : half + (participant - kDeviceThreads) % half;
}

/* The value MIN, MAX and EXCH offer in a round: a scrambled, never-zero number below 2^31
 * (so 32-bit words hold it and sums of 64-bit ones do not wrap in practice). */
TIDAL_ATOMIC_SET_FN constexpr uint64_t offer(uint32_t participant, uint32_t round)
{
    uint32_t x = participant * 0x9E3779B1u ^ (round + 1u) * 0x85EBCA77u;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return (x & 0x7FFFFFFFu) | 1u;
}

/* What each word holds before the run (MIN starts high, AND with every bit set). */
TIDAL_ATOMIC_SET_FN constexpr uint64_t initial(uint32_t op)
{
    switch (op) {
    case and32: case min32: return 0xFFFFFFFFu;
    case and64: case min64: return ~uint64_t{0};
    case sub32: return 0x80000000u; /* room to subtract without wrapping */
    case sub64: return uint64_t{1} << 63;
    default: return 0;
    }
}

#if !defined(__HIPCC__) && !defined(__CUDACC__) && !defined(__HIP__)
template <typename T> inline std::atomic_ref<T> slot(unsigned char *words, uint32_t op)
{
    return std::atomic_ref<T>(*reinterpret_cast<T *>(words + op * kSlotBytes));
}

template <typename T> inline void fetch_min(std::atomic_ref<T> w, T v)
{
    for (T seen = w.load(); v < seen && !w.compare_exchange_weak(seen, v);)
        ;
}

template <typename T> inline void fetch_max(std::atomic_ref<T> w, T v)
{
    for (T seen = w.load(); v > seen && !w.compare_exchange_weak(seen, v);)
        ;
}

template <typename T> inline void cas_increment(std::atomic_ref<T> w)
{
    for (T seen = 0; !w.compare_exchange_weak(seen, static_cast<T>(seen + 1));)
        ;
}

/* One round of participant `t` on the CPU, exactly as kernels/atomics.hip runs it on the GPU:
 * the simulated device's threads and the core's host threads. `float_adds` false leaves the
 * float add out (the simulated MI200 on fine-grained memory). */
inline void cpu_round(unsigned char *words, uint32_t ops, uint32_t t, uint32_t r, bool float_adds)
{
    auto on = [ops](uint32_t op) { return (ops >> op) & 1u; };
    const uint32_t b32 = 1u << bit_of(t, 32);
    const uint64_t b64 = uint64_t{1} << bit_of(t, 64);
    const uint64_t v = offer(t, r);
    auto sum = [&](uint32_t op) { return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(words + op * kSlotBytes + 8)); };
    if (on(and32)) slot<uint32_t>(words, and32).fetch_and(~b32);
    if (on(or32)) slot<uint32_t>(words, or32).fetch_or(b32);
    if (on(xor32)) slot<uint32_t>(words, xor32).fetch_xor(b32);
    if (on(add32)) slot<uint32_t>(words, add32).fetch_add(1u);
    if (on(sub32)) slot<uint32_t>(words, sub32).fetch_sub(1u);
    if (on(min32)) fetch_min(slot<uint32_t>(words, min32), static_cast<uint32_t>(v));
    if (on(max32)) fetch_max(slot<uint32_t>(words, max32), static_cast<uint32_t>(v));
    if (on(exch32)) sum(exch32).fetch_add(slot<uint32_t>(words, exch32).exchange(static_cast<uint32_t>(v)));
    if (on(cas32)) cas_increment(slot<uint32_t>(words, cas32));
    if (on(and64)) slot<uint64_t>(words, and64).fetch_and(~b64);
    if (on(or64)) slot<uint64_t>(words, or64).fetch_or(b64);
    if (on(xor64)) slot<uint64_t>(words, xor64).fetch_xor(b64);
    if (on(add64)) slot<uint64_t>(words, add64).fetch_add(1u);
    if (on(sub64)) slot<uint64_t>(words, sub64).fetch_sub(1u);
    if (on(min64)) fetch_min(slot<uint64_t>(words, min64), v << 32 | v);
    if (on(max64)) fetch_max(slot<uint64_t>(words, max64), v << 32 | v);
    if (on(exch64)) sum(exch64).fetch_add(slot<uint64_t>(words, exch64).exchange(v << 32 | v));
    if (on(cas64)) cas_increment(slot<uint64_t>(words, cas64));
    if (on(fadd32) && float_adds) slot<float>(words, fadd32).fetch_add(1.0f);
}

#endif

} /* namespace tidal::atomic_set */

#endif /* TIDAL_KERNELS_ATOMIC_SET_H */
