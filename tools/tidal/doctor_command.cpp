// `tidal doctor FILE`: a trace (replayed on the simulated device) or a statistics snapshot (read
// from its counters); names, per buffer, the seed's three symptoms and host/device alternation,
// each with the fix to paste.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "byte_sizes.h"
#include "snapshot_doctor.h"
#include "command_options.h"
#include "tool_commands.h"
#include "trace_doctor.h"
#include "trace_file.h"
#include "trace_replayer.h"

namespace tidal_tool {
namespace {

// The findings of either diagnosis as text under `header`, then what the input cannot tell.
void print_findings(const std::string &header, const std::vector<Finding> &found, const std::vector<std::string> &blind)
{
    fmt::print("{}\n", header);
    if (found.empty())
        fmt::print("no finding: no first-access latency, thrashing, fault-bound kernels or host/device alternation\n");
    for (size_t i = 0; i < found.size(); ++i) {
        const Finding &f = found[i];
        fmt::print("\n{}. {}: \"{}\" ({}){}\n   {}\n   fix:\n", i + 1, f.symptom, f.tag, format_bytes(f.size),
                   f.line ? fmt::format(", from line {}", f.line) : std::string(), f.evidence);
        size_t start = 0;
        while (start < f.fix.size()) {
            const size_t end = std::min(f.fix.find('\n', start), f.fix.size());
            fmt::print("     {}\n", f.fix.substr(start, end - start));
            start = end + 1;
        }
    }
    if (!blind.empty())
        fmt::print("\nwhat these counters cannot tell:\n");
    for (const std::string &b : blind)
        fmt::print("  - {}\n", b);
}

// The same as JSON: `j` names the input, "cannot_tell" only where `blind` is given.
void print_json(nlohmann::json j, const std::vector<Finding> &found, const std::vector<std::string> *blind)
{
    j["findings"] = nlohmann::json::array();
    for (const Finding &f : found)
        j["findings"].push_back({{"symptom", f.symptom}, {"tag", f.tag}, {"size", f.size}, {"line", f.line},
                                 {"evidence", f.evidence}, {"fix", f.fix}});
    if (blind)
        j["cannot_tell"] = *blind;
    fmt::print("{}\n", j.dump(2));
}

// A statistics snapshot: diagnosed from its counters as they are, nothing replayed.
int diagnose_snapshot(const DoctorOptions &o, const nlohmann::json &snapshot)
{
    if (!o.config.empty() || !o.profile.empty()) {
        fmt::print(stderr, "tidal doctor: {} is a statistics snapshot, read as it is: --config and --profile replay a "
                           "trace and do not apply\n",
                   o.file);
        return 1;
    }
    try {
        const SnapshotDoctor doctor(snapshot);
        if (o.json)
            print_json({{"snapshot", o.file}, {"runtime", snapshot.value("runtime", std::string())}},
                       doctor.findings(), &doctor.blind_spots());
        else
            print_findings(fmt::format("statistics snapshot {}: the counters of a context on the {} runtime", o.file,
                                       snapshot.value("runtime", std::string("?"))),
                           doctor.findings(), doctor.blind_spots());
    } catch (const nlohmann::json::exception &e) {
        fmt::print(stderr, "tidal doctor: {} is not a statistics snapshot as docs/stats.schema.json describes it: {}\n",
                   o.file, e.what());
        return 1;
    }
    return 0;
}

} // namespace

int run_doctor(const DoctorOptions &o)
{
    std::ifstream in(o.file, std::ios::binary);
    if (!in) {
        fmt::print(stderr, "tidal doctor: cannot open {}\n", o.file);
        return 1;
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (nlohmann::json snapshot; is_stats_snapshot(text.str(), &snapshot))
        return diagnose_snapshot(o, snapshot);
    Trace trace;
    try {
        trace = read_trace(o.file);
    } catch (const TraceError &e) {
        fmt::print(stderr, "tidal doctor: {}\n", e.what());
        return 1;
    }
    std::string error;
    tidal_context *ctx = open_replay_context(o.config, trace, o.profile, &error);
    if (!ctx) {
        fmt::print(stderr, "tidal doctor: {}\n", error);
        return 1;
    }
    TraceDoctor doctor;
    {
        TraceReplayer replayer(trace, ctx);
        replayer.run(&doctor);
    }
    tidal_context_destroy(ctx);
    const std::vector<Finding> found = doctor.findings();
    if (o.json)
        print_json({{"trace", o.file}}, found, nullptr);
    else
        print_findings(fmt::format("trace {}: {} calls recorded on {}, replayed on the simulated device", trace.path,
                                   trace.records.size(), trace.runtime),
                       found, {});
    return 0;
}

} // namespace tidal_tool
