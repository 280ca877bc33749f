/* context-startup: what one process pays to start tidal, the figure that matters at 1,000
 * ranks (ARCHITECTURE.md, "At 1,000 ranks"). Public API only.
 *
 *   context-startup [--runtime auto|sim|cuda|hip] [--reps N] [--json FILE]
 *
 * Times, on the wall clock, N times each (median, min, max):
 *   create    tidal_context_create_from_string with `runtime = ...` (loads the runtime
 *             module and its device runtime, reads every device, loads hwloc's topology)
 *   first     the first 4 KiB device allocation (the pool's first slab)
 *   destroy   tidal_context_destroy
 * The first repetition also loads the runtime module and the vendor runtime into the process
 * for the first time: it is reported apart as "cold". FILE may hold %r and %p
 * (tidal_file_name_expand), so every rank of a job can write its own. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tidal/tidal.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void fail(const char *what, tidal_status s)
{
    fprintf(stderr, "context-startup: %s: %s: %s\n", what, tidal_status_name(s), tidal_last_error());
    exit(1);
}

int main(int argc, char **argv)
{
    const char *runtime = "auto", *json = NULL;
    int reps = 20;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--runtime") && i + 1 < argc)
            runtime = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else {
            fprintf(stderr, "usage: context-startup [--runtime auto|sim|cuda|hip] [--reps N] [--json FILE]\n");
            return 2;
        }
    }
    if (reps < 2)
        reps = 2;
    char config[64];
    snprintf(config, sizeof config, "runtime = \"%s\"\n", runtime);
    double *t[3];
    for (int k = 0; k < 3; ++k)
        t[k] = calloc((size_t)reps, sizeof(double));
    double cold = 0;
    char used[16] = "", detail[128] = "";
    for (int r = 0; r < reps; ++r) {
        tidal_context *ctx = NULL;
        const double t0 = now();
        tidal_status s = tidal_context_create_from_string(config, &ctx);
        const double t1 = now();
        if (s != TIDAL_OK)
            fail("tidal_context_create_from_string", s);
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.kind = TIDAL_KIND_DEVICE;
        void *p = NULL;
        if ((s = tidal_alloc(ctx, 4096, &desc, &p)) != TIDAL_OK)
            fail("tidal_alloc", s);
        const double t2 = now();
        if ((s = tidal_free(ctx, p)) != TIDAL_OK)
            fail("tidal_free", s);
        if (r == 0) {
            tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
            if (tidal_system_info_get(ctx, &sys) == TIDAL_OK) {
                snprintf(used, sizeof used, "%s", sys.runtime);
                snprintf(detail, sizeof detail, "%s", sys.runtime_detail);
            }
        }
        const double t3 = now();
        tidal_context_destroy(ctx);
        const double t4 = now();
        if (r == 0)
            cold = t4 - t0;
        t[0][r] = t1 - t0;
        t[1][r] = t2 - t1;
        t[2][r] = t4 - t3;
    }
    static const char *names[3] = {"create", "first", "destroy"};
    printf("context-startup: runtime %s (%s), %d repetitions, wall clock\n", used, detail, reps);
    printf("  cold (first create + alloc + destroy in this process): %.3f ms\n", 1e3 * cold);
    double median[3], lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        /* The warm figures leave out the first, cold repetition. */
        qsort(t[k] + 1, (size_t)reps - 1, sizeof(double), by_value);
        median[k] = t[k][1 + (reps - 1) / 2];
        lo[k] = t[k][1];
        hi[k] = t[k][reps - 1];
        printf("  %-8s median %9.3f ms   min %9.3f   max %9.3f\n", names[k], 1e3 * median[k], 1e3 * lo[k], 1e3 * hi[k]);
    }
    if (json) {
        char path[4096];
        tidal_status s = tidal_file_name_expand(json, path, sizeof path, NULL);
        if (s != TIDAL_OK)
            fail("tidal_file_name_expand", s);
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "context-startup: cannot write %s\n", path);
            return 1;
        }
        fprintf(f, "{\"benchmark\": \"context-startup\", \"runtime\": \"%s\", \"runtime_detail\": \"%s\", \"reps\": %d, "
                   "\"cold_s\": %.9g",
                used, detail, reps, cold);
        for (int k = 0; k < 3; ++k)
            fprintf(f, ", \"%s_median_s\": %.9g, \"%s_min_s\": %.9g, \"%s_max_s\": %.9g", names[k], median[k], names[k],
                    lo[k], names[k], hi[k]);
        fprintf(f, "}\n");
        fclose(f);
    }
    for (int k = 0; k < 3; ++k)
        free(t[k]);
    return 0;
}
