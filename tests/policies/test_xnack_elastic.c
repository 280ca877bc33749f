/* The xnack policy with the core behind it: on a device whose managed pages do not migrate, a
 * TIDAL_KIND_AUTO device buffer goes to elastic memory while the device has a budget, and to
 * device memory while it has none. The core hands the policy the budget of the moment
 * (tidal_policy_system.device_budget) and whether elastic memory exists (features), and the
 * policy keeps such answers out of the placement cache, so tidal_budget_set takes effect at the
 * very next allocation of the same request. */
#define _POSIX_C_SOURCE 200809L /* unsetenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tidal/tidal.h"

#define MIB ((size_t)1 << 20)

static tidal_context *context(int xnack, const char *budget)
{
    char text[256];
    snprintf(text, sizeof text,
             "runtime = \"sim\"\npolicies = [\"xnack\"]\n[sim]\nxnack = %s\n[migration]\nbudget = \"%s\"\n",
             xnack ? "true" : "false", budget);
    tidal_context *ctx = NULL;
    if (tidal_context_create_from_string(text, &ctx) != TIDAL_OK)
        fail_msg("context: %s", tidal_last_error());
    return ctx;
}

/* Allocates an AUTO buffer of `size` bytes with `hints` on device 0 and answers the kind it got. */
static tidal_kind placed_sized(tidal_context *ctx, size_t size, uint32_t hints)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.device = 0;
    d.hints = hints;
    void *p = NULL;
    if (tidal_alloc(ctx, size, &d, &p) != TIDAL_OK)
        fail_msg("alloc: %s", tidal_last_error());
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_int_equal(tidal_pointer_query(ctx, p, &info), TIDAL_OK);
    assert_int_equal(tidal_free(ctx, p), TIDAL_OK);
    return info.kind;
}

static tidal_kind placed(tidal_context *ctx, uint32_t hints) { return placed_sized(ctx, 4 * MIB, hints); }

static void budget_from_the_configuration_means_elastic(void **unused)
{
    (void)unused;
    tidal_context *ctx = context(0, "1GiB");
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_ELASTIC);
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_ELASTIC); /* asked again, same answer */
    /* Host-heavy buffers stay managed: elastic memory is device memory the host cannot read. */
    assert_int_equal(placed(ctx, TIDAL_HINT_HOST_READ), TIDAL_KIND_MANAGED);
    /* Below [policy.xnack] elastic_min_size (2 MiB): device memory. */
    assert_int_equal(placed_sized(ctx, 64 * 1024, 0), TIDAL_KIND_DEVICE);
    /* No budget: device memory, at once, for the same request. */
    assert_int_equal(tidal_budget_set(ctx, 0, 0), TIDAL_OK);
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_DEVICE);
    assert_int_equal(tidal_budget_set(ctx, 0, 512 * MIB), TIDAL_OK);
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_ELASTIC);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

static void budget_set_later_means_elastic(void **unused)
{
    (void)unused;
    tidal_context *ctx = context(0, "0");
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_DEVICE);
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_DEVICE);
    assert_int_equal(tidal_budget_set(ctx, 0, 256 * MIB), TIDAL_OK);
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_ELASTIC);
    /* A bad device changes no budget. */
    assert_int_equal(tidal_budget_set(ctx, 7, 0), TIDAL_ERROR_NOT_FOUND);
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_ELASTIC);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

static void pages_that_migrate_stay_managed(void **unused)
{
    (void)unused;
    tidal_context *ctx = context(1, "1GiB");
    assert_int_equal(placed(ctx, 0), TIDAL_KIND_MANAGED);
    assert_int_equal(tidal_context_destroy(ctx), TIDAL_OK);
}

int main(void)
{
    /* Only this program's configuration counts, whatever the developer's environment says. */
    for (const char *const *v = (const char *const[]){"TIDAL_CONFIG", "TIDAL_RUNTIME", "TIDAL_SIM_XNACK",
                                                       "TIDAL_SIM_DEVICES", "TIDAL_SIM_CAPACITY", NULL};
         *v; ++v)
        unsetenv(*v);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(budget_from_the_configuration_means_elastic),
        cmocka_unit_test(budget_set_later_means_elastic),
        cmocka_unit_test(pages_that_migrate_stay_managed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
