#include <stdio.h>
#include <stdlib.h>
#include "tidal/tidal.h"
int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 1000, calls = argc > 2 ? strtoull(argv[2], 0, 10) : 100;
    tidal_context *ctx; if (tidal_context_create_from_string("runtime = \"sim\"\nlog_level=\"error\"\n", &ctx)) return 1;
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_MANAGED;
    tidal_access *acc = malloc(n * sizeof *acc);
    for (size_t i = 0; i < n; ++i) { void *p; if (tidal_alloc(ctx, 4096, &d, &p)) return 2; tidal_access a = TIDAL_ACCESS_INIT; a.ptr = p; a.size = 4096; a.mode = TIDAL_ACCESS_READ_WRITE; acc[i] = a; }
    for (size_t c = 0; c < calls; ++c) if (tidal_declare(ctx, NULL, acc, n, 0)) return 3;
    return 0;
}
