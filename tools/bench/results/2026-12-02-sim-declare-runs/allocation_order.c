#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include "tidal/tidal.h"
int main(int argc, char **argv) {
    size_t n = strtoull(argv[1], 0, 10);
    tidal_context *ctx; if (tidal_context_create_from_string("runtime = \"sim\"\nlog_level=\"error\"\n", &ctx)) return 1;
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_MANAGED;
    uintptr_t prev = 0; size_t asc = 0, desc = 0, jumps = 0;
    for (size_t i = 0; i < n; ++i) { void *p; if (tidal_alloc(ctx, 4096, &d, &p)) return 2; uintptr_t a = (uintptr_t)p;
      if (i) { if (a > prev) { asc++; if (a - prev != 4096) jumps++; } else { desc++; jumps++; } } prev = a; }
    printf("n=%zu asc %zu desc %zu jumps %zu\n", n, asc, desc, jumps);
}
