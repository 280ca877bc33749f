/* A program that leaks: three tagged allocations left live and one error, then
 * tidal_context_destroy. tests/telemetry/check_report.py runs it with TIDAL_STATS set and reads
 * the leak report (log) and the snapshot (JSON). argv[1]: the configuration text. */
#include <stdio.h>

#include "tidal/tidal.h"

/* Not inlined, and exported (the program links with -rdynamic), so that a call site names it. */
__attribute__((noinline)) void *leaky_allocate(tidal_context *ctx, tidal_kind kind, size_t size, const char *tag)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    desc.tag = tag;
    void *p = NULL;
    if (tidal_alloc(ctx, size, &desc, &p) != TIDAL_OK) {
        fprintf(stderr, "leaky: tidal_alloc: %s\n", tidal_last_error());
        return NULL;
    }
    return p;
}

int main(int argc, char **argv)
{
    tidal_context *ctx = NULL;
    if (tidal_context_create_from_string(argc > 1 ? argv[1] : "runtime = \"sim\"\n", &ctx) != TIDAL_OK) {
        fprintf(stderr, "leaky: %s\n", tidal_last_error());
        return 1;
    }
    void *kept = leaky_allocate(ctx, TIDAL_KIND_DEVICE, 4096, "model/weights");
    void *kv = leaky_allocate(ctx, TIDAL_KIND_MANAGED, 8192, "model/kv");
    void *io = leaky_allocate(ctx, TIDAL_KIND_PINNED, 100, "io");
    void *freed = leaky_allocate(ctx, TIDAL_KIND_DEVICE, 1 << 20, "scratch");
    if (!kept || !kv || !io || !freed || tidal_free(ctx, freed) != TIDAL_OK)
        return 1;
    char not_ours[8];
    if (tidal_free(ctx, not_ours) != TIDAL_ERROR_UNKNOWN_POINTER) /* counted in "errors" */
        return 1;
    return tidal_context_destroy(ctx) == TIDAL_OK ? 0 : 1;
}
