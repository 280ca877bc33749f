#include "peer_bench.h"
#include "output_file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <vector>

#include <tidal/tidal.h>

#include "tool_commands.h"

namespace tidal_tool {
namespace {

struct Closer {
    void operator()(tidal_context *ctx) const noexcept { tidal_context_destroy(ctx); }
};
using Context = std::unique_ptr<tidal_context, Closer>;

// The resolved configuration with the runtime pinned and [topology] peer_access replaced.
std::string with_peer_access(const std::string &text, const std::string &runtime, bool on)
{
    std::istringstream in(text);
    std::string line, out;
    bool in_table = false, in_topology = false;
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] == '[') {
            in_table = true;
            in_topology = line.rfind("[topology]", 0) == 0;
        }
        if (!in_table && line.rfind("runtime = ", 0) == 0)
            line = fmt::format("runtime = \"{}\"", runtime);
        else if (in_topology && line.rfind("peer_access = ", 0) == 0)
            line = fmt::format("peer_access = \"{}\"", on ? "auto" : "off");
        out += line + "\n";
    }
    return out;
}

struct Figure {
    double wall_gbs = 0, clock_gbs = 0;
    std::string failure; // "" when measured
};

struct PairResult {
    int32_t src = 0, dst = 0;
    tidal_peer_info link = TIDAL_PEER_INFO_INIT;
    Figure tidal_off, runtime_off, tidal_on, runtime_on;
};

// Median GB/s of `reps` runs of `once` (after one warm-up run), by wall clock and tidal_clock.
Figure measure(tidal_context *ctx, uint64_t bytes, unsigned reps, const std::function<tidal_status()> &once)
{
    Figure f;
    if (tidal_status s = once(); s != TIDAL_OK) {
        f.failure = failure_text(s);
        return f;
    }
    std::vector<double> wall, clock;
    for (unsigned i = 0; i < reps; ++i) {
        const double c0 = clock_of(ctx);
        const auto t0 = WallClock::now();
        if (tidal_status s = once(); s != TIDAL_OK) {
            f.failure = failure_text(s);
            return f;
        }
        wall.push_back(since(t0));
        clock.push_back(clock_of(ctx) - c0);
    }
    const double w = median(wall), c = median(clock);
    f.wall_gbs = w > 0 ? static_cast<double>(bytes) / w / 1e9 : 0;
    f.clock_gbs = c > 0 ? static_cast<double>(bytes) / c / 1e9 : 0;
    return f;
}

void *device_buffer(tidal_context *ctx, int32_t device, uint64_t bytes, std::string *failure)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = TIDAL_KIND_DEVICE;
    d.device = device;
    d.tag = "tidal-bench-peer";
    void *p = nullptr;
    if (tidal_status s = tidal_alloc(ctx, bytes, &d, &p); s != TIDAL_OK) {
        *failure = failure_text(s);
        return nullptr;
    }
    return p;
}

// tidal_copy src -> dst and the runtime's own copy of the same buffers, in one context.
void measure_pair(tidal_context *ctx, int32_t src, int32_t dst, uint64_t bytes, unsigned reps, Figure &tidal,
                  Figure &runtime)
{
    std::string failure;
    void *a = device_buffer(ctx, src, bytes, &failure);
    void *b = a ? device_buffer(ctx, dst, bytes, &failure) : nullptr;
    if (!a || !b) {
        tidal.failure = runtime.failure = failure;
        if (a)
            tidal_free(ctx, a);
        return;
    }
    // tidal first: in the peer-on context its first copy enables the pair, and the runtime's
    // copy after it then runs with peer access on, as an application that enabled it would.
    tidal = measure(ctx, bytes, reps, [&] { return tidal_copy(ctx, b, a, bytes); });
    runtime = measure(ctx, bytes, reps,
                      [&] { return run_check(ctx, TIDAL_CHECK_RUNTIME_COPY, dst, b, bytes, 0, nullptr, a); });
    tidal_free(ctx, a);
    tidal_free(ctx, b);
}

// Device 0 to device 0, the source allocated by another context: what one GPU can show of
// copies between two contexts' buffers (tidal asks the runtime where the foreign end lives).
void measure_two_contexts(const std::string &text, const std::string &runtime, uint64_t bytes, unsigned reps,
                          Figure &tidal, Figure &baseline)
{
    tidal_context *one = nullptr, *two = nullptr;
    const std::string config = with_peer_access(text, runtime, true);
    if (tidal_status s = tidal_context_create_from_string(config.c_str(), &one); s != TIDAL_OK) {
        tidal.failure = baseline.failure = failure_text(s);
        return;
    }
    Context first(one);
    if (tidal_status s = tidal_context_create_from_string(config.c_str(), &two); s != TIDAL_OK) {
        tidal.failure = baseline.failure = failure_text(s);
        return;
    }
    Context second(two);
    std::string failure;
    void *a = device_buffer(one, 0, bytes, &failure);
    void *b = a ? device_buffer(two, 0, bytes, &failure) : nullptr;
    if (a && b) {
        tidal = measure(two, bytes, reps, [&] { return tidal_copy(two, b, a, bytes); });
        baseline = measure(two, bytes, reps,
                           [&] { return run_check(two, TIDAL_CHECK_RUNTIME_COPY, 0, b, bytes, 0, nullptr, a); });
    } else {
        tidal.failure = baseline.failure = failure;
    }
    if (a)
        tidal_free(one, a);
    if (b)
        tidal_free(two, b);
}

nlohmann::json figure_json(const Figure &f)
{
    if (!f.failure.empty())
        return {{"failure", f.failure}};
    return {{"wall_gbs", f.wall_gbs}, {"clock_gbs", f.clock_gbs}};
}

