// The subcommands' command lines: options, their checks and help text, each handing what it
// read to its command's run_* (command_options.h). main.cpp builds the tree from these.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <string>

#include "byte_sizes.h"
#include "command_options.h"
#include "tool_commands.h"

namespace tidal_tool {
namespace {

// The command's callback: `run` on what the command line filled in; a non-zero exit status ends
// the tool with it.
template <typename Options> void run_with(CLI::App *cmd, std::shared_ptr<Options> o, int (*run)(const Options &))
{
    cmd->callback([o, run] {
        if (int rc = run(*o); rc != 0)
            throw CLI::RuntimeError(rc);
    });
}

// --runtime NAME, one of the runtimes open_context knows ("" when not given).
CLI::Option *add_runtime_option(CLI::App *cmd, std::string &runtime, const std::string &what = "Runtime")
{
    return cmd->add_option("--runtime", runtime, what + ": auto, sim, hip or cuda")
        ->check(CLI::IsMember({"auto", "sim", "hip", "cuda"}));
}

} // namespace

void add_probe_command(CLI::App &app)
{
    auto o = std::make_shared<ProbeOptions>();
    CLI::App *probe = app.add_subcommand(
        "probe", "Show the runtime in use and what each device can do\n"
                 "Prints the runtime tidal chose (or --runtime / the configuration names) and, for each device, its "
                 "memory, migration page size, L2 cache, managed-memory support, whether managed pages migrate on a "
                 "device fault (XNACK on AMD), pageable-memory access, fine-grained kinds, host-native atomics, NUMA "
                 "node with its CPUs and PCI bus id; then the peer matrix: for each pair of devices whether one reaches "
                 "the other's memory directly, the link type (pcie, xgmi, nvlink; CUDA names none), hops and the "
                 "runtime's performance rank where known. --json carries all of it (\"peers\": one entry per pair). "
                 "A simulated device is labelled as such.");
    probe->add_flag("--json", o->json, "Print JSON instead of a table");
    probe->add_option("--config", o->config, "Configuration file (default: $TIDAL_CONFIG, else built-in defaults)")
        ->type_name("FILE");
    add_runtime_option(probe, o->runtime, "Runtime to probe");
    probe->add_option("--batch-hint", o->batch_hint_sample,
                      "Also print the batch size the ROCm guidance suggests for samples of SAMPLE_BYTES (a byte count "
                      "or a size such as 1MiB): L2 size / (2 x SAMPLE_BYTES); a heuristic, not a measurement")
        ->type_name("SAMPLE_BYTES")
        ->transform(byte_size_option(1, uint64_t{1} << 40));
    run_with(probe, o, run_probe);
}

void add_config_command(CLI::App &app)
{
    CLI::App *config = app.add_subcommand("config", "Work with configuration files\n"
                                                     "'tidal config check FILE' validates a configuration file.");
    config->require_subcommand(1);
    CLI::App *check = config->add_subcommand(
        "check", "Validate a configuration file and print the resolved settings\n"
                 "Checks FILE's keys, types and values, loads its policy plugins with their options and starts its "
                 "runtime, then prints the resolved settings and the policy chain. An error names the file, line and "
                 "column, with a suggestion for a misspelt key. Exit status 1 on any error.");
    auto file = std::make_shared<std::string>();
    check->add_option("FILE", *file, "TOML configuration file")->required();
    run_with(check, file, run_config_check);
}

void add_validate_command(CLI::App &app)
{
    auto o = std::make_shared<ValidateOptions>();
    CLI::App *cmd = app.add_subcommand(
        "validate", "Check every allocation kind on each device with the validation kernels\n"
                    "For each device and allocation kind: allocate through tidal, run the touch / pattern / atomics "
                    "kernels on the device, prefetch both ways and check the data and the runtime's range attributes "
                    "after each move; elastic memory is also offloaded and restored (the pattern must come back at "
                    "the same address) and, on the simulated device, a kernel on it while offloaded must fault "
                    "(unsupported where the runtime has no virtual-memory API); then compare the copy kernel with the runtime's own memcpy. Prints a table "
                    "(pass / FAIL / unsupported, with reasons); exit status 1 on any failure.");
    cmd->add_flag("--json", o->json, "Print JSON instead of a table");
    cmd->add_option("--config", o->config, "Configuration file (default: $TIDAL_CONFIG, else built-in defaults)")
        ->type_name("FILE");
    add_runtime_option(cmd, o->runtime);
    cmd->add_option("--device", o->device, "Validate only this device (default: all)");
    cmd->add_option("--size", o->size, "Bytes per kind, e.g. 16MiB (default 64MiB)")
        ->type_name("SIZE")
        ->transform(byte_size_option(4096, uint64_t{1} << 34));
    cmd->add_option("--bandwidth-size", o->bandwidth_size,
                    "Bytes per copy in the bandwidth check, e.g. 256MiB (default 1GiB on a GPU, 64MiB simulated)")
        ->type_name("SIZE")
        ->transform(byte_size_option(8, uint64_t{1} << 40));
    cmd->add_option("--repeat", o->repeat, "Timed repetitions of each copy (default 10)")->check(CLI::Range(1u, 1000u));
    run_with(cmd, o, run_validate);
}

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
    add_runtime_option(cmd, o->runtime);
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
    run_with(cmd, o, run_bench);
}

