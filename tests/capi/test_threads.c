/* One context shared by several threads: alloc / query / free interleaved at random.
 * cmocka's assertions are not thread-safe, so workers record their first failure and the
 * main thread asserts on the records. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define ITERATIONS 2000
#define LIVE_SLOTS 12
#define MAX_SIZE (64u * 1024u)

struct slot {
    unsigned char *ptr;
    size_t size;
    tidal_kind kind;
    unsigned seed;
};

struct worker {
    tidal_context *ctx;
    int index;
    unsigned rng;
    long failures;
    long operations;
    char first_failure[512];
    struct slot slots[LIVE_SLOTS];
};

static void record(struct worker *w, const char *what, tidal_status status)
{
    if (w->failures++ != 0)
        return;
    /* Copied before any other tidal call can replace it. */
    char detail[384];
    snprintf(detail, sizeof detail, "%s", status != TIDAL_OK ? tidal_last_error() : "");
    snprintf(w->first_failure, sizeof w->first_failure, "thread %d: %s: %s (%d): %s", w->index,
             what, tidal_status_name(status), (int)status, detail);
}

static int overlaps(const struct slot *a, const unsigned char *ptr, size_t size)
{
    return a->ptr != NULL && ptr < a->ptr + a->size && a->ptr < ptr + size;
}

static void release(struct worker *w, struct slot *s)
{
    if (!harness_holds(s->ptr, s->size, s->seed))
        record(w, "contents changed while the allocation was live", TIDAL_OK);
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    tidal_status status = tidal_pointer_query(w->ctx, s->ptr + s->size / 2, &info);
    if (status != TIDAL_OK)
        record(w, "tidal_pointer_query (interior)", status);
    else if (info.base != s->ptr || info.size != s->size || info.kind != s->kind)
        record(w, "tidal_pointer_query reported another allocation", TIDAL_OK);
    status = tidal_free(w->ctx, s->ptr);
    if (status != TIDAL_OK)
        record(w, "tidal_free", status);
    s->ptr = NULL;
}

static void *work(void *arg)
{
    static const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED,
                                       TIDAL_KIND_PAGEABLE, TIDAL_KIND_AUTO};
    struct worker *w = arg;
    char tag[32];
    snprintf(tag, sizeof tag, "thread-%d", w->index);

    for (int iteration = 0; iteration < ITERATIONS; ++iteration) {
        struct slot *s = &w->slots[harness_next_random(&w->rng) % LIVE_SLOTS];
        if (s->ptr != NULL)
            release(w, s);

        size_t size = 1 + harness_next_random(&w->rng) % MAX_SIZE;
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.kind = kinds[harness_next_random(&w->rng) % (sizeof kinds / sizeof kinds[0])];
        desc.tag = tag;
        void *ptr = NULL;
        tidal_status status = tidal_alloc(w->ctx, size, &desc, &ptr);
        ++w->operations;
        if (status != TIDAL_OK || ptr == NULL) {
            record(w, "tidal_alloc", status);
            continue;
        }
        for (int i = 0; i < LIVE_SLOTS; ++i)
            if (overlaps(&w->slots[i], ptr, size))
                record(w, "a new allocation overlaps a live one of the same thread", TIDAL_OK);

        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        status = tidal_pointer_query(w->ctx, ptr, &info);
        if (status != TIDAL_OK)
            record(w, "tidal_pointer_query (base)", status);
        else if (info.base != ptr || info.size != size || info.kind == TIDAL_KIND_AUTO ||
                 (desc.kind != TIDAL_KIND_AUTO && info.kind != desc.kind) ||
                 strcmp(info.tag, tag) != 0)
            record(w, "tidal_pointer_query does not describe the new allocation", TIDAL_OK);

        s->ptr = ptr;
        s->size = size;
        s->kind = info.kind;
        s->seed = (unsigned)(w->index * ITERATIONS + iteration);
        /* Every byte written: an allocation handed to two threads at once shows up as
         * changed contents when either one releases it. */
        harness_fill(s->ptr, s->size, s->seed);
    }
    for (int i = 0; i < LIVE_SLOTS; ++i)
        if (w->slots[i].ptr != NULL)
            release(w, &w->slots[i]);
    return NULL;
}

/* Runs `body` on one thread per worker and joins them; only then asserts on what each one
 * recorded, since cmocka's assertions may not run on the workers' threads. */
static void run_workers(struct worker *workers, void *(*body)(void *), long operations)
{
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; ++i)
        assert_int_equal(pthread_create(&threads[i], NULL, body, &workers[i]), 0);
    for (int i = 0; i < THREADS; ++i)
        assert_int_equal(pthread_join(threads[i], NULL), 0);

    long failures = 0;
    for (int i = 0; i < THREADS; ++i) {
        if (workers[i].failures > 0)
            print_error("%ld failures, first: %s\n", workers[i].failures,
                        workers[i].first_failure);
        failures += workers[i].failures;
        assert_int_equal(workers[i].operations, operations);
    }
    assert_int_equal(failures, 0);
}

static void test_threads_share_one_context(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(HARNESS_SIM_CONFIG);
    struct worker *workers = calloc(THREADS, sizeof *workers);
    assert_non_null(workers);
    for (int i = 0; i < THREADS; ++i) {
        workers[i].ctx = ctx;
        workers[i].index = i;
        workers[i].rng = 0x9e3779b9u * (unsigned)(i + 1);
    }
    run_workers(workers, work, ITERATIONS);
    free(workers);

    /* Everything was freed: a probe allocation is the only live one. */
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, 4096, NULL, &ptr));
    assert_ok(tidal_free(ctx, ptr));
    assert_ok(tidal_context_destroy(ctx));
}

