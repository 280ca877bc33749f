// `tidal bench --peer`: each ordered pair of devices, copies of one size between device
// memory on both, four ways in one run: tidal_copy with peer access off (staged through pinned
// memory) and on (peer access enabled on first use, the runtime's peer copy), and the runtime's
// own copy (TIDAL_CHECK_RUNTIME_COPY) before and after peer access is on. Every figure is wall
// clock around the call (the host waits for the copy) and the context's clock (tidal_clock: the
// simulated clock on the simulated device, so the figures predict a profile's links).
#pragma once

#include <cstdint>
#include <string>

namespace tidal_tool {

struct PeerBenchOptions {
    std::string config;
    std::string runtime;
    uint64_t size = uint64_t{256} << 20;
    unsigned reps = 5;
    std::string json; // "" none, "-" standard output (instead of the table), else a file
};

// Prints a table and/or writes JSON; returns the exit code.
int run_peer_bench(const PeerBenchOptions &o);

} // namespace tidal_tool
