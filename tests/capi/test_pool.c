/* The pools behind tidal_alloc: reuse without runtime calls, statistics, trim, switching them
 * off, and the advice lifecycle of pooled managed blocks. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>

#include "harness.h"

static tidal_pool_stats stats_of(tidal_context *ctx, tidal_kind kind, int32_t device)
{
    tidal_pool_stats s = TIDAL_POOL_STATS_INIT;
    assert_ok(tidal_pool_stats_get(ctx, kind, device, &s));
    return s;
}

static void test_reuse_without_runtime_calls(void **state)
{
    tidal_context *ctx = *state;
    assert_int_equal(stats_of(ctx, TIDAL_KIND_DEVICE, 0).allocations, 0);
    for (int i = 0; i < 1000; ++i) {
        void *p = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4096, 0);
        memset(p, i & 0xff, 4096);
        assert_ok(tidal_free(ctx, p));
    }
    void *big = harness_alloc(ctx, TIDAL_KIND_DEVICE, 100u << 20, 0);
    tidal_pool_stats s = stats_of(ctx, TIDAL_KIND_DEVICE, 0);
    assert_int_equal(s.allocations, 1001);
    assert_int_equal(s.frees, 1000);
    assert_true(s.runtime_allocations <= 2); /* one slab, one large chunk */
    assert_true(s.in_use_bytes >= 100u << 20);
    assert_true(s.reserved_bytes >= s.in_use_bytes);
    assert_true(s.reserved_high_water >= s.reserved_bytes);
    assert_ok(tidal_free(ctx, big));
    uint64_t released = 0;
    assert_ok(tidal_pool_trim(ctx, &released));
    assert_true(released >= 100u << 20);
    s = stats_of(ctx, TIDAL_KIND_DEVICE, 0);
    assert_int_equal(s.reserved_bytes, 0);
    assert_true(s.runtime_frees >= 1);
    /* Pinned memory has its own pool, asked for by TIDAL_DEVICE_HOST. */
    void *pin = harness_alloc(ctx, TIDAL_KIND_PINNED, 8192, 0);
    assert_int_equal(stats_of(ctx, TIDAL_KIND_PINNED, TIDAL_DEVICE_HOST).allocations, 1);
    assert_ok(tidal_free(ctx, pin));
}

static void test_device_memory_returns_to_the_runtime_on_trim(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ncapacity = \"256MiB\"\n");
    void *p = harness_alloc(ctx, TIDAL_KIND_DEVICE, 200u << 20, 0);
    assert_ok(tidal_free(ctx, p));
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &info));
    assert_true(info.free_memory < 64u << 20); /* the pool still holds the chunk */
    assert_ok(tidal_pool_trim(ctx, NULL));
    assert_ok(tidal_device_info_get(ctx, 0, &info));
    assert_int_equal(info.free_memory, info.total_memory);
    assert_ok(tidal_context_destroy(ctx));
}

/* A runtime free that fails during trim is the runtime's status, not a silent loss: the chunk
 * stays reserved (device memory stays used), *released counts only what went back, and the
 * next trim gives it back. */
