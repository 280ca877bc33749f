/* The stress test (suite `stress`): 16 threads on one context, each mixing every entry point
 * at random — alloc/free of every kind, copies both ways, copy_batch, declarations under a
 * budget, prefetch, advice, queries, stream create/destroy/forget, async alloc/free, pool trim,
 * statistics — then exact totals: every pool counts exactly the allocations and frees the
 * threads made and holds nothing in use; the scheduler has nothing resident or protected,
 * never went over its budget, and counted each refusal.
 *
 * TIDAL_STRESS_OPS sets the total number of operations (default 200000, which keeps the
 * default and ASan runs short); the ThreadSanitizer run uses millions (DEVELOPERS.md). Run it
 * with TIDAL_SIM_SERIALIZE=0 too, so that the simulated device's one lock hides nothing. */
#define _POSIX_C_SOURCE 200809L

#include "../capi/harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 16
#define SLOTS 8
#define HOST_BYTES (256u * 1024u)
#define BUDGET (8ull * 1024 * 1024)

struct slot {
    unsigned char *ptr;
    size_t size;
    tidal_kind kind; /* where it was placed (AUTO resolved by a query) */
    void *async_stream; /* non-NULL: allocated with tidal_alloc_async on this stream */
};

struct worker {
    tidal_context *ctx;
    int index;
    unsigned rng;
    long operations;
    long failures;
    char first_failure[512];
    struct slot slots[SLOTS];
    unsigned char *host;
    void *stream;       /* created and destroyed as it goes */
    void *async_stream; /* for async alloc/free: lives as long as the worker */
    /* What it did, for the totals. */
    unsigned long allocations[TIDAL_KIND_COUNT];
    unsigned long frees[TIDAL_KIND_COUNT];
    unsigned long refusals;
};

static void record(struct worker *w, const char *what, tidal_status status)
{
    if (w->failures++ != 0)
        return;
    char detail[384];
    snprintf(detail, sizeof detail, "%s", status != TIDAL_OK ? tidal_last_error() : "");
    snprintf(w->first_failure, sizeof w->first_failure, "thread %d: %s: %s (%d): %s", w->index,
             what, tidal_status_name(status), (int)status, detail);
}

static int ok(struct worker *w, const char *what, tidal_status status)
{
    if (status == TIDAL_OK)
        return 1;
    record(w, what, status);
    return 0;
}

static struct slot *pick(struct worker *w, int live)
{
    unsigned start = harness_next_random(&w->rng) % SLOTS;
    for (unsigned i = 0; i < SLOTS; ++i) {
        struct slot *s = &w->slots[(start + i) % SLOTS];
        if ((s->ptr != NULL) == live)
            return s;
    }
    return NULL;
}

static void do_alloc(struct worker *w)
{
    struct slot *s = pick(w, 0);
    if (s == NULL)
        return;
    static const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED,
                                       TIDAL_KIND_PAGEABLE, TIDAL_KIND_AUTO};
    unsigned r = harness_next_random(&w->rng);
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kinds[r % 5];
    desc.hints = (r >> 3) % 4 == 0 ? TIDAL_HINT_HOST_READ : 0;
    /* Mostly small size classes, sometimes a large block. */
    size_t size = (r >> 8) % 16 == 0 ? (size_t)(1 + (r >> 12) % 4) << 20 : 64 + (r >> 12) % (64 * 1024);
    void *ptr = NULL;
    int async = desc.kind == TIDAL_KIND_DEVICE && (r >> 5) % 3 == 0;
    tidal_status st = async ? tidal_alloc_async(w->ctx, size, &desc, w->async_stream, &ptr)
                            : tidal_alloc(w->ctx, size, &desc, &ptr);
    if (!ok(w, async ? "alloc_async" : "alloc", st))
        return;
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    if (!ok(w, "pointer_query", tidal_pointer_query(w->ctx, ptr, &info)))
        return;
    s->ptr = ptr;
    s->size = size;
    s->kind = info.kind;
    s->async_stream = async ? w->async_stream : NULL;
    ++w->allocations[info.kind];
}

