/* The spread policy with the core behind it, on 2 and 4 simulated devices: a request that
 * leaves the device open goes where there is most room (free memory, and for managed memory
 * the budget's headroom), an AUTO request's own device is kept while it has room, and a tagged
 * managed allocation is split over devices: each part prefers its own device, is accessed by
 * it, and a declaration of a part moves that part only. Parts that do not cover the allocation
 * fail the allocation with TIDAL_ERROR_INVALID_ARGUMENT. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tidal/tidal.h"

#define MIB ((size_t)1 << 20)

static tidal_context *context(int devices, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "runtime = \"sim\"\npolicies = [\"spread\"]\n[sim]\ndevices = %d\ncapacity = \"1GiB\"\n[pool]\nenabled = "
             "false\n%s",
             devices, extra);
    tidal_context *ctx = NULL;
    if (tidal_context_create_from_string(text, &ctx) != TIDAL_OK)
        fail_msg("context: %s", tidal_last_error());
    return ctx;
}

static void *alloc(tidal_context *ctx, size_t size, tidal_kind kind, int32_t device, const char *tag)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = kind;
    d.device = device;
    d.tag = tag;
    void *p = NULL;
    if (tidal_alloc(ctx, size, &d, &p) != TIDAL_OK)
        fail_msg("alloc: %s", tidal_last_error());
    return p;
}

static tidal_pointer_info info_of(tidal_context *ctx, const void *p)
{
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_int_equal(tidal_pointer_query(ctx, p, &info), TIDAL_OK);
    return info;
}

static tidal_range_info range_of(tidal_context *ctx, const void *p, size_t size)
{
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    if (tidal_range_query(ctx, p, size, &info) != TIDAL_OK)
        fail_msg("range query: %s", tidal_last_error());
    return info;
}

/* Devices 0..n-2 hold (n - d) * 64 MiB of device memory each (placed explicitly: spread defers
 * those); the last device holds nothing and is the roomiest. */