std::string figure_text(const Figure &f)
{
    return f.failure.empty() ? fmt::format("{:7.1f} {:7.1f}", f.wall_gbs, f.clock_gbs) : std::string("   failed       ");
}

} // namespace

int run_peer_bench(const PeerBenchOptions &o)
{
    Context base(open_context(o.config, o.runtime));
    if (!base)
        return 1;
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    if (tidal_system_info_get(base.get(), &sys) != TIDAL_OK) {
        fmt::print(stderr, "tidal bench: {}\n", tidal_last_error());
        return 1;
    }
    const std::string text = describe_configuration(base.get());
    std::vector<PairResult> pairs;
    for (int32_t s = 0; s < sys.device_count; ++s)
        for (int32_t d = 0; d < sys.device_count; ++d)
            if (s != d) {
                PairResult r;
                r.src = s;
                r.dst = d;
                tidal_peer_info_get(base.get(), d, s, &r.link);
                pairs.push_back(r);
            }
    base.reset();
    // Peer access off everywhere first: once enabled, a GPU runtime keeps it for the process,
    // and the runtime's own copy would no longer show its path without it.
    for (bool on : {false, true}) {
        tidal_context *raw = nullptr;
        if (tidal_status s = tidal_context_create_from_string(with_peer_access(text, sys.runtime, on).c_str(), &raw);
            s != TIDAL_OK) {
            fmt::print(stderr, "tidal bench: {}\n", failure_text(s));
            return 1;
        }
        Context ctx(raw);
        for (PairResult &r : pairs)
            measure_pair(ctx.get(), r.src, r.dst, o.size, o.reps, on ? r.tidal_on : r.tidal_off,
                         on ? r.runtime_on : r.runtime_off);
    }

    Figure contexts_tidal, contexts_runtime;
    measure_two_contexts(text, sys.runtime, o.size, o.reps, contexts_tidal, contexts_runtime);

    nlohmann::json j;
    j["tidal_version"] = tidal_version_string();
    j["runtime"] = sys.runtime;
    j["runtime_detail"] = sys.runtime_detail;
    j["device_count"] = sys.device_count;
    j["bytes"] = o.size;
    j["reps"] = o.reps;
    j["pairs"] = nlohmann::json::array();
    for (const PairResult &r : pairs)
        j["pairs"].push_back({{"src", r.src},
                              {"dst", r.dst},
                              {"can_access", r.link.can_access != 0},
                              {"hops", r.link.hops},
                              {"tidal_peer_off", figure_json(r.tidal_off)},
                              {"runtime_peer_off", figure_json(r.runtime_off)},
                              {"tidal_peer_on", figure_json(r.tidal_on)},
                              {"runtime_peer_on", figure_json(r.runtime_on)}});
    j["two_contexts_device0"] = {{"tidal", figure_json(contexts_tidal)}, {"runtime", figure_json(contexts_runtime)}};
    j["notes"] = {"GB/s = 10^9 bytes/s, median of reps after one warm-up; wall = host wall clock around the call "
                  "(the host waits for the copy), clock = tidal_clock (the simulated clock on the simulated device)",
                  "tidal_*: tidal_copy between device memory of the two devices; runtime_*: the runtime's own copy "
                  "(TIDAL_CHECK_RUNTIME_COPY) of the same buffers in the same context",
                  "peer_off: [topology] peer_access = \"off\" (tidal stages through pinned memory; the runtime copies "
                  "without peer access); peer_on: \"auto\" (tidal enables peer access on first use, then the runtime's "
                  "copy runs with it on too)",
                  "two_contexts_device0: device memory of one context copied into another context's on device 0 "
                  "(tidal_copy through the second context) against the runtime's copy of the same buffers"};
    if (!o.json.empty()) {
        const std::string out = j.dump(2) + "\n";
        if (!write_output(o.json, out, "tidal bench", "JSON"))
            return 1;
        if (o.json == "-")
            return 0;
    }
    fmt::print("tidal bench --peer: {} ({}), {} device(s), {} bytes per copy, median of {}\n", sys.runtime,
               sys.runtime_detail, sys.device_count, o.size, o.reps);
    fmt::print("device 0, two contexts' buffers (GB/s wall / tidal_clock): tidal_copy {}  runtime {}\n",
               figure_text(contexts_tidal), figure_text(contexts_runtime));
    for (const Figure *f : {&contexts_tidal, &contexts_runtime})
        if (!f->failure.empty())
            fmt::print("note: two contexts: {}\n", f->failure);
    if (pairs.empty()) {
        fmt::print("one device: no pair of devices to measure (the peer matrix is `tidal probe`'s)\n");
        return 0;
    }
    fmt::print("GB/s as wall / tidal_clock   {:>16} {:>16} {:>16} {:>16}\n", "tidal peer off", "runtime peer off",
               "tidal peer on", "runtime peer on");
    for (const PairResult &r : pairs)
        fmt::print("device {} -> {} ({:>9})      {} {} {} {}\n", r.src, r.dst,
                   r.link.can_access ? fmt::format("peer {}h", r.link.hops) : std::string("no peer"),
                   figure_text(r.tidal_off), figure_text(r.runtime_off), figure_text(r.tidal_on),
                   figure_text(r.runtime_on));
    for (const PairResult &r : pairs)
        for (const Figure *f : {&r.tidal_off, &r.runtime_off, &r.tidal_on, &r.runtime_on})
            if (!f->failure.empty())
                fmt::print("note: device {} -> {}: {}\n", r.src, r.dst, f->failure);
    return 0;
}

} // namespace tidal_tool
