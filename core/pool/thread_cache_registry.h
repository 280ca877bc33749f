// A DevicePool's side of its thread caches: which threads hold one, the counters of caches
// whose threads have exited, and the flush epoch. Creating a cache, retiring it at thread exit
// and reading statistics take the registry lock; the fast path never does.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "pool/coalescing_pool.h"
#include "pool/pool_settings.h"
#include "pool/size_class_pool.h"
#include "pool/thread_cache.h"

namespace tidal::pool {

class ThreadCacheRegistry {
public:
    struct Totals {
        uint64_t hits = 0;
        uint64_t misses = 0;
        uint64_t frees = 0;
        uint64_t allocated_bytes = 0;
        uint64_t freed_bytes = 0;
    };

    // Both pools must outlive the registry (caches flush into them until it is destroyed).
    ThreadCacheRegistry(SizeClassPool &small, CoalescingPool &large, const PoolSettings &settings);
    // Detaches every cache before the pool behind it goes away (see ThreadCache).
    ~ThreadCacheRegistry();
    ThreadCacheRegistry(const ThreadCacheRegistry &) = delete;
    ThreadCacheRegistry &operator=(const ThreadCacheRegistry &) = delete;

    bool enabled() const noexcept { return enabled_; }
    // This pool's id (upper 40 bits, unique in the process, never reused) and its flush epoch
    // (lower 24 bits). A cache whose key differs belongs to another pool or missed a flush.
    uint64_t key() const noexcept { return key_.load(std::memory_order_relaxed); }

    // The calling thread's cache for this pool, created on first use and made hot, already
    // flushed if a flush was requested since its last use. nullptr when caches are off or the
    // thread is exiting. Throws std::bad_alloc.
    ThreadCache *attach()
    {
        if (ThreadCache *hot = ThreadCache::hot(); hot && hot->key() == key())
            return hot;
        return attach_slow();
    }
    // Every thread flushes its cache at its next call into the pool (trim).
    void request_flush() noexcept;
    // Flushes the calling thread's cache now, if it has one (creates none).
    void flush_current_thread() noexcept;
    // Takes every thread's kept large blocks back into the coalescing pool now (before it
    // grows, on trim, when the upstream is full). Returns the bytes taken back.
    uint64_t reclaim_large() noexcept;
    // Called by a cache whose thread exits: its blocks and counters come back here.
    void retire(ThreadCache &cache) noexcept;
    Totals totals() const;

private:
    static uint64_t next_pool_id() noexcept;
    ThreadCache *attach_slow();

    SizeClassPool &small_;
    CoalescingPool &large_;
    const bool enabled_;
    const uint64_t large_budget_;
    std::vector<uint32_t> capacity_; // per class
    std::atomic<uint64_t> key_;
    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<ThreadCache>> caches_;
    Totals retired_;
};

} // namespace tidal::pool