void add_stats_command(CLI::App &app)
{
    CLI::App *stats = app.add_subcommand(
        "stats", "Print a statistics snapshot as tables\n"
                 "Reads FILE, a snapshot written by TIDAL_STATS=FILE (or [telemetry] stats) when a context was "
                 "destroyed, or by tidal_stats_json, and prints live memory by kind and by tag, the pools, each "
                 "device's migrations, page faults (simulated device) by device and tag, the errors by status and the leaks. Exit status 1 when FILE is no snapshot.");
    auto file = std::make_shared<std::string>();
    stats->add_option("FILE", *file, "statistics snapshot (JSON, schema tidal-stats/1)")->required();
    run_with(stats, file, run_stats);
}

void add_replay_command(CLI::App &app)
{
    auto o = std::make_shared<ReplayOptions>();
    CLI::App *cmd = app.add_subcommand(
        "replay", "Replay a recorded trace on the simulated device under one or more configurations\n"
                  "TRACE is a file recorded with TIDAL_TRACE=FILE (or [telemetry] trace) on any runtime; give several "
                  "(one per rank of a job, recorded with TIDAL_TRACE=trace-%r.jsonl) to see each rank and then all "
                  "of them together (bytes, evictions, peaks and failures added up; the slowest rank's time). Each call is "
                  "issued again through the public API on a simulated-device context per --config, recorded addresses "
                  "and streams mapped to the new ones. Prints, side by side: simulated time, bytes migrated, "
                  "evictions, peak device memory and failures, then the allocations each configuration placed "
                  "differently. A trace that is cut short or corrupt is refused naming its line (exit status 1).");
    cmd->add_option("TRACE", o->traces, "The trace file(s): one, or one per rank")->required()->type_name("TRACE...");
    cmd->add_option("--config", o->configs, "A configuration to replay under (repeat to compare; default: built-in defaults)")
        ->type_name("FILE");
    cmd->add_option("--profile", o->profile, "Hardware profile of the simulated device (a file or a built-in name)")
        ->type_name("FILE");
    cmd->add_option("--svg", o->svg, "Also draw device memory over time by tag, one chart per configuration, to FILE")
        ->type_name("FILE");
    cmd->add_flag("--json", o->json, "Print JSON instead of a table (with every allocation's placement)");
    run_with(cmd, o, run_replay);
}

void add_doctor_command(CLI::App &app)
{
    auto o = std::make_shared<DoctorOptions>();
    CLI::App *cmd = app.add_subcommand(
        "doctor", "Name first-access latency, thrashing, fault-bound kernels, alternation (trace, stats)\n"
                  "FILE is a trace (recorded with TIDAL_TRACE=FILE) or a statistics snapshot (written by "
                  "TIDAL_STATS=FILE or tidal_stats_json); the doctor tells them apart. A trace is replayed on the "
                  "simulated device, watching every managed buffer: a first kernel that waits on page faults with "
                  "nothing declared before it (fix: a declaration), later kernels that keep faulting or reading over "
                  "the link (fix: preferred-location advice, as a rules entry), a buffer tidal evicts and brings back "
                  "while the program leaves it alone (thrashing; fix: the batch size or the access pattern), and a "
                  "buffer moving host <-> device again and again (fix: a lookahead declaration or pinned memory). "
                  "Kernels are seen through tidal_check_run; a program's own kernels show only through its "
                  "declarations. A snapshot is read from its counters per tag group: demand-paged bytes against "
                  "prefetched ones, bytes read over the link, and bytes moved both ways against the group's largest "
                  "buffer and tidal's evictions. Its page-fault counts come from the simulated device (a GPU runtime "
                  "counts none); counters have no order, so a snapshot's findings name no line, and the doctor lists "
                  "what they cannot tell. Each finding names the buffer by tag and prints its fix ready to paste.");
    cmd->add_option("FILE", o->file, "The trace or statistics snapshot")->required()->type_name("FILE");
    cmd->add_option("--config", o->config, "Configuration to replay a trace under (default: built-in defaults)")->type_name("FILE");
    cmd->add_option("--profile", o->profile, "Hardware profile of the simulated device (a file or a built-in name)")
        ->type_name("FILE");
    cmd->add_flag("--json", o->json, "Print JSON instead of text");
    run_with(cmd, o, run_doctor);
}

} // namespace tidal_tool
