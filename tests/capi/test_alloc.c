/* tidal_alloc on the simulated device: every kind, argument checks, alignment, capacity and
 * injected faults. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define MiB ((size_t)1 << 20)
#define INVALID_SENTINEL ((void *)(uintptr_t)0x10)

/* Allocates with `desc`, expecting `expected`; checks that a failure leaves *out NULL. */
static void *alloc_expect(tidal_context *ctx, size_t size, const tidal_alloc_desc *desc,
                          tidal_status expected)
{
    void *ptr = INVALID_SENTINEL;
    assert_status(tidal_alloc(ctx, size, desc, &ptr), expected);
    if (expected != TIDAL_OK)
        assert_null(ptr);
    else
        assert_non_null(ptr);
    return ptr;
}

static void check_kind_round_trip(tidal_context *ctx, tidal_kind kind, size_t size)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    void *ptr = alloc_expect(ctx, size, &desc, TIDAL_OK);
    /* The simulated device backs every kind with host memory, so all bytes can be touched. */
    harness_fill(ptr, size, (unsigned)kind);
    if (!harness_holds(ptr, size, (unsigned)kind))
        fail_msg("%s memory did not keep what was written", tidal_kind_name(kind));

    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_ptr_equal(info.base, ptr);
    assert_int_equal(info.size, size);
    if (kind == TIDAL_KIND_AUTO) {
        assert_int_not_equal(info.kind, TIDAL_KIND_AUTO);
        assert_true(info.kind > TIDAL_KIND_AUTO && info.kind < TIDAL_KIND_COUNT);
    } else {
        assert_int_equal(info.kind, kind);
    }
    assert_ok(tidal_free(ctx, ptr));
}

static void test_alloc_every_kind(void **state)
{
    tidal_context *ctx = *state;
    static const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED,
                                       TIDAL_KIND_PAGEABLE, TIDAL_KIND_AUTO};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        check_kind_round_trip(ctx, kinds[i], 1);
        check_kind_round_trip(ctx, kinds[i], 4096 + 3);
        check_kind_round_trip(ctx, kinds[i], 3 * MiB + 17);
    }
}

static void test_alloc_desc_null(void **state)
{
    tidal_context *ctx = *state;
    void *ptr = alloc_expect(ctx, 1000, NULL, TIDAL_OK);
    harness_fill(ptr, 1000, 7);
    assert_true(harness_holds(ptr, 1000, 7));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_int_not_equal(info.kind, TIDAL_KIND_AUTO);
    assert_string_equal(info.tag, "");
    assert_int_equal(info.hints, 0);
    assert_ok(tidal_free(ctx, ptr));
}

