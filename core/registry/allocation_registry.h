// Every live allocation of a context, looked up by any address inside it. Thread-safe and
// built for many threads allocating at once: allocations are spread over shards by a hash of
// the 64 KiB granule their base lies in, so tidal_alloc/tidal_free on different threads rarely
// meet on a lock (one shared lock made 16 threads slower than one), and a thread working
// through one slab keeps using one shard's cache lines.
//
// Lookups of an interior pointer go through an AddressIndex (address_index.h): first the page
// hints of the address, read without a lock (the shard's lock is a sequence lock: a reader only
// checks that no writer came by, so threads querying at once write no shared cache line); each
// hint carries a copy of its allocation's head, so that a query through it reads one line and
// not the node; else the granule's bucket of bases, under the lock of the shard that owns the
// granule, then the covers of the address (the bases of allocations reaching in from below),
// each checked under its own shard's lock. That is a handful of steps whatever the number of
// live allocations, where asking all 64 shards' maps was 0.9 µs at 10^3 and 59 µs at 10^6 live
// allocations.
//
// A freed allocation's map node stays behind, marked dead, so that the next allocation at the
// same base (a pool hands the block just freed to the next request) revives it in place: no
// tree rebalancing, no node, and no bucket update on either path, which was a third of a
// tidal_alloc+tidal_free pair, and no look at its neighbours unless the shard's nodes changed
// since they were last checked or it comes back larger (Shard::changes); the index changes
// only when a node comes or goes, or when a revived allocation spans granules (its covers are
// written again); a free clears the hints naming its node and a revival names it again in its
// first page (a copy of the head is only true while the allocation lives). Dead nodes never
// hide a live allocation of their shard: an insert erases every dead node inside its range. A
// shard purges its dead nodes once they outnumber the live ones (and kDeadSlack), which bounds
// what they hold.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "registry/address_index.h"
#include "registry/allocation_record.h"
#include "registry/node_recycler.h"
#include "registry/shard_lock.h"

namespace tidal {

class AllocationRegistry {
public:
    AllocationRegistry()
    {
        for (Shard &s : shards_)
            s.nodes.attach(&arena_);
    }
    AllocationRegistry(const AllocationRegistry &) = delete;
    AllocationRegistry &operator=(const AllocationRegistry &) = delete;

    enum class Removal { removed, interior, unknown, already_freed };

