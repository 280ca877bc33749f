// One thread's stash of blocks for one pool: a bounded stack per size class and a few large
// blocks (matched by exact size). The size classes are touched only by their own thread, so
// that fast path (a pop on allocate, a push on free) takes no lock and shares no cache line
// with other threads. The large blocks sit behind a spin lock that only their own thread
// takes, except when the pool reclaims them (reclaim_large) instead of growing: a thread may
// keep big blocks (1 GiB by default) because they never cost the process memory it needs.
//
// Lifetime, the hard part: a cache is shared (shared_ptr) by its thread's list of caches and
// by its pool's ThreadCacheRegistry. Whichever ends first -- the thread or the pool -- cuts
// the link under link_mutex_: a thread that exits gives its blocks back (retire), a pool that
// is destroyed marks its caches detached first and only then frees its memory. A detached
// cache is never used again: pool ids are never reused, so no live pool matches it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "pool/size_classes.h"
#include "sync/spin_lock.h"

namespace tidal::pool {

class CoalescingPool;
class SizeClassPool;
class ThreadCacheRegistry;

class ThreadCache {
public:
    // A key's low bits are the pool's flush epoch, the rest its id (ThreadCacheRegistry).
    static constexpr unsigned kEpochBits = 24;
    static constexpr uint64_t kEpochMask = (uint64_t{1} << kEpochBits) - 1;

    // Monotonic per-cache counters; written by the owning thread only (plain increments, no
    // lock prefix), read by stats() from any thread. Every allocation that goes through a
    // cache is a hit or a miss (a refill), so the fast path bumps no separate count.
    struct Counters {
        std::atomic<uint64_t> hits{0};
        std::atomic<uint64_t> misses{0};
        std::atomic<uint64_t> frees{0};
        std::atomic<uint64_t> allocated_bytes{0};
        std::atomic<uint64_t> freed_bytes{0};
    };

    static constexpr unsigned kLargeSlots = 4;

    // `capacity[cls]`: the most blocks kept for class cls (0 = never cache that class);
    // `large_budget`: the most bytes of large blocks kept.
    ThreadCache(ThreadCacheRegistry &registry, uint64_t key, const uint32_t *capacity, uint64_t large_budget);
    ThreadCache(const ThreadCache &) = delete;
    ThreadCache &operator=(const ThreadCache &) = delete;

    // The cache this thread used last, whatever its pool: callers compare key() to their own.
    static ThreadCache *hot() noexcept { return hot_; }
    // The calling thread's cache for the pool `key` names (any epoch), made hot; nullptr if
    // it has none.
    static ThreadCache *find(uint64_t key) noexcept;
    // Adds a new cache to the calling thread's list and makes it hot. Throws std::bad_alloc.
    static void adopt(std::shared_ptr<ThreadCache> cache);
    // True once this thread's caches were retired at thread exit: later calls on the thread
    // (from other thread_local destructors) must not create caches again.
    static bool thread_exited() noexcept { return exited_; }

    // Pool id and flush epoch in one word (see ThreadCacheRegistry::key()), so the fast path
    // checks "my pool, no flush requested" with one compare.
    uint64_t key() const noexcept { return key_; }
    void set_key(uint64_t key) noexcept { key_ = key; }

    // Fast path: a cached block of class `cls` or nullptr.
    void *pop(unsigned cls) noexcept
    {
        Bin &b = bins_[cls];
        if (b.count == 0)
            return nullptr;
        bump(counters_.hits, 1);
        bump(counters_.allocated_bytes, SizeClasses::size_of(cls));
        return b.slots[--b.count];
    }
    // Fast path: false when the class's stack is full (or not cached).
    bool push(unsigned cls, void *p) noexcept
    {
        Bin &b = bins_[cls];
        if (b.count == b.capacity)
            return false;
        b.slots[b.count++] = p;
        bump(counters_.frees, 1);
        bump(counters_.freed_bytes, SizeClasses::size_of(cls));
        return true;
    }

    // A kept large block of exactly `bytes`, or nullptr (newest first). Owning thread only.
    void *pop_large(size_t bytes) noexcept
    {
        std::lock_guard lock(large_lock_);
        for (unsigned i = large_count_; i-- > 0;) {
            if (large_[i].bytes != bytes)
                continue;
            void *p = large_[i].p;
            for (unsigned j = i + 1; j < large_count_; ++j)
                large_[j - 1] = large_[j];
            --large_count_;
            large_bytes_ -= bytes;
            bump(counters_.hits, 1);
            bump(counters_.allocated_bytes, bytes);
            return p;
        }
        return nullptr;
    }
    // Keeps a freed large block, giving the oldest back to `pool` to make room; false (and
    // nothing kept) when the block alone is over the budget. Throws std::bad_alloc (from
    // the pool) with nothing changed.
    bool push_large(void *p, size_t bytes, CoalescingPool &pool);

    // Slow paths, owning thread only. Refills class `cls` from `pool` (half its capacity) and
    // pops one block; throws tidal::Error when the pool cannot grow.
    void *refill(SizeClassPool &pool, unsigned cls);
    // Gives the upper half of a full class back to `pool`, then keeps `p`.
    void spill(SizeClassPool &pool, unsigned cls, void *p) noexcept;
    // Gives every block back to the pools.
    void flush(SizeClassPool &small, CoalescingPool &large) noexcept;
    // Gives the kept large blocks back to `large`; any thread (the pool, before it grows).
    // Returns the bytes given back.
    uint64_t reclaim_large(CoalescingPool &large) noexcept;

    const Counters &counters() const noexcept { return counters_; }

    // Link to the pool. detach(): the pool is going away. retire(): the thread is.
    void detach() noexcept;
    void retire() noexcept;
    bool detached() const noexcept { return detached_.load(std::memory_order_acquire); }

private:
    struct Bin {
        uint32_t count = 0;
        uint32_t capacity = 0;
        void **slots = nullptr;
    };
    struct LargeSlot {
        void *p = nullptr;
        size_t bytes = 0;
    };
    static void bump(std::atomic<uint64_t> &c, uint64_t v) noexcept
    {
        c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    }

    // initial-exec: the core is built position-independent, and the default (general-dynamic)
    // model would call __tls_get_addr on every fast-path access. The few bytes come from the
    // static TLS surplus glibc keeps for exactly this, also when libtidal.so is dlopen'ed.
    [[gnu::tls_model("initial-exec")]] static inline thread_local ThreadCache *hot_ = nullptr;
    [[gnu::tls_model("initial-exec")]] static inline thread_local bool exited_ = false;

    uint64_t key_;
    Bin bins_[SizeClasses::kCount];
    std::unique_ptr<void *[]> storage_;
    SpinLock large_lock_;          // guards large_, large_count_, large_bytes_
    LargeSlot large_[kLargeSlots]; // oldest first
    unsigned large_count_ = 0;
    uint64_t large_bytes_ = 0;
    const uint64_t large_budget_;
    Counters counters_;
    std::mutex link_mutex_;
    ThreadCacheRegistry *registry_; // guarded by link_mutex_; null once detached or retired
    std::atomic<bool> detached_{false};

    friend struct ThreadCacheList;
};

} // namespace tidal::pool
