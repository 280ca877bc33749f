// `tidal replay TRACE --config A.toml [--config B.toml ...]`: a recorded trace replayed on the
// simulated device under each configuration, the figures side by side, and the placements
// that differ between them (what explains the figures).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "bench_report.h"
#include "bench_svg.h"
#include "byte_sizes.h"
#include "output_file.h"
#include "tool_commands.h"
#include "trace_file.h"
#include "trace_replayer.h"

namespace tidal_tool {
namespace {

struct ReplayOptions {
    std::string trace;
    std::vector<std::string> configs;
    std::string profile;
    std::string svg;
    bool json = false;
};

constexpr size_t kSvgSeries = 8; // the largest tags; the rest are drawn as one "other"

std::string config_label(const std::string &config)
{
    return config.empty() ? "defaults" : std::filesystem::path(config).filename().string();
}

// Where it went; the policy that decided is shown but is not a difference by itself.
std::string where(const ReplayAllocation &a)
{
    return a.kind.empty() ? "failed" : fmt::format("{}@{}", a.kind, a.device);
}

std::string placement(const ReplayAllocation &a)
{
    if (a.kind.empty())
        return "failed";
    return a.device >= 0 ? fmt::format("{} on device {} ({})", a.kind, a.device, a.policy)
                         : fmt::format("{} ({})", a.kind, a.policy);
}

// The allocations placed differently under the configurations, one line each.
std::vector<std::string> differences(const std::vector<ReplayFigures> &runs)
{
    std::vector<std::string> out;
    if (runs.size() < 2)
        return out;
    for (size_t i = 0; i < runs[0].allocations.size(); ++i) {
        std::set<std::string> seen;
        for (const ReplayFigures &f : runs)
            seen.insert(i < f.allocations.size() ? where(f.allocations[i]) : "-");
        if (seen.size() < 2)
            continue;
        const ReplayAllocation &a = runs[0].allocations[i];
        std::string line = fmt::format("line {}: \"{}\" ({}):", a.line, a.tag, format_bytes(a.size));
        for (const ReplayFigures &f : runs)
            line += fmt::format(" {} under {};", i < f.allocations.size() ? placement(f.allocations[i]) : "-",
                                config_label(f.config));
        line.pop_back();
        out.push_back(line);
    }
    return out;
}

void print_table(const Trace &t, const std::vector<ReplayFigures> &runs)
{
    fmt::print("trace {}: {} calls recorded on {} ({} device(s)), replayed on the simulated device\n\n", t.path,
               t.records.size(), t.runtime, t.devices);
    size_t width = 16;
    for (const ReplayFigures &f : runs)
        width = std::max(width, config_label(f.config).size() + 2);
    auto row = [&](const std::string &name, auto &&cell) {
        std::string line = fmt::format("{:<22}", name);
        for (const ReplayFigures &f : runs)
            line += fmt::format("{:>{}}", cell(f), width);
        fmt::print("{}\n", line);
    };
    row("", [](const ReplayFigures &f) { return config_label(f.config); });
    row("simulated time", [](const ReplayFigures &f) { return format_seconds(f.simulated_seconds); });
    row("bytes migrated", [](const ReplayFigures &f) { return format_bytes(f.migrated_bytes + f.evicted_bytes); });
    row("  to devices", [](const ReplayFigures &f) { return format_bytes(f.migrated_bytes); });
    row("  evicted to host", [](const ReplayFigures &f) { return format_bytes(f.evicted_bytes); });
    row("evictions", [](const ReplayFigures &f) { return std::to_string(f.evictions); });
    row("peak device memory", [](const ReplayFigures &f) { return format_bytes(f.peak_device_bytes); });
    row("failures", [](const ReplayFigures &f) { return std::to_string(f.failures); });
    row("  failed when recorded", [](const ReplayFigures &f) { return std::to_string(f.recorded_failures); });
    for (const ReplayFigures &f : runs)
        for (const std::string &l : f.failure_lines)
            fmt::print("  {}: {}\n", config_label(f.config), l);
    const std::vector<std::string> diff = differences(runs);
    if (runs.size() > 1)
        fmt::print("\n{}\n", diff.empty() ? "every allocation was placed alike under each configuration"
                                          : "placements that differ (what the figures' difference comes from):");
    for (const std::string &l : diff)
        fmt::print("  {}\n", l);
}

nlohmann::json figures_json(const ReplayFigures &f)
{
    nlohmann::json j = {{"config", f.config.empty() ? "defaults" : f.config},
                        {"simulated_seconds", f.simulated_seconds},
                        {"migrated_bytes", f.migrated_bytes},
                        {"evicted_bytes", f.evicted_bytes},
                        {"evictions", f.evictions},
                        {"peak_device_bytes", f.peak_device_bytes},
                        {"calls", f.calls},
                        {"failures", f.failures},
                        {"recorded_failures", f.recorded_failures},
                        {"failure_lines", f.failure_lines}};
    j["allocations"] = nlohmann::json::array();
    for (const ReplayAllocation &a : f.allocations)
        j["allocations"].push_back({{"line", a.line}, {"tag", a.tag}, {"size", a.size}, {"kind", a.kind},
                                    {"device", a.device}, {"policy", a.policy}});
    return j;
}

MemoryChart chart_of(const ReplayFigures &f)
{
    MemoryChart c;
    c.title = fmt::format("device memory by tag: {}", config_label(f.config));
    std::map<std::string, uint64_t> peaks;
    for (const MemorySample &m : f.timeline) {
        c.seconds.push_back(m.seconds);
        for (const auto &[tag, bytes] : m.bytes_by_tag)
            peaks[tag] = std::max(peaks[tag], bytes);
    }
    std::vector<std::pair<uint64_t, std::string>> order;
    for (const auto &[tag, peak] : peaks)
        order.emplace_back(peak, tag);
    std::sort(order.rbegin(), order.rend());
    std::map<std::string, size_t> index;
    for (const auto &[peak, tag] : order) {
        const bool other = c.series.size() >= kSvgSeries;
        const std::string name = other ? "other" : tag;
        if (!index.count(name)) {
            index[name] = c.series.size();
            c.series.push_back({name, std::vector<uint64_t>(f.timeline.size(), 0)});
        }
        index[tag] = index[name];
    }
    for (size_t i = 0; i < f.timeline.size(); ++i)
        for (const auto &[tag, bytes] : f.timeline[i].bytes_by_tag)
            c.series[index[tag]].second[i] += bytes;
    return c;
}

int run_replay(const ReplayOptions &o)
{
    Trace trace;
    try {
        trace = read_trace(o.trace);
    } catch (const TraceError &e) {
        fmt::print(stderr, "tidal replay: {}\n", e.what());
        return 1;
    }
    std::vector<ReplayFigures> runs;
    for (const std::string &config : o.configs.empty() ? std::vector<std::string>{""} : o.configs) {
        std::string error;
        tidal_context *ctx = open_replay_context(config, trace, o.profile, &error);
        if (!ctx) {
            fmt::print(stderr, "tidal replay: {}: {}\n", config_label(config), error);
            return 1;
        }
        {
            TraceReplayer replayer(trace, ctx);
            runs.push_back(replayer.run());
        }
        runs.back().config = config;
        tidal_context_destroy(ctx);
    }
    if (!o.svg.empty()) {
        std::vector<MemoryChart> charts;
        for (const ReplayFigures &f : runs)
            charts.push_back(chart_of(f));
        if (!write_output(o.svg, memory_svg(charts, fmt::format("tidal replay {}: simulated device", o.trace)),
                          "tidal replay", "SVG chart"))
            return 1;
    }
    if (o.json) {
        nlohmann::json j = {{"trace", o.trace}, {"recorded_on", trace.runtime}, {"devices", trace.devices}};
        j["configs"] = nlohmann::json::array();
        for (const ReplayFigures &f : runs)
            j["configs"].push_back(figures_json(f));
        j["differences"] = differences(runs);
        fmt::print("{}\n", j.dump(2));
    } else {
        print_table(trace, runs);
    }
    return 0;
}

} // namespace

void add_replay_command(CLI::App &app)
{
    auto o = std::make_shared<ReplayOptions>();
    CLI::App *cmd = app.add_subcommand(
        "replay", "Replay a recorded trace on the simulated device under one or more configurations\n"
                  "TRACE is a file recorded with TIDAL_TRACE=FILE (or [telemetry] trace) on any runtime. Each call is "
                  "issued again through the public API on a simulated-device context per --config, recorded addresses "
                  "and streams mapped to the new ones. Prints, side by side: simulated time, bytes migrated, "
                  "evictions, peak device memory and failures, then the allocations each configuration placed "
                  "differently. A trace that is cut short or corrupt is refused naming its line (exit status 1).");
    cmd->add_option("TRACE", o->trace, "The trace file")->required()->type_name("TRACE");
    cmd->add_option("--config", o->configs, "A configuration to replay under (repeat to compare; default: built-in defaults)")
        ->type_name("FILE");
    cmd->add_option("--profile", o->profile, "Hardware profile of the simulated device (a file or a built-in name)")
        ->type_name("FILE");
    cmd->add_option("--svg", o->svg, "Also draw device memory over time by tag, one chart per configuration, to FILE")
        ->type_name("FILE");
    cmd->add_flag("--json", o->json, "Print JSON instead of a table (with every allocation's placement)");
    cmd->callback([o] {
        if (int rc = run_replay(*o); rc != 0)
            throw CLI::RuntimeError(rc);
    });
}

} // namespace tidal_tool
