#include <stdio.h>
#include <stdlib.h>
#include "tidal/tidal.h"
int main(int argc, char **argv) {
    size_t sz = argc > 3 ? strtoull(argv[3], 0, 10) : 4096; size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 1000, calls = argc > 2 ? strtoull(argv[2], 0, 10) : 100000;
    tidal_context *ctx; if (tidal_context_create_from_string("runtime = \"sim\"\nlog_level=\"error\"\n", &ctx)) return 1;
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_DEVICE;
    void *p;
    for (size_t i = 0; i < n; ++i) if (tidal_alloc(ctx, sz, &d, &p)) return 2;
    for (size_t i = 0; i < calls; ++i) { if (tidal_alloc(ctx, sz, &d, &p) || tidal_free(ctx, p)) return 3; }
    return 0;
}
