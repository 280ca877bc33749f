// alloc-latency: median nanoseconds per tidal_alloc + tidal_free pair through the public C
// API (policy chain, registry and pool included) for tidal's pools, the runtime's own
// stream-ordered pool behind the same API ([pool] backend = "vendor", device memory) and no
// pool at all ([pool] enabled = false: one runtime allocation per call), per kind and size, all
// in one run; and the throughput of N threads against one. Public API only.
//
// Rounds go over every cell in turn and each cell's figure is the median over rounds, so a
// burst of noise on the machine spreads over all cells instead of spoiling one. The
// measuring thread is pinned to the CPU it starts on (--no-pin: not), so a move to another core
// mid-batch is not counted in the pairs.
//
//   alloc-latency [--runtime auto|sim|cuda|hip] [--threads N] [--rounds N] [--no-pin] [--json]
#include <tidal/tidal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../common/cpu_pin.h"
#include "bench_support.h"

namespace {
using Clock = std::chrono::steady_clock;

// nullptr when the runtime cannot serve the configuration (the vendor pool on a runtime
// without one) and `optional` says that is fine.
tidal_context *open(const std::string &runtime, const char *pool, bool optional = false)
{
    std::string toml = "runtime = \"" + runtime + "\"\n[pool]\n" + pool + "\n";
    tidal_context *ctx = nullptr;
    if (tidal_status s = tidal_context_create_from_string(toml.c_str(), &ctx); s != TIDAL_OK) {
        if (optional)
            return nullptr;
        tidal_bench::die("alloc-latency", s, pool);
    }
    return ctx;
}

// Mean ns per pair over `iters` pairs.
double batch_ns(tidal_context *ctx, tidal_kind kind, size_t size, int iters)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = kind;
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) {
        void *p = nullptr;
        if (tidal_status s = tidal_alloc(ctx, size, &d, &p); s != TIDAL_OK)
            tidal_bench::die("alloc-latency", s, "tidal_alloc");
        if (tidal_status s = tidal_free(ctx, p); s != TIDAL_OK)
            tidal_bench::die("alloc-latency", s, "tidal_free");
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iters;
}

struct Cell {
    tidal_kind kind;
    size_t size;
    std::vector<double> pooled, vendor, unpooled;
};

double pairs_per_second(tidal_context *ctx, size_t size, unsigned threads, int iters)
{
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&] {
            tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
            d.kind = TIDAL_KIND_DEVICE;
            while (!go.load())
                ;
            for (int i = 0; i < iters; ++i) {
                void *p = nullptr;
                tidal_alloc(ctx, size, &d, &p);
                tidal_free(ctx, p);
            }
        });
    auto t0 = Clock::now();
    go = true;
    for (auto &t : ts)
        t.join();
    return threads * static_cast<double>(iters) / std::chrono::duration<double>(Clock::now() - t0).count();
}
} // namespace

