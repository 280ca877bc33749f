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
//    a lock; with one, each end displaced the other's hint and took the locked path). A hint is
//    a 64-byte line holding the item and a copy of what a query reads of it (its `Head`), so
//    that an interior query of a page seen before reads that one line: at 10^6 live
//    allocations one cache miss, where a hint naming the item alone was two (the hint, then
//    the item). The owner keeps the copies true: a hint exists only while its item is live,
//    names it only in pages it covers, and carries its present head. A new or revived item
//    names itself in its pages, a lookup that found its answer in the bucket repairs the
//    page's hint, an item freed or changed has its hints cleared or rewritten (`each_hint`),
//    and the removal of an item clears every hint naming it.
//
// A granule's hints are 2 KiB (16 pages of two lines), 128 MiB for a leaf's 4 GiB of addresses:
// 128 bytes per 4 KiB page of indexed memory where it is touched. Leaves are mapped 2 MiB-aligned
// (huge_pages.h), zero pages until touched; a 2 MiB region of a leaf's hints (1 024 granules)
// is advised as huge pages once kHugeAt of its granules have buckets (8 MiB of indexed memory:
// ~2 000 4 KiB blocks), so that the hint a query reads among 10^6 is not a TLB miss too, while
// a program with few allocations keeps 4 KiB pages.
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
#include <concepts>
#include <type_traits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "registry/huge_pages.h"

namespace tidal {

// T: the items (the registry's slots). Head: what a hint copies of its item (trivially copyable;
// the index only stores it).
struct NoHead {};
template <typename T, typename Head = NoHead> class AddressIndex {
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
    static constexpr uintptr_t kPage = uintptr_t{1} << kPageBits;
    static constexpr size_t kPages = size_t{1} << (kGranuleBits - kPageBits);
    static constexpr size_t kHints = 2; // per page, newest first: 128 bytes, two cache lines

    // One line: an item and the copy of its head, written by the owner under the shard's lock,
    // read by a query without it (a sequence-lock reader, which copies it and checks after).
    struct alignas(64) Hint {
        T *item; // null: no hint
        Head head;
    };
    static_assert(sizeof(Hint) == 64, "a hint is one cache line");

    struct Member {
        uintptr_t base;
        T *item;
    };
    using Bucket = std::vector<Member>; // sorted by base

    // Plain words reached through std::atomic_ref where shards meet (covers, leaf pointers), so
    // that mmap's zero pages are valid objects: a leaf costs memory only where touched.
    // A granule's hints: 2 KiB, so that the hints of an address lie at a shift and a mask of it
    // from its leaf (a pooled free or revival finds them in a few instructions).
    struct Granule {
        Hint pages[kPages][kHints]; // items of this granule's bucket overlapping the page
    };
    static_assert(sizeof(Granule) == kPages * kHints * sizeof(Hint));
    // What else a granule has, beside its hints (read by lookups under a lock, and covers).
    struct Links {
        Bucket *bucket;   // owned; the hints and the bucket are guarded by the owning shard's lock
        uintptr_t cover;
    };

    // Granules with a bucket in one 2 MiB region of a leaf before it is advised as huge pages:
    // one in eight of its 1 024, so advising costs at most 8x the small pages it replaces.
    static constexpr uint32_t kHugeAt = 128;

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
                for (Links &g : l->links)
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
        Links &g = l->links[granule_of(a) & kLeafMask];
        if (!g.bucket) {
            g.bucket = new Bucket;
            used(l, granule_of(a) & kLeafMask);
        }
        return *g.bucket;
    }
    // Regions of leaves advised as huge pages where the kernel took the advice.
    size_t huge_regions() const noexcept { return huge_regions_.load(std::memory_order_relaxed); }
    // The bucket of the granule holding `a`, or nullptr (under the owning shard's lock).
    Bucket *find_bucket(uintptr_t a) const noexcept
    {
        const Leaf *l = leaf(a);
        return l ? l->links[granule_of(a) & kLeafMask].bucket : nullptr;
    }

