/* Small programs for the trace tests (tests/trace/test_trace.py), each recording one pattern
 * the doctor must name, or none. Run with TIDAL_TRACE=FILE; the configuration is built in so
 * that each program is one file.
 *   first-access  a managed buffer's first kernel runs with nothing declared before it
 *   fault-bound   kernels on managed memory the device cannot migrate (XNACK off): every run
 *                 reads it over the link
 *   thrashing     two buffers, each declared in turn under a budget that holds only one
 *   alternation   one buffer moved to the host and declared back, again and again
 *   clean         declared before every kernel, within budget, never moved back
 *   replay-pair   a mixed workload for comparing two configurations (tags for the rules policy)
 *   threads       4 threads allocating and freeing at once (addresses reused across threads),
 *                 each with a 2-entry declaration and a 3-item batch: every thread's ring
 *   ordered       4 threads x 25000 pooled pairs back to back, the size of pair i 256 * (1 + i % 7):
 *                 more than a ring holds, so that threads wait for the writer; every event must
 *                 reach the file once, in its thread's order
 * Usage: trace_programs SCENARIO */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <tidal/tidal.h>

#define MiB (1024u * 1024u)

static int failed(tidal_status s, const char *what)
{
    if (s == TIDAL_OK)
        return 0;
    fprintf(stderr, "%s: %s: %s\n", what, tidal_status_name(s), tidal_last_error());
    return 1;
}

static void *alloc(tidal_context *ctx, size_t size, tidal_kind kind, const char *tag)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = kind;
    d.device = 0;
    d.tag = tag;
    void *p = NULL;
    return failed(tidal_alloc(ctx, size, &d, &p), tag) ? NULL : p;
}

static int kernel(tidal_context *ctx, void *p, size_t size)
{
    tidal_check c = TIDAL_CHECK_INIT;
    c.kind = TIDAL_CHECK_TOUCH_WRITE;
    c.device = 0;
    c.target = p;
    c.size = size;
    return failed(tidal_check_run(ctx, &c), "tidal_check_run");
}

static int declare(tidal_context *ctx, void *p, size_t size, int32_t device)
{
    tidal_access a = TIDAL_ACCESS_INIT;
    a.ptr = p;
    a.size = size;
    a.device = device;
    a.mode = TIDAL_ACCESS_READ_WRITE;
    return failed(tidal_declare(ctx, NULL, &a, 1, 0), "tidal_declare");
}

enum { kThreads = 4, kThreadPairs = 2000 };

struct worker {
    tidal_context *ctx;
    void *shared; /* managed, 2 MiB */
    int rc;
};

/* n pooled device pairs back to back, pair i of 256 * (1 + i % period) bytes; 1 when one fails. */
static int pairs(tidal_context *ctx, const char *tag, int n, int period)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = TIDAL_KIND_DEVICE;
    d.tag = tag;
    for (int i = 0; i < n; ++i) {
        void *p = NULL;
        if (failed(tidal_alloc(ctx, 256 * (size_t)(1 + i % period), &d, &p), "tidal_alloc") ||
            failed(tidal_free(ctx, p), "tidal_free"))
            return 1;
    }
    return 0;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    if ((w->rc = pairs(w->ctx, "per-thread", kThreadPairs, 4)))
        return NULL;
    tidal_access a[2] = {TIDAL_ACCESS_INIT, TIDAL_ACCESS_INIT};
    a[0].ptr = w->shared;
    a[0].size = MiB;
    a[1].ptr = (char *)w->shared + MiB;
    a[1].size = MiB;
    void *x = alloc(w->ctx, 3 * 4096, TIDAL_KIND_DEVICE, "batch");
    tidal_copy_item items[3] = {TIDAL_COPY_ITEM_INIT, TIDAL_COPY_ITEM_INIT, TIDAL_COPY_ITEM_INIT};
    for (int i = 0; i < 3; ++i) {
        items[i].dst = (char *)x + i * 4096;
        items[i].src = (char *)w->shared + i * 4096;
        items[i].size = 4096;
    }
    w->rc = !x || failed(tidal_declare(w->ctx, NULL, a, 2, 0), "tidal_declare") ||
            failed(tidal_copy_batch(w->ctx, items, 3, NULL), "tidal_copy_batch") || failed(tidal_free(w->ctx, x), "tidal_free");
    return NULL;
}

enum { kOrderedPairs = 25000 };

static void *work_ordered(void *arg)
{
    struct worker *w = arg;
    w->rc = pairs(w->ctx, "ordered", kOrderedPairs, 7);
    return NULL;
}