static void do_free(struct worker *w, struct slot *s)
{
    if (s == NULL)
        return;
    /* An async allocation goes back half of the time with tidal_free_async. */
    tidal_status st = s->async_stream != NULL && harness_next_random(&w->rng) % 2 == 0
                          ? tidal_free_async(w->ctx, s->ptr, s->async_stream)
                          : tidal_free(w->ctx, s->ptr);
    if (ok(w, "free", st))
        ++w->frees[s->kind];
    s->ptr = NULL;
}

static void do_copy(struct worker *w)
{
    struct slot *s = pick(w, 1);
    if (s == NULL)
        return;
    size_t size = s->size < HOST_BYTES ? s->size : HOST_BYTES;
    if (harness_next_random(&w->rng) % 2)
        ok(w, "copy in", tidal_copy(w->ctx, s->ptr, w->host, size));
    else
        ok(w, "copy out", tidal_copy(w->ctx, w->host, s->ptr, size));
}

static void do_batch(struct worker *w)
{
    tidal_copy_item items[SLOTS];
    size_t count = 0, offset = 0;
    for (int i = 0; i < SLOTS; ++i) {
        struct slot *s = &w->slots[i];
        if (s->ptr == NULL || (s->kind != TIDAL_KIND_DEVICE && s->kind != TIDAL_KIND_PINNED))
            continue;
        size_t size = s->size < 4096 ? s->size : 4096;
        tidal_copy_item item = TIDAL_COPY_ITEM_INIT;
        int in = (harness_next_random(&w->rng) & 1) != 0;
        item.dst = in ? (void *)s->ptr : (void *)(w->host + offset);
        item.src = in ? (const void *)(w->host + offset) : (const void *)s->ptr;
        item.size = size;
        items[count++] = item;
        offset += 4096;
    }
    ok(w, "copy_batch", tidal_copy_batch(w->ctx, items, count, NULL));
}

static void do_declare(struct worker *w)
{
    if (w->stream == NULL)
        return;
    tidal_access accesses[SLOTS];
    size_t count = 0;
    for (int i = 0; i < SLOTS; ++i) {
        struct slot *s = &w->slots[i];
        if (s->ptr == NULL || TIDAL_KIND_IS_HOST(s->kind))
            continue;
        tidal_access a = TIDAL_ACCESS_INIT;
        a.ptr = s->ptr;
        a.size = s->size;
        a.device = 0;
        a.mode = TIDAL_ACCESS_READ_WRITE;
        accesses[count++] = a;
    }
    tidal_status st = tidal_declare(w->ctx, w->stream, accesses, count, 0);
    if (st == TIDAL_ERROR_BUDGET_EXCEEDED)
        ++w->refusals; /* other threads' phases in flight may hold the budget */
    else
        ok(w, "declare", st);
}

static void do_prefetch(struct worker *w)
{
    struct slot *s = pick(w, 1);
    if (s == NULL || s->kind == TIDAL_KIND_PAGEABLE)
        return;
    int32_t where = harness_next_random(&w->rng) % 2 ? 0 : TIDAL_DEVICE_HOST;
    tidal_status st = tidal_prefetch(w->ctx, s->ptr, s->size, where);
    if (st == TIDAL_ERROR_BUDGET_EXCEEDED)
        ++w->refusals;
    else
        ok(w, "prefetch", st);
    if (s->kind == TIDAL_KIND_MANAGED)
        ok(w, "advise", tidal_advise(w->ctx, s->ptr, s->size, TIDAL_ADVICE_ACCESSED_BY_DEVICE, 0));
}

/* Ends the stream's phase and replaces the stream; every other time, also has tidal forget
 * the async stream (what precedes destroying a stream with the GPU runtime), with frees
 * still queued on it, and goes on using it as a new one. */
static void do_stream(struct worker *w)
{
    if (w->stream != NULL) {
        ok(w, "end phase", tidal_declare(w->ctx, w->stream, NULL, 0, 0));
        ok(w, "stream synchronize", tidal_stream_synchronize(w->ctx, w->stream));
        ok(w, "stream destroy", tidal_stream_destroy(w->ctx, w->stream));
        w->stream = NULL;
    }
    ok(w, "stream create", tidal_stream_create(w->ctx, 0, &w->stream));
    if (harness_next_random(&w->rng) % 2 == 0)
        ok(w, "stream forget", tidal_stream_forget(w->ctx, w->async_stream));
}

