// `tidal doctor SNAPSHOT`: the same four symptoms as the trace diagnosis (trace_doctor.h), read
// from a live context's counters, the statistics snapshot TIDAL_STATS or tidal_stats_json wrote.
// The counters are per tag group and have no order: what they show, per group, compared
// against the group's largest managed allocation ("its size"):
//   first-access latency  kernels demand-paged at least half its size, more than was prefetched
//                         -> declare it before the first kernel;
//   fault-bound           kernels reached its pages over the link, at least twice its size in
//                         all (or faulted it in twice over) -> preferred-location advice;
//   thrashing             it was prefetched to the device and moved back to the host at least
//                         twice its size each way, and tidal's evictions account for the moves
//                         to the host -> smaller batches, another order, or a larger budget;
//   alternation           the same back and forth, moved to the host by the program
//                         -> a lookahead declaration, or pinned memory.
// Per-group paging counts come from a runtime that counts paging (the simulated device); on a
// GPU runtime the snapshot has none and the diagnosis says what it cannot tell.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "trace_doctor.h"

namespace tidal_tool {

// Whether `text` is a statistics snapshot (one JSON object of schema "tidal-stats/..."), the
// one test that tells it from a trace.
bool is_stats_snapshot(const std::string &text, nlohmann::json *snapshot);

class SnapshotDoctor {
public:
    explicit SnapshotDoctor(const nlohmann::json &snapshot);
    const std::vector<Finding> &findings() const noexcept { return findings_; }
    // What these counters cannot show, for the reader to know what "no finding" does not mean.
    const std::vector<std::string> &blind_spots() const noexcept { return blind_spots_; }

private:
    std::vector<Finding> findings_;
    std::vector<std::string> blind_spots_;
};

} // namespace tidal_tool
