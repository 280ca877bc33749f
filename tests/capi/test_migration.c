/* tidal_prefetch, tidal_range_query and tidal_check_run on the simulated device: the data
 * survives every move, the runtime's attributes follow it, and bad input gets a clear status. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

enum { SIZE = 8 << 20 };

static void test_managed_round_trip_keeps_data_and_attributes(void **state)
{
    tidal_context *ctx = *state;
    void *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, SIZE, 0);
    uint64_t bad = 99;
    assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_FILL, p, NULL, SIZE, 42, NULL, NULL));
    for (int round = 0; round < 2; ++round) {
        assert_ok(tidal_prefetch(ctx, p, SIZE, TIDAL_DEVICE_HOST));
        assert_int_equal(harness_prefetch_location(ctx, p, SIZE), TIDAL_DEVICE_HOST);
        assert_ok(tidal_prefetch(ctx, p, SIZE, 0));
        assert_int_equal(harness_prefetch_location(ctx, p, SIZE), 0);
        assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_VERIFY, p, NULL, SIZE, 42, NULL, &bad));
        assert_int_equal(bad, 0);
    }
    /* A wrong seed is detected: the check can fail. */
    assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_VERIFY, p, NULL, SIZE, 43, NULL, &bad));
    assert_int_equal(bad, SIZE / 8);
    /* One corrupted word is found. */
    ((uint64_t *)p)[1000] ^= 1;
    assert_ok(harness_check(ctx, TIDAL_CHECK_PATTERN_VERIFY, p, NULL, SIZE, 42, NULL, &bad));
    assert_int_equal(bad, 1);
    assert_ok(tidal_free(ctx, p));
}

static void test_prefetch_of_unmovable_kinds_is_a_noop(void **state)
{
    tidal_context *ctx = *state;
    const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_PINNED, TIDAL_KIND_PAGEABLE};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        void *p = harness_alloc(ctx, kinds[i], SIZE, 0);
        assert_ok(tidal_prefetch(ctx, p, SIZE, 0));
        assert_ok(tidal_prefetch(ctx, (char *)p + 4096, 4096, TIDAL_DEVICE_HOST));
        tidal_range_info info = TIDAL_RANGE_INFO_INIT;
        assert_status(tidal_range_query(ctx, p, SIZE, &info), TIDAL_ERROR_NOT_SUPPORTED);
        assert_last_error_contains("managed");
        assert_ok(tidal_free(ctx, p));
    }
}

