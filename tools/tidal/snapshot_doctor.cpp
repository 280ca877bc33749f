#include "snapshot_doctor.h"

#include <fmt/format.h>

#include <algorithm>

#include "byte_sizes.h"

namespace tidal_tool {
namespace {

using nlohmann::json;

// Counts at least this many times a buffer's size: the same bytes came back again and again.
constexpr uint64_t kRepeats = 2;

uint64_t count(const json &o, const char *key) { return o.is_object() ? o.value(key, uint64_t{0}) : 0; }

std::string times(uint64_t bytes, uint64_t size)
{
    return fmt::format("{:.1f}x", size ? static_cast<double>(bytes) / static_cast<double>(size) : 0.0);
}

} // namespace

bool is_stats_snapshot(const std::string &text, json *snapshot)
{
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return false;
    const auto schema = j.find("schema");
    if (schema == j.end() || !schema->is_string() || schema->get<std::string>().rfind("tidal-stats/", 0) != 0)
        return false;
    *snapshot = std::move(j);
    return true;
}

SnapshotDoctor::SnapshotDoctor(const json &s)
{
    const std::string runtime = s.value("runtime", std::string("?"));
    // Device-wide: tidal's own evictions (the program's moves to the host are not evictions),
    // the budget, and the device that faulted most (where a declaration should send a buffer).
    uint64_t evicted = 0, budget = 0, most_faults = 0;
    int32_t device = 0;
    bool counted = true;
    for (const json &d : s.at("devices")) {
        evicted += count(d.at("evictions"), "bytes");
        budget = std::max(budget, count(d, "budget"));
        const json &f = d.contains("faults") ? d.at("faults") : json();
        counted = counted && f.is_object();
        if (count(f, "bytes") > most_faults) {
            most_faults = count(f, "bytes");
            device = d.value("device", 0);
        }
    }
    struct Trips {
        std::string tag;
        uint64_t size, to_device, to_host;
    };
    std::vector<Trips> trips;
    for (const json &t : s.at("by_tag")) {
        const json &f = t.contains("faults") ? t.at("faults") : json();
        const uint64_t size = count(f, "largest_allocation_bytes");
        if (!f.is_object() || size == 0)
            continue; // no managed memory counted in this group
        const std::string tag = t.value("tag", std::string());
        const uint64_t faulted = count(f, "bytes"), link = count(f, "link_page_bytes");
        const uint64_t to_device = count(f, "prefetched_to_device_bytes"), to_host = count(f, "prefetched_to_host_bytes");
        if (link >= kRepeats * size || (faulted >= kRepeats * size && to_host < size)) {
            findings_.push_back({"fault-bound", name_of(tag), size, 0,
                                 fmt::format("kernels reached {} of its pages over the link and faulted in {} ({} "
                                             "and {} its size of {}): the device waits on memory instead of computing",
                                             format_bytes(link), format_bytes(faulted), times(link, size),
                                             times(faulted, size), format_bytes(size)),
                                 fix_preferred_location(tag)});
        } else if (2 * faulted >= size && faulted > to_device) {
            findings_.push_back({"first-access-latency", name_of(tag), size, 0,
                                 fmt::format("kernels demand-paged {} of it ({} page faults, {} its size of {}) and "
                                             "{} prefetched: the first kernel on it waits on page faults",
                                             format_bytes(faulted), count(f, "count"), times(faulted, size),
                                             format_bytes(size),
                                             to_device ? "only " + format_bytes(to_device) + " was" : std::string("nothing was")),
                                 fix_declare_first(tag, size, device, "before the first kernel that uses it")});
        }
        if (std::min(to_device, to_host) >= kRepeats * size)
            trips.push_back({tag, size, to_device, to_host});
    }
    // Who moved a buffer back to the host is counted per device, not per tag: tidal's evictions
    // that cover a buffer's moves make them thrashing, otherwise the program moved it.
    uint64_t cycle_bytes = 0;
    std::string cycle_tags;
    for (const Trips &t : trips)
        if (evicted > 0 && evicted >= t.to_host) {
            cycle_bytes += t.size;
            cycle_tags += (cycle_tags.empty() ? "" : ", ") + name_of(t.tag);
        }
    for (const Trips &t : trips) {
        const std::string moves = fmt::format("{} moved to the device and {} back to the host ({} and {} its size of {})",
                                              format_bytes(t.to_device), format_bytes(t.to_host),
                                              times(t.to_device, t.size), times(t.to_host, t.size), format_bytes(t.size));
        if (evicted > 0 && evicted >= t.to_host)
            findings_.push_back({"thrashing", name_of(t.tag), t.size, 0,
                                 fmt::format("{}, and tidal evicted {} in all: the buffers that go round ({}: {}) do "
                                             "not fit {}",
                                             moves, format_bytes(evicted), cycle_tags, format_bytes(cycle_bytes),
                                             budget ? fmt::format("the budget of {}", format_bytes(budget)) : "the device"),
                                 fix_thrashing(name_of(t.tag), budget, cycle_bytes)});
        else
            findings_.push_back({"alternation", name_of(t.tag), t.size, 0,
                                 fmt::format("{}, {}: the program moves it between the host and the device, whole "
                                             "each time",
                                             moves, evicted ? fmt::format("more than tidal's evictions ({})", format_bytes(evicted))
                                                            : std::string("none of it evicted by tidal")),
                                 fix_alternation(t.tag, t.size, device)});
    }
    std::stable_sort(findings_.begin(), findings_.end(),
                     [](const Finding &a, const Finding &b) { return a.tag < b.tag; });

    blind_spots_.push_back("when: counters have no order or time, so they name no kernel nor line and cannot tell "
                           "how long a kernel waited; a trace can (TIDAL_TRACE=FILE, then `tidal doctor TRACE`)");
    blind_spots_.push_back(fmt::format("which buffer: figures are per tag group (tag_depth {}) and compared against "
                                       "the group's largest managed allocation; untagged buffers share one group",
                                       count(s, "tag_depth")));
    blind_spots_.push_back("who moved it: tidal's evictions and the program's own moves to the host are told apart "
                           "per device, not per buffer; where both happen, round trips count as thrashing only "
                           "when evictions cover them");
    blind_spots_.push_back("the host's side: host reads and writes of managed memory are not counted");
    if (!counted) {
        std::string devices;
        for (const json &d : s.at("devices"))
            if (const uint64_t b = count(d, "budget"); b && count(d.at("evictions"), "bytes") >= kRepeats * b)
                devices += fmt::format("; device {} evicted {}, {} its budget: likely thrashing, of buffers only a "
                                       "trace names",
                                       d.value("device", 0), format_bytes(count(d.at("evictions"), "bytes")),
                                       times(count(d.at("evictions"), "bytes"), b));
        blind_spots_.push_back(fmt::format("faults: the {} runtime counts no page faults and no moves per tag "
                                           "(\"faults\": null), so first-access latency, fault-bound kernels, "
                                           "thrashing and alternation do not show in its snapshot; record a trace "
                                           "and run `tidal doctor TRACE`, which replays it on the simulated device{}",
                                           runtime, devices));
    }
}

} // namespace tidal_tool
