// The `tidal` command's subcommands. Each uses the public C API only: the tool is the API's
// first customer.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <tidal/tidal.h>

namespace CLI {
class App;
}

namespace tidal_tool {

// Opens a context from --config FILE, else --runtime NAME, else TIDAL_CONFIG / defaults.
// On failure prints the status and message to stderr and returns NULL.
tidal_context *open_context(const std::string &config_file, const std::string &runtime);
// The context's resolved settings as TOML (tidal_config_describe); "" when it cannot say.
std::string describe_configuration(tidal_context *ctx);
// "TIDAL_ERROR_...: detail" for the calling thread's last failure.
std::string failure_text(tidal_status s);
// tidal_clock in seconds: the host's monotonic clock on a GPU, the simulated clock on the
// simulated device; 0 when it fails.
double clock_of(tidal_context *ctx);
// Seconds of the host's steady clock since `t0` (wall-clock timing in the benchmarks).
using WallClock = std::chrono::steady_clock;
inline double since(WallClock::time_point t0) { return std::chrono::duration<double>(WallClock::now() - t0).count(); }
// The middle value (the mean of the two middle ones for an even count); `v` must not be empty.
double median(std::vector<double> v);
// Runs one validation kernel and waits for it (tidal_check_run). `result` gets
// PATTERN_VERIFY's mismatch count, `elapsed_ms` the device time of all `repeat` runs.
tidal_status run_check(tidal_context *ctx, tidal_check_kind kind, int32_t device, void *target, size_t size,
                       uint64_t seed, uint64_t *result = nullptr, const void *source = nullptr, uint32_t repeat = 1,
                       double *elapsed_ms = nullptr);

void add_probe_command(CLI::App &app);
void add_config_command(CLI::App &app);
void add_validate_command(CLI::App &app);
void add_bench_command(CLI::App &app);
void add_stats_command(CLI::App &app);
void add_replay_command(CLI::App &app);
void add_doctor_command(CLI::App &app);

} // namespace tidal_tool