static void auto_goes_to_the_most_free_memory_on(int devices)
{
    tidal_context *ctx = context(devices, "");
    void *taken[4] = {NULL};
    for (int d = 0; d + 1 < devices; ++d) {
        taken[d] = alloc(ctx, (size_t)(devices - d) * 64 * MIB, TIDAL_KIND_DEVICE, d, "");
        assert_int_equal(info_of(ctx, taken[d]).device, d);
    }
    void *p = alloc(ctx, 16 * MIB, TIDAL_KIND_AUTO, TIDAL_DEVICE_DEFAULT, "");
    tidal_pointer_info info = info_of(ctx, p);
    assert_int_equal(info.device, devices - 1);
    assert_int_equal(info.kind, TIDAL_KIND_MANAGED); /* [policy.spread] kind's default */
    assert_string_equal(info.placed_by, "spread");
    /* An explicit kind with the device left open is placed too. */
    void *q = alloc(ctx, 16 * MIB, TIDAL_KIND_DEVICE, TIDAL_DEVICE_DEFAULT, "");
    assert_int_equal(info_of(ctx, q).device, devices - 1);
    assert_int_equal(tidal_free(ctx, q), TIDAL_OK);
    assert_int_equal(tidal_free(ctx, p), TIDAL_OK);
    for (int d = 0; d + 1 < devices; ++d)
        assert_int_equal(tidal_free(ctx, taken[d]), TIDAL_OK);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

static void auto_device_two(void **unused)
{
    (void)unused;
    auto_goes_to_the_most_free_memory_on(2);
}

static void auto_device_four(void **unused)
{
    (void)unused;
    auto_goes_to_the_most_free_memory_on(4);
}

/* Equal free memory; device 0's budget is used up by resident managed memory: managed
 * requests go to device 1, device memory (which no budget bounds) stays on the lowest index. */
static void budget_headroom_steers_managed_memory(void **unused)
{
    (void)unused;
    tidal_context *ctx = context(2, "");
    assert_int_equal(tidal_budget_set(ctx, 0, 64 * MIB), TIDAL_OK);
    assert_int_equal(tidal_budget_set(ctx, 1, 64 * MIB), TIDAL_OK);
    void *a = alloc(ctx, 48 * MIB, TIDAL_KIND_MANAGED, 0, "");
    tidal_access acc = TIDAL_ACCESS_INIT;
    acc.ptr = a;
    acc.size = 48 * MIB;
    acc.device = 0;
    assert_int_equal(tidal_declare(ctx, NULL, &acc, 1, 0), TIDAL_OK);
    void *b = alloc(ctx, 32 * MIB, TIDAL_KIND_AUTO, TIDAL_DEVICE_DEFAULT, "");
    assert_int_equal(info_of(ctx, b).device, 1);
    /* The caller's hint is kept while its budget has room for the request... */
    void *c = alloc(ctx, 8 * MIB, TIDAL_KIND_AUTO, 0, "");
    assert_int_equal(info_of(ctx, c).device, 0);
    /* ...and not once it has none (16 MiB of headroom left on device 0). */
    void *e = alloc(ctx, 32 * MIB, TIDAL_KIND_AUTO, 0, "");
    assert_int_equal(info_of(ctx, e).device, 1);
    for (void **p = (void *[]){a, b, c, e, NULL}; *p; ++p)
        assert_int_equal(tidal_free(ctx, *p), TIDAL_OK);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

/* affinity = false: the hint is ignored, the roomiest device wins. */
static void affinity_off_ignores_the_hint(void **unused)
{
    (void)unused;
    tidal_context *ctx = context(2, "[policy.spread]\naffinity = false\n");
    void *big = alloc(ctx, 256 * MIB, TIDAL_KIND_DEVICE, 1, "");
    void *p = alloc(ctx, 8 * MIB, TIDAL_KIND_AUTO, 1, "");
    assert_int_equal(info_of(ctx, p).device, 0);
    assert_int_equal(tidal_free(ctx, p), TIDAL_OK);
    assert_int_equal(tidal_free(ctx, big), TIDAL_OK);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

static void split_over(int devices, const char *extra, size_t size, const size_t *bounds)
{
    tidal_context *ctx = context(devices, extra);
    char *w = alloc(ctx, size, TIDAL_KIND_AUTO, TIDAL_DEVICE_DEFAULT, "weights.layer0");
    const tidal_pointer_info info = info_of(ctx, w);
    assert_int_equal(info.kind, TIDAL_KIND_MANAGED);
    assert_int_equal(info.device, 0);
    /* Each part prefers its own device. */
    for (int d = 0; d < devices; ++d)
        assert_int_equal(range_of(ctx, w + bounds[d], bounds[d + 1] - bounds[d]).preferred_location, d);
    assert_int_equal(range_of(ctx, w, size).preferred_location, TIDAL_LOCATION_NONE);
    /* One declaration per part, each from its own device's stream: each part moves there. */
    for (int d = 0; d < devices; ++d) {
        void *stream = NULL;
        assert_int_equal(tidal_stream_create(ctx, d, &stream), TIDAL_OK);
        tidal_access a = TIDAL_ACCESS_INIT;
        a.ptr = w + bounds[d];
        a.size = bounds[d + 1] - bounds[d];
        a.device = d;
        assert_int_equal(tidal_declare(ctx, stream, &a, 1, 0), TIDAL_OK);
        assert_int_equal(tidal_declare(ctx, stream, NULL, 0, 0), TIDAL_OK);
        assert_int_equal(tidal_stream_destroy(ctx, stream), TIDAL_OK);
    }
    for (int d = 0; d < devices; ++d) {
        tidal_migration_stats s = TIDAL_MIGRATION_STATS_INIT;
        assert_int_equal(tidal_migration_stats_get(ctx, d, &s), TIDAL_OK);
        assert_int_equal(s.resident_bytes, bounds[d + 1] - bounds[d]);
        assert_int_equal(range_of(ctx, w + bounds[d], bounds[d + 1] - bounds[d]).last_prefetch_location, d);
    }
    /* tidal_advise on a split allocation names each part's device, not the allocation's. */
    const int last = devices - 1;
    const size_t last_size = bounds[devices] - bounds[last];
    assert_int_equal(tidal_advise(ctx, w + bounds[last], last_size, 0, TIDAL_ADVICE_PREFERRED_DEVICE), TIDAL_OK);
    assert_int_equal(range_of(ctx, w + bounds[last], last_size).preferred_location, TIDAL_LOCATION_NONE);
    assert_int_equal(tidal_advise(ctx, w, size, TIDAL_ADVICE_PREFERRED_DEVICE, 0), TIDAL_OK);
    for (int d = 0; d < devices; ++d)
        assert_int_equal(range_of(ctx, w + bounds[d], bounds[d + 1] - bounds[d]).preferred_location, d);
    /* Untagged memory is not split. */
    void *plain = alloc(ctx, size, TIDAL_KIND_AUTO, TIDAL_DEVICE_DEFAULT, "activations");
    assert_int_equal(range_of(ctx, plain, size).preferred_location, TIDAL_LOCATION_NONE);
    assert_int_equal(tidal_free(ctx, plain), TIDAL_OK);
    assert_int_equal(tidal_free(ctx, w), TIDAL_OK);
    for (int d = 0; d < devices; ++d) {
        tidal_migration_stats s = TIDAL_MIGRATION_STATS_INIT;
        assert_int_equal(tidal_migration_stats_get(ctx, d, &s), TIDAL_OK);
        assert_int_equal(s.resident_bytes, 0);
    }
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

#define SPLIT_WEIGHTS "[policy.spread]\n[[policy.spread.split]]\ntag = \"weights*\"\n"

static void split_equal_two(void **unused)
{
    (void)unused;
    const size_t bounds[] = {0, 32 * MIB, 64 * MIB};
    split_over(2, SPLIT_WEIGHTS, 64 * MIB, bounds);
}

static void split_equal_four(void **unused)
{
    (void)unused;
    const size_t bounds[] = {0, 16 * MIB, 32 * MIB, 48 * MIB, 64 * MIB};
    split_over(4, SPLIT_WEIGHTS, 64 * MIB, bounds);
}

/* Sized parts: 16 MiB on device 0, the rest (48 MiB) on device 1. */
static void split_sized_parts(void **unused)
{
    (void)unused;
    const size_t bounds[] = {0, 16 * MIB, 64 * MIB};
    split_over(2,
               SPLIT_WEIGHTS "[[policy.spread.split.part]]\ndevice = 0\nsize = \"16MiB\"\n"
                             "[[policy.spread.split.part]]\ndevice = 1\n",
               64 * MIB, bounds);
}

/* Parts of 16 + 16 MiB cannot cover 64 MiB (nor 24 MiB): the allocation fails, naming the policy. */
static void split_not_covering_is_invalid(void **unused)
{
    (void)unused;
    tidal_context *ctx = context(2, SPLIT_WEIGHTS "[[policy.spread.split.part]]\ndevice = 0\nsize = \"16MiB\"\n"
                                                  "[[policy.spread.split.part]]\ndevice = 1\nsize = \"16MiB\"\n");
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.tag = "weights";
    void *p = (void *)1;
    assert_int_equal(tidal_alloc(ctx, 64 * MIB, &d, &p), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_null(p);
    assert_non_null(strstr(tidal_last_error(), "policy 'spread'"));
    assert_non_null(strstr(tidal_last_error(), "do not cover"));
    assert_int_equal(tidal_alloc(ctx, 24 * MIB, &d, &p), TIDAL_ERROR_INVALID_ARGUMENT);
    /* Exactly covered: fine. */
    assert_int_equal(tidal_alloc(ctx, 32 * MIB, &d, &p), TIDAL_OK);
    assert_int_equal(range_of(ctx, (char *)p + 16 * MIB, 16 * MIB).preferred_location, 1);
    assert_int_equal(tidal_free(ctx, p), TIDAL_OK);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

/* A part naming a device the system lacks is a configuration error with its position. */
static void split_on_a_missing_device_is_a_config_error(void **unused)
{
    (void)unused;
    tidal_context *ctx = NULL;
    assert_int_equal(tidal_context_create_from_string("runtime = \"sim\"\npolicies = [\"spread\"]\n[sim]\ndevices = 2\n"
                                                      SPLIT_WEIGHTS "[[policy.spread.split.part]]\ndevice = 2\n",
                                                      &ctx),
                     TIDAL_ERROR_CONFIG);
    assert_non_null(strstr(tidal_last_error(), "no such device"));
    assert_int_equal(tidal_context_create_from_string("runtime = \"sim\"\npolicies = [\"spread\"]\n[policy.spread]\n"
                                                      "kinds = \"managed\"\n",
                                                      &ctx),
                     TIDAL_ERROR_CONFIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(auto_device_two),
        cmocka_unit_test(auto_device_four),
        cmocka_unit_test(budget_headroom_steers_managed_memory),
        cmocka_unit_test(affinity_off_ignores_the_hint),
        cmocka_unit_test(split_equal_two),
        cmocka_unit_test(split_equal_four),
        cmocka_unit_test(split_sized_parts),
        cmocka_unit_test(split_not_covering_is_invalid),
        cmocka_unit_test(split_on_a_missing_device_is_a_config_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
