/* Telemetry through the C ABI: tidal_stats_json (live bytes by kind and by tag group, pools,
 * errors by status) and tidal_allocations_list. The JSON's schema and the report written at
 * destroy are checked by tests/telemetry (python). */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *tagged(tidal_context *ctx, tidal_kind kind, size_t size, const char *tag)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    desc.tag = tag;
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, size, &desc, &p));
    return p;
}

/* The snapshot as a heap string (caller frees): asked for its length, then filled. */
static char *stats_json(tidal_context *ctx)
{
    size_t needed = 0;
    assert_status(tidal_stats_json(ctx, NULL, 0, &needed), TIDAL_ERROR_BUFFER_TOO_SMALL);
    assert_true(needed > 1);
    /* Room to spare: the text is made again and may differ a little (peaks, errors). */
    const size_t capacity = needed + 4096;
    char *buf = malloc(capacity);
    assert_non_null(buf);
    assert_ok(tidal_stats_json(ctx, buf, capacity, &needed));
    assert_int_equal(strlen(buf) + 1, needed);
    return buf;
}

static void test_stats_by_tag_group_and_kind(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[telemetry]\ntag_depth = 1\n");
    void *a = tagged(ctx, TIDAL_KIND_DEVICE, 1000, "model/layer1/weights");
    void *b = tagged(ctx, TIDAL_KIND_DEVICE, 3000, "model.layer2");
    void *c = tagged(ctx, TIDAL_KIND_PINNED, 500, "io");
    char *json = stats_json(ctx);
    assert_contains(json, "\"schema\":\"tidal-stats/1\"");
    assert_contains(json, "\"tag_depth\":1");
    /* Both model tags fall in one group at depth 1. */
    assert_contains(json, "{\"tag\":\"model\",\"bytes\":4000,\"count\":2,\"peak_bytes\":4000,\"peak_count\":2");
    assert_contains(json, "{\"tag\":\"io\",\"bytes\":500,\"count\":1,");
    assert_contains(json, "{\"kind\":\"device\",\"device\":0,\"bytes\":4000,\"count\":2,");
    assert_contains(json, "\"live\":{\"bytes\":4500,\"count\":3,");
    assert_contains(json, "\"pools\":[{\"kind\":\"device\",\"device\":0,");
    free(json);

    /* After a free the group's bytes drop; the peak a snapshot saw stays. */
    assert_ok(tidal_free(ctx, b));
    json = stats_json(ctx);
    assert_contains(json, "{\"tag\":\"model\",\"bytes\":1000,\"count\":1,\"peak_bytes\":4000,\"peak_count\":2");
    free(json);
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, c));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_stats_whole_tags_by_default(void **state)
{
    tidal_context *ctx = *state;
    void *a = tagged(ctx, TIDAL_KIND_DEVICE, 64, "model/layer1");
    char *json = stats_json(ctx);
    assert_contains(json, "{\"tag\":\"model/layer1\",\"bytes\":64,");
    free(json);
    assert_ok(tidal_free(ctx, a));
}

