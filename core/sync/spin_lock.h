// A lock for critical sections of a few dozen instructions that two threads rarely want at
// once: a registry shard (every tidal_alloc and tidal_free takes one; 64 shards) and a thread
// cache's large-block slots (wanted by another thread only when the pool reclaims them). A
// test-and-test-and-set lock costs a handful of instructions where a pthread mutex costs a
// library call each way. Measured with tools/bench/capi_pairs.c under callgrind on the
// simulated device: 1001 -> 884 instructions per C API alloc+free pair with this lock and the
// decision cache's initial-exec thread-local together. Waiters spin briefly, then yield, so a
// preempted holder does not burn a core.
#pragma once

#include <atomic>
#include <thread>

#include "sync/spin_wait.h"

namespace tidal {

class SpinLock {
public:
    void lock() noexcept
    {
        for (unsigned spins = 0;; ++spins) {
            if (!locked_.exchange(true, std::memory_order_acquire))
                return;
            while (locked_.load(std::memory_order_relaxed))
                backoff(spins++);
        }
    }
    bool try_lock() noexcept
    {
        return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
    }
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

    // A waiter's step after `spins` failed tries: pause briefly, then yield.
    static void backoff(unsigned spins) noexcept
    {
        if (spins < kSpinsBeforeYield) {
            cpu_pause();
        } else {
            std::this_thread::yield();
        }
    }

private:
    static constexpr unsigned kSpinsBeforeYield = 64;
    std::atomic<bool> locked_{false};
};

} // namespace tidal
