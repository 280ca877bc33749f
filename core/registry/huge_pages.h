// Zeroed memory for the registry's large tables (the address index's leaves, the node arena's
// 2 MiB chunks), mapped 2 MiB-aligned so that the kernel can back it with transparent huge
// pages once asked. At 10^6 live allocations an interior query reads one granule entry among
// ~18 MB of leaf and one node among ~200 MB: on 4 KiB pages each is a TLB miss whose page walk
// misses the caches too (twice over in a virtual machine's nested page tables).
//
// Nothing is advised at mapping time: a huge page is resident whole once touched, so a table
// that stays sparse keeps its 4 KiB pages, and its owner asks for huge pages (advise) once it
// knows the region is well used. Where the kernel refuses (THP "never", a kernel without
// MADV_COLLAPSE, a sandbox), the memory works exactly as before: advise reports false, nothing
// else changes.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>

#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 // Linux 6.1; older headers lack it, older kernels answer EINVAL
#endif

namespace tidal {

class HugePages {
public:
    static constexpr size_t kHuge = size_t{2} << 20;
    // madvise's signature: tests hand in one that refuses, to walk the fallback path.
    using Advise = int (*)(void *, size_t, int);

    static size_t round_up(size_t bytes) noexcept { return (bytes + kHuge - 1) / kHuge * kHuge; }

    // round_up(bytes) of zero pages at a 2 MiB boundary; throws std::bad_alloc when the
    // address space is refused. Give it back with unmap(p, bytes).
    static void *map(size_t bytes)
    {
        const size_t size = round_up(bytes);
        // Over-map by one huge page, then trim both ends to the boundary (munmap of part of a
        // private anonymous mapping cannot fail for a valid range).
        void *raw = mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED)
            throw std::bad_alloc();
        const auto start = reinterpret_cast<uintptr_t>(raw);
        const uintptr_t aligned = (start + kHuge - 1) & ~(kHuge - 1);
        if (aligned > start)
            munmap(raw, aligned - start);
        if (const uintptr_t tail = start + size + kHuge - (aligned + size))
            munmap(reinterpret_cast<void *>(aligned + size), tail);
        return reinterpret_cast<void *>(aligned);
    }
    static void unmap(void *p, size_t bytes) noexcept
    {
        if (p)
            munmap(p, round_up(bytes));
    }

    // Asks for huge pages over [p, p + bytes), both at 2 MiB boundaries, inside one map():
    // faults from now on take huge pages, and the 4 KiB pages already touched are collapsed
    // into huge ones now (MADV_COLLAPSE: a copy of at most `bytes`, once). False when the
    // kernel takes no advice; a refused collapse leaves the region advised, which the
    // kernel's own khugepaged collapses in its time.
    static bool advise(void *p, size_t bytes, Advise advise_fn = &::madvise) noexcept
    {
        const int saved = errno; // a refusal is not the caller's error
        const bool advised = advise_fn(p, bytes, MADV_HUGEPAGE) == 0;
        if (advised)
            advise_fn(p, bytes, MADV_COLLAPSE);
        errno = saved;
        return advised;
    }
};

} // namespace tidal
