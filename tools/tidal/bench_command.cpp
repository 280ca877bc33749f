// `tidal bench`: the design card's allocation-type table measured on the machine it runs on
// instead of quoted -- alloc+free latency per kind and backend, host<->device copy rates
// across sizes, managed memory by demand paging and by prefetch -- through the public API
// only. Prints a table, writes JSON / CSV / an SVG plot, and can turn the figures into a
// hardware profile for the simulated device.
#include <CLI/CLI.hpp>
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
#include "tool_commands.h"

namespace tidal_tool {
namespace {

constexpr const char *kLatencySizes = "256,64KiB,4MiB,256MiB";
constexpr const char *kQuickLatencySizes = "256,64KiB,1MiB";
constexpr uint64_t kMaxSize = uint64_t{1} << 30;
constexpr uint64_t kQuickMaxSize = uint64_t{16} << 20;
// Managed memory migrates in pages of megabytes: smaller ranges measure the page, not the link.
constexpr uint64_t kManagedMinSize = uint64_t{4} << 20;
// Elastic memory is offloaded and restored once at the largest copy size up to this: enough
// for several chunks at copy-engine rates, short enough to keep the run brief.
constexpr uint64_t kElasticMaxSize = uint64_t{256} << 20;

struct BenchCommandOptions {
    std::string config;
    std::string runtime;
    int device = 0;
    bool quick = false;
    std::string sizes;
    std::string min_size = "4KiB";
    std::string max_size;
    unsigned reps = 0;
    std::string json, csv, svg, profile;
    bool no_progress = false;
    bool peer = false;
};

// min, 4 x min, 16 x min ... below max, then max itself.
std::vector<uint64_t> size_ladder(uint64_t min, uint64_t max)
{
    std::vector<uint64_t> sizes;
    for (uint64_t s = min; s < max; s *= 4)
        sizes.push_back(s);
    sizes.push_back(max);
    return sizes;
}


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

} // namespace

void add_bench_command(CLI::App &app)
{
    auto o = std::make_shared<BenchCommandOptions>();
    CLI::App *cmd = app.add_subcommand(
        "bench",
        "Measure allocation latency, copy bandwidth, managed and elastic memory on this machine\n"
        "Measure the allocation kinds on this machine through tidal's public API: alloc+free latency per kind "
        "(device, managed, pinned, pageable; device-fine and managed-coarse where the device has them) and size, "
        "from three backends -- 'runtime' ([pool] enabled = false: one runtime call per alloc and per free, plus "
        "tidal's own work), 'vendor' ([pool] backend = \"vendor\": the runtime's stream-ordered pool, device memory "
        "only, skipped with a note where the runtime has none) and 'tidal' (tidal's pools, warmed); host<->device "
        "copy rates from pinned and pageable memory, the runtime's own memcpy against tidal_copy, both timed on the "
        "wall clock (tidal_clock) around the call with the same buffers, plus the runtime's memcpy between events "
        "as an extra 'rt_events' column, and device-to-device; managed memory read by demand paging (a touch "
        "kernel on host-resident pages) against tidal_prefetch first; elastic memory offloaded to its host home and "
        "restored (at the largest copy size up to 256 MiB) beside the runtime's device<->pinned memcpy of the same "
        "bytes, all timed with tidal_clock; kernel launch, zero-copy read and host "
        "memcpy rates. Each figure is the median of repeated runs (fewer for costly ones). On the simulated "
        "device every time is the simulated clock's: the profile's prediction. Prints a table; a progress bar "
        "goes to stderr when it is a terminal.");
    cmd->add_option("--config", o->config, "Configuration file (default: $TIDAL_CONFIG, else built-in defaults); its "
                                           "[pool] table is replaced for each backend")
        ->type_name("FILE");
    cmd->add_option("--runtime", o->runtime, "Runtime: auto, sim, hip or cuda")->check(CLI::IsMember({"auto", "sim", "hip", "cuda"}));
    cmd->add_option("--device", o->device, "Device to measure (default 0)")->check(CLI::NonNegativeNumber);
    cmd->add_flag("--quick", o->quick,
                  "For CI: latency sizes 256,64KiB,1MiB, copies up to 16 MiB, at most 5 repetitions (seconds on the "
                  "simulated device)");
    cmd->add_option("--sizes", o->sizes, fmt::format("Allocation sizes for the latency table (default {})", kLatencySizes))
        ->type_name("SIZE,...")
        ->check(byte_sizes_check(true));
    cmd->add_option("--min-size", o->min_size, "Smallest copy (default 4KiB); copies go up by 4x to --max-size")
        ->type_name("SIZE")
        ->check(byte_sizes_check(false));
    cmd->add_option("--max-size", o->max_size,
                    "Largest copy (default 1GiB); managed memory is measured from 4 MiB up to it, elastic memory at "
                    "it, or 256 MiB if smaller")
        ->type_name("SIZE")
        ->check(byte_sizes_check(false));
    cmd->add_option("--reps", o->reps, "Most repetitions per figure (default 25, --quick 5)")->check(CLI::Range(1u, 10000u));
    cmd->add_option("--json", o->json, "Write the results as JSON to FILE ('-': standard output, instead of the table)")
        ->type_name("FILE");
    cmd->add_option("--csv", o->csv,
                    "Write one CSV row per figure (section,name,variant,bytes,value,unit,note) to FILE ('-': standard "
                    "output, instead of the table)")
        ->type_name("FILE");
    cmd->add_option("--svg", o->svg, "Write an SVG plot to FILE: bandwidth against size per direction and path, "
                                     "latency per kind and backend")
        ->type_name("FILE");
    cmd->add_option("--emit-profile", o->profile,
                    "Write a hardware profile for the simulated device ([sim] profile = \"FILE\") from the "
                    "measurements: device identity and sizes as the runtime reports them; bandwidths at large sizes, "
                    "latencies at small ones, each with a comment saying where it came from. Figures that cannot be "
                    "measured take a fallback, marked NOT MEASURED: fault <- zero_copy (no migration on fault), "
                    "zero_copy <- h2d_pageable, prefetch_h2d/d2h <- h2d/d2h_pinned (no managed memory), "
                    "kernel_launch <- copy latency (no kernels), alloc_device <- kernel_launch, alloc_pinned/alloc_managed <- "
                    "alloc_device; the "
                    "fault latency is 0 (the fault bandwidth is end to end)")
        ->type_name("FILE");
    cmd->add_flag("--no-progress", o->no_progress, "No progress bar, even on a terminal");
    cmd->add_flag("--peer", o->peer,
                  "Measure copies between devices instead: for each ordered pair, device memory to device memory of "
                  "--max-size bytes (default 256MiB, --quick 16MiB), tidal_copy with [topology] peer_access = \"off\" "
                  "(staged through pinned memory) and \"auto\" (peer access enabled on first use), each against the "
                  "runtime's own copy of the same buffers in the same run; wall clock and tidal_clock both, median of "
                  "--reps (default 5). With one device there is no pair: it says so. --json carries every figure");
    cmd->callback([o] {
        int rc = run_bench(*o);
        if (rc != 0)
            throw CLI::RuntimeError(rc);
    });
}

} // namespace tidal_tool
