/* The built-in mi250x profile (documented MI250X figures, not measured) runs AMD's rules on the
 * simulated device: XNACK off by default (managed pages do not migrate, the arch says xnack-),
 * fine- and coarse-grained kinds exist, coarse-grain advice is accepted, and the xnack policy
 * places a GPU buffer in device memory (managed memory only for a host-heavy one), as it does on
 * a real AMD device with XNACK off, and in managed memory once XNACK is switched on. The profile's sizes come through to the device
 * info (64 GiB per GCD, 2 MiB pages, 8 MiB L2) and it reports no host-native atomics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tidal/tidal.h"

#define MIB ((size_t)1 << 20)

static tidal_context *context(const char *extra)
{
    char text[256];
    snprintf(text, sizeof text, "runtime = \"sim\"\npolicies = [\"xnack\"]\n[sim]\nprofile = \"mi250x\"\n%s", extra);
    tidal_context *ctx = NULL;
    if (tidal_context_create_from_string(text, &ctx) != TIDAL_OK)
        fail_msg("context: %s", tidal_last_error());
    return ctx;
}

static tidal_kind placed(tidal_context *ctx, uint32_t hints)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.device = 0;
    d.hints = hints;
    void *p = NULL;
    if (tidal_alloc(ctx, 4 * MIB, &d, &p) != TIDAL_OK)
        fail_msg("alloc: %s", tidal_last_error());
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_int_equal(tidal_pointer_query(ctx, p, &info), TIDAL_OK);
    assert_int_equal(tidal_free(ctx, p), TIDAL_OK);
    return info.kind;
}

/* Device 0 of a context made with `extra` in [sim]; the context is gone again. */
static tidal_device_info device_of(const char *extra)
{
    tidal_context *ctx = context(extra);
    tidal_device_info d = TIDAL_DEVICE_INFO_INIT;
    assert_int_equal(tidal_device_info_get(ctx, 0, &d), TIDAL_OK);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
    return d;
}

static void device_is_an_amd_gcd_with_xnack_off(void **unused)
{
    (void)unused;
    const tidal_device_info d = device_of("");
    assert_int_equal(d.xnack, TIDAL_XNACK_OFF);
    assert_non_null(strstr(d.arch, "gfx90a"));
    assert_non_null(strstr(d.arch, ":xnack-"));
    assert_true(d.flags & TIDAL_DEVICE_FLAG_FINE_GRAINED);
    assert_false(d.flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT);
    assert_false(d.flags & TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS);
    assert_false(d.flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS);
    assert_int_equal(d.total_memory, (uint64_t)64 << 30);
    assert_int_equal(d.page_size, 2 * MIB);
    assert_int_equal(d.l2_size, 8 * MIB);
}

static void xnack_on_only_when_asked(void **unused)
{
    (void)unused;
    const tidal_device_info d = device_of("xnack = true\n");
    assert_int_equal(d.xnack, TIDAL_XNACK_ON);
    assert_non_null(strstr(d.arch, ":xnack+"));
    assert_true(d.flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT);
}

static void xnack_policy_places_by_amds_rules(void **unused)
{
    (void)unused;
    tidal_context *ctx = context("");
    /* XNACK off: managed memory would be read over the link, so a GPU buffer is device memory. */
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_DEVICE);
    assert_int_equal(placed(ctx, TIDAL_HINT_STREAMING), TIDAL_KIND_DEVICE);
    /* Host-heavy buffers are the one use of managed memory with XNACK off. */
    assert_int_equal(placed(ctx, TIDAL_HINT_HOST_READ), TIDAL_KIND_MANAGED);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
    /* The same request with XNACK on (HSA_XNACK=1): managed memory that migrates. */
    ctx = context("xnack = true\n");
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_MANAGED);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

static void fine_and_coarse_kinds_and_advice(void **unused)
{
    (void)unused;
    tidal_context *ctx = context("");
    const tidal_kind kinds[] = {TIDAL_KIND_DEVICE_FINE, TIDAL_KIND_MANAGED_COARSE, TIDAL_KIND_MANAGED};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = kinds[i];
        d.device = 0;
        void *p = NULL;
        if (tidal_alloc(ctx, 4 * MIB, &d, &p) != TIDAL_OK)
            fail_msg("alloc of %s: %s", tidal_kind_name(kinds[i]), tidal_last_error());
        if (kinds[i] == TIDAL_KIND_MANAGED) /* coarse-grain advice: AMD only, accepted here */
            assert_int_equal(tidal_advise(ctx, p, 4 * MIB, TIDAL_ADVICE_COARSE_GRAIN, 0), TIDAL_OK);
        assert_int_equal(tidal_free(ctx, p), TIDAL_OK);
    }
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_is_an_amd_gcd_with_xnack_off),
        cmocka_unit_test(xnack_on_only_when_asked),
        cmocka_unit_test(xnack_policy_places_by_amds_rules),
        cmocka_unit_test(fine_and_coarse_kinds_and_advice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