static void do_stats(struct worker *w)
{
    static const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED};
    tidal_pool_stats stats = TIDAL_POOL_STATS_INIT;
    unsigned k = harness_next_random(&w->rng) % 3;
    ok(w, "pool stats", tidal_pool_stats_get(w->ctx, kinds[k],
                                             kinds[k] == TIDAL_KIND_PINNED ? TIDAL_DEVICE_HOST : 0,
                                             &stats));
    tidal_migration_stats m = TIDAL_MIGRATION_STATS_INIT;
    ok(w, "migration stats", tidal_migration_stats_get(w->ctx, 0, &m));
    double seconds = 0;
    ok(w, "clock", tidal_clock(w->ctx, &seconds));
}

static long ops_per_thread;

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    w->host = malloc(HOST_BYTES);
    if (w->host == NULL)
        abort();
    memset(w->host, w->index, HOST_BYTES);
    ok(w, "stream create", tidal_stream_create(w->ctx, 0, &w->stream));
    ok(w, "async stream create", tidal_stream_create(w->ctx, 0, &w->async_stream));
    for (long i = 0; i < ops_per_thread && w->failures == 0; ++i) {
        unsigned r = harness_next_random(&w->rng) % 1000;
        if (r < 250)
            do_alloc(w);
        else if (r < 480)
            do_free(w, pick(w, 1));
        else if (r < 650)
            do_copy(w);
        else if (r < 700)
            do_batch(w);
        else if (r < 780)
            do_declare(w);
        else if (r < 860)
            do_prefetch(w);
        else if (r < 890)
            do_stream(w);
        else if (r < 995)
            do_stats(w);
        else if (r < 997) {
            uint64_t released = 0;
            ok(w, "pool trim", tidal_pool_trim(w->ctx, &released));
        } else {
            struct slot *s = pick(w, 1);
            if (s != NULL) {
                tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
                ok(w, "pointer query", tidal_pointer_query(w->ctx, s->ptr + s->size / 2, &info));
            }
        }
        ++w->operations;
    }
    for (int i = 0; i < SLOTS; ++i)
        if (w->slots[i].ptr != NULL)
            do_free(w, &w->slots[i]);
    if (w->stream != NULL) {
        ok(w, "end phase", tidal_declare(w->ctx, w->stream, NULL, 0, 0));
        ok(w, "stream synchronize", tidal_stream_synchronize(w->ctx, w->stream));
    }
    ok(w, "async stream synchronize", tidal_stream_synchronize(w->ctx, w->async_stream));
    free(w->host);
    return NULL;
}

