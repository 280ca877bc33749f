/* Instructions per tidal_alloc + tidal_free pair through the public C API, for callgrind:
 *   valgrind --tool=callgrind --toggle-collect=capi_pairs build/tools/bench/capi-pairs [SIZE]
 * "Collected : N" / 101000 = instructions per pair (1000 warm-up pairs + 100000 counted;
 * the warm-up runs inside the same function so the first pool refill is included once).
 * Device memory on the simulated device: the figure is tidal's own work, no GPU call.
 *
 * With a second argument `copy`, the same for one tidal_copy of SIZE bytes between two pooled
 * device blocks, one of them at an interior offset (--toggle-collect=capi_copies; the
 * simulated device's memcpy is counted too, so compare builds at one size).
 *
 * With `prefetch`, one tidal_prefetch of SIZE bytes of managed memory to device 0 and one back
 * to the host (--toggle-collect=capi_prefetches, / 101000 per pair); with `staged`, one
 * tidal_copy of SIZE bytes from malloc'd memory to a device block, staged through pinned memory
 * (--toggle-collect=capi_copies). Both pass through a profiler range ([telemetry] ranges): a
 * third argument `ranges` turns them on, to compare with the default (off) and with a build
 * without ranges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tidal/tidal.h>

__attribute__((noinline)) void capi_pairs(tidal_context *ctx, const tidal_alloc_desc *d, size_t size, long n)
{
    for (long i = 0; i < n; ++i) {
        void *p;
        if (tidal_alloc(ctx, size, d, &p) != TIDAL_OK || tidal_free(ctx, p) != TIDAL_OK) {
            fprintf(stderr, "capi-pairs: %s\n", tidal_last_error());
            exit(1);
        }
    }
}

__attribute__((noinline)) void capi_copies(tidal_context *ctx, char *dst, const char *src, size_t size, long n)
{
    for (long i = 0; i < n; ++i) {
        if (tidal_copy(ctx, dst, src, size) != TIDAL_OK) {
            fprintf(stderr, "capi-pairs: %s\n", tidal_last_error());
            exit(1);
        }
    }
}

__attribute__((noinline)) void capi_prefetches(tidal_context *ctx, char *p, size_t size, long n)
{
    for (long i = 0; i < n; ++i) {
        if (tidal_prefetch(ctx, p, size, 0) != TIDAL_OK || tidal_prefetch(ctx, p, size, TIDAL_DEVICE_HOST) != TIDAL_OK) {
            fprintf(stderr, "capi-pairs: %s\n", tidal_last_error());
            exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    const size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 256;
    const char *mode = argc > 2 ? argv[2] : "";
    const int ranges = argc > 3 && strcmp(argv[3], "ranges") == 0;
    tidal_context *ctx = NULL;
    if (tidal_context_create_from_string(ranges ? "runtime = \"sim\"\nlog_level = \"error\"\n[telemetry]\nranges = true\n"
                                                : "runtime = \"sim\"\nlog_level = \"error\"\n",
                                         &ctx) != TIDAL_OK) {
        fprintf(stderr, "capi-pairs: %s\n", tidal_last_error());
        return 1;
    }
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = TIDAL_KIND_DEVICE;
    if (strcmp(mode, "prefetch") == 0 || strcmp(mode, "staged") == 0) {
        char *m = NULL, *dev = NULL, *host = calloc(1, size);
        d.kind = TIDAL_KIND_MANAGED;
        tidal_alloc_desc dd = TIDAL_ALLOC_DESC_INIT;
        dd.kind = TIDAL_KIND_DEVICE;
        if (!host || tidal_alloc(ctx, size, &d, (void **)&m) != TIDAL_OK || tidal_alloc(ctx, size, &dd, (void **)&dev) != TIDAL_OK) {
            fprintf(stderr, "capi-pairs: %s\n", tidal_last_error());
            return 1;
        }
        if (mode[0] == 'p') {
            capi_prefetches(ctx, m, size, 1000);
            capi_prefetches(ctx, m, size, 100000);
        } else {
            capi_copies(ctx, dev, host, size, 1000);
            capi_copies(ctx, dev, host, size, 100000);
        }
        tidal_free(ctx, m);
        tidal_free(ctx, dev);
        free(host);
    } else if (strcmp(mode, "copy") == 0) {
        char *a, *b;
        if (tidal_alloc(ctx, size + 64, &d, (void **)&a) != TIDAL_OK || tidal_alloc(ctx, size, &d, (void **)&b) != TIDAL_OK) {
            fprintf(stderr, "capi-pairs: %s\n", tidal_last_error());
            return 1;
        }
        capi_copies(ctx, a + 64, b, size, 1000);
        capi_copies(ctx, a + 64, b, size, 100000);
        tidal_free(ctx, a);
        tidal_free(ctx, b);
    } else {
        capi_pairs(ctx, &d, size, 1000);
        capi_pairs(ctx, &d, size, 100000);
    }
    tidal_context_destroy(ctx);
    return 0;
}
