#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tidal/tidal.h"
int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 10000, total = argc > 2 ? strtoull(argv[2], 0, 10) : 1000000;
    tidal_context *ctx; if (tidal_context_create_from_string("runtime = \"sim\"\nlog_level=\"error\"\n", &ctx)) return 1;
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_MANAGED;
    tidal_access *acc = malloc(n * sizeof *acc);
    for (size_t i = 0; i < n; ++i) { void *p; if (tidal_alloc(ctx, 4096, &d, &p)) return 2; tidal_access a = TIDAL_ACCESS_INIT; a.ptr = p; a.size = 4096; a.mode = TIDAL_ACCESS_READ_WRITE; acc[i] = a; }
    if (tidal_declare(ctx, NULL, acc, n, 0)) return 3;
    size_t calls = total / n; if (!calls) calls = 1;
    for (int rep = 0; rep < 3; ++rep) {
        struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
        for (size_t c = 0; c < calls; ++c) if (tidal_declare(ctx, NULL, acc, n, 0)) return 4;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("n=%zu %.1f ns/range\n", n, ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (calls * n));
    }
    return 0;
}
