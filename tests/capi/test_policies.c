/* The policy chain seen through the C ABI: the built-in rules policy, and the test plugins of
 * tests/plugins (found through policy_path = [TIDAL_TEST_PLUGIN_DIR]). */
#define _XOPEN_SOURCE 700 /* realpath */

#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* "runtime = sim" + policy_path naming the test plugins, then `rest` (which starts with the
 * `policies = [...]` line, since top-level keys must precede the tables). */
static char *plugin_config(const char *rest)
{
    char *dir = harness_toml_string(harness_required_env("TIDAL_TEST_PLUGIN_DIR"));
    char *toml = harness_format("runtime = \"sim\"\npolicy_path = [%s]\n%s", dir, rest);
    free(dir);
    return toml;
}

static tidal_context *plugin_context(const char *rest)
{
    char *toml = plugin_config(rest);
    tidal_context *ctx = harness_context(toml);
    free(toml);
    return ctx;
}

/* harness_context_fails for plugin_config(rest); leaks `toml` when it fails: the test is over. */
static char *plugin_context_fails(const char *rest, tidal_status expected)
{
    char *toml = plugin_config(rest);
    char *message = harness_context_fails(toml, expected);
    free(toml);
    return message;
}

struct placed {
    void *ptr;
    tidal_pointer_info info;
};

static struct placed alloc_and_query(tidal_context *ctx, size_t size, tidal_kind kind,
                                     const char *tag, uint32_t hints)
{
    struct placed result;
    tidal_pointer_info init = TIDAL_POINTER_INFO_INIT;
    result.info = init;
    /* Not zero beforehand: the checks of placed_by's padding see what the query wrote. */
    memset(result.info.placed_by, 0x5a, sizeof result.info.placed_by);
    result.ptr = NULL;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    desc.tag = tag;
    desc.hints = hints;
    assert_ok(tidal_alloc(ctx, size, &desc, &result.ptr));
    assert_non_null(result.ptr);
    assert_ok(tidal_pointer_query(ctx, result.ptr, &result.info));
    return result;
}

/* placed_by is NUL-padded to its end (tidal copies it whole from a padded copy of the name). */
static void assert_placed_by(const tidal_pointer_info *info, const char *name)
{
    assert_string_equal(info->placed_by, name);
    for (size_t i = strlen(name); i < sizeof info->placed_by; ++i)
        assert_int_equal(info->placed_by[i], 0);
}

/* ======================================================================================
 * The built-in rules policy (found without policy_path)
 * ==================================================================================== */

#define WEIGHTS_RULES                                                                          \
    "runtime = \"sim\"\n"                                                                      \
    "policies = [\"rules\"]\n"                                                                 \
    "[[policy.rules.rule]]\n"                                                                  \
    "tag = \"weights*\"\n"                                                                     \
    "min_size = \"1MiB\"\n"                                                                    \
    "hints = [\"read-mostly\"]\n"                                                              \
    "kind = \"managed\"\n"                                                                     \
    "advice = [\"read-mostly\", \"preferred-device\"]\n"