    // Records a new allocation. Throws TIDAL_ERROR_INTERNAL if it overlaps a live allocation
    // of the same shard (the runtime and pools never hand out overlapping memory; this is a
    // cheap tripwire, not a full check).
    void insert(const AllocationRecord &record) { insert_at(record, record.raw, record.base); }
    // The same for `like` at another address: raw and base replaced (a pool's repeat of a
    // record, without a copy of its own to change).
    void insert_at(const AllocationRecord &like, void *raw, void *base);
    // [begin, end) of addresses: where find() found no allocation. `end` is exactly the base of
    // the next live allocation (UINTPTR_MAX: none); `begin` may lie above the true gap's start.
    struct Vacancy {
        uintptr_t begin = 0, end = 0;
    };
    // The allocation containing `p` (its base or any interior byte). When there is none and
    // `vacancy` is given, it gets a range around `p` that no live allocation touches, so a
    // caller with many pointers in one foreign buffer asks once. Its end comes from the index
    // when a live allocation lies above `p` in p's granule; otherwise this asks every shard.
    std::optional<AllocationRecord> find(const void *p, Vacancy *vacancy = nullptr) const;
    // The same into the caller's record (left unspecified when false): a query copies the
    // record once, where the optional costs a copy more on the way out.
    bool find(const void *p, AllocationRecord &out) const
    {
        return locate<Part::all>(reinterpret_cast<uintptr_t>(p), out, nullptr);
    }
    // The record's head: base to the end, all but raw, raw_size and the tag (allocation_record.h
    // orders it so). All a declaration reads (RangeOwner), and what a page hint copies, so that
    // at 10^6 live allocations such a lookup is one cache miss.
    static constexpr size_t kHeadFrom = offsetof(AllocationRecord, base);
    static constexpr size_t kHeadBytes = offsetof(AllocationRecord, vendor_pooled) + 1 - kHeadFrom; // without the tail padding
    // find() that fills only the record's head of `out` when it finds it through a page hint
    // (the rest of `out` is then left as the caller had it); the whole record otherwise.
    bool find_head(const void *p, AllocationRecord &out) const
    {
        return locate<Part::head>(reinterpret_cast<uintptr_t>(p), out, nullptr);
    }
    // find() for a pointer query: the head and the tag (a node's tag line is read only when
    // the allocation has a tag); raw and raw_size may be left as `out` had them.
    bool describe(const void *p, AllocationRecord &out) const
    {
        return locate<Part::described>(reinterpret_cast<uintptr_t>(p), out, nullptr);
    }
    // For a caller looking up many addresses in turn: starts loading all that find_head(p) and
    // describe(p) of an untagged allocation read through a page hint (p's page hints, which
    // carry the head). Call it some lookups ahead of find(p). Only loads.
    void prefetch_hints(const void *p) const noexcept
    {
        if (const auto a = reinterpret_cast<uintptr_t>(p); a < Index::kLimit)
            index_.prefetch_hints(a);
    }
    // Removes the allocation whose base is exactly `p`. `record` is it when removed, or the
    // containing allocation for an interior pointer (which is left in place); else empty.
    // Returned, not written through an out-parameter: the copy is made in the caller's
    // record, where an out-parameter had the caller zero it first (12 of a pair's 598
    // instructions, callgrind).
    struct Removed {
        Removal how;
        AllocationRecord record;
    };
    Removed remove(const void *p);
    // Sets the advice of the live allocation whose base is `base`; false when there is none.
    bool set_advice(const void *base, uint32_t advice);
    // Removes and returns every live allocation (context teardown).
    std::vector<AllocationRecord> drain();
    // A copy of every live allocation, shard by shard (telemetry: statistics, listings).
    std::vector<AllocationRecord> live() const;
    size_t live_count() const;

private:
    static constexpr size_t kShards = 64;
    // Bases freed recently per shard, to tell a double free from a wild pointer in the message.
    // Bounded so a long-running job does not grow it; forgetting one only weakens the message.
    static constexpr size_t kFreedMemory = 256;

    static constexpr size_t kDeadSlack = 256;

    // covered_at first, then the record with the flags after it: in a map node (32 bytes of
    // tree links and the key before the slot, 192 bytes in all at NodeArena::kAlign) the
    // record's head, `live` and `tagged` fill the node's last 64-byte line, and the tag the line
    // before: what a lookup under the lock reads (the head of the bucket's candidates), and a
    // query through a page hint reads of the node only for the tag or the whole record.
    struct Slot {
        // covers_written_ just after this slot's covers were written: while the count has not
        // moved, no other allocation wrote covers, so a revival at the same size finds its own.
        uint64_t covered_at = 0;
        AllocationRecord record;
        bool live = false;
        bool tagged = false; // record.tag is not empty
        // For a block over more than one page: the pages of its base's granule where a hint may
        // name it (bit p: page p). Its free clears those, not every page it covers (a 64 KiB
        // block's sixteen).
        uint16_t hinted = 0;
        static_assert(AddressIndex<int>::kPages <= 16);
        // Its shard's `changes` when its neighbours were last checked against its extent (its
        // record's size): while the count has not moved, it may come back at no larger a size
        // without looking at them again (0: never).
        uint32_t checked = 0;