static void test_trim_reports_a_refused_free(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ncapacity = \"256MiB\"\n"
                                         "[[sim.fault]]\noperation = \"free\"\nnth = 1\n"
                                         "error = \"hipErrorIllegalAddress\"\n");
    void *p = harness_alloc(ctx, TIDAL_KIND_DEVICE, 100u << 20, 0);
    void *q = harness_alloc(ctx, TIDAL_KIND_DEVICE, 100u << 20, 0);
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_free(ctx, q));
    const uint64_t reserved = stats_of(ctx, TIDAL_KIND_DEVICE, 0).reserved_bytes;
    assert_true(reserved >= 200u << 20);
    uint64_t released = 0;
    assert_status(tidal_pool_trim(ctx, &released), TIDAL_ERROR_ILLEGAL_ACCESS);
    assert_last_error_contains("tidal_pool_trim");
    assert_last_error_contains("cudaErrorIllegalAddress");
    assert_last_error_contains("stay reserved");
    tidal_pool_stats s = stats_of(ctx, TIDAL_KIND_DEVICE, 0);
    assert_true(released > 0); /* the other chunk went */
    assert_true(released < reserved);
    assert_int_equal(s.reserved_bytes, reserved - released);
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &info));
    assert_int_equal(info.total_memory - info.free_memory, s.reserved_bytes);
    assert_ok(tidal_pool_trim(ctx, &released));
    assert_int_equal(released, s.reserved_bytes);
    assert_int_equal(stats_of(ctx, TIDAL_KIND_DEVICE, 0).reserved_bytes, 0);
    assert_ok(tidal_device_info_get(ctx, 0, &info));
    assert_int_equal(info.free_memory, info.total_memory);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_pool_switched_off(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[pool]\nenabled = false\n");
    void *p = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4096, 0);
    tidal_pool_stats s = stats_of(ctx, TIDAL_KIND_DEVICE, 0);
    assert_int_equal(s.allocations, 0);
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_pooled_managed_advice_does_not_leak_to_the_next_owner(void **state)
{
    tidal_context *ctx = *state;
    const size_t size = 4u << 20;
    tidal_range_info r = TIDAL_RANGE_INFO_INIT;
    void *a = harness_alloc(ctx, TIDAL_KIND_MANAGED, size, TIDAL_HINT_READ_MOSTLY);
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, a, &info));
    assert_true(info.advice & TIDAL_ADVICE_READ_MOSTLY);
    assert_int_equal((uintptr_t)a % (64u << 10), 0);
    assert_ok(tidal_range_query(ctx, a, size, &r));
    assert_int_equal(r.read_mostly, 1);
    assert_ok(tidal_free(ctx, a));
    void *b = harness_alloc(ctx, TIDAL_KIND_MANAGED, size, 0);
    assert_ptr_equal(a, b); /* the pool hands the same block out again ... */
    assert_ok(tidal_range_query(ctx, b, size, &r));
    assert_int_equal(r.read_mostly, 0); /* ... without the previous owner's advice */
    assert_ok(tidal_free(ctx, b));
    void *c = harness_alloc(ctx, TIDAL_KIND_MANAGED, size, TIDAL_HINT_READ_MOSTLY);
    assert_ok(tidal_range_query(ctx, c, size, &r));
    assert_int_equal(r.read_mostly, 1); /* and advice is applied again on reuse */
    assert_ok(tidal_free(ctx, c));
}

static void test_pool_errors(void **state)
{
    tidal_context *ctx = *state;
    tidal_pool_stats s = TIDAL_POOL_STATS_INIT;
    assert_status(tidal_pool_stats_get(NULL, TIDAL_KIND_DEVICE, 0, &s), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, 0, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_pool_stats_get(ctx, TIDAL_KIND_PAGEABLE, 0, &s), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_pool_stats_get(ctx, TIDAL_KIND_AUTO, 0, &s), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, 5, &s), TIDAL_ERROR_NOT_FOUND);
    assert_status(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, TIDAL_DEVICE_HOST, &s), TIDAL_ERROR_NOT_FOUND);
    s.struct_size = 8;
    assert_status(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, 0, &s), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_pool_trim(NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    tidal_context *bad = NULL;
    assert_status(tidal_context_create_from_string("[pool]\ngrowth = \"4KiB\"\n", &bad), TIDAL_ERROR_CONFIG);
    assert_last_error_contains("<string>:2:");
    assert_status(tidal_context_create_from_string("[pool]\nenable = true\n", &bad), TIDAL_ERROR_CONFIG);
    assert_last_error_contains("did you mean 'enabled'");
    assert_status(tidal_context_create_from_string("[pool]\nthread_cache_blocks = -1\n", &bad), TIDAL_ERROR_CONFIG);
    assert_last_error_contains("thread_cache_blocks");
    assert_status(tidal_context_create_from_string("[pool]\nsmall_max = \"2MiB\"\n", &bad), TIDAL_ERROR_CONFIG);
    assert_last_error_contains("small_max");
}

/* Without thread caches every free is visible to every thread at once: a block freed on one
 * thread serves the next allocation of its size on another. */
