// A statistics counter that many threads bump at once: one atomic per stripe, each on its own
// cache line, a thread always bumping the stripe it was given on its first bump. One shared
// atomic (what the pinned host-copy path had) makes every copy of 16 threads take that line
// from the last core that bumped it. Reading sums the stripes: exact for every bump that
// happened before the read, as the single atomic was (relaxed both ways).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tidal {

class ShardedCounter {
public:
    void add(uint64_t n = 1) noexcept { stripes_[stripe()].value.fetch_add(n, std::memory_order_relaxed); }
    uint64_t load() const noexcept
    {
        uint64_t sum = 0;
        for (const Stripe &s : stripes_)
            sum += s.value.load(std::memory_order_relaxed);
        return sum;
    }

private:
    static constexpr size_t kStripes = 16; // the threads of one H200 host, one line each
    struct alignas(64) Stripe {
        std::atomic<uint64_t> value{0};
    };
    // Threads in the order they first bumped any counter, round robin: the first 16 threads
    // never share a stripe.
    static size_t stripe() noexcept
    {
        static std::atomic<size_t> next{0};
        thread_local const size_t mine = next.fetch_add(1, std::memory_order_relaxed) % kStripes;
        return mine;
    }
    std::array<Stripe, kStripes> stripes_;
};

} // namespace tidal