        explicit Slot(const AllocationRecord &r) { hold(r, r.raw, r.base); }
        void hold(const AllocationRecord &r, void *raw, void *base) noexcept
        {
            record = r;
            record.raw = raw;
            record.base = base;
            live = true;
            tagged = r.tag[0] != '\0';
        }
    };
    using SlotMap = std::map<uintptr_t, Slot, std::less<uintptr_t>, NodeRecycler<std::pair<const uintptr_t, Slot>>>;
    // What a page hint copies of a live slot: the record's head and whether it has a tag (then
    // a pointer query reads the tag's line of the node as well).
    struct HintHead {
        unsigned char record[kHeadBytes];
        bool tagged;
    };
    static void fill_head(HintHead &h, const Slot &slot) noexcept;
    // The fill AddressIndex::hint and push_hint take to name `slot`: its present head.
    static auto head_of(const Slot &slot) noexcept
    {
        return [&slot](HintHead &h) { fill_head(h, slot); };
    }
    using Index = AddressIndex<Slot, HintHead>;
    // Keep the hints naming `slot` true: once it is revived (live again, named by none), and
    // once it is freed (none may name it after).
    void hint_revived(uintptr_t base, Slot &slot) noexcept;
    void unhint(uintptr_t base, Slot &slot) noexcept;
    // The two for a block over more than one page.
    void hint_revived_pages(uintptr_t base, Slot &slot) noexcept;
    void unhint_pages(uintptr_t base, Slot &slot) noexcept;

    struct alignas(64) Shard { // one cache line apart: no false sharing between shards
        mutable ShardLock mutex; // writers lock it; an interior query through a page hint only reads it
        NodeFreeList nodes; // before `slots`: outlives the map's own teardown
        SlotMap slots{NodeRecycler<std::pair<const uintptr_t, Slot>>(&nodes)}; // keyed by base, live and dead
        size_t live = 0, dead = 0;
        // Nodes added to or erased from `slots`, counted: what a revival's neighbours depend on
        // (a live node reaching into its range, a dead one inside it) changes only with it.
        // Never 0, so that 0 is no slot's check.
        uint32_t changes = 1;
        void changed() noexcept
        {
            if (++changes == 0) [[unlikely]] { // after 2^32 changes: no slot's check may match again
                for (auto &node : slots)
                    node.second.checked = 0;
                changes = 1;
            }
        }
        // Whether a dead slot at `it` may come back reaching to `end`: nothing live before it
        // reaches in, and nothing (dead or live) lies inside.
        bool room(SlotMap::const_iterator it, uintptr_t end) const noexcept;
        // Whether the node `n`, if live, reaches past `base` (into what starts there).
        static bool reaches(const SlotMap::value_type &n, uintptr_t base) noexcept
        {
            return n.second.live && n.first + n.second.record.size > base;
        }
        // A ring of recent frees, read only when a free finds no live allocation: a base that
        // is live again is found in `slots` first, so the ring needs no upkeep on insert and
        // the free path allocates nothing for it.
        std::array<uintptr_t, kFreedMemory> freed{};
        size_t freed_next = 0;
        // Recently used nodes by a hash of their base, so the exact-base operations of the
        // fast path (a free, the revival of the block just freed) skip the tree walk. An
        // entry is a hint: it is checked against the base, and reset before its node goes.
        static constexpr size_t kIndex = 16;
        std::array<SlotMap::iterator, kIndex> index;

