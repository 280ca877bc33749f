#include "telemetry/leak_report.h"

#include <fmt/format.h>

#include "telemetry/call_sites.h"
#include "telemetry/json_writer.h"

namespace tidal::telemetry {
namespace {

std::string device_text(int32_t device)
{
    return device >= 0 ? fmt::format("device {}", device) : std::string("the host");
}

} // namespace

LeakReport::LeakReport(std::vector<AllocationRecord> live, const CallSites *sites) : leaks_(std::move(live))
{
    sites_.resize(leaks_.size());
    if (sites)
        for (size_t i = 0; i < leaks_.size(); ++i)
            sites_[i].call_site = sites->describe(leaks_[i].base);
}

std::vector<std::string> LeakReport::text(size_t limit) const
{
    std::vector<std::string> lines;
    if (leaks_.empty())
        return lines;
    uint64_t bytes = 0;
    for (const AllocationRecord &r : leaks_)
        bytes += r.size;
    lines.push_back(fmt::format("context destroyed with {} live allocation(s), {} bytes; freeing them", leaks_.size(), bytes));
    for (size_t i = 0; i < leaks_.size() && i < limit; ++i) {
        const AllocationRecord &r = leaks_[i];
        lines.push_back(fmt::format("  leak: {} bytes of {} memory on {} at {} tag '{}'", r.size, tidal_kind_name(r.kind),
                                    device_text(r.device), r.base, r.tag));
        for (const std::string &frame : sites_[i].call_site)
            lines.push_back("      at " + frame);
    }
    if (leaks_.size() > limit)
        lines.push_back(fmt::format("  ... and {} more", leaks_.size() - limit));
    return lines;
}

void LeakReport::write_json(JsonWriter &w) const
{
    w.begin_array();
    for (size_t i = 0; i < leaks_.size(); ++i) {
        const AllocationRecord &r = leaks_[i];
        w.begin_object();
        w.field("address", fmt::format("{}", r.base)).field("size", static_cast<uint64_t>(r.size));
        w.field("kind", tidal_kind_name(r.kind)).field("device", r.device).field("tag", std::string_view(r.tag));
        w.key("call_site").begin_array();
        for (const std::string &frame : sites_[i].call_site)
            w.value(frame);
        w.end_array();
        w.end_object();
    }
    w.end_array();
}

} // namespace tidal::telemetry