    // The hints of a's granule, or nullptr where nothing was ever indexed (under the owning
    // shard's lock, or read as a sequence-lock reader).
    Granule *find_granule(uintptr_t a) const noexcept
    {
        Leaf *l = leaf(a);
        return l ? &l->granules[granule_of(a) & kLeafMask] : nullptr;
    }
    static size_t page_of(uintptr_t a) noexcept { return (a >> kPageBits) & (kPages - 1); }
    // The last page of [base, base + size) in base's granule.
    static size_t last_page(uintptr_t base, size_t size) noexcept
    {
        return page_of(granule_of(base + size - 1) == granule_of(base) ? base + size - 1 : base | (kGranule - 1));
    }
    // Starts loading a's page hints, both lines (a caller with many addresses to look up, some
    // steps ahead): all a lookup through a hint reads, as each hint carries its item's head.
    void prefetch_hints(uintptr_t a) const noexcept
    {
        if (const Hint *h = page_hints(a)) {
            __builtin_prefetch(&h[0]);
            __builtin_prefetch(&h[kHints - 1]);
        }
    }
    // Names `item` in the hints of the pages of [base, base + size) that lie in base's granule
    // (its bucket's granule), its head written by fill(Head &) in place. Needs indexable(); does
    // nothing where no leaf was made.
    template <typename Fill>
        requires std::invocable<Fill &, Head &>
    void hint(uintptr_t base, size_t size, T *item, Fill &&fill) noexcept
    {
        Granule *g = find_granule(base);
        if (!g)
            return;
        size_t p = page_of(base);
        const size_t last = last_page(base, size);
        do
            push_hint(g->pages[p], item, fill);
        while (++p <= last);
    }
    // The pages of [base, base + size) in base's granule, as a mask (bit p: page p).
    static uint32_t pages_of(uintptr_t base, size_t size) noexcept
    {
        const size_t first = page_of(base), last = last_page(base, size);
        return ((uint32_t{2} << last) - 1) & ~((uint32_t{1} << first) - 1);
    }
    // Calls f(hints) with the two hints of each page of base's granule in `pages` (a mask).
    template <typename F> void each_page(uintptr_t base, uint32_t pages, F &&f) noexcept
    {
        const uintptr_t granule = base & ~(kGranule - 1);
        if (!pages || !leaf(granule))
            return;
        for (; pages; pages &= pages - 1)
            f(page_hints(granule + (uintptr_t{static_cast<unsigned>(__builtin_ctz(pages))} << kPageBits)));
    }
    // Whether [base, base + size) lies in one page (then its hints are one page's).
    static bool one_page(uintptr_t base, size_t size) noexcept { return (base & (kPage - 1)) + size <= kPage; }
    // The hints of a's page, or nullptr where nothing was ever indexed (under the owning
    // shard's lock, or read as a sequence-lock reader).
    Hint *page_hints(uintptr_t a) const noexcept
    {
        // The leaf's granules are its pages' hints one after the other: a's are at its page
        // number within the leaf.
        Leaf *l = leaf(a);
        constexpr size_t kPageHints = sizeof(Hint) * kHints;
        return l ? reinterpret_cast<Hint *>(reinterpret_cast<char *>(l->granules.data()) +
                                            ((a & kLeafAddressMask) >> kPageBits) * kPageHints)
                 : nullptr;
    }
    // Calls f(hint) for each hint naming `item` in the pages of [base, base + size) in base's
    // granule: an item freed (clear_hint) or changed (its head rewritten) while its size stays.
    template <typename F> void each_hint(uintptr_t base, size_t size, const T *item, F &&f) noexcept
    {
        Granule *g = find_granule(base);
        if (!g)
            return;
        for (size_t p = page_of(base), last = last_page(base, size); p <= last; ++p)
            for (Hint &h : g->pages[p])
                if (h.item == item)
                    f(h);
    }
    // Clears every hint of base's granule naming `item` (before it goes away): all pages, not
    // only those it covers, so that none can dangle whatever the owner did before.
    void forget_hints(uintptr_t base, const T *item) noexcept
    {
        if (Granule *g = find_granule(base))
            for (auto &page : g->pages)
                clear_hints(page, item);
    }
    // Hints are written under the owning shard's lock but read without it (a reader checks the
    // shard's sequence count around its read): the item is one whole store, which such a reader
    // loads once; the head is plain bytes, which it copies and uses only if the count held. A
    // hint without an item is empty whatever its head says.
    static void clear_hint(Hint &h) noexcept { std::atomic_ref(h.item).store(nullptr, std::memory_order_relaxed); }
    // Clears those of a page's hints that name `item`.
    static void clear_hints(Hint *hints, const T *item) noexcept
    {
        for (size_t i = 0; i < kHints; ++i)
            if (hints[i].item == item)
                clear_hint(hints[i]);
    }
    // Makes `item` a page's newest hint, its head written by fill(Head &); the older one is kept
    // and the oldest forgotten. An empty newest place is taken as it is (an item freed and
    // revived in place, the pool's way, writes one line): the owner never leaves an item named
    // twice.
    template <typename Fill>
        requires std::invocable<Fill &, Head &>
    static void push_hint(Hint *hints, T *item, Fill &&fill) noexcept
    {
        static_assert(kHints == 2);
        if (T *newest = hints[0].item; newest != item && newest) {
            std::atomic_ref(hints[1].item).store(newest, std::memory_order_relaxed);
            hints[1].head = hints[0].head;
        }
        std::atomic_ref(hints[0].item).store(item, std::memory_order_relaxed);
        fill(hints[0].head);
    }

