#include "migration/unit_split.h"

#include <algorithm>
#include <limits>

namespace tidal {

namespace {

constexpr int32_t kUnclaimed = std::numeric_limits<int32_t>::min();

int32_t owner_of(uintptr_t lo, uintptr_t hi, const std::vector<UnitClaim> &claims, const std::vector<UnitClaim> &units)
{
    for (const UnitClaim &c : claims)
        if (c.lo <= lo && hi <= c.hi)
            return c.device;
    for (const UnitClaim &u : units)
        if (u.lo <= lo && hi <= u.hi && u.device >= 0)
            return u.device;
    return kUnclaimed;
}

} // namespace

std::vector<uintptr_t> unit_cuts(uintptr_t window_lo, uintptr_t window_hi, const std::vector<UnitClaim> &claims,
                                 const std::vector<UnitClaim> &units)
{
    // Elementary segments: between every edge any claim or unit has inside the window.
    std::vector<uintptr_t> edges{window_lo, window_hi};
    for (const auto *list : {&claims, &units})
        for (const UnitClaim &c : *list)
            for (uintptr_t e : {c.lo, c.hi})
                if (e > window_lo && e < window_hi)
                    edges.push_back(e);
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());

    std::vector<int32_t> device(edges.size() - 1);
    for (size_t i = 0; i + 1 < edges.size(); ++i)
        device[i] = owner_of(edges[i], edges[i + 1], claims, units);
    // Unclaimed bytes resident nowhere go with their neighbours: an untracked window declared
    // by one device moves whole, as it did before units could be cut.
    for (size_t i = 1; i < device.size(); ++i)
        if (device[i] == kUnclaimed)
            device[i] = device[i - 1];
    for (size_t i = device.size() - 1; i-- > 0;)
        if (device[i] == kUnclaimed)
            device[i] = device[i + 1];

    std::vector<uintptr_t> cuts;
    for (size_t i = 1; i < device.size(); ++i)
        if (device[i] != device[i - 1])
            cuts.push_back(edges[i]);
    return cuts;
}

} // namespace tidal
