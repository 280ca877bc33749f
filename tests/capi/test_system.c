/* System and device description, and the resolved configuration as text. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define MiB ((uint64_t)1 << 20)

static void test_system_info_of_default_sim(void **state)
{
    tidal_system_info info = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(*state, &info));
    assert_string_equal(info.runtime, "sim");
    assert_int_equal(info.device_count, 1);
    assert_true(strlen(info.runtime_detail) > 0);
}

static void test_system_info_device_count_from_config(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ndevices = 3\n");
    tidal_system_info info = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &info));
    assert_string_equal(info.runtime, "sim");
    assert_int_equal(info.device_count, 3);
    for (int32_t i = 0; i < 3; ++i) {
        tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
        assert_ok(tidal_device_info_get(ctx, i, &device));
        assert_int_equal(device.index, i);
    }
    tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
    assert_status(tidal_device_info_get(ctx, 3, &device), TIDAL_ERROR_NOT_FOUND);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_system_info_bad_arguments(void **state)
{
    tidal_system_info info = TIDAL_SYSTEM_INFO_INIT;
    assert_status(tidal_system_info_get(NULL, &info), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_system_info_get(*state, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_device_info_of_default_sim(void **state)
{
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(*state, 0, &info));
    assert_int_equal(info.index, 0);
    assert_true(strlen(info.name) > 0);
    assert_true(info.flags & TIDAL_DEVICE_FLAG_SIMULATED);
    assert_true(info.flags & TIDAL_DEVICE_FLAG_MANAGED);
    /* The default profile is an H200 with xnack = true: managed pages migrate on a fault. */
    assert_true(info.flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT);
    /* An NVIDIA profile has no AMD fine/coarse-grained kinds. */
    assert_false(info.flags & TIDAL_DEVICE_FLAG_FINE_GRAINED);
    assert_true(info.total_memory > 0);
    /* 141 GB, give or take how the profile spells it (GB or GiB). */
    assert_true(info.total_memory >= (uint64_t)140 * 1000 * 1000 * 1000);
    assert_true(info.total_memory <= (uint64_t)142 << 30);
    assert_true(info.free_memory <= info.total_memory);
    assert_int_equal(info.page_size, 2 * MiB);
}

static void test_device_info_bad_index(void **state)
{
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_status(tidal_device_info_get(*state, 1, &info), TIDAL_ERROR_NOT_FOUND);
    assert_status(tidal_device_info_get(*state, -1, &info), TIDAL_ERROR_NOT_FOUND);
    assert_status(tidal_device_info_get(*state, INT32_MAX, &info), TIDAL_ERROR_NOT_FOUND);
}

static void test_device_info_bad_arguments(void **state)
{
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_status(tidal_device_info_get(*state, 0, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_device_info_get(NULL, 0, &info), TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_device_info_xnack_off(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\nxnack = false\n");
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &info));
    assert_true(info.flags & TIDAL_DEVICE_FLAG_SIMULATED);
    assert_false(info.flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_device_info_capacity_override(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ncapacity = \"1MiB\"\n");
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &info));
    assert_int_equal(info.total_memory, MiB);
    assert_true(info.free_memory <= MiB);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_device_info_free_memory_follows_allocations(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ncapacity = \"64MiB\"\n");
    tidal_device_info before = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &before));
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, 16 * MiB, &desc, &ptr));
    tidal_device_info during = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &during));
    if (!(during.free_memory + 16 * MiB <= before.free_memory))
        fail_msg("free memory went from %llu to %llu after a 16 MiB device allocation",
                 (unsigned long long)before.free_memory, (unsigned long long)during.free_memory);
    assert_ok(tidal_free(ctx, ptr));
    assert_ok(tidal_context_destroy(ctx));
}

/* --- tidal_config_describe ------------------------------------------------------------ */

static void test_describe_needs_a_buffer(void **state)
{
    size_t needed = 0;
    assert_status(tidal_config_describe(*state, NULL, 0, &needed), TIDAL_ERROR_BUFFER_TOO_SMALL);
    assert_true(needed > 1);
}

static void test_describe_into_exact_buffer(void **state)
{
    tidal_context *ctx = *state;
    size_t needed = 0;
    assert_status(tidal_config_describe(ctx, NULL, 0, &needed), TIDAL_ERROR_BUFFER_TOO_SMALL);
    char *text = malloc(needed);
    assert_non_null(text);
    size_t again = 0;
    assert_ok(tidal_config_describe(ctx, text, needed, &again));
    assert_int_equal(again, needed);
    assert_int_equal(strlen(text), needed - 1);
    assert_contains(text, "runtime = \"sim\"");
    free(text);
}

static void test_describe_needed_may_be_null(void **state)
{
    tidal_context *ctx = *state;
    char text[65536];
    assert_ok(tidal_config_describe(ctx, text, sizeof text, NULL));
    assert_contains(text, "runtime = \"sim\"");
}

static void test_describe_truncates_short_buffer(void **state)
{
    tidal_context *ctx = *state;
    size_t needed = 0;
    assert_status(tidal_config_describe(ctx, NULL, 0, &needed), TIDAL_ERROR_BUFFER_TOO_SMALL);
    char *full = malloc(needed);
    char *part = malloc(needed);
    assert_non_null(full);
    assert_non_null(part);
    assert_ok(tidal_config_describe(ctx, full, needed, NULL));
    memset(part, 'x', needed);
    size_t reported = 0;
    assert_status(tidal_config_describe(ctx, part, needed - 1, &reported),
                  TIDAL_ERROR_BUFFER_TOO_SMALL);
    assert_int_equal(reported, needed);
    /* At most `capacity` bytes, NUL included: the last byte is untouched. */
    assert_int_equal((unsigned char)part[needed - 1], (unsigned char)'x');
    assert_int_equal(part[needed - 2], '\0');
    assert_int_equal(strncmp(part, full, needed - 2), 0);
    free(part);
    free(full);
}

static void test_describe_shows_settings(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ndevices = 2\n");
    char text[65536];
    assert_ok(tidal_config_describe(ctx, text, sizeof text, NULL));
    assert_contains(text, "runtime = \"sim\"");
    assert_contains(text, "devices = 2");
    assert_ok(tidal_context_destroy(ctx));
}

static void test_describe_null_context(void **state)
{
    (void)state;
    char text[64];
    size_t needed = 0;
    assert_status(tidal_config_describe(NULL, text, sizeof text, &needed),
                  TIDAL_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        HARNESS_SIM_TEST(test_system_info_of_default_sim),
        cmocka_unit_test(test_system_info_device_count_from_config),
        HARNESS_SIM_TEST(test_system_info_bad_arguments),
        HARNESS_SIM_TEST(test_device_info_of_default_sim),
        HARNESS_SIM_TEST(test_device_info_bad_index),
        HARNESS_SIM_TEST(test_device_info_bad_arguments),
        cmocka_unit_test(test_device_info_xnack_off),
        cmocka_unit_test(test_device_info_capacity_override),
        cmocka_unit_test(test_device_info_free_memory_follows_allocations),
        HARNESS_SIM_TEST(test_describe_needs_a_buffer),
        HARNESS_SIM_TEST(test_describe_into_exact_buffer),
        HARNESS_SIM_TEST(test_describe_needed_may_be_null),
        HARNESS_SIM_TEST(test_describe_truncates_short_buffer),
        cmocka_unit_test(test_describe_shows_settings),
        cmocka_unit_test(test_describe_null_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
