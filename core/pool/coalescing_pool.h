// The large-block half of a DevicePool: best-fit over the free ranges of big upstream chunks.
// An allocation splits a free range; a free merges with its free neighbours inside the same
// chunk, so a run of freed blocks becomes one range a larger request fits into without going
// upstream. Merging is deferred for the last few frees: a block freed and asked for again at
// the same size (the common case: the same tensor shape every step) comes back without
// touching the trees; any request the trees cannot serve merges them first. Whole free chunks
// go back upstream on trim(). One lock: large requests are rare next to small ones, and each
// is worth far more than a lock.
#pragma once

#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "pool/block_source.h"
#include "pool/pool_gauges.h"

namespace tidal::pool {

class CoalescingPool {
public:
    struct Usage {
        uint64_t allocations = 0;     // allocate() calls
        uint64_t frees = 0;           // deallocate() calls (not take_back())
        uint64_t allocated_bytes = 0;
        uint64_t freed_bytes = 0;
        uint64_t in_use_bytes = 0;    // handed out and not yet back, by either way
        uint64_t free_bytes = 0;
        uint64_t largest_free = 0;
        size_t chunks = 0;
        size_t free_ranges = 0;
    };

    // `growth`: the least one upstream chunk holds (a request larger than that gets a chunk
    // of its own size).
    CoalescingPool(BlockSource &source, PoolGauges &gauges, uint64_t growth);
    // Gives every chunk back upstream, whether or not its blocks were returned.
    ~CoalescingPool();
    CoalescingPool(const CoalescingPool &) = delete;
    CoalescingPool &operator=(const CoalescingPool &) = delete;

    // `bytes`: a multiple of 256, > 0; `alignment`: a power of two >= 256. `*fresh` says the
    // block lies in a chunk acquired by this very call (never handed out before). Throws
    // tidal::Error when the upstream fails; nothing is allocated then. With `may_grow` false it
    // returns nullptr instead of going upstream (the caller first reclaims what threads keep).
    void *allocate(size_t bytes, size_t alignment, bool *fresh, bool may_grow = true);
    // `p` and `bytes` exactly as allocate() took and returned them.
    void deallocate(void *p, size_t bytes);
    // The same for a block whose free was already counted elsewhere (a stream-ordered free
    // whose event has completed).
    void take_back(void *p, size_t bytes);
    // Gives wholly free chunks back upstream until at least `target` bytes went back or none
    // is left. Returns the bytes released. A chunk the upstream refuses stays, free and
    // reserved, for the next trim; `failure` (may be null) gets the first refusal.
    uint64_t trim(uint64_t target, std::exception_ptr *failure = nullptr) noexcept;

    // Merges the deferred frees first, so the figures describe what a request could get.
    Usage usage();

private:
    struct Chunk {
        void *raw = nullptr;  // what the source returned
        size_t raw_bytes = 0;
        uintptr_t end = 0;    // usable range is [key, end), both 256-aligned
    };
    struct FreeRange {
        size_t bytes = 0;
        uintptr_t chunk = 0;  // key of the chunk it lies in: ranges merge only within one
    };
    using AddrMap = std::map<uintptr_t, FreeRange>;
    using SizeSet = std::set<std::pair<size_t, uintptr_t>>; // (bytes, start): best fit first

    struct Deferred {
        uintptr_t p = 0;
        size_t bytes = 0;
    };
    static constexpr size_t kDeferred = 8;

    SizeSet::iterator find_fit(size_t bytes, size_t alignment);
    SizeSet::iterator grow(size_t bytes, size_t alignment);
    void *carve(SizeSet::iterator fit, size_t bytes, size_t alignment);
    void defer(uintptr_t p, size_t bytes);
    void merge_free(uintptr_t start, size_t bytes);
    void merge_deferred() noexcept;
    void insert_free(uintptr_t start, size_t bytes, uintptr_t chunk);
    void erase_free(AddrMap::iterator it) noexcept;

    BlockSource &source_;
    PoolGauges &gauges_;
    const uint64_t growth_;
    std::mutex mutex_;
    std::map<uintptr_t, Chunk> chunks_;
    AddrMap free_by_addr_;
    SizeSet free_by_size_;
    uint64_t free_bytes_ = 0;   // in the trees; deferred frees not included
    uint64_t in_use_bytes_ = 0;
    uint64_t allocations_ = 0, frees_ = 0, allocated_bytes_ = 0, freed_bytes_ = 0;
    Deferred deferred_[kDeferred]; // oldest first
    size_t deferred_count_ = 0;
    // Map nodes kept from erased ranges and reused for new ones: a steady alloc/free cycle
    // then splits and merges without touching the host allocator.
    std::vector<AddrMap::node_type> spare_addr_nodes_;
    std::vector<SizeSet::node_type> spare_size_nodes_;
};

} // namespace tidal::pool