static void test_prefetch_errors(void **state)
{
    tidal_context *ctx = *state;
    void *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, SIZE, 0);
    int local = 0;
    assert_status(tidal_prefetch(NULL, p, SIZE, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_prefetch(ctx, NULL, SIZE, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_prefetch(ctx, p, 0, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_prefetch(ctx, p, SIZE + 1, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("past the end");
    assert_status(tidal_prefetch(ctx, (char *)p + 8, SIZE, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_prefetch(ctx, p, SIZE, 3), TIDAL_ERROR_NOT_FOUND);
    assert_status(tidal_prefetch(ctx, p, SIZE, -7), TIDAL_ERROR_NOT_FOUND);
    assert_status(tidal_prefetch(ctx, &local, sizeof local, 0), TIDAL_ERROR_UNKNOWN_POINTER);
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    assert_status(tidal_range_query(ctx, p, SIZE, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    info.struct_size = 4;
    assert_status(tidal_range_query(ctx, p, SIZE, &info), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_free(ctx, p));
    assert_status(tidal_prefetch(ctx, p, SIZE, 0), TIDAL_ERROR_UNKNOWN_POINTER);
}

static void test_prefetch_beyond_capacity_is_out_of_memory(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ncapacity = \"4MiB\"\n");
    void *p = harness_alloc(ctx, TIDAL_KIND_MANAGED, SIZE, 0);
    assert_status(tidal_prefetch(ctx, p, SIZE, 0), TIDAL_ERROR_OUT_OF_MEMORY);
    assert_last_error_contains("cudaErrorMemoryAllocation (2)");
    assert_ok(tidal_prefetch(ctx, p, 2 << 20, 0)); /* half of it fits */
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_checks_copy_triad_atomics(void **state)
{
    tidal_context *ctx = *state;
    double *a = harness_alloc(ctx, TIDAL_KIND_DEVICE, SIZE, 0);
    double *b = harness_alloc(ctx, TIDAL_KIND_DEVICE, SIZE, 0);
    double *c = harness_alloc(ctx, TIDAL_KIND_DEVICE, SIZE, 0);
    const size_t n = SIZE / sizeof(double);
    for (size_t i = 0; i < n; ++i) { /* simulated device memory is host memory */
        b[i] = (double)i;
        c[i] = 2.0;
    }
    assert_ok(harness_check(ctx, TIDAL_CHECK_COPY, a, b, SIZE, 0, NULL, NULL));
    assert_true(memcmp(a, b, SIZE) == 0);
    tidal_check t = TIDAL_CHECK_INIT;
    t.kind = TIDAL_CHECK_TRIAD;
    t.target = a;
    t.source = b;
    t.source2 = c;
    t.size = SIZE;
    t.scalar = 3.0;
    t.repeat = 3;
    assert_ok(tidal_check_run(ctx, &t));
    assert_true(t.elapsed_ms > 0.0);
    assert_true(a[12345] == 12345.0 + 6.0);
    uint64_t *counters = harness_alloc(ctx, TIDAL_KIND_PINNED, 8192, 0);
    memset(counters, 0, 8192);
    assert_ok(harness_check(ctx, TIDAL_CHECK_ATOMIC_ADD, counters, NULL, 8192, 7, NULL, NULL));
    for (size_t i = 0; i < 1024; ++i)
        assert_int_equal(counters[i], 7);
    assert_ok(harness_check(ctx, TIDAL_CHECK_RUNTIME_COPY, counters, a, 8192, 0, NULL, NULL));
    assert_true(memcmp(counters, a, 8192) == 0);
    tidal_free(ctx, counters);
    tidal_free(ctx, a);
    tidal_free(ctx, b);
    tidal_free(ctx, c);
}

static void test_check_errors(void **state)
{
    tidal_context *ctx = *state;
    void *p = harness_alloc(ctx, TIDAL_KIND_DEVICE, SIZE, 0);
    assert_status(tidal_check_run(ctx, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(harness_check(ctx, (tidal_check_kind)99, p, NULL, SIZE, 0, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, 0, 0, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, 12, 0, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, (char *)p + 4, NULL, 8, 0, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, NULL, NULL, 8, 0, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(harness_check(ctx, TIDAL_CHECK_COPY, p, NULL, SIZE, 0, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, SIZE + 8, 0, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("past the end");
    tidal_check c = TIDAL_CHECK_INIT;
    c.target = p;
    c.size = 8;
    c.device = 1;
    assert_status(tidal_check_run(ctx, &c), TIDAL_ERROR_NOT_FOUND);
    c.device = 0;
    c.struct_size = 8;
    assert_status(tidal_check_run(ctx, &c), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_free(ctx, p));
}

static void test_device_touching_pageable_memory_is_illegal(void **state)
{
    tidal_context *ctx = *state; /* the default profile is an H200: no pageable access */
    void *p = harness_alloc(ctx, TIDAL_KIND_PAGEABLE, 1 << 20, 0);
    assert_status(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, 1 << 20, 0, NULL, NULL),
                  TIDAL_ERROR_ILLEGAL_ACCESS);
    /* Refused before the launch (on AMD the fault would abort the process). */
    assert_last_error_contains("pageable host memory, which device 0 cannot reach");
    assert_ok(tidal_free(ctx, p));
}

static void test_injected_kernel_fault_is_reported(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[[sim.fault]]\noperation = \"kernel\"\nnth = 2\n"
                                         "error = \"hipErrorIllegalAddress\"\n");
    void *p = harness_alloc(ctx, TIDAL_KIND_DEVICE, 1 << 20, 0);
    assert_ok(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, 1 << 20, 0, NULL, NULL));
    assert_status(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, 1 << 20, 0, NULL, NULL),
                  TIDAL_ERROR_ILLEGAL_ACCESS);
    assert_ok(harness_check(ctx, TIDAL_CHECK_TOUCH_READ, p, NULL, 1 << 20, 0, NULL, NULL));
    assert_ok(tidal_free(ctx, p));
    assert_ok(tidal_context_destroy(ctx));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        HARNESS_SIM_TEST(test_managed_round_trip_keeps_data_and_attributes),
        HARNESS_SIM_TEST(test_prefetch_of_unmovable_kinds_is_a_noop),
        HARNESS_SIM_TEST(test_prefetch_errors),
        cmocka_unit_test(test_prefetch_beyond_capacity_is_out_of_memory),
        HARNESS_SIM_TEST(test_checks_copy_triad_atomics),
        HARNESS_SIM_TEST(test_check_errors),
        HARNESS_SIM_TEST(test_device_touching_pageable_memory_is_illegal),
        cmocka_unit_test(test_injected_kernel_fault_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
