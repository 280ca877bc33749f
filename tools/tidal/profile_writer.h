// `tidal bench --emit-profile`: a hardware profile for the simulated device, in the format of
// core/runtime/sim/profiles/h200.toml, from what was just measured. Every figure carries a
// comment saying where it came from; one that could not be measured takes a documented
// fallback (another measured figure), and the comment says so.
#pragma once

#include <optional>
#include <string>

#include "bench_results.h"

namespace tidal_tool {

// The profile text, or nothing with `*error` set when too little was measured (no copy at all).
std::optional<std::string> hardware_profile(const BenchResults &r, std::string *error);

} // namespace tidal_tool
