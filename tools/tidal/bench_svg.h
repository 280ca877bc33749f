// `tidal bench --svg`: one hand-written SVG file with two charts a browser opens -- copy
// bandwidth against transfer size per direction, host memory and path (log-log), and
// alloc+free latency per kind and size for each backend (bars on a log scale).
#pragma once

#include <string>

#include "bench_results.h"

namespace tidal_tool {

std::string bench_svg(const BenchResults &r);

} // namespace tidal_tool
