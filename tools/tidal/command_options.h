// What each subcommand of `tidal` was asked on its command line, and the function that does it.
// The command line itself (options, checks, help text) is command_line.cpp's: the one file of
// the subcommands that includes CLI11, whose header costs seconds of compile time a file (its
// validators are compiled in every file that includes it). Each run_* returns the exit status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tidal_tool {

struct ProbeOptions {
    std::string config;
    std::string runtime;
    bool json = false;
    uint64_t batch_hint_sample = 0; // bytes per sample; 0: no hint
};

struct ValidateOptions {
    std::string config;
    std::string runtime;
    bool json = false;
    int device = -1;
    uint64_t size = 64ull << 20;
    uint64_t bandwidth_size = 0; // 0: 1 GiB on a GPU, 64 MiB on the simulated device
    unsigned repeat = 10;
};

// `tidal bench`'s latency sizes when --sizes is not given (named in its --help).
inline constexpr const char *kLatencySizes = "256,64KiB,4MiB,256MiB";
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

struct ReplayOptions {
    std::vector<std::string> traces; // one per rank of a job, or one
    std::vector<std::string> configs;
    std::string profile;
    std::string svg;
    bool json = false;
};

struct DoctorOptions {
    std::string file; // a trace or a statistics snapshot
    std::string config;
    std::string profile;
    bool json = false;
};

int run_probe(const ProbeOptions &o);
int run_config_check(const std::string &file); // `tidal config check FILE`
int run_validate(const ValidateOptions &o);
int run_bench(const BenchCommandOptions &c);
int run_stats(const std::string &file);
int run_replay(const ReplayOptions &o);
int run_doctor(const DoctorOptions &o);

} // namespace tidal_tool