        Shard() { index.fill(slots.end()); }
        static size_t index_of(uintptr_t base) noexcept
        {
            return static_cast<size_t>(((base >> 8) * 0x9E3779B97F4A7C15ull) >> 54) & (kIndex - 1);
        }
        SlotMap::iterator exact(uintptr_t base) noexcept
        {
            const SlotMap::iterator hint = index[index_of(base)];
            return hint != slots.end() && hint->first == base ? hint : slots.find(base);
        }
        void remember(SlotMap::iterator it) noexcept { index[index_of(it->first)] = it; }
        bool was_freed(uintptr_t base) const noexcept;
    };
    static size_t shard_of(uintptr_t base) noexcept
    {
        return static_cast<size_t>((Index::granule_of(base) * 0x9E3779B97F4A7C15ull) >> 58); // 64 shards
    }
    void insert_new(Shard &s, const AllocationRecord &record); // under s's lock: not a revival
    Removed remove_other(Shard &s, uintptr_t a); // not a live base
    // A new node (or one going away): its bucket entry, and its covers when it spans granules.
    SlotMap::iterator add_node(Shard &s, SlotMap::iterator hint, const AllocationRecord &record);
    SlotMap::iterator erase_node(Shard &s, SlotMap::iterator it);
    void purge_dead(Shard &s);
    // Writes the covers of a record spanning granules; returns covers_written_ after it.
    uint64_t index_spans(uintptr_t base, size_t size);

    // What a's granule knows of `a`, under its shard's lock: found (`out`), absent (a live
    // allocation below `a` ends at or before it: around->begin), or unknown (ask the covers).
    // With want_end, around->end gets the next live base above `a` in the granule (left 0:
    // none there); without, no other allocation's node is read.
    enum class Answer { found, absent, unknown };
    // Its page hint is written here: a lookup is a reader of the registry but a writer of hints.
    Answer lookup(uintptr_t a, AllocationRecord *out, Vacancy *around, bool want_end) const;
    // The exact base `c` (named by a cover) when live and containing `a`.
    Answer check_cover(uintptr_t c, uintptr_t a, AllocationRecord *out, uintptr_t *begin) const;
    // What of the record a page hint's reader copies: all of it, the head, the head and the tag.
    enum class Part { all, head, described };
    // Every lookup of an address: through a's page hints, inline in the callers (a query's
    // common case: the call around the locked steps saved registers for them: 216 instructions
    // a pointer query, 192 inline; callgrind, the simulated device), else the locked steps.
    template <Part P> bool locate(uintptr_t a, AllocationRecord &out, Vacancy *vacancy) const
    {
        return hinted<P>(a, out) || find_locked(a, out, vacancy);
    }
    // The hints' step alone, noexcept: folded into locate(), a declaration's range cost 2
    // instructions more (callgrind).
    template <Part P> bool hinted(uintptr_t a, AllocationRecord &out) const noexcept
    {
        return !unindexed_.load(std::memory_order_relaxed) && a < Index::kLimit && read_hinted<P>(a, &out);
    }
    // The steps after the hints: the granule's bucket under its shard's lock, then the covers
    // (or every shard, where the index cannot answer).
    bool find_locked(uintptr_t a, AllocationRecord &out, Vacancy *vacancy) const;
    bool scan_into(uintptr_t a, AllocationRecord &out, Vacancy *vacancy) const; // scan_shards, into `out`
    // The record of the live allocation that a's page hint names, if it contains `a`, read
    // without a lock: false when there is no such hint or a writer of a's shard came by (then
    // lookup() decides, under the lock, and *out holds nothing of use). Copies the record's
    // part `P`: the head from the hint (the index's line and no other for Part::head), raw,
    // raw_size and the tag from the node for Part::all, the tag's line for a tagged one when P
    // asks for the tag; no store to memory another thread reads.
    template <Part P> bool read_hinted(uintptr_t a, AllocationRecord *out) const noexcept;
    // Every shard's map: for an address beyond the index, and for a vacancy's end that lies
    // outside the address's granule.
    std::optional<AllocationRecord> scan_shards(uintptr_t a, Vacancy *vacancy) const;

    Index index_;
    NodeArena arena_; // before the shards: their nodes live in it
    // Set once an allocation lies beyond what the index covers (never on x86-64 or AArch64
    // user addresses): lookups then ask every shard, as they did before the index.
    std::atomic<bool> unindexed_{false};
    std::atomic<uint64_t> covers_written_{0}; // calls of index_spans, counted before each writes
    std::array<Shard, kShards> shards_;
};

} // namespace tidal
