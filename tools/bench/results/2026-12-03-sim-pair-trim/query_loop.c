#include <stdio.h>
#include <stdlib.h>
#include "tidal/tidal.h"
int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 1000, calls = argc > 2 ? strtoull(argv[2], 0, 10) : 100000;
    tidal_context *ctx; if (tidal_context_create_from_string("runtime = \"sim\"\nlog_level=\"error\"\n", &ctx)) return 1;
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_DEVICE;
    char **p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; ++i) if (tidal_alloc(ctx, 4096, &d, (void **)&p[i])) return 2;
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    size_t sum = 0;
    for (size_t i = 0; i < calls; ++i) { if (tidal_pointer_query(ctx, p[(i * 7919) % n] + 100, &info)) return 3; sum += info.size; }
    printf("%zu\n", sum);
    return 0;
}
