// What is live, by kind and device and by tag group, counted from the registry's records when a
// snapshot is taken. Nothing is counted per allocation (the pooled alloc+free pair stays as it
// was), so the peaks kept here are the highest values snapshots saw, not running peaks: the
// running peaks tidal has are the pools' and the scheduler's (in the snapshot's "pools" and
// "devices"). The one thing kept per free is a managed buffer's paging counts (retire), on a
// runtime that counts paging: managed frees already leave the pooled fast path. A snapshot taken
// while another thread frees may count that buffer's faults twice (live, then retired).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "registry/allocation_record.h"
#include "telemetry/stats_snapshot.h"

namespace tidal::telemetry {

class UsageLedger {
public:
    explicit UsageLedger(uint32_t tag_depth) : tag_depth_(tag_depth) {}

    // The tag's first `depth` parts ('/' or '.' end a part); the whole tag when depth is 0 or
    // the tag has no more parts.
    static std::string_view group_of(std::string_view tag, uint32_t depth) noexcept;

    // Reads a live managed allocation's paging counts from the runtime.
    using PagingReader = std::function<tidal_rt_paging_stats(const AllocationRecord &)>;

    // Fills snapshot.live, .kinds and .tags from `live` and raises the peaks seen. With a
    // reader (a runtime that counts paging), each tag group gets its paging: what its freed
    // allocations had (retire) and what its live managed ones have now.
    void observe(const std::vector<AllocationRecord> &live, StatsSnapshot &snapshot,
                 const PagingReader *paging = nullptr);
    // A managed allocation's paging counts, read as it is freed, kept under its tag group.
    void retire(const AllocationRecord &r, const tidal_rt_paging_stats &counts);

private:
    const uint32_t tag_depth_;
    std::mutex mutex_;
    Usage live_peak_;
    std::map<std::tuple<int, int32_t>, Usage> kind_peaks_;
    std::map<std::string, Usage, std::less<>> tag_peaks_;
    std::map<std::string, TagPaging, std::less<>> retired_paging_;
};

} // namespace tidal::telemetry
