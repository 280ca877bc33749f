/* What tidal holds for a stream when the stream ends: tidal_stream_destroy and
 * tidal_stream_forget settle the pools' stream-ordered frees, the one-stream mode and the
 * scheduler's protected phases, so a destroyed stream strands neither memory nor budget. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define MiB ((size_t)1 << 20)

static tidal_pool_stats device_pool(tidal_context *ctx)
{
    tidal_pool_stats s = TIDAL_POOL_STATS_INIT;
    assert_ok(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, 0, &s));
    return s;
}

static void *alloc_async(tidal_context *ctx, size_t size, void *stream)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = 0;
    void *p = NULL;
    assert_ok(tidal_alloc_async(ctx, size, &desc, stream, &p));
    assert_non_null(p);
    return p;
}

/* The pool's one-stream mode on the only stream: destroying that stream must not leave the
 * pool waiting on a dead handle (the next plain allocation failed with RUNTIME). */
static void test_destroying_the_sole_stream_keeps_the_pool_usable(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n");
    void *stream = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &stream));
    void *p = alloc_async(ctx, 4096, stream);
    assert_ok(tidal_free_async(ctx, p, stream));
    assert_ok(tidal_stream_synchronize(ctx, stream));
    assert_ok(tidal_stream_destroy(ctx, stream));
    void *q = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4096, 0);
    assert_ok(tidal_free(ctx, q));
    /* And a new stream after it works as the first did. */
    assert_ok(tidal_stream_create(ctx, 0, &stream));
    p = alloc_async(ctx, 1 * MiB, stream);
    assert_ok(tidal_free_async(ctx, p, stream));
    assert_ok(tidal_stream_destroy(ctx, stream));
    assert_ok(tidal_context_destroy(ctx));
}

/* Blocks freed on streams that were then destroyed come back on trim. */
static void test_blocks_freed_on_destroyed_streams_are_trimmed(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[pool]\nrelease_threshold = 0\n");
    void *s1 = NULL, *s2 = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &s1));
    assert_ok(tidal_stream_create(ctx, 0, &s2));
    /* Two streams: the pool holds stream-ordered frees until their events complete. */
    void *a = alloc_async(ctx, 32 * MiB, s1);
    void *b = alloc_async(ctx, 32 * MiB, s2);
    void *c = alloc_async(ctx, 4096, s2);
    assert_ok(tidal_free_async(ctx, a, s1));
    assert_ok(tidal_free_async(ctx, b, s2));
    assert_ok(tidal_free_async(ctx, c, s2));
    assert_ok(tidal_stream_destroy(ctx, s1));
    assert_ok(tidal_stream_destroy(ctx, s2));
    uint64_t released = 0;
    assert_ok(tidal_pool_trim(ctx, &released));
    const tidal_pool_stats s = device_pool(ctx);
    assert_int_equal(s.in_use_bytes, 0);
    assert_true(released >= 64 * MiB);
    assert_int_equal(s.reserved_bytes, 0);
    assert_ok(tidal_context_destroy(ctx));
}

/* A stream tidal did not create (here: any stream, destroyed behind tidal's back after
 * tidal_stream_forget) is settled by tidal_stream_forget, and stays usable. */
static void test_forget_settles_and_leaves_the_stream_alive(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[pool]\nrelease_threshold = 0\n");
    void *s1 = NULL, *s2 = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &s1));
    assert_ok(tidal_stream_create(ctx, 0, &s2));
    void *a = alloc_async(ctx, 16 * MiB, s1);
    void *b = alloc_async(ctx, 16 * MiB, s2);
    assert_ok(tidal_free_async(ctx, a, s1));
    assert_ok(tidal_free_async(ctx, b, s2));
    assert_ok(tidal_stream_forget(ctx, s1));
    assert_ok(tidal_stream_forget(ctx, s1)); /* twice is harmless */
    assert_ok(tidal_stream_forget(ctx, s2));
    assert_ok(tidal_stream_forget(ctx, NULL));
    assert_status(tidal_stream_forget(NULL, s1), TIDAL_ERROR_INVALID_ARGUMENT);
    /* Neither block is tied to its stream any more: trimming gives both back. */
    assert_ok(tidal_pool_trim(ctx, NULL));
    assert_int_equal(device_pool(ctx).reserved_bytes, 0);
    /* s1 still works, and is new to tidal. */
    void *c = alloc_async(ctx, 4096, s1);
    assert_ok(tidal_free_async(ctx, c, s1));
    assert_ok(tidal_stream_destroy(ctx, s1));
    assert_ok(tidal_stream_destroy(ctx, s2));
    assert_ok(tidal_pool_trim(ctx, NULL));
    assert_int_equal(device_pool(ctx).reserved_bytes, 0);
    assert_ok(tidal_context_destroy(ctx));
}

