// `tidal replay TRACE --config A.toml [--config B.toml ...]`: a recorded trace replayed on the
// simulated device under each configuration, the figures side by side, and the placements
// that differ between them (what explains the figures).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "bench_report.h"
#include "bench_svg.h"
#include "byte_sizes.h"
#include "output_file.h"
#include "command_options.h"
#include "tool_commands.h"
#include "trace_file.h"
#include "trace_replayer.h"

namespace tidal_tool {
namespace {

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

// One configuration's figures over every rank's trace: bytes, evictions, failures and peaks
// added up (each rank has its own devices), the simulated time of the slowest rank.
struct JobFigures {
    std::string config;
    double slowest_seconds = 0, total_seconds = 0;
    uint64_t migrated = 0, evicted = 0, evictions = 0, peak = 0, failures = 0;
};

std::vector<JobFigures> summed(const std::vector<std::vector<ReplayFigures>> &per_trace)
{
    std::vector<JobFigures> out(per_trace.front().size());
    for (const std::vector<ReplayFigures> &runs : per_trace)
        for (size_t c = 0; c < runs.size(); ++c) {
            const ReplayFigures &f = runs[c];
            JobFigures &j = out[c];
            j.config = f.config;
            j.slowest_seconds = std::max(j.slowest_seconds, f.simulated_seconds);
            j.total_seconds += f.simulated_seconds;
            j.migrated += f.migrated_bytes;
            j.evicted += f.evicted_bytes;
            j.evictions += f.evictions;
            j.peak += f.peak_device_bytes;
            j.failures += f.failures;
        }
    return out;
}

void print_summed(size_t traces, const std::vector<JobFigures> &job)
{
    fmt::print("\nall {} traces (ranks) together\n\n", traces);
    size_t width = 16;
    for (const JobFigures &j : job)
        width = std::max(width, config_label(j.config).size() + 2);
    auto row = [&](const std::string &name, auto &&cell) {
        std::string line = fmt::format("{:<28}", name);
        for (const JobFigures &j : job)
            line += fmt::format("{:>{}}", cell(j), width);
        fmt::print("{}\n", line);
    };
    row("", [](const JobFigures &j) { return config_label(j.config); });
    row("simulated time, slowest", [](const JobFigures &j) { return format_seconds(j.slowest_seconds); });
    row("simulated time, summed", [](const JobFigures &j) { return format_seconds(j.total_seconds); });
    row("bytes migrated", [](const JobFigures &j) { return format_bytes(j.migrated + j.evicted); });
    row("evictions", [](const JobFigures &j) { return std::to_string(j.evictions); });
    row("peak device memory, summed", [](const JobFigures &j) { return format_bytes(j.peak); });
    row("failures", [](const JobFigures &j) { return std::to_string(j.failures); });
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

// Every configuration over one trace.
int replay_one(const ReplayOptions &o, const std::string &path, Trace &trace, std::vector<ReplayFigures> &runs)
{
    try {
        trace = read_trace(path);
    } catch (const TraceError &e) {
        fmt::print(stderr, "tidal replay: {}\n", e.what());
        return 1;
    }
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
    return 0;
}

nlohmann::json trace_json(const Trace &trace, const std::string &path, const std::vector<ReplayFigures> &runs)
{
    nlohmann::json j = {{"trace", path}, {"recorded_on", trace.runtime}, {"devices", trace.devices}};
    j["configs"] = nlohmann::json::array();
    for (const ReplayFigures &f : runs)
        j["configs"].push_back(figures_json(f));
    j["differences"] = differences(runs);
    return j;
}

} // namespace

int run_replay(const ReplayOptions &o)
{
    std::vector<Trace> traces(o.traces.size());
    std::vector<std::vector<ReplayFigures>> per_trace(o.traces.size());
    for (size_t t = 0; t < o.traces.size(); ++t)
        if (int rc = replay_one(o, o.traces[t], traces[t], per_trace[t]); rc != 0)
            return rc;
    if (!o.svg.empty()) {
        std::vector<MemoryChart> charts;
        for (size_t t = 0; t < o.traces.size(); ++t)
            for (const ReplayFigures &f : per_trace[t]) {
                charts.push_back(chart_of(f));
                if (o.traces.size() > 1)
                    charts.back().title += fmt::format(" ({})", std::filesystem::path(o.traces[t]).filename().string());
            }
        const std::string title = o.traces.size() == 1 ? fmt::format("tidal replay {}: simulated device", o.traces[0])
                                                       : fmt::format("tidal replay, {} traces: simulated device",
                                                                     o.traces.size());
        if (!write_output(o.svg, memory_svg(charts, title), "tidal replay", "SVG chart"))
            return 1;
    }
    if (o.json) {
        if (o.traces.size() == 1) {
            fmt::print("{}\n", trace_json(traces[0], o.traces[0], per_trace[0]).dump(2));
            return 0;
        }
        nlohmann::json j;
        j["traces"] = nlohmann::json::array();
        for (size_t t = 0; t < o.traces.size(); ++t)
            j["traces"].push_back(trace_json(traces[t], o.traces[t], per_trace[t]));
        j["summed"] = nlohmann::json::array();
        for (const JobFigures &f : summed(per_trace))
            j["summed"].push_back({{"config", f.config.empty() ? "defaults" : f.config},
                                   {"slowest_simulated_seconds", f.slowest_seconds},
                                   {"summed_simulated_seconds", f.total_seconds},
                                   {"migrated_bytes", f.migrated},
                                   {"evicted_bytes", f.evicted},
                                   {"evictions", f.evictions},
                                   {"peak_device_bytes", f.peak},
                                   {"failures", f.failures}});
        fmt::print("{}\n", j.dump(2));
        return 0;
    }
    for (size_t t = 0; t < o.traces.size(); ++t) {
        if (t > 0)
            fmt::print("\n");
        print_table(traces[t], per_trace[t]);
    }
    if (o.traces.size() > 1)
        print_summed(o.traces.size(), summed(per_trace));
    return 0;
}

} // namespace tidal_tool
