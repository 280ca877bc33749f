// bytes per live allocation in a fresh process: resident set before/after n 4 KiB device allocations (as scaling measures, one context only)
#include <tidal/tidal.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>
static size_t rss() { FILE *f = std::fopen("/proc/self/statm", "r"); unsigned long a = 0, b = 0; if (std::fscanf(f, "%lu %lu", &a, &b) != 2) b = 0; std::fclose(f); return b * 4096; }
int main(int argc, char **argv)
{
    size_t n = std::strtoull(argv[1], 0, 10);
    tidal_context *ctx = nullptr;
    if (tidal_context_create_from_string("runtime = \"sim\"\nlog_level = \"error\"\n", &ctx)) return 1;
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_DEVICE;
    void *p; tidal_alloc(ctx, 4096, &d, &p); tidal_free(ctx, p);
    size_t r0 = rss();
    std::vector<void *> live(n);
    for (auto &q : live) if (tidal_alloc(ctx, 4096, &d, &q)) return 1;
    size_t r1 = rss();
    std::printf("%zu live: %.0f bytes/live\n", n, double(r1 - r0) / n);
    return 0;
}
