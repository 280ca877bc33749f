#include "telemetry/usage_ledger.h"

#include <algorithm>

namespace tidal::telemetry {
namespace {

void add(Usage &u, uint64_t bytes)
{
    u.bytes += bytes;
    ++u.count;
}

// The peaks of `seen` become at least the current values of `now`; `now` gets them.
void raise(Usage &seen, Usage &now)
{
    seen.peak_bytes = std::max({seen.peak_bytes, now.bytes});
    seen.peak_count = std::max({seen.peak_count, now.count});
    now.peak_bytes = seen.peak_bytes;
    now.peak_count = seen.peak_count;
}

void add(TagPaging &into, const tidal_rt_paging_stats &c, uint64_t size)
{
    tidal_rt_paging_stats &t = into.counts;
    t.faults_from_host += c.faults_from_host;
    t.fault_bytes_from_host += c.fault_bytes_from_host;
    t.faults_from_peer += c.faults_from_peer;
    t.fault_bytes_from_peer += c.fault_bytes_from_peer;
    t.link_bytes += c.link_bytes;
    t.link_page_bytes += c.link_page_bytes;
    t.moved_to_device_bytes += c.moved_to_device_bytes;
    t.moved_to_host_bytes += c.moved_to_host_bytes;
    into.largest_bytes = std::max(into.largest_bytes, size);
}

} // namespace

void UsageLedger::retire(const AllocationRecord &r, const tidal_rt_paging_stats &counts)
{
    std::lock_guard lock(mutex_);
    const std::string_view group = group_of(r.tag, tag_depth_);
    auto it = retired_paging_.find(group);
    if (it == retired_paging_.end())
        it = retired_paging_.emplace(std::string(group), TagPaging{}).first;
    add(it->second, counts, r.size);
}

std::string_view UsageLedger::group_of(std::string_view tag, uint32_t depth) noexcept
{
    if (depth == 0)
        return tag;
    size_t end = 0;
    for (uint32_t part = 0; part < depth; ++part) {
        const size_t sep = tag.find_first_of("/.", part == 0 ? 0 : end + 1);
        if (sep == std::string_view::npos)
            return tag;
        end = sep;
    }
    return tag.substr(0, end);
}

void UsageLedger::observe(const std::vector<AllocationRecord> &live, StatsSnapshot &snapshot,
                          const PagingReader *paging)
{
    // Read outside the lock: the reader calls the runtime (and may throw).
    std::map<std::string, TagPaging, std::less<>> live_paging;
    if (paging)
        for (const AllocationRecord &r : live)
            if (TIDAL_KIND_IS_MANAGED(r.kind))
                add(live_paging[std::string(group_of(r.tag, tag_depth_))], (*paging)(r), r.size);
    std::map<std::tuple<int, int32_t>, Usage> kinds;
    std::map<std::string, Usage, std::less<>> tags;
    Usage total;
    for (const AllocationRecord &r : live) {
        add(total, r.size);
        add(kinds[{static_cast<int>(r.kind), r.device}], r.size);
        const std::string_view group = group_of(r.tag, tag_depth_);
        auto it = tags.find(group);
        if (it == tags.end())
            it = tags.emplace(std::string(group), Usage{}).first;
        add(it->second, r.size);
    }
    std::lock_guard lock(mutex_);
    raise(live_peak_, total);
    snapshot.live = total;
    // Groups seen before and empty now stay listed, with their peaks.
    for (auto &[key, peak] : kind_peaks_)
        kinds.try_emplace(key);
    for (auto &[tag, peak] : tag_peaks_)
        tags.try_emplace(tag);
    if (paging)
        for (auto &[tag, counted] : retired_paging_)
            tags.try_emplace(tag);
    snapshot.kinds.clear();
    for (auto &[key, usage] : kinds) {
        raise(kind_peaks_[key], usage);
        snapshot.kinds.push_back({static_cast<tidal_kind>(std::get<0>(key)), std::get<1>(key), usage});
    }
    snapshot.tags.clear();
    for (auto &[tag, usage] : tags) {
        raise(tag_peaks_[tag], usage);
        snapshot.tags.push_back({tag, usage, std::nullopt});
        if (!paging)
            continue;
        TagPaging &p = snapshot.tags.back().paging.emplace();
        if (auto it = retired_paging_.find(tag); it != retired_paging_.end())
            p = it->second;
        if (auto it = live_paging.find(tag); it != live_paging.end())
            add(p, it->second.counts, it->second.largest_bytes);
    }
}

} // namespace tidal::telemetry
