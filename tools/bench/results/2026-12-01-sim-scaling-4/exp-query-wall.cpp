// interior-query microbench: N live 4 KiB device blocks, K queries at random interior addresses
// (addresses precomputed in a sequential array so the bench's own access is streamed).
// Also prints the process's Rss and AnonHugePages at the end (/proc/self/smaps_rollup).
#include <tidal/tidal.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <algorithm>
#include <cstring>
__attribute__((noinline)) void queries(tidal_context *ctx, char **q, size_t k)
{
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    for (size_t i = 0; i < k; ++i)
        if (tidal_pointer_query(ctx, q[i], &info) != TIDAL_OK) { std::fprintf(stderr, "%s\n", tidal_last_error()); std::exit(1); }
}
int main(int argc, char **argv)
{
    size_t n = std::strtoull(argv[1], 0, 10), k = std::strtoull(argv[2], 0, 10);
    int reps = argc > 3 ? std::atoi(argv[3]) : 1;
    tidal_context *ctx = nullptr;
    if (tidal_context_create_from_string("runtime = \"sim\"\nlog_level = \"error\"\n", &ctx)) return 1;
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_DEVICE;
    std::vector<char *> live(n);
    for (auto &p : live) if (tidal_alloc(ctx, 4096, &d, (void **)&p)) return 1;
    std::mt19937_64 rng(n);
    std::vector<char *> q(k);
    for (size_t i = 0; i < k; ++i) q[i] = live[rng() % n] + 1 + i % 4095;
    std::vector<double> v;
    for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        queries(ctx, q.data(), k);
        v.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9 / k);
    }
    std::sort(v.begin(), v.end());
    std::printf("%zu live: median %.1f min %.1f ns/query (%d reps)\n", n, v[v.size() / 2], v[0], reps);
    { FILE *f = std::fopen("/proc/self/smaps_rollup", "r"); char l[256]; while (f && std::fgets(l, 256, f)) if (std::strstr(l, "AnonHuge") || std::strstr(l, "Rss")) std::fputs(l, stdout); }
    return 0;
}
