/* tidal_free: what it accepts, and the pointers it refuses without freeing anything. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_free_null_pointer(void **state)
{
    assert_ok(tidal_free(*state, NULL));
}

static void test_free_null_context(void **state)
{
    tidal_context *ctx = *state;
    void *ptr = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4096, 0);
    assert_status(tidal_free(NULL, ptr), TIDAL_ERROR_INVALID_ARGUMENT);
    /* Nothing was freed: the allocation is still known. */
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_ok(tidal_free(ctx, ptr));
}

static void test_double_free(void **state)
{
    tidal_context *ctx = *state;
    static const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED,
                                       TIDAL_KIND_PAGEABLE};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        void *ptr = harness_alloc(ctx, kinds[i], 8192, 0);
        assert_ok(tidal_free(ctx, ptr));
        assert_status(tidal_free(ctx, ptr), TIDAL_ERROR_UNKNOWN_POINTER);
        assert_last_error_contains("already freed");
    }
}

static void test_free_foreign_pointer(void **state)
{
    tidal_context *ctx = *state;
    int on_the_stack = 42;
    assert_status(tidal_free(ctx, &on_the_stack), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_int_equal(on_the_stack, 42);

    void *from_malloc = malloc(64);
    assert_non_null(from_malloc);
    assert_status(tidal_free(ctx, from_malloc), TIDAL_ERROR_UNKNOWN_POINTER);
    free(from_malloc);
}

static void test_free_interior_pointer(void **state)
{
    tidal_context *ctx = *state;
    const size_t size = 65536;
    unsigned char *base = harness_alloc(ctx, TIDAL_KIND_DEVICE, size, 0);
    harness_fill(base, size, 11);

    assert_status(tidal_free(ctx, base + 1), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("interior");

    /* The allocation survived, untouched. */
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, base, &info));
    assert_ptr_equal(info.base, base);
    assert_int_equal(info.size, size);
    assert_true(harness_holds(base, size, 11));

    assert_status(tidal_free(ctx, base + size - 1), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("interior");
    assert_ok(tidal_pointer_query(ctx, base, &info));

    assert_ok(tidal_free(ctx, base));
    assert_status(tidal_pointer_query(ctx, base, &info), TIDAL_ERROR_UNKNOWN_POINTER);
}

static void test_free_interior_pointer_names_the_base(void **state)
{
    tidal_context *ctx = *state;
    unsigned char *base = harness_alloc(ctx, TIDAL_KIND_PINNED, 4096, 0);
    assert_status(tidal_free(ctx, base + 100), TIDAL_ERROR_INVALID_ARGUMENT);
    /* The header promises the message names the base; the exact spelling of a pointer is
     * the C library's, so look for its hex digits. */
    char *message = harness_format("%s", tidal_last_error());
    char digits[32];
    snprintf(digits, sizeof digits, "%llx", (unsigned long long)(uintptr_t)base);
    if (!harness_contains(message, digits, 1))
        fail_msg("the message does not name the base %p: \"%s\"", (void *)base, message);
    free(message);
    assert_ok(tidal_free(ctx, base));
}

static void test_free_then_reuse(void **state)
{
    tidal_context *ctx = *state;
    for (int round = 0; round < 100; ++round) {
        void *ptr = harness_alloc(ctx, TIDAL_KIND_AUTO, 4096 + (size_t)round, 0);
        assert_ok(tidal_free(ctx, ptr));
    }
    /* A pointer freed and returned again by a later allocation is live again. */
    void *first = harness_alloc(ctx, TIDAL_KIND_PAGEABLE, 4096, 0);
    assert_ok(tidal_free(ctx, first));
    void *second = harness_alloc(ctx, TIDAL_KIND_PAGEABLE, 4096, 0);
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, second, &info));
    assert_ok(tidal_free(ctx, second));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        HARNESS_SIM_TEST(test_free_null_pointer),
        HARNESS_SIM_TEST(test_free_null_context),
        HARNESS_SIM_TEST(test_double_free),
        HARNESS_SIM_TEST(test_free_foreign_pointer),
        HARNESS_SIM_TEST(test_free_interior_pointer),
        HARNESS_SIM_TEST(test_free_interior_pointer_names_the_base),
        HARNESS_SIM_TEST(test_free_then_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