static tidal_status declare1(tidal_context *ctx, void *stream, void *p, size_t size)
{
    tidal_access a = TIDAL_ACCESS_INIT;
    a.ptr = p;
    a.size = size;
    a.device = 0;
    a.mode = TIDAL_ACCESS_READ;
    return tidal_declare(ctx, stream, &a, 1, 0);
}

/* The destroyed stream's last phase (and lookahead) stop protecting their ranges, so a later
 * declaration on another stream can evict them instead of failing BUDGET_EXCEEDED. */
static void test_destroyed_stream_releases_its_protected_phase(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[migration]\nchunk_size = \"1MiB\"\n");
    assert_ok(tidal_budget_set(ctx, 0, 8 * MiB));
    void *a = harness_alloc(ctx, TIDAL_KIND_MANAGED, 4 * MiB, 0);
    void *l = harness_alloc(ctx, TIDAL_KIND_MANAGED, 4 * MiB, 0);
    void *b = harness_alloc(ctx, TIDAL_KIND_MANAGED, 8 * MiB, 0);
    void *s1 = NULL, *s2 = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &s1));
    assert_ok(tidal_stream_create(ctx, 0, &s2));
    assert_ok(declare1(ctx, s1, a, 4 * MiB));
    tidal_access next = TIDAL_ACCESS_INIT;
    next.ptr = l;
    next.size = 4 * MiB;
    next.device = 0;
    assert_ok(tidal_declare(ctx, s1, &next, 1, TIDAL_DECLARE_LOOKAHEAD));
    tidal_migration_stats m = TIDAL_MIGRATION_STATS_INIT;
    assert_ok(tidal_migration_stats_get(ctx, 0, &m));
    assert_int_equal(m.protected_bytes, 8 * MiB);
    assert_ok(tidal_stream_destroy(ctx, s1));
    assert_ok(declare1(ctx, s2, b, 8 * MiB));
    assert_ok(tidal_migration_stats_get(ctx, 0, &m));
    assert_true(m.resident_bytes <= 8 * MiB);
    assert_int_equal(m.protected_bytes, 8 * MiB); /* b alone */
    assert_ok(tidal_stream_destroy(ctx, s2));
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, l));
    assert_ok(tidal_free(ctx, b));
    assert_ok(tidal_context_destroy(ctx));
}

/* Pooled managed blocks freed while resident leave the budgeted device: the device must not
 * hold more than the budget while tidal counts less (it held 64 MiB against an 8 MiB budget). */
static void test_freed_managed_blocks_leave_a_budgeted_device(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[migration]\nchunk_size = \"1MiB\"\n");
    assert_ok(tidal_budget_set(ctx, 0, 8 * MiB));
    tidal_device_info before = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &before));
    void *blocks[8];
    for (int i = 0; i < 8; ++i)
        blocks[i] = harness_alloc(ctx, TIDAL_KIND_MANAGED, 8 * MiB, 0);
    for (int i = 0; i < 8; ++i) {
        harness_fill(blocks[i], 8 * MiB, (unsigned)i);
        assert_ok(declare1(ctx, NULL, blocks[i], 8 * MiB));
        assert_ok(tidal_stream_synchronize(ctx, NULL));
        assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
        assert_ok(tidal_free(ctx, blocks[i]));
        tidal_device_info now = TIDAL_DEVICE_INFO_INIT;
        assert_ok(tidal_device_info_get(ctx, 0, &now));
        /* What the device holds beyond its start is within the budget. */
        assert_true(before.free_memory - now.free_memory <= 8 * MiB);
    }
    tidal_migration_stats m = TIDAL_MIGRATION_STATS_INIT;
    assert_ok(tidal_migration_stats_get(ctx, 0, &m));
    assert_int_equal(m.resident_bytes, 0);
    assert_true(m.evicted_bytes >= 7 * 8 * MiB); /* each freed block left the device */
    /* Without a budget the pages may stay (a reuse finds them resident): no eviction on free. */
    assert_ok(tidal_budget_set(ctx, 0, 0));
    void *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, 8 * MiB, 0);
    assert_ok(declare1(ctx, NULL, p, 8 * MiB));
    assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
    const uint64_t evicted = m.evicted_bytes;
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_migration_stats_get(ctx, 0, &m));
    assert_int_equal(m.evicted_bytes, evicted);
    assert_ok(tidal_context_destroy(ctx));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_destroying_the_sole_stream_keeps_the_pool_usable),
        cmocka_unit_test(test_blocks_freed_on_destroyed_streams_are_trimmed),
        cmocka_unit_test(test_forget_settles_and_leaves_the_stream_alive),
        cmocka_unit_test(test_destroyed_stream_releases_its_protected_phase),
        cmocka_unit_test(test_freed_managed_blocks_leave_a_budgeted_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