/* Contexts created and destroyed on several threads at once do not disturb each other. */
static void *create_and_use(void *arg)
{
    struct worker *w = arg;
    for (int round = 0; round < 20; ++round) {
        tidal_context *ctx = NULL;
        tidal_status status = tidal_context_create_from_string(HARNESS_SIM_CONFIG, &ctx);
        if (status != TIDAL_OK) {
            record(w, "tidal_context_create_from_string", status);
            return NULL;
        }
        void *ptr = NULL;
        status = tidal_alloc(ctx, 4096, NULL, &ptr);
        if (status != TIDAL_OK)
            record(w, "tidal_alloc", status);
        else if ((status = tidal_free(ctx, ptr)) != TIDAL_OK)
            record(w, "tidal_free", status);
        if ((status = tidal_context_destroy(ctx)) != TIDAL_OK)
            record(w, "tidal_context_destroy", status);
        ++w->operations;
    }
    return NULL;
}

static void test_threads_create_their_own_contexts(void **state)
{
    (void)state;
    struct worker *workers = calloc(THREADS, sizeof *workers);
    assert_non_null(workers);
    for (int i = 0; i < THREADS; ++i)
        workers[i].index = i;
    run_workers(workers, create_and_use, 20);
    free(workers);
}

/* A declaration races frees of the allocations it names: a range freed before the declaration
 * looked it up is UNKNOWN_POINTER, one freed after is declared (the scheduler forgets it when
 * the free reaches it); a unit made meanwhile reads its tag from the registry by base, never
 * from a record the free let go (the ASan build would see it). 64 KiB units: each block
 * reused makes new ones. */
#define RACED_SLOTS 16
#define RACED_SIZE (64u * 1024u)
#define RACED_FREES 3000

struct raced {
    tidal_context *ctx;
    void *_Atomic slots[RACED_SLOTS];
    atomic_int done;
    struct worker declarer, freer;
};

static void *free_and_reallocate(void *arg)
{
    struct raced *r = arg;
    struct worker *w = &r->freer;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_MANAGED;
    for (int i = 0; i < RACED_FREES; ++i, ++w->operations) {
        const int k = i % RACED_SLOTS;
        tidal_status status = tidal_free(r->ctx, atomic_load(&r->slots[k]));
        if (status != TIDAL_OK)
            record(w, "tidal_free", status);
        char tag[32];
        snprintf(tag, sizeof tag, "raced.%d", i);
        desc.tag = tag;
        void *ptr = NULL;
        if ((status = tidal_alloc(r->ctx, RACED_SIZE, &desc, &ptr)) != TIDAL_OK) {
            record(w, "tidal_alloc", status);
            break;
        }
        atomic_store(&r->slots[k], ptr);
    }
    atomic_store(&r->done, 1);
    return NULL;
}

static void *declare_raced(void *arg)
{
    struct raced *r = arg;
    struct worker *w = &r->declarer;
    while (!atomic_load(&r->done)) {
        tidal_access accesses[RACED_SLOTS];
        for (int k = 0; k < RACED_SLOTS; ++k) {
            const tidal_access init = TIDAL_ACCESS_INIT;
            accesses[k] = init;
            accesses[k].ptr = atomic_load(&r->slots[k]);
            accesses[k].size = RACED_SIZE;
            accesses[k].mode = TIDAL_ACCESS_READ_WRITE;
        }
        const tidal_status status = tidal_declare(r->ctx, NULL, accesses, RACED_SLOTS, 0);
        if (status != TIDAL_OK && status != TIDAL_ERROR_UNKNOWN_POINTER)
            record(w, "tidal_declare", status);
        ++w->operations;
    }
    return NULL;
}

static void test_declarations_race_frees_of_their_ranges(void **state)
{
    (void)state;
    struct raced *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->ctx = harness_context("runtime = \"sim\"\n[migration]\nchunk_size = \"64KiB\"\n");
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_MANAGED;
    for (int k = 0; k < RACED_SLOTS; ++k) {
        void *ptr = NULL;
        assert_ok(tidal_alloc(r->ctx, RACED_SIZE, &desc, &ptr));
        atomic_store(&r->slots[k], ptr);
    }
    pthread_t declarer, freer;
    assert_int_equal(pthread_create(&declarer, NULL, declare_raced, r), 0);
    assert_int_equal(pthread_create(&freer, NULL, free_and_reallocate, r), 0);
    assert_int_equal(pthread_join(freer, NULL), 0);
    assert_int_equal(pthread_join(declarer, NULL), 0);
    for (struct worker *w = &r->declarer; w <= &r->freer; ++w)
        if (w->failures > 0)
            print_error("%ld failures, first: %s\n", w->failures, w->first_failure);
    assert_int_equal(r->declarer.failures + r->freer.failures, 0);
    assert_int_equal(r->freer.operations, RACED_FREES);
    assert_ok(tidal_declare(r->ctx, NULL, NULL, 0, 0));
    for (int k = 0; k < RACED_SLOTS; ++k)
        assert_ok(tidal_free(r->ctx, atomic_load(&r->slots[k])));
    assert_ok(tidal_context_destroy(r->ctx));
    free(r);
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_share_one_context),
        cmocka_unit_test(test_threads_create_their_own_contexts),
        cmocka_unit_test(test_declarations_race_frees_of_their_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
