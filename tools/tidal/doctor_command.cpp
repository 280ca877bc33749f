// `tidal doctor TRACE`: replays the trace on the simulated device and names, per buffer, the
// seed's three symptoms and host/device alternation, each with the fix to paste.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "byte_sizes.h"
#include "tool_commands.h"
#include "trace_doctor.h"
#include "trace_file.h"
#include "trace_replayer.h"

namespace tidal_tool {
namespace {

struct DoctorOptions {
    std::string trace;
    std::string config;
    std::string profile;
    bool json = false;
};

void print_findings(const Trace &t, const std::vector<Finding> &found)
{
    fmt::print("trace {}: {} calls recorded on {}, replayed on the simulated device\n", t.path, t.records.size(),
               t.runtime);
    if (found.empty()) {
        fmt::print("no finding: no first-access latency, thrashing, fault-bound kernels or host/device alternation\n");
        return;
    }
    for (size_t i = 0; i < found.size(); ++i) {
        const Finding &f = found[i];
        fmt::print("\n{}. {}: \"{}\" ({}), from line {}\n   {}\n   fix:\n", i + 1, f.symptom, f.tag, format_bytes(f.size),
                   f.line, f.evidence);
        size_t start = 0;
        while (start < f.fix.size()) {
            const size_t end = std::min(f.fix.find('\n', start), f.fix.size());
            fmt::print("     {}\n", f.fix.substr(start, end - start));
            start = end + 1;
        }
    }
}

int run_doctor(const DoctorOptions &o)
{
    Trace trace;
    try {
        trace = read_trace(o.trace);
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
    if (o.json) {
        nlohmann::json j = {{"trace", o.trace}, {"findings", nlohmann::json::array()}};
        for (const Finding &f : found)
            j["findings"].push_back({{"symptom", f.symptom}, {"tag", f.tag}, {"size", f.size}, {"line", f.line},
                                     {"evidence", f.evidence}, {"fix", f.fix}});
        fmt::print("{}\n", j.dump(2));
    } else {
        print_findings(trace, found);
    }
    return 0;
}

} // namespace

void add_doctor_command(CLI::App &app)
{
    auto o = std::make_shared<DoctorOptions>();
    CLI::App *cmd = app.add_subcommand(
        "doctor", "Name first-access latency, thrashing, fault-bound kernels and alternation in a trace\n"
                  "Replays TRACE (recorded with TIDAL_TRACE=FILE) on the simulated device and watches every managed "
                  "buffer: a first kernel that waits on page faults with nothing declared before it (fix: a "
                  "declaration), later kernels that keep faulting or reading over the link (fix: preferred-location "
                  "advice, as a rules entry), a buffer tidal evicts and brings back while the program leaves it alone "
                  "(thrashing; fix: the batch size or the access pattern), and a buffer moving host <-> device again "
                  "and again (fix: a lookahead declaration or pinned memory). Each finding names the buffer by tag and "
                  "prints its fix ready to paste. Kernels are seen through tidal_check_run; a program's own kernels "
                  "show only through its declarations.");
    cmd->add_option("TRACE", o->trace, "The trace file")->required()->type_name("TRACE");
    cmd->add_option("--config", o->config, "Configuration to replay under (default: built-in defaults)")->type_name("FILE");
    cmd->add_option("--profile", o->profile, "Hardware profile of the simulated device (a file or a built-in name)")
        ->type_name("FILE");
    cmd->add_flag("--json", o->json, "Print JSON instead of text");
    cmd->callback([o] {
        if (int rc = run_doctor(*o); rc != 0)
            throw CLI::RuntimeError(rc);
    });
}

} // namespace tidal_tool