static int run(tidal_context *ctx, const char *scenario)
{
    const size_t size = 64 * MiB;
    if (!strcmp(scenario, "first-access") || !strcmp(scenario, "fault-bound")) {
        void *w = alloc(ctx, size, TIDAL_KIND_MANAGED, "weights");
        for (int i = 0; i < 4; ++i)
            if (!w || kernel(ctx, w, size))
                return 1;
        return failed(tidal_free(ctx, w), "tidal_free");
    }
    if (!strcmp(scenario, "thrashing")) {
        void *a = alloc(ctx, size, TIDAL_KIND_MANAGED, "layer.a"), *b = alloc(ctx, size, TIDAL_KIND_MANAGED, "layer.b");
        if (!a || !b || failed(tidal_budget_set(ctx, 0, 96 * MiB), "tidal_budget_set"))
            return 1;
        for (int i = 0; i < 4; ++i)
            if (declare(ctx, a, size, 0) || kernel(ctx, a, size) || declare(ctx, b, size, 0) || kernel(ctx, b, size))
                return 1;
        return failed(tidal_free(ctx, a), "tidal_free") || failed(tidal_free(ctx, b), "tidal_free");
    }
    if (!strcmp(scenario, "alternation")) {
        void *x = alloc(ctx, size, TIDAL_KIND_MANAGED, "state");
        for (int i = 0; i < 4; ++i)
            if (!x || declare(ctx, x, size, 0) || kernel(ctx, x, size) ||
                failed(tidal_prefetch(ctx, x, size, TIDAL_DEVICE_HOST), "tidal_prefetch"))
                return 1;
        return failed(tidal_free(ctx, x), "tidal_free");
    }
    if (!strcmp(scenario, "clean")) {
        void *w = alloc(ctx, size, TIDAL_KIND_MANAGED, "weights"), *s = alloc(ctx, size, TIDAL_KIND_DEVICE, "scratch");
        for (int i = 0; i < 4; ++i)
            if (!w || !s || declare(ctx, w, size, 0) || kernel(ctx, w, size) || kernel(ctx, s, size))
                return 1;
        return failed(tidal_free(ctx, w), "tidal_free") || failed(tidal_free(ctx, s), "tidal_free");
    }
    if (!strcmp(scenario, "replay-pair")) {
        void *w = alloc(ctx, size, TIDAL_KIND_AUTO, "weights.layer0");
        void *s = alloc(ctx, 16 * MiB, TIDAL_KIND_AUTO, "scratch.attention");
        for (int i = 0; i < 3; ++i)
            if (!w || !s || declare(ctx, w, size, 0) || kernel(ctx, w, size) || kernel(ctx, s, 16 * MiB))
                return 1;
        return failed(tidal_free(ctx, w), "tidal_free") || failed(tidal_free(ctx, s), "tidal_free");
    }
    if (!strcmp(scenario, "threads")) {
        void *shared = alloc(ctx, 2 * MiB, TIDAL_KIND_MANAGED, "shared");
        pthread_t t[kThreads];
        struct worker w[kThreads];
        for (int i = 0; i < kThreads; ++i) {
            w[i] = (struct worker){ctx, shared, 0};
            pthread_create(&t[i], NULL, work, &w[i]);
        }
        int rc = !shared;
        for (int i = 0; i < kThreads; ++i) {
            pthread_join(t[i], NULL);
            rc |= w[i].rc;
        }
        return rc || failed(tidal_free(ctx, shared), "tidal_free");
    }
    if (!strcmp(scenario, "ordered")) {
        pthread_t t[kThreads];
        struct worker w[kThreads];
        int rc = 0;
        for (int i = 0; i < kThreads; ++i) {
            w[i] = (struct worker){ctx, NULL, 0};
            pthread_create(&t[i], NULL, work_ordered, &w[i]);
        }
        for (int i = 0; i < kThreads; ++i) {
            pthread_join(t[i], NULL);
            rc |= w[i].rc;
        }
        return rc;
    }
    fprintf(stderr, "unknown scenario %s\n", scenario);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: trace_programs SCENARIO\n");
        return 2;
    }
    /* XNACK off for fault-bound: managed pages stay on the host and every kernel reads them over the link. */
    const char *config = !strcmp(argv[1], "fault-bound") ? "runtime = \"sim\"\n[sim]\nxnack = false\n" : "runtime = \"sim\"\n";
    tidal_context *ctx = NULL;
    if (failed(tidal_context_create_from_string(config, &ctx), "tidal_context_create_from_string"))
        return 1;
    const int rc = run(ctx, argv[1]);
    return failed(tidal_context_destroy(ctx), "tidal_context_destroy") ? 1 : rc;
}