static void stress(void **state)
{
    (void)state;
    const char *env = getenv("TIDAL_STRESS_OPS");
    long total = env != NULL && *env != '\0' ? atol(env) : 200000;
    if (total < THREADS)
        total = THREADS;
    ops_per_thread = total / THREADS;

    tidal_context *ctx = harness_context("runtime = \"sim\"\n"
                                         "[sim]\ncapacity = \"4GiB\"\n"
                                         "[migration]\nbudget = \"8MiB\"\nchunk_size = \"1MiB\"\n"
                                         "[copy]\nchunk_size = \"64KiB\"\nthreads = 2\n"
                                         "[pool]\nrelease_threshold = 0\n");
    struct worker *workers = calloc(THREADS, sizeof *workers);
    pthread_t threads[THREADS];
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < THREADS; ++i) {
        workers[i].ctx = ctx;
        workers[i].index = i;
        workers[i].rng = 0x9e3779b9u * (unsigned)(i + 1);
        assert_int_equal(pthread_create(&threads[i], NULL, run_worker, &workers[i]), 0);
    }
    for (int i = 0; i < THREADS; ++i)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    clock_gettime(CLOCK_MONOTONIC, &end);

    long operations = 0;
    unsigned long allocations[TIDAL_KIND_COUNT] = {0}, frees[TIDAL_KIND_COUNT] = {0}, refusals = 0;
    for (int i = 0; i < THREADS; ++i) {
        if (workers[i].failures != 0)
            fail_msg("%s", workers[i].first_failure);
        operations += workers[i].operations;
        refusals += workers[i].refusals;
        for (int k = 0; k < TIDAL_KIND_COUNT; ++k) {
            allocations[k] += workers[i].allocations[k];
            frees[k] += workers[i].frees[k];
        }
    }
    printf("%ld operations on %d threads in %.1f s (serialised device: %s)\n", operations,
           THREADS, (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) * 1e-9,
           getenv("TIDAL_SIM_SERIALIZE") != NULL && strcmp(getenv("TIDAL_SIM_SERIALIZE"), "0") == 0
               ? "no" : "yes");

    /* The streams go after the frees: everything they ordered has been synchronised. */
    for (int i = 0; i < THREADS; ++i) {
        if (workers[i].stream != NULL)
            assert_status(tidal_stream_destroy(ctx, workers[i].stream), TIDAL_OK);
        assert_status(tidal_stream_destroy(ctx, workers[i].async_stream), TIDAL_OK);
    }
    uint64_t released = 0;
    assert_status(tidal_pool_trim(ctx, &released), TIDAL_OK);

    static const tidal_kind pooled[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED};
    for (size_t k = 0; k < sizeof pooled / sizeof pooled[0]; ++k) {
        tidal_kind kind = pooled[k];
        tidal_pool_stats stats = TIDAL_POOL_STATS_INIT;
        assert_status(tidal_pool_stats_get(ctx, kind, kind == TIDAL_KIND_PINNED ? TIDAL_DEVICE_HOST : 0,
                                           &stats), TIDAL_OK);
        printf("%-8s pool: %llu allocations, %llu cache hits, %llu bytes reserved after trim\n",
               tidal_kind_name(kind), (unsigned long long)stats.allocations,
               (unsigned long long)stats.cache_hits, (unsigned long long)stats.reserved_bytes);
        assert_int_equal(allocations[kind], frees[kind]);
        /* Everything the pools hold comes back on trim (release_threshold = 0), what the
         * caches of the 16 ended threads kept and what was freed on destroyed streams included. */
        if (stats.reserved_bytes != 0)
            fail_msg("%s pool: %llu bytes still reserved after trim with nothing in use", tidal_kind_name(kind),
                     (unsigned long long)stats.reserved_bytes);
        if (stats.allocations != allocations[kind] || stats.frees != frees[kind] ||
            stats.in_use_bytes != 0)
            fail_msg("%s pool: %llu allocations, %llu frees, %llu bytes in use; the threads made "
                     "%lu allocations and %lu frees",
                     tidal_kind_name(kind), (unsigned long long)stats.allocations,
                     (unsigned long long)stats.frees, (unsigned long long)stats.in_use_bytes,
                     allocations[kind], frees[kind]);
    }
    tidal_migration_stats m = TIDAL_MIGRATION_STATS_INIT;
    assert_status(tidal_migration_stats_get(ctx, 0, &m), TIDAL_OK);
    printf("migration: %llu ranges declared, %llu bytes migrated, %llu evictions, %llu refusals, "
           "high water %llu\n",
           (unsigned long long)m.declared_ranges, (unsigned long long)m.migrated_bytes,
           (unsigned long long)m.evictions, (unsigned long long)m.budget_refusals,
           (unsigned long long)m.resident_high_water);
    assert_int_equal(m.resident_bytes, 0);
    assert_int_equal(m.protected_bytes, 0);
    assert_int_equal(m.budget_refusals, refusals);
    assert_true(m.resident_high_water <= BUDGET);
    assert_true(m.migrated_bytes >= m.evicted_bytes);
    assert_status(tidal_context_destroy(ctx), TIDAL_OK);
    free(workers);
}

/* Keeps one variable across harness_isolate_environment(), which drops every TIDAL_*. */
static void keep(const char *name, char **saved) { *saved = getenv(name) ? strdup(getenv(name)) : NULL; }
static void restore(const char *name, char *saved)
{
    if (saved != NULL)
        setenv(name, saved, 1);
    free(saved);
}

int main(int argc, char **argv)
{
    char *ops = NULL, *serialize = NULL;
    keep("TIDAL_STRESS_OPS", &ops);
    keep("TIDAL_SIM_SERIALIZE", &serialize);
    harness_isolate_environment();
    restore("TIDAL_STRESS_OPS", ops);
    restore("TIDAL_SIM_SERIALIZE", serialize);
    if (argc > 1 && strcmp(argv[1], "--unserialized") == 0)
        setenv("TIDAL_SIM_SERIALIZE", "0", 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(stress)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
