// Which allocation contains an address, in a constant number of steps whatever the number of
// live allocations: a page map keyed by the address at a coarse granularity (a granule), as
// mimalloc's segment map and a CPU's page tables are. Two things are kept per granule:
//  * a bucket: the allocations whose base lies in the granule, sorted by base. Allocations
//    smaller than a granule share one; a lookup is a binary search over at most
//    granule / smallest-allocation entries (256 for 256-byte blocks in 64 KiB granules).
//  * covers: the base of the allocation that reaches into the granule from below. An
//    allocation spanning many granules would need one entry per granule, so, like huge pages,
//    it names itself once per whole 16 MiB block (256 granules) or 4 GiB block (a leaf) it
//    covers, and per granule only at its ragged ends: at most about 1 000 stores for any size
//    (a 1 GiB allocation writes 64 + the granules of its first and last partial blocks).
// A lookup reads the bucket of its granule, then the three covers of its address.
//  * page hints: per 4 KiB page of the granule, the two items last found there through the
//    bucket (two, so that a copy between two small blocks of one page finds both ends without
//    a lock; with one, each end displaced the other's hint and took the locked path). An interior query of a page seen before reads the granule's entry and the item,
//    two cache lines where the bucket search is four to six; at 10^6 live allocations each
//    line is a miss. A hint is only a guess the reader checks (the item still live, and
//    containing the address): a new item names itself in the pages it covers, a lookup that
//    found its answer in the bucket repairs the page's hint, and the removal of an item clears
//    the hints naming it, so that none dangles. Freeing and reviving an item writes none.
//
// Leaves are mapped 2 MiB-aligned (huge_pages.h), zero pages until touched; a 2 MiB region of a
// leaf is advised as huge pages once kHugeAt of its granules have buckets (64 MiB of indexed
// memory: ~16 000 4 KiB blocks), so that the granule entry a query reads among 10^6 is not a
// TLB miss too, while a program with few allocations keeps 4 KiB pages.
//
// The index itself holds no lock. A bucket and the page hints belong to the registry shard that owns its granule
// (the registry shards by granule) and are written only under that shard's lock; buckets are
// read under it too, hints also without it (a sequence-lock reader, see registry/shard_lock.h).
// Covers are atomic words anyone may write: a cover is a hint, naming a base that the reader
// checks against the bucket of that base under its shard's lock (a stale cover names a freed
// or smaller allocation and is rejected). No cover is ever needed for correctness except the
// last one written for a block, and that is the one of the live allocation covering it, if
// any: two live allocations never contain the same address.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <type_traits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "registry/huge_pages.h"