static void *alloc_on_thread_result;
static tidal_context *alloc_on_thread_ctx;
static void *alloc_on_thread(void *arg)
{
    (void)arg;
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = TIDAL_KIND_DEVICE;
    if (tidal_alloc(alloc_on_thread_ctx, 4 << 20, &d, &alloc_on_thread_result) != TIDAL_OK)
        alloc_on_thread_result = NULL;
    return NULL;
}

static void test_thread_caches_can_be_switched_off(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[pool]\nthread_cache_blocks = 0\n"
                                         "thread_cache_large = \"0\"\nsmall_max = \"0\"\n");
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = TIDAL_KIND_DEVICE;
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, 4 << 20, &d, &p));
    assert_ok(tidal_free(ctx, p));
    alloc_on_thread_ctx = ctx;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, alloc_on_thread, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_ptr_equal(alloc_on_thread_result, p); /* the other thread got the freed block */
    tidal_pool_stats s = TIDAL_POOL_STATS_INIT;
    assert_ok(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, 0, &s));
    assert_int_equal(s.cache_hits, 0);
    assert_ok(tidal_free(ctx, alloc_on_thread_result));
    assert_ok(tidal_context_destroy(ctx));
}

/* Repeats of one request take the fast path (the decision cache's route to the pool): what
 * tidal_pointer_query reports must not differ from the first, general allocation, whatever
 * the kind, tag or alignment; and a pool that cannot serve a repeat still answers
 * OUT_OF_MEMORY with nothing lost. */
static void test_repeated_requests_are_recorded_alike(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ncapacity = \"96MiB\"\n");
    const struct {
        tidal_kind kind;
        size_t size, alignment;
        const char *tag;
    } cases[] = {
        {TIDAL_KIND_DEVICE, 256, 0, NULL},       {TIDAL_KIND_DEVICE, 4096, 4096, "weights"},
        {TIDAL_KIND_PINNED, 1000, 0, "staging"}, {TIDAL_KIND_MANAGED, 8192, 0, "managed"},
        {TIDAL_KIND_DEVICE, 16u << 20, 0, NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.kind = cases[c].kind;
        desc.alignment = cases[c].alignment;
        desc.tag = cases[c].tag;
        tidal_pointer_info first = TIDAL_POINTER_INFO_INIT;
        for (int i = 0; i < 3; ++i) {
            void *p = NULL;
            assert_ok(tidal_alloc(ctx, cases[c].size, &desc, &p));
            if (cases[c].alignment)
                assert_int_equal((uintptr_t)p % cases[c].alignment, 0);
            tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
            assert_ok(tidal_pointer_query(ctx, (char *)p + cases[c].size - 1, &info));
            assert_ptr_equal(info.base, p);
            assert_int_equal(info.size, cases[c].size);
            assert_int_equal(info.kind, cases[c].kind);
            assert_string_equal(info.tag, cases[c].tag ? cases[c].tag : "");
            assert_string_equal(info.placed_by, "core");
            if (i == 0) {
                first = info;
            } else {
                assert_int_equal(info.device, first.device);
                assert_int_equal(info.hints, first.hints);
                assert_int_equal(info.advice, first.advice);
                assert_int_equal(info.alignment, first.alignment);
            }
            assert_ok(tidal_free(ctx, p));
            assert_status(tidal_free(ctx, p), TIDAL_ERROR_UNKNOWN_POINTER);
        }
    }
    /* 16 MiB blocks until the 96 MiB device is full: the repeats that fail fail cleanly. */
    void *held[8] = {NULL};
    int n = 0;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    tidal_status status = TIDAL_OK;
    while (n < 8 && (status = tidal_alloc(ctx, 16u << 20, &desc, &held[n])) == TIDAL_OK)
        ++n;
    assert_int_equal(status, TIDAL_ERROR_OUT_OF_MEMORY);
    assert_null(held[n]);
    assert_true(n >= 4);
    assert_last_error_contains("cudaErrorMemoryAllocation");
    for (int i = 0; i < n; ++i)
        assert_ok(tidal_free(ctx, held[i]));
    void *again = harness_alloc(ctx, TIDAL_KIND_DEVICE, 16u << 20, 0);
    assert_ok(tidal_free(ctx, again));
    assert_ok(tidal_context_destroy(ctx));
}