static void test_rules_matching_rule_places(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(WEIGHTS_RULES);
    struct placed p = alloc_and_query(ctx, 2 * MiB, TIDAL_KIND_AUTO, "weights.0",
                                      TIDAL_HINT_READ_MOSTLY);
    assert_int_equal(p.info.kind, TIDAL_KIND_MANAGED);
    assert_placed_by(&p.info, "rules");
    assert_int_equal(p.info.advice & (TIDAL_ADVICE_READ_MOSTLY | TIDAL_ADVICE_PREFERRED_DEVICE),
                     TIDAL_ADVICE_READ_MOSTLY | TIDAL_ADVICE_PREFERRED_DEVICE);
    assert_string_equal(p.info.tag, "weights.0");
    assert_int_equal(p.info.hints, TIDAL_HINT_READ_MOSTLY);
    /* Managed memory in the sim is host memory: usable from here. */
    harness_fill(p.ptr, 2 * MiB, 5);
    assert_true(harness_holds(p.ptr, 2 * MiB, 5));
    assert_ok(tidal_free(ctx, p.ptr));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_rules_conditions_that_fail_defer_to_core(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(WEIGHTS_RULES);

    /* Too small for min_size. */
    struct placed small = alloc_and_query(ctx, 4 * KiB, TIDAL_KIND_AUTO, "weights.1",
                                          TIDAL_HINT_READ_MOSTLY);
    assert_placed_by(&small.info, "core");
    assert_int_not_equal(small.info.kind, TIDAL_KIND_AUTO);
    assert_ok(tidal_free(ctx, small.ptr));

    /* Tag does not match the glob. */
    struct placed other = alloc_and_query(ctx, 2 * MiB, TIDAL_KIND_AUTO, "bias.0",
                                          TIDAL_HINT_READ_MOSTLY);
    assert_string_equal(other.info.placed_by, "core");
    assert_ok(tidal_free(ctx, other.ptr));

    /* A required hint is missing. */
    struct placed unhinted = alloc_and_query(ctx, 2 * MiB, TIDAL_KIND_AUTO, "weights.2", 0);
    assert_string_equal(unhinted.info.placed_by, "core");
    assert_ok(tidal_free(ctx, unhinted.ptr));

    /* Untagged: a tag glob cannot match "". */
    struct placed untagged = alloc_and_query(ctx, 2 * MiB, TIDAL_KIND_AUTO, NULL,
                                             TIDAL_HINT_READ_MOSTLY);
    assert_string_equal(untagged.info.placed_by, "core");
    assert_ok(tidal_free(ctx, untagged.ptr));

    /* Extra hints beyond the required ones still match. */
    struct placed extra = alloc_and_query(ctx, 2 * MiB, TIDAL_KIND_AUTO, "weights.3",
                                          TIDAL_HINT_READ_MOSTLY | TIDAL_HINT_HOST_WRITE);
    assert_string_equal(extra.info.placed_by, "rules");
    assert_int_equal(extra.info.kind, TIDAL_KIND_MANAGED);
    assert_ok(tidal_free(ctx, extra.ptr));

    assert_ok(tidal_context_destroy(ctx));
}

static void test_rules_max_size_and_first_match_wins(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n"
                                         "policies = [\"rules\"]\n"
                                         "[[policy.rules.rule]]\n"
                                         "tag = \"staging*\"\n"
                                         "max_size = \"64KiB\"\n"
                                         "kind = \"pinned\"\n"
                                         "[[policy.rules.rule]]\n"
                                         "tag = \"staging*\"\n"
                                         "kind = \"pageable\"\n");
    struct placed small = alloc_and_query(ctx, 4 * KiB, TIDAL_KIND_AUTO, "staging.a", 0);
    assert_int_equal(small.info.kind, TIDAL_KIND_PINNED);
    assert_string_equal(small.info.placed_by, "rules");
    assert_ok(tidal_free(ctx, small.ptr));

    struct placed large = alloc_and_query(ctx, 1 * MiB, TIDAL_KIND_AUTO, "staging.b", 0);
    assert_int_equal(large.info.kind, TIDAL_KIND_PAGEABLE);
    assert_string_equal(large.info.placed_by, "rules");
    assert_ok(tidal_free(ctx, large.ptr));

    struct placed none = alloc_and_query(ctx, 4 * KiB, TIDAL_KIND_AUTO, "other", 0);
    assert_string_equal(none.info.placed_by, "core");
    assert_ok(tidal_free(ctx, none.ptr));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_rules_device_choice(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n"
                                         "policies = [\"rules\"]\n"
                                         "[sim]\n"
                                         "devices = 2\n"
                                         "[[policy.rules.rule]]\n"
                                         "tag = \"second\"\n"
                                         "kind = \"device\"\n"
                                         "device = 1\n");
    struct placed p = alloc_and_query(ctx, 64 * KiB, TIDAL_KIND_AUTO, "second", 0);
    assert_int_equal(p.info.kind, TIDAL_KIND_DEVICE);
    assert_int_equal(p.info.device, 1);
    assert_placed_by(&p.info, "rules");
    assert_ok(tidal_free(ctx, p.ptr));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_rules_fallback_on_out_of_memory(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n"
                                         "policies = [\"rules\"]\n"
                                         "[sim]\n"
                                         "capacity = \"4MiB\"\n"
                                         "[policy.rules]\n"
                                         "fallback = \"pinned\"\n"
                                         "[[policy.rules.rule]]\n"
                                         "kind = \"device\"\n");
    /* Fits: placed on the device as the rule says. */
    struct placed fits = alloc_and_query(ctx, 1 * MiB, TIDAL_KIND_AUTO, "a", 0);
    assert_int_equal(fits.info.kind, TIDAL_KIND_DEVICE);
    assert_string_equal(fits.info.placed_by, "rules");
    assert_ok(tidal_free(ctx, fits.ptr));

    /* Does not fit: retried as the fallback kind. */
    struct placed big = alloc_and_query(ctx, 8 * MiB, TIDAL_KIND_AUTO, "b", 0);
    assert_int_equal(big.info.kind, TIDAL_KIND_PINNED);
    assert_string_equal(big.info.placed_by, "rules");
    harness_fill(big.ptr, 8 * MiB, 9);
    assert_true(harness_holds(big.ptr, 8 * MiB, 9));
    assert_ok(tidal_free(ctx, big.ptr));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_rules_without_fallback_reports_out_of_memory(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n"
                                         "policies = [\"rules\"]\n"
                                         "[sim]\n"
                                         "capacity = \"4MiB\"\n"
                                         "[[policy.rules.rule]]\n"
                                         "kind = \"device\"\n");
    void *ptr = (void *)(uintptr_t)0x10;
    assert_status(tidal_alloc(ctx, 8 * MiB, NULL, &ptr), TIDAL_ERROR_OUT_OF_MEMORY);
    assert_null(ptr);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_rules_unknown_key_in_rule(void **state)
{
    (void)state;
    char *message = harness_context_fails("runtime = \"sim\"\n"
                                          "policies = [\"rules\"]\n"
                                          "[[policy.rules.rule]]\n"
                                          "tag = \"x*\"\n"
                                          "kindd = \"device\"\n",
                                          TIDAL_ERROR_CONFIG);
    assert_contains(message, "kind");
    free(message);
}

static void test_rules_unknown_key_in_table(void **state)
{
    (void)state;
    /* `fallbak` is on line 4. */
    char *message = harness_context_fails("runtime = \"sim\"\n"
                                          "policies = [\"rules\"]\n"
                                          "[policy.rules]\n"
                                          "fallbak = \"pinned\"\n"
                                          "[[policy.rules.rule]]\n"
                                          "kind = \"device\"\n",
                                          TIDAL_ERROR_CONFIG);
    assert_contains(message, "did you mean 'fallback'");
    if (!harness_contains_number(message, 4))
        fail_msg("the message does not name line 4: \"%s\"", message);
    free(message);
}

static void test_rules_bad_kind_value(void **state)
{
    (void)state;
    char *message = harness_context_fails("runtime = \"sim\"\n"
                                          "policies = [\"rules\"]\n"
                                          "[[policy.rules.rule]]\n"
                                          "kind = \"sideways\"\n",
                                          TIDAL_ERROR_CONFIG);
    assert_contains(message, "kind");
    free(message);
}

static void test_rules_defer_to_next_policy(void **state)
{
    (void)state;
    tidal_context *ctx = plugin_context("policies = [\"rules\", \"fixed\"]\n"
                                        "[policy.fixed]\n"
                                        "kind = \"pageable\"\n"
                                        "[[policy.rules.rule]]\n"
                                        "tag = \"ruled\"\n"
                                        "kind = \"pinned\"\n");
    struct placed ruled = alloc_and_query(ctx, 4 * KiB, TIDAL_KIND_AUTO, "ruled", 0);
    assert_string_equal(ruled.info.placed_by, "rules");
    assert_int_equal(ruled.info.kind, TIDAL_KIND_PINNED);
    assert_ok(tidal_free(ctx, ruled.ptr));

    struct placed rest = alloc_and_query(ctx, 4 * KiB, TIDAL_KIND_AUTO, "anything else", 0);
    assert_string_equal(rest.info.placed_by, "fixed");
    assert_int_equal(rest.info.kind, TIDAL_KIND_PAGEABLE);
    assert_ok(tidal_free(ctx, rest.ptr));
    assert_ok(tidal_context_destroy(ctx));
}

/* ======================================================================================
 * Test plugins: loading failures
 * ==================================================================================== */

static void test_plugin_missing_entry_symbol(void **state)
{
    (void)state;
    char *message = plugin_context_fails("policies = [\"missing-symbol\"]\n", TIDAL_ERROR_PLUGIN);
    assert_contains(message, "tidal-policy-missing-symbol");
    assert_contains(message, "tidal_policy_negotiate");
    free(message);
}

static void test_plugin_future_abi(void **state)
{
    (void)state;
    char *message = plugin_context_fails("policies = [\"future-abi\"]\n", TIDAL_ERROR_PLUGIN);
    assert_contains(message, "ABI");
    assert_contains(message, "future-abi");
    free(message);
}

static void test_plugin_without_decision_hooks(void **state)
{
    (void)state;
    char *message = plugin_context_fails("policies = [\"no-hooks\"]\n", TIDAL_ERROR_PLUGIN);
    assert_contains(message, "no-hooks");
    free(message);
}

static void test_plugin_not_found(void **state)
{
    (void)state;
    char *message = plugin_context_fails("policies = [\"does-not-exist\"]\n", TIDAL_ERROR_CONFIG);
    assert_contains(message, "does-not-exist");
    /* The folders searched are named; accept the folder as given or with links resolved. */
    const char *dir = harness_required_env("TIDAL_TEST_PLUGIN_DIR");
    char *resolved = realpath(dir, NULL);
    if (!harness_contains(message, dir, 0) &&
        (resolved == NULL || !harness_contains(message, resolved, 0)))
        fail_msg("the message does not name the searched folder %s: \"%s\"", dir, message);
    free(resolved);
    free(message);
}

static void test_plugin_unknown_option_key(void **state)
{
    (void)state;
    char *message = plugin_context_fails("policies = [\"fixed\"]\n"
                                         "[policy.fixed]\n"
                                         "kidn = \"device\"\n",
                                         TIDAL_ERROR_CONFIG);
    assert_contains(message, "did you mean");
    assert_contains(message, "kind");
    free(message);
}

static void test_plugin_reports_bad_option_value(void **state)
{
    (void)state;
    char *message = plugin_context_fails("policies = [\"fixed\"]\n"
                                         "[policy.fixed]\n"
                                         "kind = \"sideways\"\n",
                                         TIDAL_ERROR_CONFIG);
    assert_contains(message, "sideways");
    free(message);
}

static void test_plugin_reports_missing_option(void **state)
{
    (void)state;
    char *message = plugin_context_fails("policies = [\"fixed\"]\n", TIDAL_ERROR_CONFIG);
    assert_contains(message, "kind");
    free(message);
}

/* ======================================================================================
 * Test plugins: decisions
 * ==================================================================================== */

static void expect_alloc_plugin_error(tidal_context *ctx, const char *fragment)
{
    void *ptr = (void *)(uintptr_t)0x10;
    assert_status(tidal_alloc(ctx, 4096, NULL, &ptr), TIDAL_ERROR_PLUGIN);
    assert_null(ptr);
    assert_last_error_contains(fragment);
}

static void test_plugin_decides_bad_kind(void **state)
{
    (void)state;
    tidal_context *ctx = plugin_context("policies = [\"bad-kind\"]\n");
    expect_alloc_plugin_error(ctx, "bad-kind");
    /* The context stays usable; the error was the decision's, not the context's. */
    expect_alloc_plugin_error(ctx, "bad-kind");
    assert_ok(tidal_context_destroy(ctx));
}

static void test_plugin_decides_bad_device(void **state)
{
    (void)state;
    tidal_context *ctx = plugin_context("policies = [\"bad-device\"]\n");
    expect_alloc_plugin_error(ctx, "bad-device");
    assert_ok(tidal_context_destroy(ctx));
}

static void test_plugin_refuses(void **state)
{
    (void)state;
    tidal_context *ctx = plugin_context("policies = [\"refuse\"]\n");
    expect_alloc_plugin_error(ctx, "no thanks");
    assert_ok(tidal_context_destroy(ctx));
}

static void test_plugin_chain_defer_then_fixed(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        tidal_kind kind;
    } cases[] = {
        {"managed", TIDAL_KIND_MANAGED},
        {"pinned", TIDAL_KIND_PINNED},
        {"pageable", TIDAL_KIND_PAGEABLE},
        {"device", TIDAL_KIND_DEVICE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *rest = harness_format("policies = [\"defer-all\", \"fixed\"]\n"
                                    "[policy.fixed]\n"
                                    "kind = \"%s\"\n",
                                    cases[i].name);
        tidal_context *ctx = plugin_context(rest);
        struct placed p = alloc_and_query(ctx, 64 * KiB, TIDAL_KIND_AUTO, "x", 0);
        assert_string_equal(p.info.placed_by, "fixed");
        assert_int_equal(p.info.kind, cases[i].kind);
        harness_fill(p.ptr, 64 * KiB, 1);
        assert_true(harness_holds(p.ptr, 64 * KiB, 1));
        assert_ok(tidal_free(ctx, p.ptr));
        assert_ok(tidal_context_destroy(ctx));
        free(rest);
    }
}

static void test_plugin_chain_defer_alone_ends_in_core(void **state)
{
    (void)state;
    tidal_context *ctx = plugin_context("policies = [\"defer-all\"]\n");
    struct placed p = alloc_and_query(ctx, 64 * KiB, TIDAL_KIND_DEVICE, "x", 0);
    assert_string_equal(p.info.placed_by, "core");
    assert_int_equal(p.info.kind, TIDAL_KIND_DEVICE);
    assert_ok(tidal_free(ctx, p.ptr));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_plugin_recovers_from_out_of_memory(void **state)
{
    (void)state;
    tidal_context *ctx = plugin_context("policies = [\"oom-retry\"]\n"
                                        "[sim]\n"
                                        "capacity = \"1MiB\"\n");
    struct placed p = alloc_and_query(ctx, 2 * MiB, TIDAL_KIND_DEVICE, "too big", 0);
    assert_int_equal(p.info.kind, TIDAL_KIND_PINNED);
    assert_int_equal(p.info.device, TIDAL_DEVICE_HOST);
    assert_int_equal(p.info.size, 2 * MiB);
    harness_fill(p.ptr, 2 * MiB, 4);
    assert_true(harness_holds(p.ptr, 2 * MiB, 4));
    assert_ok(tidal_free(ctx, p.ptr));

    /* What fits is not touched by the recovery hook. */
    struct placed small = alloc_and_query(ctx, 64 * KiB, TIDAL_KIND_DEVICE, "fits", 0);
    assert_int_equal(small.info.kind, TIDAL_KIND_DEVICE);
    assert_ok(tidal_free(ctx, small.ptr));
    assert_ok(tidal_context_destroy(ctx));
}

/* A unit carries its allocation's tag to eviction (read when the unit is first made, not kept
 * in each declared range): evict-tagged evicts the unit tagged "victim" first, where the core
 * would evict the oldest ("keep"). Once more after the tagged allocation's block was reused. */
static void test_evict_hook_sees_the_tags_of_declared_units(void **state)
{
    (void)state;
    tidal_context *ctx = plugin_context("policies = [\"evict-tagged\"]\n[migration]\nchunk_size = \"2MiB\"\n");
    assert_ok(tidal_budget_set(ctx, 0, 4 * MiB));
    for (int round = 0; round < 2; ++round) {
        struct placed keep = alloc_and_query(ctx, 2 * MiB, TIDAL_KIND_MANAGED, "keep", 0);
        struct placed victim = alloc_and_query(ctx, 2 * MiB, TIDAL_KIND_MANAGED, "victim.1", 0);
        struct placed next = alloc_and_query(ctx, 2 * MiB, TIDAL_KIND_MANAGED, "next", 0);
        void *in_order[] = {keep.ptr, victim.ptr};
        for (int i = 0; i < 2; ++i) {
            assert_ok(harness_declare(ctx, NULL, in_order[i], 2 * MiB, TIDAL_ACCESS_READ, 0));
            /* Ends the phase: nothing stays protected once the stream has run. */
            assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
            assert_ok(tidal_stream_synchronize(ctx, NULL));
            assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
        }
        assert_ok(harness_declare(ctx, NULL, next.ptr, 2 * MiB, TIDAL_ACCESS_READ, 0));
        assert_int_equal(harness_prefetch_location(ctx, keep.ptr, 2 * MiB), 0);
        assert_int_equal(harness_prefetch_location(ctx, next.ptr, 2 * MiB), 0);
        assert_int_not_equal(harness_prefetch_location(ctx, victim.ptr, 2 * MiB), 0);
        assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
        assert_ok(tidal_stream_synchronize(ctx, NULL));
        assert_ok(tidal_declare(ctx, NULL, NULL, 0, 0));
        /* Freed in the reverse order: the next round's blocks come back with other tags. */
        assert_ok(tidal_free(ctx, next.ptr));
        assert_ok(tidal_free(ctx, victim.ptr));
        assert_ok(tidal_free(ctx, keep.ptr));
    }
    assert_ok(tidal_context_destroy(ctx));
}

static void test_describe_lists_the_policy_chain(void **state)
{
    (void)state;
    tidal_context *ctx = plugin_context("policies = [\"defer-all\", \"fixed\"]\n"
                                        "[policy.fixed]\n"
                                        "kind = \"pinned\"\n");
    char text[65536];
    assert_ok(tidal_config_describe(ctx, text, sizeof text, NULL));
    assert_contains(text, "defer-all");
    assert_contains(text, "fixed");
    assert_ok(tidal_context_destroy(ctx));
}

/* ------------------------------------------------------------------------------------------
 * Cacheable decisions: reused for identical requests only when every policy asked says so
 * ---------------------------------------------------------------------------------------- */
static tidal_kind kind_of_new(tidal_context *ctx, size_t size)
{
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, size, NULL, &p));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, p, &info));
    assert_ok(tidal_free(ctx, p));
    return info.kind;
}