int main(int argc, char **argv)
{
    std::string runtime = "auto";
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    int rounds = 9;
    bool json = false, pin = true;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runtime" && i + 1 < argc)
            runtime = argv[++i];
        else if (a == "--threads" && i + 1 < argc)
            threads = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
        else if (a == "--rounds" && i + 1 < argc)
            rounds = std::max(1, std::atoi(argv[++i]));
        else if (a == "--no-pin")
            pin = false;
        else if (a == "--json")
            json = true;
        else {
            std::fprintf(stderr, "usage: alloc-latency [--runtime R] [--threads N] [--rounds N] [--no-pin] [--json]\n");
            return 2;
        }
    }
    tidal_context *pooled = open(runtime, "enabled = true");
    tidal_context *vendor = open(runtime, "backend = \"vendor\"", true);
    tidal_context *raw = open(runtime, "enabled = false");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    tidal_system_info_get(pooled, &sys);

    std::optional<tidal_tools::CpuPin> pinned_to(std::in_place, pin);
    const int cpu = pinned_to->cpu();

    std::vector<Cell> cells;
    for (tidal_kind k : {TIDAL_KIND_DEVICE, TIDAL_KIND_PINNED, TIDAL_KIND_MANAGED})
        for (size_t s : {size_t{256}, size_t{4096}, size_t{65536}, size_t{1} << 20, size_t{16} << 20, size_t{256} << 20})
            cells.push_back(Cell{k, s, {}, {}, {}});
    // Each measured batch follows an unmeasured one of the same cell: the unpooled pairs before
    // it (runtime calls touching megabytes) leave the caches cold. Unpooled pairs cost
    // microseconds to milliseconds, so they get fewer pairs and only the first three rounds.
    for (int round = 1; round <= rounds; ++round) {
        for (Cell &c : cells) {
            batch_ns(pooled, c.kind, c.size, 2000);
            c.pooled.push_back(batch_ns(pooled, c.kind, c.size, 20000));
        }
        for (Cell &c : cells)
            if (vendor && c.kind == TIDAL_KIND_DEVICE) {
                batch_ns(vendor, c.kind, c.size, 200);
                c.vendor.push_back(batch_ns(vendor, c.kind, c.size, 2000));
            }
        for (Cell &c : cells)
            if (round <= 3)
                c.unpooled.push_back(batch_ns(raw, c.kind, c.size, c.kind == TIDAL_KIND_DEVICE ? 200 : 10));
    }
    pinned_to.reset(); // the scaling threads would inherit the pin

    const auto median_or_0 = [](const std::vector<double> &v) { return v.empty() ? 0.0 : tidal_bench::median(v); };
    if (json)
        std::printf("{\"runtime\": \"%s\", \"detail\": \"%s\", \"rounds\": %d, \"pinned_cpu\": %d, \"results\": [\n",
                    sys.runtime, tidal_bench::json_escape(sys.runtime_detail).c_str(), rounds, cpu);
    else
        std::printf("runtime %s (%s)\nns per alloc+free pair, median of %d rounds%s\n\n%-9s %10s %10s %10s %12s %9s %9s\n",
                    sys.runtime, sys.runtime_detail, rounds, cpu >= 0 ? ", pinned to one CPU" : "", "kind", "bytes",
                    "tidal", "vendor", "unpooled", "vendor/x", "unpool/x");
    bool first = true;
    for (const Cell &c : cells) {
        const double p = median_or_0(c.pooled), v = median_or_0(c.vendor), r = median_or_0(c.unpooled);
        if (json) {
            std::printf("%s  {\"kind\": \"%s\", \"bytes\": %zu, \"pooled_ns\": %.1f, ", first ? "" : ",\n",
                        tidal_kind_name(c.kind), c.size, p);
            if (v > 0)
                std::printf("\"vendor_ns\": %.1f, ", v);
            std::printf("\"unpooled_ns\": %.1f, \"pooled_rounds\": [", r);
            for (size_t i = 0; i < c.pooled.size(); ++i)
                std::printf("%s%.1f", i ? ", " : "", c.pooled[i]);
            std::printf("]}");
        } else {
            char vcol[32] = "-", vratio[32] = "-";
            if (v > 0) {
                std::snprintf(vcol, sizeof vcol, "%.1f", v);
                std::snprintf(vratio, sizeof vratio, "%.1fx", v / p);
            }
            std::printf("%-9s %10zu %10.1f %10s %12.1f %9s %8.0fx\n", tidal_kind_name(c.kind), c.size, p, vcol, r,
                        vratio, r / p);
        }
        first = false;
    }
    const double one = pairs_per_second(pooled, 4096, 1, 200000);
    const double many = pairs_per_second(pooled, 4096, threads, 200000);
    if (json)
        std::printf("\n], \"threads\": %u, \"pairs_per_s_1\": %.0f, \"pairs_per_s_n\": %.0f, \"scaling\": %.2f}\n", threads,
                    one, many, many / one);
    else
        std::printf("\n4 KiB device pairs/s: 1 thread %.3g, %u threads %.3g (%.1fx)\n", one, threads, many, many / one);
    tidal_context_destroy(pooled);
    if (vendor)
        tidal_context_destroy(vendor);
    tidal_context_destroy(raw);
    return 0;
}