    // The bases that may contain `a` from an earlier granule: granule, 16 MiB block, 4 GiB block.
    std::array<uintptr_t, 3> covers(uintptr_t a) const noexcept
    {
        std::array<uintptr_t, 3> c{};
        c[2] = load(top_[a >> kLeafShift].cover);
        if (const Leaf *l = leaf(a)) {
            c[0] = load(l->links[granule_of(a) & kLeafMask].cover);
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
    static constexpr uintptr_t kLeafAddressMask = (uintptr_t{1} << kLeafShift) - 1;
    static constexpr size_t kTopEntries = size_t{1} << (kAddressBits - kLeafShift);
    static constexpr uintptr_t kLeafMask = (uintptr_t{1} << kLeafBits) - 1;
    static constexpr uintptr_t kMidMask = (uintptr_t{1} << kMidBits) - 1;

    static constexpr size_t kRegions = (sizeof(Granule) << kLeafBits) / HugePages::kHuge;
    static_assert((sizeof(Granule) << kLeafBits) % HugePages::kHuge == 0);
    // The hints first, at the leaf's 2 MiB-aligned start, so that each 2 MiB region of them is
    // one huge page once advised.
    struct Leaf {
        std::array<Granule, size_t{1} << kLeafBits> granules;
        std::array<Links, size_t{1} << kLeafBits> links;
        std::array<uintptr_t, size_t{1} << (kLeafBits - kMidBits)> mids;
        std::array<uint32_t, kRegions> used; // granules with a bucket, per 2 MiB region of the hints
    };

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
        auto *fresh = static_cast<Leaf *>(HugePages::map(sizeof(Leaf))); // 129 MiB of address space, zero pages
        if (slot.compare_exchange_strong(l, fresh, std::memory_order_acq_rel))
            return fresh;
        HugePages::unmap(fresh, sizeof(Leaf)); // another shard made it first
        return l;
    }
    // Granule `g` of leaf `l` got its bucket (under its shard's lock; shards share regions).
    void used(Leaf *l, uintptr_t g) noexcept
    {
        const size_t r = g * sizeof(Granule) / HugePages::kHuge;
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
                f(l->links[g & kLeafMask].cover);
                ++g;
            }
        }
    }

    Top *top_;
    HugePages::Advise advise_;
    std::atomic<size_t> huge_regions_{0};
};

} // namespace tidal