static void test_alloc_null_context(void **state)
{
    (void)state;
    alloc_expect(NULL, 4096, NULL, TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_alloc_null_out(void **state)
{
    tidal_context *ctx = *state;
    assert_status(tidal_alloc(ctx, 4096, NULL, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_alloc_size_zero(void **state)
{
    alloc_expect(*state, 0, NULL, TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_alloc_size_max_is_out_of_memory(void **state)
{
    tidal_context *ctx = *state;
    alloc_expect(ctx, SIZE_MAX, NULL, TIDAL_ERROR_OUT_OF_MEMORY);
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    alloc_expect(ctx, SIZE_MAX, &desc, TIDAL_ERROR_OUT_OF_MEMORY);
    /* Close enough to SIZE_MAX that rounding up to an alignment would wrap around. */
    desc.alignment = 4096;
    alloc_expect(ctx, SIZE_MAX - 100, &desc, TIDAL_ERROR_OUT_OF_MEMORY);
}

static void test_alloc_alignment_not_power_of_two(void **state)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.alignment = 3;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
    desc.alignment = 4096 + 64;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
}

static void check_alignment(tidal_context *ctx, tidal_kind kind, size_t alignment, size_t size)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    desc.alignment = alignment;
    void *ptr = alloc_expect(ctx, size, &desc, TIDAL_OK);
    if ((uintptr_t)ptr % alignment != 0)
        fail_msg("%s pointer %p is not aligned to %zu", tidal_kind_name(kind), ptr, alignment);
    harness_fill(ptr, size, 3);
    assert_true(harness_holds(ptr, size, 3));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_ptr_equal(info.base, ptr);
    assert_int_equal(info.size, size);
    if (info.alignment < alignment || (info.alignment & (info.alignment - 1)) != 0)
        fail_msg("reported alignment %zu for an allocation asked at %zu", info.alignment,
                 alignment);
    assert_ok(tidal_free(ctx, ptr));
}

static void test_alloc_alignment_honoured(void **state)
{
    tidal_context *ctx = *state;
    static const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED,
                                       TIDAL_KIND_PAGEABLE, TIDAL_KIND_AUTO};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        check_alignment(ctx, kinds[i], 4096, 100);
        check_alignment(ctx, kinds[i], (size_t)1 << 21, 5000);
        check_alignment(ctx, kinds[i], (size_t)1 << 21, 3 * MiB);
    }
}

static void test_alloc_alignment_above_one_gib(void **state)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.alignment = (size_t)1 << 31;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_alloc_unknown_hint_bit(void **state)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.hints = 0x40u;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
    desc.hints = TIDAL_HINT_READ_MOSTLY | 0x80000000u;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_alloc_every_known_hint(void **state)
{
    tidal_context *ctx = *state;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.hints = TIDAL_HINT_ALL;
    void *ptr = alloc_expect(ctx, 4096, &desc, TIDAL_OK);
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_int_equal(info.hints, TIDAL_HINT_ALL);
    assert_ok(tidal_free(ctx, ptr));
}

static void test_alloc_tag_length(void **state)
{
    tidal_context *ctx = *state;
    char tag[TIDAL_TAG_MAX + 1];

    /* TIDAL_TAG_MAX - 1 bytes fit (the NUL takes the last one). */
    memset(tag, 'w', TIDAL_TAG_MAX - 1);
    tag[TIDAL_TAG_MAX - 1] = '\0';
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.tag = tag;
    void *ptr = alloc_expect(ctx, 4096, &desc, TIDAL_OK);
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_string_equal(info.tag, tag);
    assert_ok(tidal_free(ctx, ptr));

    memset(tag, 'w', TIDAL_TAG_MAX);
    tag[TIDAL_TAG_MAX] = '\0';
    alloc_expect(ctx, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_alloc_tag_is_copied(void **state)
{
    tidal_context *ctx = *state;
    char tag[16];
    strcpy(tag, "activations");
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.tag = tag;
    void *ptr = alloc_expect(ctx, 4096, &desc, TIDAL_OK);
    strcpy(tag, "overwritten");
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_string_equal(info.tag, "activations");
    assert_ok(tidal_free(ctx, ptr));
}

static void test_alloc_struct_size_too_small(void **state)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.struct_size = 4;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
    desc.struct_size = 0;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_alloc_bad_kind(void **state)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = (tidal_kind)99;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
    desc.kind = (tidal_kind)TIDAL_KIND_COUNT;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_alloc_device_out_of_range(void **state)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = 5;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_NOT_FOUND);
    desc.device = 1;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_NOT_FOUND);
}

static void test_alloc_negative_device(void **state)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = -7;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_alloc_explicit_device_on_two_devices(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ndevices = 2\n");
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = 1;
    void *ptr = alloc_expect(ctx, 4096, &desc, TIDAL_OK);
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    assert_int_equal(info.kind, TIDAL_KIND_DEVICE);
    assert_int_equal(info.device, 1);
    assert_ok(tidal_free(ctx, ptr));
    desc.device = 2;
    alloc_expect(ctx, 4096, &desc, TIDAL_ERROR_NOT_FOUND);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_alloc_fine_grained_on_nvidia(void **state)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE_FINE;
    alloc_expect(*state, 4096, &desc, TIDAL_ERROR_NOT_SUPPORTED);
}

static void test_alloc_beyond_capacity(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ncapacity = \"1MiB\"\n");
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    alloc_expect(ctx, 2 * MiB, &desc, TIDAL_ERROR_OUT_OF_MEMORY);
    assert_true(strlen(tidal_last_error()) > 0);
    /* What fits still works after the failure. */
    void *ptr = alloc_expect(ctx, 4096, &desc, TIDAL_OK);
    assert_ok(tidal_free(ctx, ptr));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_alloc_capacity_is_returned_by_free(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ncapacity = \"4MiB\"\n");
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    for (int round = 0; round < 8; ++round) {
        void *ptr = alloc_expect(ctx, 3 * MiB, &desc, TIDAL_OK);
        assert_ok(tidal_free(ctx, ptr));
    }
    assert_ok(tidal_context_destroy(ctx));
}

static void test_alloc_injected_fault(void **state)
{
    (void)state;
    /* Unpooled, so each tidal_alloc is one runtime allocation (pools reuse memory instead). */
    tidal_context *ctx = harness_context("runtime = \"sim\"\n"
                                         "[pool]\nenabled = false\n"
                                         "[[sim.fault]]\n"
                                         "operation = \"alloc\"\n"
                                         "nth = 2\n"
                                         "error = \"hipErrorOutOfMemory\"\n");
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    void *first = alloc_expect(ctx, 4096, &desc, TIDAL_OK);
    alloc_expect(ctx, 4096, &desc, TIDAL_ERROR_OUT_OF_MEMORY);
    assert_last_error_contains("cudaErrorMemoryAllocation (2)");
    void *third = alloc_expect(ctx, 4096, &desc, TIDAL_OK);
    assert_ok(tidal_free(ctx, first));
    assert_ok(tidal_free(ctx, third));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_alloc_distinct_pointers(void **state)
{
    tidal_context *ctx = *state;
    enum { COUNT = 64 };
    void *ptrs[COUNT];
    size_t sizes[COUNT];
    for (int i = 0; i < COUNT; ++i) {
        sizes[i] = (size_t)(i + 1) * 1000;
        ptrs[i] = alloc_expect(ctx, sizes[i], NULL, TIDAL_OK);
        harness_fill(ptrs[i], sizes[i], (unsigned)i);
    }
    for (int i = 0; i < COUNT; ++i) {
        if (!harness_holds(ptrs[i], sizes[i], (unsigned)i))
            fail_msg("allocation %d was overwritten by another one", i);
        assert_ok(tidal_free(ctx, ptrs[i]));
    }
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        HARNESS_SIM_TEST(test_alloc_every_kind),
        HARNESS_SIM_TEST(test_alloc_desc_null),
        cmocka_unit_test(test_alloc_null_context),
        HARNESS_SIM_TEST(test_alloc_null_out),
        HARNESS_SIM_TEST(test_alloc_size_zero),
        HARNESS_SIM_TEST(test_alloc_size_max_is_out_of_memory),
        HARNESS_SIM_TEST(test_alloc_alignment_not_power_of_two),
        HARNESS_SIM_TEST(test_alloc_alignment_honoured),
        HARNESS_SIM_TEST(test_alloc_alignment_above_one_gib),
        HARNESS_SIM_TEST(test_alloc_unknown_hint_bit),
        HARNESS_SIM_TEST(test_alloc_every_known_hint),
        HARNESS_SIM_TEST(test_alloc_tag_length),
        HARNESS_SIM_TEST(test_alloc_tag_is_copied),
        HARNESS_SIM_TEST(test_alloc_struct_size_too_small),
        HARNESS_SIM_TEST(test_alloc_bad_kind),
        HARNESS_SIM_TEST(test_alloc_device_out_of_range),
        HARNESS_SIM_TEST(test_alloc_negative_device),
        cmocka_unit_test(test_alloc_explicit_device_on_two_devices),
        HARNESS_SIM_TEST(test_alloc_fine_grained_on_nvidia),
        cmocka_unit_test(test_alloc_beyond_capacity),
        cmocka_unit_test(test_alloc_capacity_is_returned_by_free),
        cmocka_unit_test(test_alloc_injected_fault),
        HARNESS_SIM_TEST(test_alloc_distinct_pointers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
