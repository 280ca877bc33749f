/* Several simulated devices (issue 16): one managed allocation declared with different devices
 * for different parts lands part by part on those devices, each device's budget and eviction
 * moves only its own parts, and two streams of two devices declaring at once (lookahead
 * included) leave each part where its stream runs. */
#include <pthread.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "harness.h"

#define MiB ((size_t)1 << 20)

static tidal_migration_stats stats_on(tidal_context *ctx, int32_t device)
{
    tidal_migration_stats s = TIDAL_MIGRATION_STATS_INIT;
    assert_ok(tidal_migration_stats_get(ctx, device, &s));
    return s;
}

/* Unpooled, so each allocation is its own runtime allocation and its parts begin on page
 * boundaries: a page that straddles two parts lives where its last move put it, and the
 * runtime would then name no single location for either part. */
static tidal_context *sim_devices(int devices, const char *extra)
{
    return harness_context_format("runtime = \"sim\"\n[sim]\ndevices = %d\n[pool]\nenabled = false\n%s", devices,
                                  extra);
}

/* `parts` equal parts of [p, p + size), part i declared on device i % devices, in one call. */
static tidal_status declare_parts(tidal_context *ctx, void *stream, char *p, size_t size, int parts, int devices,
                                  uint32_t flags)
{
    tidal_access a[8];
    for (int i = 0; i < parts; ++i) {
        tidal_access one = TIDAL_ACCESS_INIT;
        one.ptr = p + (size_t)i * (size / (size_t)parts);
        one.size = size / (size_t)parts;
        one.device = i % devices;
        a[i] = one;
    }
    return tidal_declare(ctx, stream, a, (size_t)parts, flags);
}

static void split_declaration_on(int devices)
{
    /* The default chunk_size (64 MiB) is the whole allocation: before units could be cut, every
     * part went to device 0. */
    tidal_context *ctx = sim_devices(devices, "");
    const size_t size = 64 * MiB, part = size / (size_t)devices;
    char *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, size, 0);
    assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_FILL, p, NULL, size, 5, NULL, NULL));
    assert_ok(declare_parts(ctx, NULL, p, size, devices, devices, 0));
    for (int d = 0; d < devices; ++d) {
        assert_int_equal(harness_prefetch_location(ctx, p + (size_t)d * part, part), d);
        const tidal_migration_stats s = stats_on(ctx, d);
        assert_int_equal(s.resident_bytes, part);
        assert_int_equal(s.migrated_bytes, part);
    }
    /* The whole range mixes devices: the runtime names no single location. */
    assert_int_equal(harness_prefetch_location(ctx, p, size), TIDAL_LOCATION_NONE);

    /* Declared again the same way: every part is a hit. */
    assert_ok(declare_parts(ctx, NULL, p, size, devices, devices, 0));
    for (int d = 0; d < devices; ++d) {
        assert_int_equal(stats_on(ctx, d).migrated_bytes, part);
        assert_int_equal(stats_on(ctx, d).resident_hits, part);
    }
    /* The parts moved intact (a kernel on device 0 reads them all, wherever they are). */
    uint64_t bad = 1;
    assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_VERIFY, p, NULL, size, 5, NULL, &bad));
    assert_int_equal(bad, 0);
    assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
    assert_ok(tidal_free(ctx, p));
    for (int d = 0; d < devices; ++d)
        assert_int_equal(stats_on(ctx, d).resident_bytes, 0);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_split_declaration_two_devices(void **state)
{
    (void)state;
    split_declaration_on(2);
}

static void test_split_declaration_four_devices(void **state)
{
    (void)state;
    split_declaration_on(4);
}

/* Parts declared one call at a time, from one device's unit: a later call cuts the unit where
 * its device differs and moves only its own part; the first part stays where it was. Units
 * are 16 MiB here and the split falls inside one (at 24 MiB). */