/* Threads that allocated and freed and then ended leave nothing behind: once they are joined,
 * a trim with release_threshold = 0 gives every byte of every pool back, whatever the caches
 * of the exited threads kept (small blocks of several classes, large blocks) and whatever
 * kinds they used. */
#define TRIM_THREADS 16
static tidal_context *trim_ctx;
static void *alloc_free_mixed(void *arg)
{
    const unsigned seed = (unsigned)(uintptr_t)arg;
    static const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_PINNED, TIDAL_KIND_MANAGED};
    static const size_t sizes[] = {64, 256, 1000, 4096, 65536, 300000, 1u << 20, (1u << 20) + 1, 3u << 20, 17u << 20};
    void *held[8] = {NULL};
    size_t held_size[8] = {0};
    for (unsigned i = 0; i < 2000; ++i) {
        const unsigned r = (seed * 2654435761u) ^ (i * 40503u);
        const unsigned slot = r % 8;
        if (held[slot]) {
            if (tidal_free(trim_ctx, held[slot]) != TIDAL_OK)
                return (void *)1;
            held[slot] = NULL;
            continue;
        }
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = kinds[(r >> 3) % 3];
        held_size[slot] = sizes[(r >> 5) % (sizeof sizes / sizeof sizes[0])];
        if (tidal_alloc(trim_ctx, held_size[slot], &d, &held[slot]) != TIDAL_OK)
            return (void *)1;
    }
    for (unsigned slot = 0; slot < 8; ++slot)
        if (held[slot] && tidal_free(trim_ctx, held[slot]) != TIDAL_OK)
            return (void *)1;
    return NULL;
}

static void test_trim_after_threads_end_releases_everything(void **state)
{
    (void)state;
    trim_ctx = harness_context("runtime = \"sim\"\n[pool]\nrelease_threshold = 0\n");
    pthread_t threads[TRIM_THREADS];
    for (uintptr_t t = 0; t < TRIM_THREADS; ++t)
        assert_int_equal(pthread_create(&threads[t], NULL, alloc_free_mixed, (void *)(t + 1)), 0);
    for (int t = 0; t < TRIM_THREADS; ++t) {
        void *failed = (void *)1;
        assert_int_equal(pthread_join(threads[t], &failed), 0);
        assert_null(failed);
    }
    const struct {
        tidal_kind kind;
        int32_t device;
    } pools[] = {{TIDAL_KIND_DEVICE, 0}, {TIDAL_KIND_PINNED, TIDAL_DEVICE_HOST}, {TIDAL_KIND_MANAGED, 0}};
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; ++i) {
        const tidal_pool_stats s = stats_of(trim_ctx, pools[i].kind, pools[i].device);
        assert_true(s.allocations > 0);
        assert_int_equal(s.allocations, s.frees);
        assert_int_equal(s.in_use_bytes, 0);
    }
    uint64_t released = 0;
    assert_ok(tidal_pool_trim(trim_ctx, &released));
    assert_true(released > 0);
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; ++i) {
        const tidal_pool_stats s = stats_of(trim_ctx, pools[i].kind, pools[i].device);
        if (s.reserved_bytes != 0)
            print_error("%s pool: %llu bytes reserved after trim\n", tidal_kind_name(pools[i].kind),
                        (unsigned long long)s.reserved_bytes);
        assert_int_equal(s.reserved_bytes, 0);
        assert_int_equal(s.runtime_allocations, s.runtime_frees);
    }
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(trim_ctx, 0, &info));
    assert_int_equal(info.free_memory, info.total_memory);
    assert_ok(tidal_context_destroy(trim_ctx));
}

/* Threads that are still alive (a thread pool, an OpenMP team between parallel regions) keep
 * their small blocks through another thread's trim: the pool cannot take them without a lock on
 * every allocation. Each gives them back at its next call into the pool or its own
 * tidal_pool_trim, after which a trim anywhere releases everything. */
