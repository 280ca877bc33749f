// A snapshot of one DevicePool's counters. Exact when no call is in flight; taken while other
// threads allocate, each figure is a recent value (they are not read atomically together).
#pragma once

#include <cstdint>

namespace tidal::pool {

struct PoolStats {
    uint64_t reserved_bytes = 0;          // held from the BlockSource
    uint64_t reserved_high_water = 0;
    uint64_t in_use_bytes = 0;            // held by callers (block sizes after rounding)
    // Peak of the bytes outside the pool's shared free lists: caller-held blocks plus blocks
    // parked in thread caches and stream-pending blocks. Sampled on the locked paths only (the
    // lock-free fast path keeps no shared counter), so it bounds the callers' peak from above
    // by at most what the thread caches hold.
    uint64_t in_use_high_water = 0;
    uint64_t cached_bytes = 0;            // parked in thread caches
    uint64_t pending_bytes = 0;           // freed on a stream, waiting for its event
    uint64_t allocations = 0;
    uint64_t frees = 0;
    uint64_t cache_hits = 0;              // allocations served by a thread cache without a lock
    uint64_t cache_misses = 0;            // small allocations that had to refill a cache
    uint64_t stream_reuses = 0;           // allocations served from a block pending on the same stream
    uint64_t upstream_acquires = 0;
    uint64_t upstream_releases = 0;
    // Large-block (coalescing) part only.
    uint64_t large_free_bytes = 0;
    uint64_t large_largest_free = 0;
    double fragmentation = 0.0;           // 1 - largest free range / all free bytes; 0 when none free
};

} // namespace tidal::pool
