// What `tidal bench` measured, in one value the report writers, the SVG chart and the profile
// writer all read. Times are seconds on the runtime's clock (tidal_clock: the host's monotonic
// clock on a GPU, the simulated clock on the simulated device); rates are GB/s (10^9 bytes/s).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tidal/tidal.h>

namespace tidal_tool {

// Median time of one alloc+free pair of `kind` at `bytes` from one backend: "runtime" (pools
// off: one runtime call each plus tidal's own work), "vendor" (the runtime's stream-ordered
// pool) or "tidal" (tidal's pools, warmed).
struct LatencyPoint {
    std::string kind;
    uint64_t bytes = 0;
    std::string backend;
    std::optional<double> seconds; // empty: not measured, `note` says why
    unsigned reps = 0;
    unsigned pairs_per_rep = 0;
    std::string note;
};

// One copy rate. `series` names direction, host memory and path, e.g. "h2d pinned runtime".
struct BandwidthPoint {
    std::string direction; // h2d, d2h, d2d
    std::string memory;    // pinned, pageable (the host side), device (d2d)
    // runtime (its memcpy) or tidal_copy, both timed with tidal_clock around the synchronous call;
    // rt_events: the runtime's memcpy of the same calls timed between runtime events (an extra)
    std::string path;
    uint64_t bytes = 0;
    std::optional<double> seconds;
    unsigned reps = 0;
    std::string note;

    std::string series() const { return direction + " " + memory + " " + path; }
    // d2d counts read and write traffic, as the profiles' d2d figure does.
    double traffic() const { return direction == "d2d" ? 2.0 * static_cast<double>(bytes) : static_cast<double>(bytes); }
    std::optional<double> gbs() const
    {
        if (!seconds || *seconds <= 0)
            return std::nullopt;
        return traffic() / *seconds / 1e9;
    }
};

// Managed memory of `bytes`: demand_paging (a touch kernel on host-resident pages),
// prefetch_h2d, prefetch_then_touch (prefetch, then the same kernel), prefetch_d2h.
struct ManagedPoint {
    std::string mode;
    uint64_t bytes = 0;
    std::optional<double> seconds;
    unsigned reps = 0;
    std::string note;

    std::optional<double> gbs() const
    {
        if (!seconds || *seconds <= 0)
            return std::nullopt;
        return static_cast<double>(bytes) / *seconds / 1e9;
    }
};

// Elastic memory of `bytes`: offload (tidal_offload_range to the host home) and restore
// (tidal_restore_range) beside the runtime's own device<->pinned copy of the same bytes
// (runtime_d2h, runtime_h2d), all four timed with tidal_clock; home: making the host home
// at the first offload, which the timed offloads do not pay. The same shape as ManagedPoint.
using ElasticPoint = ManagedPoint;

// A figure that is not a series: kernel launch, zero-copy read, host memcpy.
struct ScalarPoint {
    std::string name;
    std::optional<double> value;
    std::string unit; // "s" or "GB/s"
    uint64_t bytes = 0;
    std::string detail;
};

struct BenchResults {
    std::string date;            // ISO 8601, UTC
    std::string runtime;         // tidal_system_info.runtime
    std::string runtime_detail;
    tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
    bool simulated = false;
    bool quick = false;
    unsigned host_threads = 0;
    std::vector<uint64_t> latency_sizes;
    std::vector<uint64_t> bandwidth_sizes;
    std::vector<uint64_t> managed_sizes;
    uint64_t elastic_size = 0;
    std::vector<LatencyPoint> latency;
    std::vector<BandwidthPoint> bandwidth;
    std::vector<ManagedPoint> managed;
    std::vector<ElasticPoint> elastic;
    std::vector<ScalarPoint> scalars;
    std::vector<std::string> notes; // what was skipped and why, what the figures include

    const ScalarPoint *scalar(const std::string &name) const
    {
        for (const ScalarPoint &s : scalars)
            if (s.name == name)
                return &s;
        return nullptr;
    }
};

} // namespace tidal_tool