#define PARKED_THREADS 4
static pthread_barrier_t parked_done, parked_trim, parked_gone;
static void *alloc_free_then_park(void *arg)
{
    if (alloc_free_mixed(arg))
        return (void *)1;
    pthread_barrier_wait(&parked_done);
    pthread_barrier_wait(&parked_trim); /* parked until the main thread has trimmed */
    const tidal_status status = tidal_pool_trim(trim_ctx, NULL);
    pthread_barrier_wait(&parked_gone);
    return status == TIDAL_OK ? NULL : (void *)1;
}

static void test_live_threads_give_their_caches_back_on_their_own_trim(void **state)
{
    (void)state;
    trim_ctx = harness_context("runtime = \"sim\"\n");
    assert_int_equal(pthread_barrier_init(&parked_done, NULL, PARKED_THREADS + 1), 0);
    assert_int_equal(pthread_barrier_init(&parked_trim, NULL, PARKED_THREADS + 1), 0);
    assert_int_equal(pthread_barrier_init(&parked_gone, NULL, PARKED_THREADS + 1), 0);
    pthread_t threads[PARKED_THREADS];
    for (uintptr_t t = 0; t < PARKED_THREADS; ++t)
        assert_int_equal(pthread_create(&threads[t], NULL, alloc_free_then_park, (void *)(t + 1)), 0);
    pthread_barrier_wait(&parked_done);
    assert_ok(tidal_pool_trim(trim_ctx, NULL)); /* large blocks come back; the parked threads' small ones stay */
    pthread_barrier_wait(&parked_trim);
    pthread_barrier_wait(&parked_gone); /* each parked thread trimmed, and is still alive */
    assert_ok(tidal_pool_trim(trim_ctx, NULL));
    assert_int_equal(stats_of(trim_ctx, TIDAL_KIND_DEVICE, 0).reserved_bytes, 0);
    assert_int_equal(stats_of(trim_ctx, TIDAL_KIND_PINNED, TIDAL_DEVICE_HOST).reserved_bytes, 0);
    assert_int_equal(stats_of(trim_ctx, TIDAL_KIND_MANAGED, 0).reserved_bytes, 0);
    for (int t = 0; t < PARKED_THREADS; ++t) {
        void *failed = (void *)1;
        assert_int_equal(pthread_join(threads[t], &failed), 0);
        assert_null(failed);
    }
    pthread_barrier_destroy(&parked_done);
    pthread_barrier_destroy(&parked_trim);
    pthread_barrier_destroy(&parked_gone);
    assert_ok(tidal_context_destroy(trim_ctx));
}

/* The vendor's stream-ordered pool needs a runtime that has one; the simulated device does not
 * model it, so the context refuses to start and says where the key is and what to do. Pools
 * switched off never use a backend, so then the key is harmless. */
static void test_vendor_backend_needs_a_stream_ordered_pool(void **state)
{
    (void)state;
    tidal_context *ctx = NULL;
    assert_status(tidal_context_create_from_string("runtime = \"sim\"\n[pool]\nbackend = \"vendor\"\n", &ctx),
                  TIDAL_ERROR_NOT_SUPPORTED);
    assert_null(ctx);
    assert_last_error_contains("<string>:3:11: pool.backend = \"vendor\": the sim runtime has no stream-ordered pool");
    assert_last_error_contains("backend = \"tidal\"");
    ctx = harness_context("runtime = \"sim\"\n[pool]\nenabled = false\nbackend = \"vendor\"\n");
    void *p = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4096, 0);
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        HARNESS_SIM_TEST(test_reuse_without_runtime_calls),
        cmocka_unit_test(test_device_memory_returns_to_the_runtime_on_trim),
        cmocka_unit_test(test_trim_reports_a_refused_free),
        cmocka_unit_test(test_pool_switched_off),
        HARNESS_SIM_TEST(test_pooled_managed_advice_does_not_leak_to_the_next_owner),
        HARNESS_SIM_TEST(test_pool_errors),
        cmocka_unit_test(test_thread_caches_can_be_switched_off),
        cmocka_unit_test(test_vendor_backend_needs_a_stream_ordered_pool),
        cmocka_unit_test(test_repeated_requests_are_recorded_alike),
        cmocka_unit_test(test_trim_after_threads_end_releases_everything),
        cmocka_unit_test(test_live_threads_give_their_caches_back_on_their_own_trim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
