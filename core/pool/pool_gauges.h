// The byte gauges both halves of a DevicePool (size classes and coalescing chunks) feed, so
// that one pool reports one reserved figure and one high-water mark. Only locked slow paths
// touch these; the thread-cache fast path never does (a shared counter there would bounce one
// cache line between all allocating threads). Every atomic read-modify-write costs a few
// nanoseconds even uncontended, so the large half -- one writer at a time, under its lock --
// uses plain load/store pairs and checks the high-water mark without a read-modify-write
// unless it actually rises.
#pragma once

#include <atomic>
#include <cstdint>

namespace tidal::pool {

class PoolGauges {
public:
    void add_reserved(uint64_t bytes) noexcept
    {
        raise(reserved_high_water_, reserved_.fetch_add(bytes, std::memory_order_relaxed) + bytes);
        upstream_acquires_.fetch_add(1, std::memory_order_relaxed);
    }
    void sub_reserved(uint64_t bytes) noexcept
    {
        reserved_.fetch_sub(bytes, std::memory_order_relaxed);
        upstream_releases_.fetch_add(1, std::memory_order_relaxed);
    }
    // Bytes handed out of the shared free lists (to callers, thread caches or pending frees).
    // Any thread, any lock:
    void add_outstanding(uint64_t bytes) noexcept
    {
        const uint64_t now = outstanding_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
        raise(outstanding_high_water_, now + single_writer_outstanding_.load(std::memory_order_relaxed));
    }
    void sub_outstanding(uint64_t bytes) noexcept { outstanding_.fetch_sub(bytes, std::memory_order_relaxed); }
    // Only ever called by one thread at a time (the coalescing pool, under its lock):
    void add_outstanding_single_writer(uint64_t bytes) noexcept
    {
        const uint64_t now = single_writer_outstanding_.load(std::memory_order_relaxed) + bytes;
        single_writer_outstanding_.store(now, std::memory_order_relaxed);
        raise(outstanding_high_water_, now + outstanding_.load(std::memory_order_relaxed));
    }
    void sub_outstanding_single_writer(uint64_t bytes) noexcept
    {
        single_writer_outstanding_.store(single_writer_outstanding_.load(std::memory_order_relaxed) - bytes,
                                         std::memory_order_relaxed);
    }

    uint64_t reserved() const noexcept { return reserved_.load(std::memory_order_relaxed); }
    uint64_t reserved_high_water() const noexcept { return reserved_high_water_.load(std::memory_order_relaxed); }
    uint64_t outstanding() const noexcept
    {
        return outstanding_.load(std::memory_order_relaxed) + single_writer_outstanding_.load(std::memory_order_relaxed);
    }
    uint64_t outstanding_high_water() const noexcept { return outstanding_high_water_.load(std::memory_order_relaxed); }
    uint64_t upstream_acquires() const noexcept { return upstream_acquires_.load(std::memory_order_relaxed); }
    uint64_t upstream_releases() const noexcept { return upstream_releases_.load(std::memory_order_relaxed); }

private:
    static void raise(std::atomic<uint64_t> &mark, uint64_t value) noexcept
    {
        uint64_t seen = mark.load(std::memory_order_relaxed);
        while (seen < value && !mark.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
        }
    }

    std::atomic<uint64_t> reserved_{0};
    std::atomic<uint64_t> reserved_high_water_{0};
    std::atomic<uint64_t> outstanding_{0};
    std::atomic<uint64_t> single_writer_outstanding_{0};
    std::atomic<uint64_t> outstanding_high_water_{0};
    std::atomic<uint64_t> upstream_acquires_{0};
    std::atomic<uint64_t> upstream_releases_{0};
};

} // namespace tidal::pool
