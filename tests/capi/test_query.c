/* tidal_pointer_query: what tidal reports about base and interior pointers, and what it
 * refuses. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <string.h>

static void test_query_base_and_interior(void **state)
{
    tidal_context *ctx = *state;
    const size_t size = 100000;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.tag = "kv-cache";
    desc.hints = TIDAL_HINT_DEVICE_ONLY | TIDAL_HINT_TEMPORARY;
    unsigned char *base = NULL;
    assert_ok(tidal_alloc(ctx, size, &desc, (void **)&base));

    const unsigned char *probes[] = {base, base + 1, base + size / 2, base + size - 1};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; ++i) {
        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        assert_ok(tidal_pointer_query(ctx, probes[i], &info));
        assert_int_equal(info.struct_size, sizeof(tidal_pointer_info));
        assert_ptr_equal(info.base, base);
        assert_int_equal(info.size, size);
        assert_int_equal(info.kind, TIDAL_KIND_DEVICE);
        assert_int_equal(info.device, 0);
        assert_int_equal(info.hints, TIDAL_HINT_DEVICE_ONLY | TIDAL_HINT_TEMPORARY);
        assert_string_equal(info.tag, "kv-cache");
        assert_string_equal(info.placed_by, "core");
        assert_true(info.alignment > 0);
        assert_int_equal((uintptr_t)base % info.alignment, 0);
    }
    assert_ok(tidal_free(ctx, base));
}

static void test_query_one_past_the_end(void **state)
{
    tidal_context *ctx = *state;
    const size_t size = 4096;
    unsigned char *base = NULL;
    assert_ok(tidal_alloc(ctx, size, NULL, (void **)&base));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    /* Only this allocation is live, so nothing else can start at base + size. */
    assert_status(tidal_pointer_query(ctx, base + size, &info), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_status(tidal_pointer_query(ctx, base - 1, &info), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_ok(tidal_free(ctx, base));
}

static void test_query_null_info(void **state)
{
    tidal_context *ctx = *state;
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, 4096, NULL, &ptr));
    assert_status(tidal_pointer_query(ctx, ptr, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_free(ctx, ptr));
}

static void test_query_null_context(void **state)
{
    tidal_context *ctx = *state;
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, 4096, NULL, &ptr));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_status(tidal_pointer_query(NULL, ptr, &info), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_free(ctx, ptr));
}

static void test_query_struct_size_too_small(void **state)
{
    tidal_context *ctx = *state;
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, 4096, NULL, &ptr));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    info.struct_size = 8;
    assert_status(tidal_pointer_query(ctx, ptr, &info), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_free(ctx, ptr));
}

static void test_query_after_free(void **state)
{
    tidal_context *ctx = *state;
    unsigned char *ptr = NULL;
    assert_ok(tidal_alloc(ctx, 4096, NULL, (void **)&ptr));
    assert_ok(tidal_free(ctx, ptr));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_status(tidal_pointer_query(ctx, ptr, &info), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_status(tidal_pointer_query(ctx, ptr + 10, &info), TIDAL_ERROR_UNKNOWN_POINTER);
}

static void test_query_foreign_pointer(void **state)
{
    int on_the_stack = 0;
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_status(tidal_pointer_query(*state, &on_the_stack, &info), TIDAL_ERROR_UNKNOWN_POINTER);
}

static void check_default_device(tidal_context *ctx, tidal_kind kind, int32_t expected_device)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    desc.device = TIDAL_DEVICE_DEFAULT;
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, 65536, &desc, &ptr));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_int_equal(info.kind, kind);
    if (info.device != expected_device)
        fail_msg("a %s allocation on the default device reports device %d, expected %d",
                 tidal_kind_name(kind), (int)info.device, (int)expected_device);
    assert_string_equal(info.placed_by, "core");
    assert_ok(tidal_free(ctx, ptr));
}

static void test_query_default_devices(void **state)
{
    tidal_context *ctx = *state;
    check_default_device(ctx, TIDAL_KIND_PINNED, TIDAL_DEVICE_HOST);
    check_default_device(ctx, TIDAL_KIND_PAGEABLE, TIDAL_DEVICE_HOST);
    check_default_device(ctx, TIDAL_KIND_DEVICE, 0);
}

static void test_query_untagged(void **state)
{
    tidal_context *ctx = *state;
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, 4096, NULL, &ptr));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    /* Pre-fill with garbage so a field the library forgets to write is noticed. */
    memset(info.tag, 'x', sizeof info.tag);
    memset(info.placed_by, 'x', sizeof info.placed_by);
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_string_equal(info.tag, "");
    assert_string_equal(info.placed_by, "core");
    /* The struct is filled in place: the bytes after the name are cleared too, not left 'x'. */
    for (size_t i = strlen(info.placed_by); i < sizeof info.placed_by; ++i)
        assert_int_equal(info.placed_by[i], 0);
    assert_int_equal(info.hints, 0);
    assert_int_not_equal(info.kind, TIDAL_KIND_AUTO);
    assert_ok(tidal_free(ctx, ptr));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        HARNESS_SIM_TEST(test_query_base_and_interior),
        HARNESS_SIM_TEST(test_query_one_past_the_end),
        HARNESS_SIM_TEST(test_query_null_info),
        HARNESS_SIM_TEST(test_query_null_context),
        HARNESS_SIM_TEST(test_query_struct_size_too_small),
        HARNESS_SIM_TEST(test_query_after_free),
        HARNESS_SIM_TEST(test_query_foreign_pointer),
        HARNESS_SIM_TEST(test_query_default_devices),
        HARNESS_SIM_TEST(test_query_untagged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
