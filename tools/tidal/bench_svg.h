// `tidal bench --svg`: one hand-written SVG file with two charts a browser opens -- copy
// bandwidth against transfer size per direction, host memory and path (log-log), and
// alloc+free latency per kind and size for each backend (bars on a log scale).
//
// `tidal replay --svg`: device memory over time, stacked by tag, one chart per configuration,
// drawn with the same helpers.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench_results.h"

namespace tidal_tool {

std::string bench_svg(const BenchResults &r);

// One chart: bytes of each series (a tag) at each moment, stacked.
struct MemoryChart {
    std::string title;
    std::vector<double> seconds; // the moments, increasing
    std::vector<std::pair<std::string, std::vector<uint64_t>>> series; // one value per moment
};

std::string memory_svg(const std::vector<MemoryChart> &charts, const std::string &caption);

} // namespace tidal_tool
