// A registry shard's lock, which readers can also pass without writing to it: a sequence lock.
// Its one word counts the writers that took it and is odd while one holds it, so a writer pays
// what the test-and-set spin lock it replaced paid (an atomic exchange in, a store out), and a
// reader that only looks (an interior query through a page hint) reads the word before and
// after and keeps what it read if the word did not move. With the spin lock, every query wrote
// its shard's cache line twice: sixteen threads querying across 64 shards then took turns
// owning those lines, which is what stops reads from scaling with threads.
//
// What a reader reads between the two loads may be torn (a writer of the same shard was in the
// middle of changing it). It must read only memory that stays mapped and of the same type (the
// registry's nodes live in an arena that never gives memory back), copy what it reads, and use
// the copy only once read_valid() says no writer came by.
#pragma once

#include <atomic>
#include <cstdint>

#include "sync/spin_lock.h"

namespace tidal {

class ShardLock {
public:
    void lock() noexcept
    {
        for (unsigned spins = 0;; ++spins) {
            uint64_t s = seq_.load(std::memory_order_relaxed);
            if (!(s & 1) && seq_.compare_exchange_weak(s, s + 1, std::memory_order_acquire, std::memory_order_relaxed)) {
                // Nothing the writer stores may be seen before the odd count by a reader.
                std::atomic_thread_fence(std::memory_order_release);
                return;
            }
            SpinLock::backoff(spins);
        }
    }
    void unlock() noexcept { seq_.store(seq_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

    // A reader's first step: the count to hand to read_valid(), or odd when a writer holds the
    // lock (then the reader takes the lock instead of waiting here).
    uint64_t read_begin() const noexcept { return seq_.load(std::memory_order_acquire); }
    static bool writing(uint64_t seq) noexcept { return seq & 1; }
    // Whether no writer took the lock since read_begin() returned `seq`.
    bool read_valid(uint64_t seq) const noexcept
    {
        std::atomic_thread_fence(std::memory_order_acquire); // the reads above come before this load
        return seq_.load(std::memory_order_relaxed) == seq;
    }

private:
    std::atomic<uint64_t> seq_{0};
};

} // namespace tidal
