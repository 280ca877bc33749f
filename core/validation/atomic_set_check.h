// The host side of the atomic set (TIDAL_CHECK_ATOMIC_SET[_SHARED]; contributions in
// kernels/atomic_set.h): the words' starting values, the host threads that work on the same
// words while the kernel runs, and the exact final value every word must hold.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "atomic_set.h"

namespace tidal {

class AtomicSetCheck {
public:
    static constexpr uint32_t kDefaultRounds = 16;
    static constexpr uint32_t kHostThreads = 4;
    // Each host thread runs this many times the device threads' rounds: host atomics on host
    // memory are quicker, and more of them overlap the kernel.
    static constexpr uint32_t kHostRoundFactor = 16;
    using Words = std::array<unsigned char, atomic_set::kBytes>;

    // `rounds` per device thread (> 0); host threads join when `shared`.
    AtomicSetCheck(uint32_t rounds, bool shared) : rounds_(rounds), shared_(shared) {}
    ~AtomicSetCheck() { finish(); }
    AtomicSetCheck(const AtomicSetCheck &) = delete;
    AtomicSetCheck &operator=(const AtomicSetCheck &) = delete;

    // The most rounds a check may ask for: float adds of 1 are exact up to 2^24.
    static uint64_t max_rounds(bool shared);
    // What the words hold before the kernel.
    static Words initial();
    // Shared: starts the host threads on `words`; they wait for release() so that they run
    // while the kernel does. finish() waits for them (the destructor too).
    void start(unsigned char *words);
    void release() { go_.store(true, std::memory_order_release); }
    void finish();
    // The operations (bit i = atomic_set::Op i) whose word in `words` is not exactly what
    // every participant's contributions leave.
    uint32_t wrong(const Words &words) const;

private:
    uint32_t rounds_;
    bool shared_;
    std::atomic<bool> go_{false};
    std::vector<std::thread> threads_;
};

} // namespace tidal
