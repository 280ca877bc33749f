// `tidal bench`: the design card's allocation-type table measured on the machine it runs on
// instead of quoted -- alloc+free latency per kind and backend, host<->device copy rates
// across sizes, managed memory by demand paging and by prefetch -- through the public API
// only. Prints a table, writes JSON / CSV / an SVG plot, and can turn the figures into a
// hardware profile for the simulated device.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench_report.h"
#include "bench_runner.h"
#include "output_file.h"
#include "bench_svg.h"
#include "byte_sizes.h"
#include "peer_bench.h"
#include "profile_writer.h"
#include "command_options.h"
#include "tool_commands.h"

namespace tidal_tool {
namespace {

constexpr const char *kQuickLatencySizes = "256,64KiB,1MiB";
constexpr uint64_t kMaxSize = uint64_t{1} << 30;
constexpr uint64_t kQuickMaxSize = uint64_t{16} << 20;
// Managed memory migrates in pages of megabytes: smaller ranges measure the page, not the link.
constexpr uint64_t kManagedMinSize = uint64_t{4} << 20;
// Elastic memory is offloaded and restored once at the largest copy size up to this: enough
// for several chunks at copy-engine rates, short enough to keep the run brief.
constexpr uint64_t kElasticMaxSize = uint64_t{256} << 20;

// min, 4 x min, 16 x min ... below max, then max itself.
std::vector<uint64_t> size_ladder(uint64_t min, uint64_t max)
{
    std::vector<uint64_t> sizes;
    for (uint64_t s = min; s < max; s *= 4)
        sizes.push_back(s);
    sizes.push_back(max);
    return sizes;
}

} // namespace

int run_bench(const BenchCommandOptions &c)
{
    if (c.json == "-" && c.csv == "-") {
        fmt::print(stderr, "tidal bench: --json - and --csv - cannot both write to standard output\n");
        return 1;
    }
    std::string why;
    if (c.peer) {
        PeerBenchOptions p;
        p.config = c.config;
        p.runtime = c.runtime;
        p.json = c.json;
        p.reps = c.reps ? c.reps : 5;
        p.size = c.max_size.empty() ? (c.quick ? kQuickMaxSize : uint64_t{256} << 20) : *parse_byte_size(c.max_size, &why);
        if (p.size == 0 || p.size % 8) {
            fmt::print(stderr, "tidal bench --peer: the copy size must be a positive multiple of 8 bytes\n");
            return 1;
        }
        return run_peer_bench(p);
    }
    BenchOptions o;
    o.device = c.device;
    o.quick = c.quick;
    o.latency_sizes = *parse_byte_sizes(c.sizes.empty() ? (c.quick ? kQuickLatencySizes : kLatencySizes) : c.sizes, &why);
    const uint64_t min = *parse_byte_size(c.min_size, &why);
    const uint64_t max = c.max_size.empty() ? (c.quick ? kQuickMaxSize : kMaxSize) : *parse_byte_size(c.max_size, &why);
    if (min % 8 || max % 8 || min > max) {
        fmt::print(stderr, "tidal bench: copy sizes must be multiples of 8 bytes with --min-size ({}) <= --max-size ({})\n",
                   min, max);
        return 1;
    }
    o.bandwidth_sizes = size_ladder(min, max);
    for (uint64_t s : o.bandwidth_sizes)
        if (s >= kManagedMinSize)
            o.managed_sizes.push_back(s);
    if (o.managed_sizes.empty())
        o.managed_sizes.push_back(max);
    o.elastic_size = std::min(max, kElasticMaxSize);
    o.max_reps = c.reps ? c.reps : (c.quick ? 5 : 25);
    o.min_reps = std::min(o.max_reps, c.quick ? 2u : 3u);
    o.point_budget_s = c.quick ? 0.01 : 0.25;
    o.progress = !c.no_progress;

    ContextHandle base(open_context(c.config, c.runtime));
    if (!base)
        return 1;
    BenchResults results;
    BenchRunner runner(base.get(), o);
    if (!runner.run(results, &why)) {
        fmt::print(stderr, "tidal bench: {}\n", why);
        return 1;
    }
    bool ok = true;
    if (c.json != "-" && c.csv != "-")
        fmt::print("{}", bench_table(results));
    if (!c.json.empty())
        ok &= write_output(c.json, bench_json(results).dump(2) + "\n", "tidal bench", "JSON");
    if (!c.csv.empty())
        ok &= write_output(c.csv, bench_csv(results), "tidal bench", "CSV");
    if (!c.svg.empty())
        ok &= write_output(c.svg, bench_svg(results), "tidal bench", "SVG plot");
    if (!c.profile.empty()) {
        if (auto text = hardware_profile(results, &why))
            ok &= write_output(c.profile, *text, "tidal bench", "hardware profile");
        else {
            fmt::print(stderr, "tidal bench: no profile written: {}\n", why);
            ok = false;
        }
    }
    return ok ? 0 : 1;
}

} // namespace tidal_tool
