// How many times each status was returned by a call on one context. Counted only where an
// error is turned into a status (the C boundary's catch blocks): nothing on a call that succeeds.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "tidal/tidal.h"

namespace tidal::telemetry {

class ErrorCounts {
public:
    void count(tidal_status status) noexcept
    {
        const auto i = static_cast<size_t>(status);
        counts_[i < kSlots ? i : 0].fetch_add(1, std::memory_order_relaxed); // slot 0 (OK) holds unknown ones
    }
    // Statuses returned at least once, in numeric order (TIDAL_OK stands for numbers unknown here).
    std::vector<std::pair<tidal_status, uint64_t>> nonzero() const
    {
        std::vector<std::pair<tidal_status, uint64_t>> out;
        for (size_t i = 0; i < kSlots; ++i)
            if (const uint64_t n = counts_[i].load(std::memory_order_relaxed))
                out.emplace_back(static_cast<tidal_status>(i), n);
        return out;
    }

private:
    static constexpr size_t kSlots = 64; // status numbers are small and append-only
    std::array<std::atomic<uint64_t>, kSlots> counts_{};
};

} // namespace tidal::telemetry