static void test_stats_count_errors_by_status(void **state)
{
    tidal_context *ctx = *state;
    char not_ours[16];
    assert_status(tidal_free(ctx, not_ours), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_status(tidal_free(ctx, not_ours), TIDAL_ERROR_UNKNOWN_POINTER);
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_status(tidal_pointer_query(ctx, not_ours, &info), TIDAL_ERROR_UNKNOWN_POINTER);
    tidal_migration_stats migration = TIDAL_MIGRATION_STATS_INIT;
    assert_status(tidal_migration_stats_get(ctx, 99, &migration), TIDAL_ERROR_NOT_FOUND);
    char *json = stats_json(ctx);
    assert_contains(json, "\"errors\":{\"TIDAL_ERROR_UNKNOWN_POINTER\":3,\"TIDAL_ERROR_NOT_FOUND\":1}");
    free(json);
}

static void test_stats_small_buffer(void **state)
{
    tidal_context *ctx = *state;
    char buf[8];
    size_t needed = 0;
    assert_status(tidal_stats_json(ctx, buf, sizeof buf, &needed), TIDAL_ERROR_BUFFER_TOO_SMALL);
    assert_true(needed > sizeof buf);
    assert_int_equal(strlen(buf), sizeof buf - 1); /* truncated, terminated */
    assert_status(tidal_stats_json(ctx, NULL, 4, &needed), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_stats_json(NULL, buf, sizeof buf, &needed), TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_allocations_list(void **state)
{
    tidal_context *ctx = *state;
    size_t count = 99;
    assert_ok(tidal_allocations_list(ctx, NULL, 0, &count));
    assert_int_equal(count, 0);

    void *p[3] = {tagged(ctx, TIDAL_KIND_DEVICE, 100, "a"), tagged(ctx, TIDAL_KIND_MANAGED, 200, "b"),
                  tagged(ctx, TIDAL_KIND_PINNED, 300, "c")};
    assert_status(tidal_allocations_list(ctx, NULL, 0, &count), TIDAL_ERROR_BUFFER_TOO_SMALL);
    assert_int_equal(count, 3);

    tidal_pointer_info infos[4];
    for (size_t i = 0; i < 4; ++i)
        infos[i] = (tidal_pointer_info)TIDAL_POINTER_INFO_INIT;
    /* Too small: the first entries are written and the count says how many exist. */
    assert_status(tidal_allocations_list(ctx, infos, 2, &count), TIDAL_ERROR_BUFFER_TOO_SMALL);
    assert_int_equal(count, 3);
    assert_non_null(infos[1].base);

    assert_ok(tidal_allocations_list(ctx, infos, 4, &count));
    assert_int_equal(count, 3);
    size_t seen = 0;
    for (size_t i = 0; i < count; ++i) {
        if (i > 0)
            assert_true((uintptr_t)infos[i - 1].base < (uintptr_t)infos[i].base); /* by address */
        for (size_t j = 0; j < 3; ++j)
            if (infos[i].base == p[j]) {
                ++seen;
                assert_int_equal(infos[i].size, 100 * (j + 1));
                assert_int_equal(infos[i].tag[0], "abc"[j]);
                assert_int_equal(infos[i].kind, j == 0 ? TIDAL_KIND_DEVICE : j == 1 ? TIDAL_KIND_MANAGED : TIDAL_KIND_PINNED);
            }
    }
    assert_int_equal(seen, 3);

    assert_ok(tidal_free(ctx, p[1]));
    assert_ok(tidal_allocations_list(ctx, infos, 4, &count));
    assert_int_equal(count, 2);
    assert_ok(tidal_free(ctx, p[0]));
    assert_ok(tidal_free(ctx, p[2]));
}

static void test_allocations_list_bad_arguments(void **state)
{
    tidal_context *ctx = *state;
    size_t count = 0;
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_status(tidal_allocations_list(NULL, &info, 1, &count), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_allocations_list(ctx, &info, 1, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_allocations_list(ctx, NULL, 1, &count), TIDAL_ERROR_INVALID_ARGUMENT);
    info.struct_size = 8; /* older than any release */
    assert_status(tidal_allocations_list(ctx, &info, 1, &count), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "struct_size");
}

static void test_stats_destination_folder_must_exist(void **state)
{
    (void)state;
    char *message = harness_context_fails("runtime = \"sim\"\n[telemetry]\nstats = \"/nonexistent-tidal/s.json\"\n",
                                          TIDAL_ERROR_CONFIG);
    assert_contains(message, "does not exist");
    free(message);
    message = harness_context_fails("runtime = \"sim\"\n[telemetry]\ntag_depth = -1\n", TIDAL_ERROR_CONFIG);
    free(message);
    message = harness_context_fails("runtime = \"sim\"\n[telemetry]\nstat = \"stderr\"\n", TIDAL_ERROR_CONFIG);
    assert_contains(message, "stats");
    free(message);
}

/* The count of `operation` in a TIDAL_SIM_CALL_COUNTS file ("name count" lines); -1 if absent. */
static long call_count(const char *path, const char *operation)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char name[64];
    long n = 0, found = -1;
    while (fscanf(f, "%63s %ld", name, &n) == 2)
        if (strcmp(name, operation) == 0)
            found = n;
    fclose(f);
    return found;
}

/* Runs a prefetch, a staged copy and a batch copy with [telemetry] ranges on or off; returns the
 * simulated device's range_push count, and checks that every push was popped. */
static long ranges_pushed(int on)
{
    char *dir = harness_temp_dir();
    char *counts = harness_format("%s/counts", dir);
    setenv("TIDAL_SIM_CALL_COUNTS", counts, 1);
    tidal_context *ctx = harness_context_format("runtime = \"sim\"\n[telemetry]\nranges = %s\n", on ? "true" : "false");
    unsetenv("TIDAL_SIM_CALL_COUNTS");
    void *managed = harness_alloc(ctx, TIDAL_KIND_MANAGED, 1 << 20, 0);
    void *device = harness_alloc(ctx, TIDAL_KIND_DEVICE, 1 << 20, 0);
    assert_ok(tidal_prefetch(ctx, managed, 1 << 20, 0));
    char *host = malloc(1 << 20);
    assert_non_null(host);
    memset(host, 7, 1 << 20);
    assert_ok(tidal_copy(ctx, device, host, 1 << 20)); /* pageable: staged */
    tidal_copy_item item = TIDAL_COPY_ITEM_INIT;
    item.dst = device;
    item.src = host;
    item.size = 4096;
    assert_ok(tidal_copy_batch(ctx, &item, 1, NULL));
    assert_ok(tidal_free(ctx, managed));
    assert_ok(tidal_free(ctx, device));
    assert_ok(tidal_context_destroy(ctx));
    free(host);
    const long pushed = call_count(counts, "range_push");
    assert_int_equal(call_count(counts, "range_pop"), pushed);
    remove(counts);
    harness_remove_dir(dir);
    free(counts);
    free(dir);
    return pushed;
}

static void test_profiler_ranges(void **state)
{
    (void)state;
    assert_int_equal(ranges_pushed(0), 0); /* off by default: the runtime never hears of them */
    assert_true(ranges_pushed(1) >= 3);    /* prefetch, staged copy, batch copy */
}

/* A profiler that refuses a range fails nothing: the operation it named goes on. */
static void test_profiler_range_failure_is_ignored(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[telemetry]\nranges = true\n"
                                         "[[sim.fault]]\noperation = \"range_push\"\nnth = 1\ncount = 0\n"
                                         "error = \"hipErrorNotSupported\"\n");
    void *managed = harness_alloc(ctx, TIDAL_KIND_MANAGED, 1 << 20, 0);
    assert_ok(tidal_prefetch(ctx, managed, 1 << 20, 0));
    assert_ok(tidal_free(ctx, managed));
    assert_ok(tidal_context_destroy(ctx));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_by_tag_group_and_kind),
        HARNESS_SIM_TEST(test_stats_whole_tags_by_default),
        HARNESS_SIM_TEST(test_stats_count_errors_by_status),
        HARNESS_SIM_TEST(test_stats_small_buffer),
        HARNESS_SIM_TEST(test_allocations_list),
        HARNESS_SIM_TEST(test_allocations_list_bad_arguments),
        cmocka_unit_test(test_stats_destination_folder_must_exist),
        cmocka_unit_test(test_profiler_ranges),
        cmocka_unit_test(test_profiler_range_failure_is_ignored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
