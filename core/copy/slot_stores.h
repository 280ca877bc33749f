// How host threads write a staging slot that a DMA to the device reads next ([copy]
// slot_stores). A slot filled with ordinary stores leaves its lines modified in the filling
// cores' caches, and the device's reads of them must fetch each line from there; non-temporal
// (streaming) stores send them to memory instead (H200, same run: a 16 MiB staged copy to the
// device at 36-37 GB/s filled so, 21-26 with ordinary stores), and CLDEMOTE after ordinary
// stores asks for them to go to the shared L3, so that neither a core's cache nor memory should
// hold the DMA up (the intent; what is measured is the rate, below).
// Which is fastest depends on the copy and the machine (kernels/probes/staging_contention.cu
// models all three). On the H200's host (Xeon with CLDEMOTE; tools/bench/results/
// 2026-12-02-h200-session6, three rounds each in one call), host->device GB/s:
//   16 MiB: demote 42.3-43.0, streaming 37.4-38.5, cached 22.9-25.4;
//   64-256 MiB: demote 45.6-49.9, streaming 38.5-42.6, cached 39.6-50.2 (cached: the slowest up to 32 MiB);
//   4 MiB: streaming 31.3-34.0, demote 27.3-28.5.
// So `auto` demotes from kDemoteFrom up where the processor has CLDEMOTE (where it lacks it,
// demote would be cached stores: the slowest at 16 MiB), and streams otherwise.
// The caller orders the stores before whatever tells the DMA to start (slot_fence), as a
// release store alone does not order non-temporal ones.
#pragma once

#include "config/settings.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>
#endif

namespace tidal {

inline void nontemporal_copy(void *dst, const void *src, size_t n) noexcept
{
#if defined(__x86_64__)
    auto *d = static_cast<char *>(dst);
    const auto *s = static_cast<const char *>(src);
    // Up to a 16-byte boundary of the destination with ordinary stores, then 64 bytes a turn.
    const size_t head = std::min(n, (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15);
    std::memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + 32));
        const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + 48));
        _mm_stream_si128(reinterpret_cast<__m128i *>(d), a);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + 48), e);
    }
    std::memcpy(d, s, n);
#else
    std::memcpy(dst, src, n);
#endif
}

// Ordinary stores, then each line written pushed to the shared cache (a hint: CLDEMOTE is a
// no-op on processors without it, in the hint-NOP space of older ones).
inline void demoted_copy(void *dst, const void *src, size_t n) noexcept
{
    std::memcpy(dst, src, n);
#if defined(__x86_64__)
    const uintptr_t first = reinterpret_cast<uintptr_t>(dst) & ~uintptr_t{63}, end = reinterpret_cast<uintptr_t>(dst) + n;
    for (uintptr_t line = first; line < end; line += 64)
        asm volatile(".byte 0x0f, 0x1c, 0x00" : : "a"(line) : "memory"); // cldemote (%rax), for any assembler
#endif
}

// Whether this processor has CLDEMOTE (CPUID leaf 7, ECX bit 25).
inline bool cpu_demotes() noexcept
{
#if defined(__x86_64__)
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 25)) != 0;
    }();
    return has;
#else
    return false;
#endif
}

// Copies this size and larger demote under `auto` (measured at 4 and 16 MiB: see above).
inline constexpr size_t kDemoteFrom = size_t{16} << 20;

// The way to store for one copy of `size` bytes.
inline SlotStores slot_stores_for(SlotStores setting, size_t size, bool demotes = cpu_demotes()) noexcept
{
    if (setting != SlotStores::automatic)
        return setting;
    return demotes && size >= kDemoteFrom ? SlotStores::demote : SlotStores::streaming;
}

inline void fill_slot(void *dst, const void *src, size_t n, SlotStores how) noexcept
{
    switch (how) {
    case SlotStores::cached: std::memcpy(dst, src, n); break;
    case SlotStores::demote: demoted_copy(dst, src, n); break;
    default: nontemporal_copy(dst, src, n); break;
    }
}

// Orders this thread's slot stores before its later stores (a counter the caller then bumps to
// say the bytes are there): non-temporal stores need the fence.
inline void slot_fence() noexcept
{
#if defined(__x86_64__)
    _mm_sfence();
#endif
}

} // namespace tidal
