/* A managed buffer that faults, freed, and its pooled block handed to a buffer of another tag
 * that no kernel touches: the faults stay with the first tag. tests/telemetry/check_report.py
 * runs it with TIDAL_STATS=FILE. argv[1]: the configuration text. */
#include <stdio.h>

#include "tidal/tidal.h"

static void *managed(tidal_context *ctx, const char *tag)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_MANAGED;
    desc.device = 0;
    desc.tag = tag;
    void *p = NULL;
    return tidal_alloc(ctx, 1 << 20, &desc, &p) == TIDAL_OK ? p : NULL;
}

int main(int argc, char **argv)
{
    tidal_context *ctx = NULL;
    if (tidal_context_create_from_string(argc > 1 ? argv[1] : "runtime = \"sim\"\n", &ctx) != TIDAL_OK) {
        fprintf(stderr, "paging_reuse: %s\n", tidal_last_error());
        return 1;
    }
    void *first = managed(ctx, "touched");
    tidal_check touch = TIDAL_CHECK_INIT;
    touch.kind = TIDAL_CHECK_TOUCH_WRITE;
    touch.device = 0;
    touch.target = first;
    touch.size = 1 << 20;
    if (!first || tidal_check_run(ctx, &touch) != TIDAL_OK || tidal_free(ctx, first) != TIDAL_OK) {
        fprintf(stderr, "paging_reuse: %s\n", tidal_last_error());
        return 1;
    }
    void *second = managed(ctx, "untouched");
    if (second != first) /* the pool must hand the same block back, or the test proves nothing */
        fprintf(stderr, "paging_reuse: the pool gave another block (%p, not %p)\n", second, first);
    const int rc = second == first && tidal_free(ctx, second) == TIDAL_OK ? 0 : 1;
    return tidal_context_destroy(ctx) == TIDAL_OK ? rc : 1;
}
