// The measurements of `tidal bench`, through the public C API only, so that what it reports
// is what an application gets. Three contexts are derived from the resolved configuration of
// the one the user chose (--config / --runtime): pools off ("runtime": every tidal_alloc is
// one runtime call), the vendor's stream-ordered pool ([pool] backend = "vendor") and tidal's
// pools. Copies and managed-memory figures use the last.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tidal/tidal.h>

#include "bench_results.h"

namespace tidal_tool {

struct BenchOptions {
    int32_t device = 0;
    bool quick = false;
    std::vector<uint64_t> latency_sizes;
    std::vector<uint64_t> bandwidth_sizes;
    std::vector<uint64_t> managed_sizes;
    uint64_t elastic_size = 0; // 0: no elastic figures
    unsigned max_reps = 25;
    // Wall time one point may take before it stops repeating (once it has min_reps).
    double point_budget_s = 0.25;
    unsigned min_reps = 3;
    bool progress = true;
};

struct ContextCloser {
    void operator()(tidal_context *ctx) const noexcept { tidal_context_destroy(ctx); }
};
using ContextHandle = std::unique_ptr<tidal_context, ContextCloser>;

class ProgressBar;

class BenchRunner {
public:
    // `base` is the user's context; the runner only reads its configuration and devices.
    BenchRunner(tidal_context *base, BenchOptions options);

    // Fills `out`. Returns false with `*error` set when nothing sensible could be measured
    // (the tidal context cannot be made, or the device does not exist); a single figure
    // that fails is recorded as a note and the run goes on.
    bool run(BenchResults &out, std::string *error);

private:
    // The base configuration with [pool] enabled / backend replaced.
    ContextHandle derive(bool pooled, const char *backend, std::string *error) const;
    void measure_latency(BenchResults &out, ProgressBar &bar);
    void measure_bandwidth(BenchResults &out, ProgressBar &bar);
    void measure_managed(BenchResults &out, ProgressBar &bar);
    void measure_elastic(BenchResults &out, ProgressBar &bar);
    void measure_scalars(BenchResults &out, ProgressBar &bar);
    LatencyPoint latency_point(tidal_context *ctx, const std::string &backend, tidal_kind kind, uint64_t bytes);
    // Median of repeated runs of `once` (which sets the seconds of one run), after one
    // unrecorded warm-up run; empty with `*note` set when a run fails.
    std::optional<double> sample(const std::function<tidal_status(double &)> &once, unsigned *reps, std::string *note,
                                 bool warm_up = true) const;

    tidal_context *base_;
    BenchOptions o_;
    std::string config_text_;
    tidal_device_info device_ = TIDAL_DEVICE_INFO_INIT;
    ContextHandle tidal_;
};

} // namespace tidal_tool
