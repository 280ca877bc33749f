// declare microbench: N managed 4 KiB allocations, one tidal_declare of all N outside the count,
// then REPS more inside declares() (what scaling times per range).
// The context is destroyed at the end, so TIDAL_SIM_CALL_COUNTS=FILE gets the runtime calls made.
// With a third argument SHOWN, the REPS calls are timed one by one (what `scaling`'s declare
// table does: one call per rep, right after the declaration that moved the ranges): the ns per
// range of the first SHOWN calls, then the median of the second half (the steady state).
#include <tidal/tidal.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
__attribute__((noinline)) void declares(tidal_context *ctx, tidal_access *acc, size_t n, int reps)
{
    for (int r = 0; r < reps; ++r)
        if (tidal_declare(ctx, nullptr, acc, n, 0) != TIDAL_OK) { std::fprintf(stderr, "%s\n", tidal_last_error()); std::exit(1); }
}
int main(int argc, char **argv)
{
    size_t n = std::strtoull(argv[1], 0, 10);
    int reps = std::atoi(argv[2]);
    tidal_context *ctx = nullptr;
    if (tidal_context_create_from_string("runtime = \"sim\"\nlog_level = \"error\"\n", &ctx)) return 1;
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_MANAGED;
    std::vector<tidal_access> acc(n);
    for (auto &a : acc) { a = TIDAL_ACCESS_INIT; void *p; if (tidal_alloc(ctx, 4096, &d, &p)) return 1; a.ptr = p; a.size = 4096; a.mode = TIDAL_ACCESS_READ_WRITE; }
    if (tidal_declare(ctx, nullptr, acc.data(), n, 0)) return 1;
    if (argc > 3) {
        std::vector<double> ns;
        for (int r = 0; r < reps; ++r) {
            const auto t = std::chrono::steady_clock::now();
            declares(ctx, acc.data(), n, 1);
            ns.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count() * 1e9 / n);
        }
        std::printf("%zu ranges, ns/range by call:", n);
        for (int c = 0; c < std::min(std::atoi(argv[3]), reps); ++c) std::printf(" %.0f", ns[c]);
        std::vector<double> tail(ns.begin() + reps / 2, ns.end());
        std::nth_element(tail.begin(), tail.begin() + tail.size() / 2, tail.end());
        std::printf("  steady (median of calls %d-%d): %.0f\n", reps / 2 + 1, reps, tail[tail.size() / 2]);
        tidal_context_destroy(ctx);
        return 0;
    }
    auto t0 = std::chrono::steady_clock::now();
    declares(ctx, acc.data(), n, reps);
    std::printf("%zu ranges: %.1f ns/range\n", n, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9 / (n * reps));
    tidal_context_destroy(ctx);
    return 0;
}
