/* Elastic device memory through the C API on the simulated device: offload and restore by tag
 * and by range, discard, keeping physical chunks, copies into partly resident memory, queries,
 * a full device, a host home that cannot be made, and a runtime without a virtual-memory API.
 * While the simulated device has no virtual-memory group these tests skip, all but the last.
 * TIDAL_TEST_ELASTIC_RUNTIME=cuda (or hip) runs them on a GPU instead, with the module found in
 * TIDAL_TEST_ELASTIC_RUNTIME_PATH; the tests that need the simulated device's capacity or
 * faults then skip. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

/* 4 MiB chunks; pools off so that device memory counts exactly what is asked. */
#define ELASTIC_SETTINGS "[elastic]\nchunk_size = \"4MiB\"\n[pool]\nenabled = false\n"
#define ELASTIC_CONFIG "runtime = \"sim\"\n" ELASTIC_SETTINGS

/* The GPU runtime the tests run on instead of the simulated device, or NULL. */
static const char *gpu_runtime(void)
{
    const char *r = getenv("TIDAL_TEST_ELASTIC_RUNTIME");
    return r != NULL && *r != '\0' && strcmp(r, "sim") != 0 ? r : NULL;
}

/* `toml` for the simulated device, or the same settings on the GPU runtime when one is asked. */
static tidal_context *context_for(const char *toml)
{
    const char *gpu = gpu_runtime();
    if (gpu == NULL)
        return harness_context(toml);
    const char *path = getenv("TIDAL_TEST_ELASTIC_RUNTIME_PATH");
    char *dir = harness_toml_string(path != NULL ? path : ".");
    const char *settings = strstr(toml, "[elastic]");
    tidal_context *ctx = harness_context_format("runtime = \"%s\"\nruntime_path = [%s]\n%s", gpu, dir,
                                                settings != NULL ? settings : "");
    free(dir);
    return ctx;
}

/* The simulated device's capacity and faults have no GPU counterpart. */
static void sim_only(void)
{
    if (gpu_runtime() != NULL)
        skip();
}

static void *elastic_alloc(tidal_context *ctx, size_t size, const char *tag)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_ELASTIC;
    desc.device = 0;
    desc.tag = tag;
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, size, &desc, &p));
    assert_non_null(p);
    return p;
}

/* A context where elastic memory works, or the test is skipped (no virtual-memory group). */
static tidal_context *elastic_context(const char *toml)
{
    tidal_context *ctx = context_for(toml);
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_ELASTIC;
    desc.device = 0;
    void *p = NULL;
    const tidal_status s = tidal_alloc(ctx, 1, &desc, &p);
    if (s == TIDAL_ERROR_NOT_SUPPORTED) {
        assert_ok(tidal_context_destroy(ctx));
        skip();
    }
    assert_ok(s);
    assert_ok(tidal_free(ctx, p));
    return ctx;
}

static tidal_pointer_info query(tidal_context *ctx, const void *p)
{
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, p, &info));
    return info;
}

static uint64_t free_memory(tidal_context *ctx)
{
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &info));
    return info.free_memory;
}

/* Free device memory is `expected`: exactly on the simulated device; on a GPU within 16 MiB,
 * since the driver may take a little for the copy streams tidal makes on first use. */
static void assert_free_memory(tidal_context *ctx, uint64_t expected)
{
    const uint64_t got = free_memory(ctx);
    const uint64_t slack = gpu_runtime() != NULL ? 16 * MIB : 0;
    if (got + slack < expected || got > expected + slack)
        fail_msg("free device memory is %llu bytes, expected %llu (slack %llu)", (unsigned long long)got,
                 (unsigned long long)expected, (unsigned long long)slack);
}

static void fill_through(tidal_context *ctx, void *dst, size_t size, unsigned seed)
{
    unsigned char *host = malloc(size);
    assert_non_null(host);
    harness_fill(host, size, seed);
    assert_ok(tidal_copy(ctx, dst, host, size));
    free(host);
}

static int holds_through(tidal_context *ctx, const void *src, size_t size, unsigned seed)
{
    unsigned char *host = malloc(size);
    assert_non_null(host);
    assert_ok(tidal_copy(ctx, host, src, size));
    const int ok = harness_holds(host, size, seed);
    free(host);
    return ok;
}

