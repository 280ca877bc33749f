// `tidal bench` results as people and programs read them: a table for the terminal, JSON
// and CSV (one row per figure, for spreadsheets and plotting scripts).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench_results.h"

namespace tidal_tool {

std::string bench_table(const BenchResults &r);
nlohmann::json bench_json(const BenchResults &r);
std::string bench_csv(const BenchResults &r);
// "0 ns", "117 ns", "2.95 µs", "115.00 ms": a duration for a person.
std::string format_seconds(double seconds);

} // namespace tidal_tool