static void test_later_declaration_cuts_a_resident_unit(void **state)
{
    (void)state;
    tidal_context *ctx = sim_devices(2, "[migration]\nchunk_size = \"16MiB\"\n");
    char *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, 48 * MiB, 0);
    tidal_access a = TIDAL_ACCESS_INIT;
    a.ptr = p;
    a.size = 24 * MiB;
    a.device = 0;
    assert_ok(tidal_declare(ctx, NULL, &a, 1, 0));
    assert_int_equal(stats_on(ctx, 0).resident_bytes, 32 * MiB); /* whole units: 0-16, 16-32 */
    a.ptr = p + 24 * MiB;
    a.device = 1;
    assert_ok(tidal_declare(ctx, NULL, &a, 1, 0));
    assert_int_equal(stats_on(ctx, 0).resident_bytes, 24 * MiB);
    assert_int_equal(stats_on(ctx, 1).resident_bytes, 24 * MiB);
    assert_int_equal(harness_prefetch_location(ctx, p, 24 * MiB), 0);
    assert_int_equal(harness_prefetch_location(ctx, p + 24 * MiB, 24 * MiB), 1);
    /* Device 1's declaration evicted nothing of device 0. */
    assert_int_equal(stats_on(ctx, 0).evictions, 0);
    assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

/* A 32 MiB budget on each device: a split 64 MiB buffer fits (32 MiB per device); making room
 * on device 0 for another buffer evicts device 0's part only, and device 1's stays there. */
static void test_budget_per_device_moves_only_its_own_parts(void **state)
{
    (void)state;
    tidal_context *ctx = sim_devices(2, "[migration]\nbudget = \"32MiB\"\n");
    char *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, 64 * MiB, 0);
    char *q = harness_alloc(ctx, TIDAL_KIND_MANAGED, 32 * MiB, 0);
    assert_ok(declare_parts(ctx, NULL, p, 64 * MiB, 2, 2, 0));
    assert_int_equal(stats_on(ctx, 0).resident_bytes, 32 * MiB);
    assert_int_equal(stats_on(ctx, 1).resident_bytes, 32 * MiB);
    assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0)); /* the phase ends... */
    assert_ok(tidal_stream_synchronize(ctx, NULL)); /* ...and its work is done */

    tidal_access a = TIDAL_ACCESS_INIT;
    a.ptr = q;
    a.size = 32 * MiB;
    a.device = 0;
    assert_ok(tidal_declare(ctx, NULL, &a, 1, 0));
    const tidal_migration_stats s0 = stats_on(ctx, 0), s1 = stats_on(ctx, 1);
    assert_int_equal(s0.resident_bytes, 32 * MiB);
    assert_int_equal(s0.evictions, 1);
    assert_int_equal(s0.evicted_bytes, 32 * MiB);
    assert_int_equal(s1.resident_bytes, 32 * MiB);
    assert_int_equal(s1.evictions, 0);
    assert_int_equal(harness_prefetch_location(ctx, p, 32 * MiB), TIDAL_DEVICE_HOST);
    assert_int_equal(harness_prefetch_location(ctx, p + 32 * MiB, 32 * MiB), 1);
    assert_int_equal(harness_prefetch_location(ctx, q, 32 * MiB), 0);

    /* Device 1's budget is full with its part, which its own stream's work still protects:
     * asking for more there fails on device 1 and moves nothing anywhere. */
    void *stream1 = NULL;
    assert_ok(tidal_stream_create(ctx, 1, &stream1));
    a.ptr = p + 32 * MiB;
    a.device = 1;
    assert_ok(tidal_declare(ctx, stream1, &a, 1, 0));
    a.ptr = q;
    assert_status(tidal_declare(ctx, stream1, &a, 1, TIDAL_DECLARE_LOOKAHEAD), TIDAL_ERROR_BUDGET_EXCEEDED);
    assert_last_error_contains("device 1");
    assert_int_equal(stats_on(ctx, 0).resident_bytes, 32 * MiB);
    assert_int_equal(harness_prefetch_location(ctx, q, 32 * MiB), 0);

    assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
    assert_ok(tidal_stream_destroy(ctx, stream1));
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_free(ctx, q));
    assert_ok(tidal_context_destroy(ctx));
}

/* One thread per device, each with its own stream, declaring its part of one shared buffer
 * (lookahead, then the plain declaration of the phase) over and over, all at once. */
struct worker {
    tidal_context *ctx;
    char *shared;
    size_t part;
    int32_t device;
    tidal_status status;
};

#define ROUNDS 50