static void test_round_trip_keeps_address_and_contents(void **state)
{
    (void)state;
    tidal_context *ctx = elastic_context(ELASTIC_CONFIG);
    const size_t size = 10 * MIB + 5;
    void *p = elastic_alloc(ctx, size, "weights.layer0");
    void *other = elastic_alloc(ctx, 3 * MIB, "kv");
    fill_through(ctx, p, size, 21);
    tidal_pointer_info info = query(ctx, (char *)p + 7);
    assert_int_equal(info.kind, TIDAL_KIND_ELASTIC);
    assert_ptr_equal(info.base, p);
    const uint64_t reserved = info.resident_bytes;
    assert_true(reserved >= size);
    const uint64_t other_reserved = query(ctx, other).resident_bytes; /* 3 MiB rounded up */
    assert_true(other_reserved >= 3 * MIB);
    const uint64_t free_before = free_memory(ctx);

    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_offload(ctx, "weights*", 0, NULL, &out));
    assert_int_equal(out.allocations, 1);
    assert_int_equal(out.copied_bytes, reserved);
    assert_int_equal(out.released_bytes, reserved);
    assert_int_equal(out.discarded_bytes, 0);
    assert_true(out.home_seconds >= 0.0 && out.move_seconds >= 0.0);
    info = query(ctx, p);
    assert_int_equal(info.resident_bytes, 0);
    assert_int_equal(info.offloaded_bytes, reserved);
    assert_free_memory(ctx, free_before + reserved); /* the runtime has it back */
    assert_int_equal(query(ctx, other).resident_bytes, other_reserved); /* untouched */

    /* Copies read and write the home meanwhile; a kernel faults, as on a GPU. */
    assert_true(holds_through(ctx, p, size, 21));
    assert_status(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, 8 * MIB, 0, NULL, NULL),
                  TIDAL_ERROR_ILLEGAL_ACCESS);

    tidal_elastic_result in = TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_restore(ctx, "weights*", 0, NULL, &in));
    assert_int_equal(in.mapped_bytes, reserved);
    assert_int_equal(in.copied_bytes, reserved);
    info = query(ctx, p);
    assert_ptr_equal(info.base, p);
    assert_int_equal(info.resident_bytes, reserved);
    assert_ok(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, 8 * MIB, 0, NULL, NULL));
    assert_true(holds_through(ctx, p, size, 21));

    tidal_migration_stats stats = TIDAL_MIGRATION_STATS_INIT;
    assert_ok(tidal_migration_stats_get(ctx, 0, &stats));
    assert_int_equal(stats.elastic_copied_out, reserved);
    assert_int_equal(stats.elastic_copied_in, reserved);
    assert_true(stats.elastic_offloads >= 3 && stats.elastic_offloads == stats.elastic_restores);

    tidal_range_info range = TIDAL_RANGE_INFO_INIT;
    assert_ok(tidal_range_query(ctx, p, 1, &range));
    assert_int_equal(range.resident_bytes, 4 * MIB);
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_free(ctx, other));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_discard_and_keep_physical(void **state)
{
    (void)state;
    tidal_context *ctx = elastic_context(ELASTIC_CONFIG);
    void *kv = elastic_alloc(ctx, 8 * MIB, "kv");
    const uint64_t free_before = free_memory(ctx);
    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_offload(ctx, "kv", TIDAL_OFFLOAD_DISCARD | TIDAL_OFFLOAD_KEEP_PHYSICAL, NULL, &out));
    assert_int_equal(out.copied_bytes, 0);
    assert_int_equal(out.discarded_bytes, 8 * MIB);
    assert_int_equal(out.pooled_bytes, 8 * MIB);
    assert_int_equal(out.released_bytes, 0);
    assert_int_equal(query(ctx, kv).discarded_bytes, 8 * MIB);
    assert_free_memory(ctx, free_before); /* kept for tidal */

    /* Reading discarded memory is refused and copies nothing. */
    unsigned char byte = 0x5a;
    assert_status(tidal_copy(ctx, &byte, kv, 1), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "discarded");
    assert_int_equal(byte, 0x5a);
    /* In a batch too, before any item is copied: the plain item's destination stays as it was. */
    unsigned char plain_src[64], plain_dst[64];
    memset(plain_src, 1, sizeof plain_src);
    memset(plain_dst, 2, sizeof plain_dst);
    tidal_copy_item items[2] = {TIDAL_COPY_ITEM_INIT, TIDAL_COPY_ITEM_INIT};
    items[0].dst = plain_dst;
    items[0].src = plain_src;
    items[0].size = sizeof plain_dst;
    items[1].dst = &byte;
    items[1].src = kv;
    items[1].size = 1;
    assert_status(tidal_copy_batch(ctx, items, 2, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "discarded");
    assert_int_equal(plain_dst[0], 2);
    assert_int_equal(plain_dst[63], 2);
    assert_int_equal(byte, 0x5a);

    out = (tidal_elastic_result)TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_restore(ctx, "kv", 0, NULL, &out));
    assert_int_equal(out.pooled_bytes, 8 * MIB); /* the kept chunks came back */
    assert_int_equal(out.copied_bytes, 0);
    assert_ok(tidal_offload(ctx, "kv", TIDAL_OFFLOAD_KEEP_PHYSICAL, NULL, NULL));
    uint64_t released = 0;
    assert_ok(tidal_pool_trim(ctx, &released));
    assert_true(released >= 8 * MIB);
    assert_free_memory(ctx, free_before + 8 * MIB);
    assert_ok(tidal_free(ctx, kv));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_tag_that_matches_nothing_moves_nothing(void **state)
{
    (void)state;
    tidal_context *ctx = elastic_context(ELASTIC_CONFIG);
    void *p = elastic_alloc(ctx, 4 * MIB, "weights");
    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_offload(ctx, "optimizer*", 0, NULL, &out));
    assert_int_equal(out.allocations, 0);
    assert_int_equal(out.copied_bytes + out.released_bytes + out.discarded_bytes, 0);
    assert_ok(tidal_restore(ctx, "optimizer*", 0, NULL, &out));
    assert_int_equal(out.mapped_bytes, 0);
    assert_int_equal(query(ctx, p).resident_bytes, 4 * MIB);
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_restore_onto_a_full_device_maps_nothing(void **state)
{
    (void)state;
    sim_only();
    tidal_context *ctx = elastic_context("runtime = \"sim\"\n[sim]\ncapacity = \"64MiB\"\n"
                                         "[elastic]\nchunk_size = \"4MiB\"\n[pool]\nenabled = false\n");
    void *a = elastic_alloc(ctx, 32 * MIB, "a");
    fill_through(ctx, a, 32 * MIB, 3);
    assert_ok(tidal_offload(ctx, "a", 0, NULL, NULL));
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = 0;
    void *b = NULL;
    assert_ok(tidal_alloc(ctx, 48 * MIB, &desc, &b));
    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    assert_status(tidal_restore(ctx, "a", 0, NULL, &out), TIDAL_ERROR_OUT_OF_MEMORY);
    assert_int_equal(out.mapped_bytes, 0);
    tidal_pointer_info info = query(ctx, a);
    assert_int_equal(info.resident_bytes, 0);
    assert_int_equal(info.offloaded_bytes, 32 * MIB);
    assert_ok(tidal_free(ctx, b));
    assert_ok(tidal_restore(ctx, "a", 0, NULL, NULL));
    assert_true(holds_through(ctx, a, 32 * MIB, 3));
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_home_that_cannot_be_made_keeps_the_device_copy(void **state)
{
    (void)state;
    sim_only();
    tidal_context *ctx = elastic_context(ELASTIC_CONFIG "[[sim.fault]]\noperation = \"register\"\n"
                                         "error = \"hipErrorOutOfMemory\"\n");
    void *p = elastic_alloc(ctx, 8 * MIB, "w");
    fill_through(ctx, p, 8 * MIB, 9);
    assert_status(tidal_offload(ctx, "w", 0, NULL, NULL), TIDAL_ERROR_OUT_OF_MEMORY);
    assert_contains(tidal_last_error(), "host home");
    assert_int_equal(query(ctx, p).resident_bytes, 8 * MIB);
    assert_true(holds_through(ctx, p, 8 * MIB, 9));
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_free_of_offloaded_memory_gives_everything_back(void **state)
{
    (void)state;
    tidal_context *ctx = elastic_context(ELASTIC_CONFIG);
    const uint64_t free_before = free_memory(ctx);
    void *p = elastic_alloc(ctx, 12 * MIB, "w");
    void *q = elastic_alloc(ctx, 4 * MIB, "w2");
    assert_ok(tidal_offload_range(ctx, (char *)p + 5 * MIB, 1, 0, NULL, NULL)); /* one chunk */
    assert_int_equal(query(ctx, p).offloaded_bytes, 4 * MIB);
    assert_ok(tidal_offload(ctx, "w2", 0, NULL, NULL));
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_free(ctx, q));
    assert_status(tidal_pointer_query(ctx, p, &(tidal_pointer_info)TIDAL_POINTER_INFO_INIT),
                  TIDAL_ERROR_UNKNOWN_POINTER);
    assert_free_memory(ctx, free_before);
    /* And an offloaded allocation left live is freed, home included, with the context. */
    void *left = elastic_alloc(ctx, 4 * MIB, "left");
    assert_ok(tidal_offload(ctx, "left", 0, NULL, NULL));
    (void)left;
    assert_ok(tidal_context_destroy(ctx));
}

static void test_copies_into_and_out_of_partly_resident_memory(void **state)
{
    (void)state;
    tidal_context *ctx = elastic_context(ELASTIC_CONFIG);
    const size_t size = 12 * MIB;
    void *p = elastic_alloc(ctx, size, "w");
    fill_through(ctx, p, size, 1);
    assert_ok(tidal_offload_range(ctx, (char *)p + 4 * MIB, 4 * MIB, 0, NULL, NULL)); /* the middle */
    assert_true(holds_through(ctx, p, size, 1));
    fill_through(ctx, p, size, 2); /* writes the home of the middle chunk, the device elsewhere */
    assert_int_equal(query(ctx, p).offloaded_bytes, 4 * MIB);

    /* Device to device, and a batch, across the offloaded chunk. */
    void *d = harness_alloc(ctx, TIDAL_KIND_DEVICE, size, 0);
    assert_ok(tidal_copy(ctx, d, p, size));
    assert_true(holds_through(ctx, d, size, 2));
    unsigned char *host = malloc(2 * MIB);
    assert_non_null(host);
    tidal_copy_item items[2] = {TIDAL_COPY_ITEM_INIT, TIDAL_COPY_ITEM_INIT};
    items[0].dst = host;
    items[0].src = (char *)p + 3 * MIB; /* resident into offloaded */
    items[0].size = 2 * MIB;
    items[1].dst = (char *)d + 11 * MIB;
    items[1].src = (char *)p + 5 * MIB;
    items[1].size = 1 * MIB;
    assert_ok(tidal_copy_batch(ctx, items, 2, NULL));
    unsigned char *expect = malloc(size);
    assert_non_null(expect);
    harness_fill(expect, size, 2);
    assert_memory_equal(host, expect + 3 * MIB, 2 * MIB);

    assert_ok(tidal_restore_range(ctx, (char *)p + 4 * MIB, 1, 0, NULL, NULL));
    assert_true(holds_through(ctx, p, size, 2));
    free(expect);
    free(host);
    assert_ok(tidal_free(ctx, d));
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_bad_arguments(void **state)
{
    (void)state;
    tidal_context *ctx = elastic_context(ELASTIC_CONFIG);
    void *p = elastic_alloc(ctx, 4 * MIB, "w");
    void *d = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4096, 0);
    assert_status(tidal_offload(NULL, "w", 0, NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_offload(ctx, NULL, 0, NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_restore(ctx, NULL, 0, NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_offload(ctx, "w", 0x80, NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_restore(ctx, "w", TIDAL_OFFLOAD_KEEP_PHYSICAL, NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_offload_range(ctx, d, 16, 0, NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "not elastic");
    assert_status(tidal_offload_range(ctx, p, 0, 0, NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_offload_range(ctx, p, 4 * MIB + 1, 0, NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    int local = 0;
    assert_status(tidal_restore_range(ctx, &local, 4, 0, NULL, NULL), TIDAL_ERROR_UNKNOWN_POINTER);
    tidal_elastic_result small = TIDAL_ELASTIC_RESULT_INIT;
    small.struct_size = 4;
    assert_status(tidal_offload(ctx, "w", 0, NULL, &small), TIDAL_ERROR_INVALID_ARGUMENT);
    tidal_pool_stats ps = TIDAL_POOL_STATS_INIT;
    assert_status(tidal_pool_stats_get(ctx, TIDAL_KIND_ELASTIC, 0, &ps), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_free(ctx, d));
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_runtime_without_virtual_memory_is_not_supported(void **state)
{
    (void)state;
    sim_only();
    /* The fake HIP module of tests/runtime/fake has no virtual-memory group. */
    char *dir = harness_toml_string(harness_required_env("TIDAL_TEST_RUNTIME_DIR_FAKE"));
    tidal_context *ctx = harness_context_format("runtime = \"hip\"\nruntime_path = [%s]\n", dir);
    free(dir);
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_ELASTIC;
    desc.device = 0;
    void *p = (void *)1;
    assert_status(tidal_alloc(ctx, MIB, &desc, &p), TIDAL_ERROR_NOT_SUPPORTED);
    assert_null(p);
    assert_contains(tidal_last_error(), "virtual-memory");
    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    assert_ok(tidal_offload(ctx, "*", 0, NULL, &out)); /* nothing elastic: nothing to do */
    assert_int_equal(out.allocations, 0);
    assert_ok(tidal_context_destroy(ctx));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_keeps_address_and_contents),
        cmocka_unit_test(test_discard_and_keep_physical),
        cmocka_unit_test(test_tag_that_matches_nothing_moves_nothing),
        cmocka_unit_test(test_restore_onto_a_full_device_maps_nothing),
        cmocka_unit_test(test_home_that_cannot_be_made_keeps_the_device_copy),
        cmocka_unit_test(test_free_of_offloaded_memory_gives_everything_back),
        cmocka_unit_test(test_copies_into_and_out_of_partly_resident_memory),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_runtime_without_virtual_memory_is_not_supported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
