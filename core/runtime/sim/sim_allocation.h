// What the simulated device remembers about one allocation it handed out.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/sim/sim_host_block.h"
#include "runtime/sim/sim_page_residency.h"
#include "tidal/tidal.h"

namespace tidal::sim {

inline constexpr int32_t kNoLocation = -2; // "none" / "unknown" in advice and range attributes

// Advice is kept per allocation, not per page: the core advises whole allocations (pooled
// blocks are re-advised when handed out again), so per-page advice would only cost memory.
struct ManagedAdvice {
    bool read_mostly = false;
    int32_t preferred = kNoLocation;     // device, -1 host, -2 none
    PageMask accessed_by;                // the locations that map the range
    bool coarse = false;                 // AMD coherency mode (MANAGED_COARSE starts coarse)
    // Per page, as the vendors keep it (a split allocation's parts are prefetched to different
    // devices): device, -1 host, -2 never prefetched. Empty until the first prefetch.
    std::vector<int32_t> last_prefetch;
};

struct SimAllocation {
    HostBlock block;
    uint64_t size = 0;
    int32_t kind = TIDAL_KIND_PAGEABLE;
    int32_t device = TIDAL_DEVICE_HOST;    // owner for device and managed kinds
    std::optional<PageResidency> pages;    // managed kinds only
    ManagedAdvice advice;

    uintptr_t base() const noexcept { return reinterpret_cast<uintptr_t>(block.data()); }
    uintptr_t end() const noexcept { return base() + size; }
    bool managed() const noexcept { return pages.has_value(); }
    bool device_kind() const noexcept
    {
        return kind == TIDAL_KIND_DEVICE || kind == TIDAL_KIND_DEVICE_FINE;
    }
};

} // namespace tidal::sim