namespace tidal {

template <typename T> class AddressIndex {
public:
    // 64 KiB: a bucket of 256-byte blocks holds at most 256 bases (8 probes), a pooled 1 MiB
    // block revived writes 15 covers, and 4 KiB blocks (16 to a bucket) spread over shards by
    // granule as well as by base. Reasoned, not yet compared with other sizes by measurement.
    static constexpr unsigned kGranuleBits = 16;
    static constexpr unsigned kMidBits = 8;                        // granules per cover-1 block: 256
    static constexpr unsigned kLeafBits = 16;                      // granules per leaf: 65 536
    static constexpr unsigned kAddressBits = 48;                   // user space of x86-64 and AArch64
    static constexpr uintptr_t kLimit = uintptr_t{1} << kAddressBits; // addresses at or above: not indexed
    static constexpr uintptr_t kGranule = uintptr_t{1} << kGranuleBits;
    static constexpr unsigned kPageBits = 12; // the hints' page: one 4 KiB pooled block each
    static constexpr size_t kPages = size_t{1} << (kGranuleBits - kPageBits);
    static constexpr size_t kHints = 2; // per page, newest first: 16 bytes, one cache line

    struct Member {
        uintptr_t base;
        T *item;
    };
    using Bucket = std::vector<Member>; // sorted by base

    // Plain words reached through std::atomic_ref where shards meet (covers, leaf pointers), so
    // that mmap's zero pages are valid objects: a leaf costs memory only where touched.
    struct Granule {
        T *pages[kPages][kHints]; // hints: items of this granule's bucket overlapping the page, or null
        Bucket *bucket;   // owned; the hints and the bucket are guarded by the owning shard's lock
        uintptr_t cover;
    };

    // Granules with a bucket in one 2 MiB region of a leaf before it is advised as huge pages:
    // one in eight of its ~7 700, so advising costs at most 8x the small pages it replaces.
    static constexpr uint32_t kHugeAt = 1024;

    // `advise`: where the kernel is asked for huge pages (tests hand in a refusing stand-in).
    explicit AddressIndex(HugePages::Advise advise = &::madvise)
        : top_(static_cast<Top *>(std::calloc(kTopEntries, sizeof(Top)))), advise_(advise) // zero pages until touched
    {
        if (!top_)
            throw std::bad_alloc();
    }
    AddressIndex(const AddressIndex &) = delete;
    AddressIndex &operator=(const AddressIndex &) = delete;
    ~AddressIndex()
    {
        for (size_t i = 0; i < kTopEntries; ++i)
            if (Leaf *l = top_[i].leaf) {
                for (Granule &g : l->granules)
                    delete g.bucket;
                HugePages::unmap(l, sizeof(Leaf));
            }
        std::free(top_);
    }

    static uintptr_t granule_of(uintptr_t a) noexcept { return a >> kGranuleBits; }
    // Whether [base, base + size) lies in more than one granule (then it needs covers).
    static bool spans(uintptr_t base, size_t size) noexcept
    {
        return size > 1 && granule_of(base) != granule_of(base + size - 1);
    }
    static bool indexable(uintptr_t base, size_t size) noexcept { return base < kLimit && size <= kLimit - base; }

    // The bucket of the granule holding `a`, created on demand (under the owning shard's lock).
    Bucket &bucket(uintptr_t a)
    {
        Leaf *l = make_leaf(a);
        Granule &g = l->granules[granule_of(a) & kLeafMask];
        if (!g.bucket) {
            g.bucket = new Bucket;
            used(l, g);
        }
        return *g.bucket;
    }
    // Regions of leaves advised as huge pages where the kernel took the advice.
    size_t huge_regions() const noexcept { return huge_regions_.load(std::memory_order_relaxed); }
    // The bucket of the granule holding `a`, or nullptr (under the owning shard's lock).
    Bucket *find_bucket(uintptr_t a) const noexcept
    {
        const Leaf *l = leaf(a);
        return l ? l->granules[granule_of(a) & kLeafMask].bucket : nullptr;
    }

    // The granule entry of `a`, or nullptr where nothing was ever indexed (under the owning
    // shard's lock for its bucket and hints).
    Granule *find_granule(uintptr_t a) const noexcept
    {
        Leaf *l = leaf(a);
        return l ? &l->granules[granule_of(a) & kLeafMask] : nullptr;
    }
    static size_t page_of(uintptr_t a) noexcept { return (a >> kPageBits) & (kPages - 1); }
    // Starts loading a's page hints (a caller with many addresses to look up, some steps ahead).
    void prefetch_hints(uintptr_t a) const noexcept
    {
        if (const Leaf *l = leaf(a))
            __builtin_prefetch(&l->granules[granule_of(a) & kLeafMask].pages[page_of(a)]);
    }
    // Starts loading the cache line at `offset` bytes into the item a's newest page hint names,
    // if any: a guess, read without a lock (a stale hint still names a node of the caller's,
    // which is never given back).
    void prefetch_item(uintptr_t a, size_t offset) const noexcept
    {
        if (const Leaf *l = leaf(a))
            if (const T *h = std::atomic_ref(const_cast<T *&>(l->granules[granule_of(a) & kLeafMask].pages[page_of(a)][0]))
                                 .load(std::memory_order_relaxed))
                __builtin_prefetch(reinterpret_cast<const char *>(h) + offset);
    }
    // Names `item` in the hints of the pages of [base, base + size) that lie in base's granule
    // (its bucket's granule). Needs indexable(); does nothing where no leaf was made.
    void hint(uintptr_t base, size_t size, T *item) noexcept
    {
        Granule *g = find_granule(base);
        if (!g)
            return;
        const uintptr_t last = granule_of(base + size - 1) == granule_of(base) ? base + size - 1 : base | (kGranule - 1);
        for (size_t p = page_of(base); p <= page_of(last); ++p)
            push_hint(g->pages[p], item);
    }
    // Clears every hint of base's granule naming `item` (before it goes away). All of them, not
    // only those of its present pages: it may have been found while it was larger.
    void forget_hints(uintptr_t base, const T *item) noexcept
    {
        if (Granule *g = find_granule(base))
            for (auto &page : g->pages)
                for (T *&h : page)
                    if (h == item)
                        set_hint(h, nullptr);
    }
    // Hints are written under the owning shard's lock but read without it (a reader checks the
    // shard's sequence count around its read): one whole store, which such a reader loads once.
    static void set_hint(T *&h, T *item) noexcept { std::atomic_ref(h).store(item, std::memory_order_relaxed); }
    // Makes `item` a page's newest hint; the older one is kept and the oldest forgotten.
    static void push_hint(T *(&hints)[kHints], T *item) noexcept
    {
        static_assert(kHints == 2);
        if (hints[0] == item)
            return;
        set_hint(hints[1], hints[0]);
        set_hint(hints[0], item);
    }

    // The bases that may contain `a` from an earlier granule: granule, 16 MiB block, 4 GiB block.
    std::array<uintptr_t, 3> covers(uintptr_t a) const noexcept
    {
        std::array<uintptr_t, 3> c{};
        c[2] = load(top_[a >> kLeafShift].cover);
        if (const Leaf *l = leaf(a)) {
            c[0] = load(l->granules[granule_of(a) & kLeafMask].cover);
            c[1] = load(l->mids[(granule_of(a) & kLeafMask) >> kMidBits]);
        }
        return c;
    }

    // Names `base` in every block whose start lies in (base, base + size). Needs indexable().
    void cover(uintptr_t base, size_t size)
    {
        for_covers(base, size, true, [base](uintptr_t &c) { std::atomic_ref(c).store(base, std::memory_order_relaxed); });
    }
    // Forgets `base` where it is still the name (a node going away).
    void uncover(uintptr_t base, size_t size)
    {
        for_covers(base, size, false, [base](uintptr_t &c) {
            uintptr_t expected = base;
            std::atomic_ref(c).compare_exchange_strong(expected, 0, std::memory_order_relaxed);
        });
    }

private:
    static constexpr unsigned kLeafShift = kGranuleBits + kLeafBits;
    static constexpr size_t kTopEntries = size_t{1} << (kAddressBits - kLeafShift);
    static constexpr uintptr_t kLeafMask = (uintptr_t{1} << kLeafBits) - 1;
    static constexpr uintptr_t kMidMask = (uintptr_t{1} << kMidBits) - 1;

    static constexpr size_t kRegions = (sizeof(Granule) << kLeafBits) / HugePages::kHuge + 1;
    struct Leaf {
        std::array<uintptr_t, size_t{1} << (kLeafBits - kMidBits)> mids;
        std::array<uint32_t, kRegions> used; // granules with a bucket, per 2 MiB region of the leaf
        std::array<Granule, size_t{1} << kLeafBits> granules;
    };
    static_assert(sizeof(Leaf) <= kRegions * HugePages::kHuge);
    struct Top {
        Leaf *leaf;
        uintptr_t cover;
    };
    static_assert(std::is_trivial_v<Leaf> && std::is_trivial_v<Top>);

    // Relaxed is enough for covers: a reader checks what one names under that shard's lock.
    static uintptr_t load(const uintptr_t &c) noexcept
    {
        return std::atomic_ref(const_cast<uintptr_t &>(c)).load(std::memory_order_relaxed);
    }
    Leaf *leaf(uintptr_t a) const noexcept
    {
        return std::atomic_ref(top_[a >> kLeafShift].leaf).load(std::memory_order_acquire);
    }
    Leaf *make_leaf(uintptr_t a)
    {
        std::atomic_ref slot(top_[a >> kLeafShift].leaf);
        Leaf *l = slot.load(std::memory_order_acquire);
        if (l)
            return l;
        auto *fresh = static_cast<Leaf *>(HugePages::map(sizeof(Leaf))); // 18 MiB of address space, zero pages
        if (slot.compare_exchange_strong(l, fresh, std::memory_order_acq_rel))
            return fresh;
        HugePages::unmap(fresh, sizeof(Leaf)); // another shard made it first
        return l;
    }
    // Granule `g` of leaf `l` got its bucket (under its shard's lock; shards share regions).
    void used(Leaf *l, const Granule &g) noexcept
    {
        const auto offset = static_cast<size_t>(reinterpret_cast<const char *>(&g) - reinterpret_cast<const char *>(l));
        const size_t r = offset / HugePages::kHuge;
        if (std::atomic_ref(l->used[r]).fetch_add(1, std::memory_order_relaxed) + 1 != kHugeAt)
            return;
        if (HugePages::advise(reinterpret_cast<char *>(l) + r * HugePages::kHuge, HugePages::kHuge, advise_))
            huge_regions_.fetch_add(1, std::memory_order_relaxed);
    }

    // Granules g with their start in (base, base + size): whole leaves at the top, whole
    // 256-granule blocks in their leaf, the rest one by one.
    template <typename F> void for_covers(uintptr_t base, size_t size, bool create, F &&f)
    {
        constexpr uintptr_t leaf_span = kLeafMask + 1, mid_span = kMidMask + 1;
        uintptr_t g = granule_of(base) + 1;
        const uintptr_t end = granule_of(base + size - 1) + 1;
        while (g < end) {
            if ((g & kLeafMask) == 0 && end - g >= leaf_span) {
                f(top_[g >> kLeafBits].cover);
                g += leaf_span;
                continue;
            }
            Leaf *l = create ? make_leaf(g << kGranuleBits) : leaf(g << kGranuleBits);
            if (!l) { // nothing was written under a missing leaf: skip to the next one
                g = (g | kLeafMask) + 1;
                continue;
            }
            if ((g & kMidMask) == 0 && end - g >= mid_span) {
                f(l->mids[(g & kLeafMask) >> kMidBits]);
                g += mid_span;
            } else {
                f(l->granules[g & kLeafMask].cover);
                ++g;
            }
        }
    }

    Top *top_;
    HugePages::Advise advise_;
    std::atomic<size_t> huge_regions_{0};
};

} // namespace tidal