static void *declare_rounds(void *arg)
{
    struct worker *w = arg;
    void *stream = NULL;
    w->status = tidal_stream_create(w->ctx, w->device, &stream);
    tidal_access a = TIDAL_ACCESS_INIT;
    a.ptr = w->shared + (size_t)w->device * w->part;
    a.size = w->part;
    a.device = w->device;
    a.mode = TIDAL_ACCESS_READ_WRITE;
    for (int round = 0; round < ROUNDS && w->status == TIDAL_OK; ++round) {
        w->status = tidal_declare(w->ctx, stream, &a, 1, TIDAL_DECLARE_LOOKAHEAD);
        if (w->status == TIDAL_OK)
            w->status = tidal_declare(w->ctx, stream, &a, 1, 0);
        if (w->status == TIDAL_OK)
            w->status = tidal_stream_synchronize(w->ctx, stream);
    }
    if (w->status == TIDAL_OK)
        w->status = tidal_declare(w->ctx, stream, NULL, 0, 0);
    if (stream != NULL && w->status == TIDAL_OK)
        w->status = tidal_stream_destroy(w->ctx, stream);
    return NULL;
}

static void lookahead_threads_on(int devices)
{
    tidal_context *ctx = sim_devices(devices, "");
    const size_t size = 64 * MiB, part = size / (size_t)devices;
    char *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, size, 0);
    struct worker w[4];
    pthread_t threads[4];
    for (int d = 0; d < devices; ++d) {
        w[d] = (struct worker){ctx, p, part, d, TIDAL_OK};
        assert_int_equal(pthread_create(&threads[d], NULL, declare_rounds, &w[d]), 0);
    }
    for (int d = 0; d < devices; ++d) {
        assert_int_equal(pthread_join(threads[d], NULL), 0);
        assert_ok(w[d].status);
    }
    for (int d = 0; d < devices; ++d) {
        assert_int_equal(harness_prefetch_location(ctx, p + (size_t)d * part, part), d);
        const tidal_migration_stats s = stats_on(ctx, d);
        assert_int_equal(s.resident_bytes, part);
        assert_int_equal(s.protected_bytes, 0);
    }
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_lookahead_two_streams_two_devices(void **state)
{
    (void)state;
    lookahead_threads_on(2);
}

static void test_lookahead_four_streams_four_devices(void **state)
{
    (void)state;
    lookahead_threads_on(4);
}

/* A policy's split is checked before anything is allocated: each bad one is refused naming the
 * policy, parts that do not cover the allocation with INVALID_ARGUMENT, the rest with PLUGIN. */
static void test_bad_splits_are_refused(void **state)
{
    (void)state;
    char *dir = harness_toml_string(harness_required_env("TIDAL_TEST_PLUGIN_DIR"));
    tidal_context *ctx = harness_context_format(
        "runtime = \"sim\"\npolicy_path = [%s]\npolicies = [\"bad-split\"]\n[sim]\ndevices = 2\n", dir);
    free(dir);
    const struct {
        const char *tag;
        tidal_status status;
        const char *says;
    } bad[] = {
        {"kind", TIDAL_ERROR_PLUGIN, "only managed kinds can be split"},
        {"device", TIDAL_ERROR_PLUGIN, "on device 77"},
        {"null", TIDAL_ERROR_PLUGIN, "without readable parts"},
        {"gap", TIDAL_ERROR_INVALID_ARGUMENT, "do not cover"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.tag = bad[i].tag;
        void *p = (void *)1;
        assert_status(tidal_alloc(ctx, 8 * MiB, &d, &p), bad[i].status);
        assert_null(p);
        assert_last_error_contains("policy 'bad-split'");
        assert_last_error_contains(bad[i].says);
    }
    /* A good split from the same plugin: each half prefers its device. */
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.tag = "good";
    char *p = NULL;
    assert_ok(tidal_alloc(ctx, 8 * MiB, &d, (void **)&p));
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    assert_ok(tidal_range_query(ctx, p + 4 * MiB, 4 * MiB, &info));
    assert_int_equal(info.preferred_location, 1);
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_declaration_two_devices),
        cmocka_unit_test(test_split_declaration_four_devices),
        cmocka_unit_test(test_later_declaration_cuts_a_resident_unit),
        cmocka_unit_test(test_budget_per_device_moves_only_its_own_parts),
        cmocka_unit_test(test_lookahead_two_streams_two_devices),
        cmocka_unit_test(test_lookahead_four_streams_four_devices),
        cmocka_unit_test(test_bad_splits_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
