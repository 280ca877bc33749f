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

// Read-mostly and coherency advice are kept per allocation (the core gives them to whole
// allocations); preferred location, accessed-by and the last prefetch per page, as the vendors
// keep them, because a split allocation's parts name different devices (issue 16).
struct ManagedAdvice {
    struct PageAdvice {
        int32_t preferred = kNoLocation; // device, -1 host, -2 none
        PageMask accessed_by;            // the locations that map the page
    };
    bool read_mostly = false;
    std::vector<PageAdvice> pages;       // empty until the first such advice: none anywhere
    bool coarse = false;                 // AMD coherency mode (MANAGED_COARSE starts coarse)

    PageAdvice at(std::size_t page) const { return pages.empty() ? PageAdvice{} : pages[page]; }
    // Per page, as the vendors keep it (a split allocation's parts are prefetched to different
    // devices): device, -1 host, -2 never prefetched. Empty until the first prefetch.
    std::vector<int32_t> last_prefetch;
};

// What happened to one managed page, for range_paging (the core reads a buffer's pages).
struct PageCounts {
    uint32_t faults_from_host = 0;
    uint32_t faults_from_peer = 0;
    uint32_t moves_to_device = 0; // by prefetch
    uint32_t moves_to_host = 0;
    uint32_t link_accesses = 0;   // kernels that reached the page over the link
    uint64_t link_bytes = 0;      // kernel traffic served over the link without migrating
};

struct SimAllocation {
    HostBlock block;
    uint64_t size = 0;
    int32_t kind = TIDAL_KIND_PAGEABLE;
    int32_t device = TIDAL_DEVICE_HOST;    // owner for device and managed kinds
    std::optional<PageResidency> pages;    // managed kinds only
    ManagedAdvice advice;
    std::vector<PageCounts> page_counts;   // managed kinds; empty until a page is counted

    PageCounts &counts(std::size_t page)
    {
        if (page_counts.empty())
            page_counts.resize(pages->page_count());
        return page_counts[page];
    }

    uintptr_t base() const noexcept { return reinterpret_cast<uintptr_t>(block.data()); }
    uintptr_t end() const noexcept { return base() + size; }
    bool managed() const noexcept { return pages.has_value(); }
    bool device_kind() const noexcept
    {
        return kind == TIDAL_KIND_DEVICE || kind == TIDAL_KIND_DEVICE_FINE;
    }
};

} // namespace tidal::sim
