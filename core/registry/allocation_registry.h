// Every live allocation of a context, looked up by any address inside it. Thread-safe and
// built for many threads allocating at once: allocations are spread over shards by a hash of
// their base address, so tidal_alloc/tidal_free on different threads rarely meet on a lock
// (one shared lock made 16 threads slower than one). Exact-base operations touch one shard;
// lookups of an interior pointer ask every shard, which is the price of that spread.
//
// A freed allocation's map node stays behind, marked dead, so that the next allocation at the
// same base (a pool hands the block just freed to the next request) revives it in place: no
// tree rebalancing and no node on either path, which was a third of a tidal_alloc+tidal_free
// pair. Dead nodes never hide a live allocation: an insert erases every dead node inside its
// range, so the nearest node at or below an address inside a live allocation is that
// allocation's own. A shard purges its dead nodes once they outnumber the live ones (and
// kDeadSlack), which bounds what they hold.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "registry/allocation_record.h"
#include "sync/spin_lock.h"
#include "registry/node_recycler.h"

namespace tidal {

class AllocationRegistry {
public:
    enum class Removal { removed, interior, unknown, already_freed };

    // Records a new allocation. Throws TIDAL_ERROR_INTERNAL if it overlaps a live allocation
    // of the same shard (the runtime and pools never hand out overlapping memory; this is a
    // cheap tripwire, not a full check).
    void insert(const AllocationRecord &record);
    // [begin, end) of addresses: where find() found no allocation. `end` is exactly the base of
    // the next live allocation (UINTPTR_MAX: none); `begin` may lie above the true gap's start.
    struct Vacancy {
        uintptr_t begin = 0, end = 0;
    };
    // The allocation containing `p` (its base or any interior byte). When there is none and
    // `vacancy` is given, it gets the widest range around `p` that no live allocation touches,
    // so a caller with many pointers in one foreign buffer asks once (a miss asks every shard).
    std::optional<AllocationRecord> find(const void *p, Vacancy *vacancy = nullptr) const;
    // Removes the allocation whose base is exactly `p`. `out` gets it when removed, or the
    // containing allocation for an interior pointer (which is left in place).
    Removal remove(const void *p, AllocationRecord *out);
    // Sets the advice of the live allocation whose base is `base`; false when there is none.
    bool set_advice(const void *base, uint32_t advice);
    // Removes and returns every live allocation (context teardown).
    std::vector<AllocationRecord> drain();
    size_t live_count() const;

private:
    static constexpr size_t kShards = 64;
    // Bases freed recently per shard, to tell a double free from a wild pointer in the message.
    // Bounded so a long-running job does not grow it; forgetting one only weakens the message.
    static constexpr size_t kFreedMemory = 256;

    static constexpr size_t kDeadSlack = 256;

    struct Slot {
        AllocationRecord record;
        bool live = false;
    };
    using SlotMap = std::map<uintptr_t, Slot, std::less<uintptr_t>, NodeRecycler<std::pair<const uintptr_t, Slot>>>;

    struct alignas(64) Shard { // one cache line apart: no false sharing between shards
        mutable SpinLock mutex;
        NodeFreeList nodes; // before `slots`: outlives the map's own teardown
        SlotMap slots{NodeRecycler<std::pair<const uintptr_t, Slot>>(&nodes)}; // keyed by base, live and dead
        size_t live = 0, dead = 0;
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
        SlotMap::iterator erase(SlotMap::iterator it) noexcept
        {
            if (SlotMap::iterator &hint = index[index_of(it->first)]; hint == it)
                hint = slots.end();
            return slots.erase(it);
        }
        bool was_freed(uintptr_t base) const noexcept;
        void purge_dead() noexcept;
    };
    static size_t shard_of(uintptr_t base) noexcept
    {
        return static_cast<size_t>(((base >> 8) * 0x9E3779B97F4A7C15ull) >> 58); // 64 shards
    }
    std::optional<AllocationRecord> find_interior(uintptr_t a, Vacancy *vacancy = nullptr) const;

    std::array<Shard, kShards> shards_;
};

} // namespace tidal