static void test_cacheable_decisions_are_reused_for_identical_requests(void **state)
{
    (void)state;
    char *dir = harness_toml_string(harness_required_env("TIDAL_TEST_PLUGIN_DIR"));
    /* Not cacheable: the plugin is asked every time (its answers alternate). */
    tidal_context *ctx = harness_context_format("runtime = \"sim\"\npolicy_path = [%s]\npolicies = [\"alternating\"]\n"
                                                "[policy.alternating]\ncacheable = false\n", dir);
    assert_int_equal(kind_of_new(ctx, 4096), TIDAL_KIND_DEVICE);
    assert_int_equal(kind_of_new(ctx, 4096), TIDAL_KIND_PINNED);
    assert_int_equal(kind_of_new(ctx, 4096), TIDAL_KIND_DEVICE);
    assert_ok(tidal_context_destroy(ctx));
    /* Cacheable: the same request gets the first answer again; another size asks anew. */
    ctx = harness_context_format("runtime = \"sim\"\npolicy_path = [%s]\npolicies = [\"alternating\"]\n"
                                 "[policy.alternating]\ncacheable = true\n", dir);
    assert_int_equal(kind_of_new(ctx, 4096), TIDAL_KIND_DEVICE);
    assert_int_equal(kind_of_new(ctx, 4096), TIDAL_KIND_DEVICE);
    assert_int_equal(kind_of_new(ctx, 8192), TIDAL_KIND_PINNED);
    assert_int_equal(kind_of_new(ctx, 4096), TIDAL_KIND_DEVICE);
    assert_int_equal(kind_of_new(ctx, 8192), TIDAL_KIND_PINNED);
    assert_ok(tidal_context_destroy(ctx));
    /* A policy before it that deferred without saying it would defer again: nothing cached. */
    ctx = harness_context_format("runtime = \"sim\"\npolicy_path = [%s]\npolicies = [\"defer-all\", \"alternating\"]\n"
                                 "[policy.alternating]\ncacheable = true\n", dir);
    assert_int_equal(kind_of_new(ctx, 4096), TIDAL_KIND_DEVICE);
    assert_int_equal(kind_of_new(ctx, 4096), TIDAL_KIND_PINNED);
    assert_ok(tidal_context_destroy(ctx));
    free(dir);
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cacheable_decisions_are_reused_for_identical_requests),
        cmocka_unit_test(test_rules_matching_rule_places),
        cmocka_unit_test(test_rules_conditions_that_fail_defer_to_core),
        cmocka_unit_test(test_rules_max_size_and_first_match_wins),
        cmocka_unit_test(test_rules_device_choice),
        cmocka_unit_test(test_rules_fallback_on_out_of_memory),
        cmocka_unit_test(test_rules_without_fallback_reports_out_of_memory),
        cmocka_unit_test(test_rules_unknown_key_in_rule),
        cmocka_unit_test(test_rules_unknown_key_in_table),
        cmocka_unit_test(test_rules_bad_kind_value),
        cmocka_unit_test(test_rules_defer_to_next_policy),
        cmocka_unit_test(test_plugin_missing_entry_symbol),
        cmocka_unit_test(test_plugin_future_abi),
        cmocka_unit_test(test_plugin_without_decision_hooks),
        cmocka_unit_test(test_plugin_not_found),
        cmocka_unit_test(test_plugin_unknown_option_key),
        cmocka_unit_test(test_plugin_reports_bad_option_value),
        cmocka_unit_test(test_plugin_reports_missing_option),
        cmocka_unit_test(test_plugin_decides_bad_kind),
        cmocka_unit_test(test_plugin_decides_bad_device),
        cmocka_unit_test(test_plugin_refuses),
        cmocka_unit_test(test_plugin_chain_defer_then_fixed),
        cmocka_unit_test(test_plugin_chain_defer_alone_ends_in_core),
        cmocka_unit_test(test_plugin_recovers_from_out_of_memory),
        cmocka_unit_test(test_evict_hook_sees_the_tags_of_declared_units),
        cmocka_unit_test(test_describe_lists_the_policy_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
