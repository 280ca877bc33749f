// alloc-latency: median nanoseconds per tidal_alloc + tidal_free pair through the public C
// API (policy chain, registry and pool included), pooled vs unpooled ([pool] enabled = false,
// i.e. one runtime allocation per call), per kind and size; and the throughput of N threads
// against one. Public API only.
//
//   alloc-latency [--runtime auto|sim|cuda|hip] [--threads N] [--json]
#include <tidal/tidal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

tidal_context *open(const std::string &runtime, bool pooled)
{
    std::string toml = "runtime = \"" + runtime + "\"\n[pool]\nenabled = " + (pooled ? "true" : "false") + "\n";
    tidal_context *ctx = nullptr;
    if (tidal_context_create_from_string(toml.c_str(), &ctx) != TIDAL_OK) {
        std::fprintf(stderr, "alloc-latency: %s\n", tidal_last_error());
        std::exit(1);
    }
    return ctx;
}

// Median over `reps` batches of the mean pair time in a batch of `iters`.
double pair_ns(tidal_context *ctx, tidal_kind kind, size_t size, int iters, int reps)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = kind;
    std::vector<double> r;
    for (int rep = 0; rep <= reps; ++rep) {
        auto t0 = Clock::now();
        for (int i = 0; i < iters; ++i) {
            void *p = nullptr;
            if (tidal_alloc(ctx, size, &d, &p) != TIDAL_OK || tidal_free(ctx, p) != TIDAL_OK) {
                std::fprintf(stderr, "alloc-latency: %s\n", tidal_last_error());
                std::exit(1);
            }
        }
        const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iters;
        if (rep > 0) // the first batch warms the pool
            r.push_back(ns);
    }
    std::sort(r.begin(), r.end());
    return r[r.size() / 2];
}

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
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--runtime" && i + 1 < argc)
            runtime = argv[++i];
        else if (a == "--threads" && i + 1 < argc)
            threads = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
        else if (a == "--json")
            json = true;
        else {
            std::fprintf(stderr, "usage: alloc-latency [--runtime R] [--threads N] [--json]\n");
            return 2;
        }
    }
    tidal_context *pooled = open(runtime, true), *raw = open(runtime, false);
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    tidal_system_info_get(pooled, &sys);
    const size_t sizes[] = {256, 4096, 65536, 1u << 20, 16u << 20, 256u << 20};
    const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_PINNED, TIDAL_KIND_MANAGED};
    if (json)
        std::printf("{\"runtime\": \"%s\", \"detail\": \"%s\", \"results\": [\n", sys.runtime, sys.runtime_detail);
    else
        std::printf("runtime %s (%s)\nns per alloc+free pair, median of 9 batches\n\n%-9s %10s %12s %12s %9s\n",
                    sys.runtime, sys.runtime_detail, "kind", "bytes", "pooled", "unpooled", "speedup");
    bool first = true;
    for (tidal_kind k : kinds)
        for (size_t s : sizes) {
            const int iters = s >= (16u << 20) ? 200 : 20000;
            // Unpooled pinned and managed allocations cost milliseconds: fewer of them.
            const int raw_iters = k == TIDAL_KIND_DEVICE ? std::min(iters, 2000) : 20;
            const double p = pair_ns(pooled, k, s, iters, 9);
            const double r = pair_ns(raw, k, s, raw_iters, 3);
            if (json)
                std::printf("%s  {\"kind\": \"%s\", \"bytes\": %zu, \"pooled_ns\": %.1f, \"unpooled_ns\": %.1f}",
                            first ? "" : ",\n", tidal_kind_name(k), s, p, r);
            else
                std::printf("%-9s %10zu %12.1f %12.1f %8.0fx\n", tidal_kind_name(k), s, p, r, r / p);
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
    tidal_context_destroy(raw);
    return 0;
}
