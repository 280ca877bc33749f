/* Names and messages: versions, status names and strings, the per-thread last error, kind names. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void test_version_number_matches_header(void **state)
{
    (void)state;
    assert_int_equal(tidal_version_number(), TIDAL_VERSION_NUMBER);
    assert_int_equal(TIDAL_VERSION_NUMBER,
                     TIDAL_VERSION_MAJOR * 10000 + TIDAL_VERSION_MINOR * 100 + TIDAL_VERSION_PATCH);
}

static void test_version_string_matches_header(void **state)
{
    (void)state;
    assert_non_null(tidal_version_string());
    assert_string_equal(tidal_version_string(), TIDAL_VERSION_STRING);
}

static const char *const expected_status_names[] = {
    "TIDAL_OK",
    "TIDAL_ERROR_INVALID_ARGUMENT",
    "TIDAL_ERROR_OUT_OF_MEMORY",
    "TIDAL_ERROR_NOT_SUPPORTED",
    "TIDAL_ERROR_NO_DEVICE",
    "TIDAL_ERROR_UNKNOWN_POINTER",
    "TIDAL_ERROR_CONFIG",
    "TIDAL_ERROR_PLUGIN",
    "TIDAL_ERROR_RUNTIME",
    "TIDAL_ERROR_BUDGET_EXCEEDED",
    "TIDAL_ERROR_ILLEGAL_ACCESS",
    "TIDAL_ERROR_INTERNAL",
    "TIDAL_ERROR_NOT_FOUND",
    "TIDAL_ERROR_BUFFER_TOO_SMALL",
};
#define STATUS_COUNT ((int)(sizeof expected_status_names / sizeof expected_status_names[0]))

static void test_status_name_of_out_of_memory(void **state)
{
    (void)state;
    assert_string_equal(tidal_status_name(TIDAL_ERROR_OUT_OF_MEMORY), "TIDAL_ERROR_OUT_OF_MEMORY");
}

static void test_every_status_has_its_enumerator_name(void **state)
{
    (void)state;
    assert_int_equal(STATUS_COUNT, TIDAL_ERROR_BUFFER_TOO_SMALL + 1);
    for (int i = 0; i < STATUS_COUNT; ++i) {
        const char *name = tidal_status_name((tidal_status)i);
        assert_non_null(name);
        assert_string_equal(name, expected_status_names[i]);
    }
}

static void test_status_names_and_strings_are_distinct(void **state)
{
    (void)state;
    for (int i = 0; i < STATUS_COUNT; ++i) {
        const char *name_i = tidal_status_name((tidal_status)i);
        const char *string_i = tidal_status_string((tidal_status)i);
        assert_non_null(name_i);
        assert_non_null(string_i);
        assert_true(strlen(name_i) > 0);
        assert_true(strlen(string_i) > 0);
        for (int j = 0; j < i; ++j) {
            if (strcmp(name_i, tidal_status_name((tidal_status)j)) == 0)
                fail_msg("statuses %d and %d share the name \"%s\"", i, j, name_i);
            if (strcmp(string_i, tidal_status_string((tidal_status)j)) == 0)
                fail_msg("statuses %d and %d share the string \"%s\"", i, j, string_i);
        }
    }
}

static void test_unknown_status_has_a_name_and_string(void **state)
{
    (void)state;
    assert_string_equal(tidal_status_name((tidal_status)999), "TIDAL_STATUS_UNKNOWN");
    assert_string_equal(tidal_status_name((tidal_status)-1), "TIDAL_STATUS_UNKNOWN");
    assert_string_equal(tidal_status_name((tidal_status)(TIDAL_ERROR_BUFFER_TOO_SMALL + 1)),
                        "TIDAL_STATUS_UNKNOWN");
    const char *string = tidal_status_string((tidal_status)999);
    assert_non_null(string);
    assert_true(strlen(string) > 0);
}

/* --- tidal_last_error is per thread --------------------------------------------------- */

struct last_error_probe {
    int make_failure;
    char seen[512];
    int was_null;
};

static void *read_last_error(void *arg)
{
    struct last_error_probe *probe = arg;
    if (probe->make_failure) {
        void *ptr = NULL;
        (void)tidal_alloc(NULL, 16, NULL, &ptr);
    }
    const char *text = tidal_last_error();
    probe->was_null = text == NULL;
    if (text != NULL) {
        strncpy(probe->seen, text, sizeof probe->seen - 1);
        probe->seen[sizeof probe->seen - 1] = '\0';
    }
    return NULL;
}

static void run_probe(struct last_error_probe *probe)
{
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, read_last_error, probe), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
}

static void test_last_error_empty_on_a_fresh_thread(void **state)
{
    (void)state;
    /* Fail on this thread first, so a process-wide (not per-thread) message would show. */
    void *ptr = NULL;
    assert_status(tidal_alloc(NULL, 16, NULL, &ptr), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_true(strlen(tidal_last_error()) > 0);

    struct last_error_probe probe = {0, {0}, 0};
    run_probe(&probe);
    assert_false(probe.was_null);
    assert_string_equal(probe.seen, "");
}

static void test_last_error_describes_a_failure(void **state)
{
    (void)state;
    struct last_error_probe probe = {1, {0}, 0};
    run_probe(&probe);
    assert_false(probe.was_null);
    assert_true(strlen(probe.seen) > 0);
}

static void test_failure_on_another_thread_does_not_leak_here(void **state)
{
    (void)state;
    tidal_context *ctx = NULL;
    assert_status(tidal_context_create_from_string("runtme = \"sim\"\n", &ctx), TIDAL_ERROR_CONFIG);
    char mine[512];
    strncpy(mine, tidal_last_error(), sizeof mine - 1);
    mine[sizeof mine - 1] = '\0';
    assert_contains(mine, "did you mean 'runtime'");

    struct last_error_probe probe = {1, {0}, 0};
    run_probe(&probe);
    assert_string_equal(tidal_last_error(), mine);
}

/* --- absurd sizes and counts ------------------------------------------------------------ */

/* Sizes and counts no program means (SIZE_MAX is a negative number cast to size_t) are the
 * caller's mistake: every entry point that takes one answers with a status of the caller's
 * kind and a message, never TIDAL_ERROR_INTERNAL ("please report it"). */
static void expect_refused(tidal_status status, const char *call, size_t value)
{
    if (status == TIDAL_OK || status == TIDAL_ERROR_INTERNAL || harness_contains(tidal_last_error(), "please report", 1))
        fail_msg("%s with %zu: %s: %s", call, value, tidal_status_name(status), tidal_last_error());
}

static void test_absurd_sizes_and_counts_never_reach_internal(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(HARNESS_SIM_CONFIG);
    void *managed = harness_alloc(ctx, TIDAL_KIND_MANAGED, 4096, 0);
    void *device = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4096, 0);
    const size_t values[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 255, SIZE_MAX / 2, SIZE_MAX / 2 + 1, (size_t)1 << 62};
    static const tidal_kind kinds[] = {TIDAL_KIND_AUTO, TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED,
                                       TIDAL_KIND_PAGEABLE};
    for (size_t v = 0; v < sizeof values / sizeof values[0]; ++v) {
        const size_t n = values[v];
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
            tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
            desc.kind = kinds[k];
            void *p = NULL;
            expect_refused(tidal_alloc(ctx, n, &desc, &p), "tidal_alloc", n);
            expect_refused(tidal_alloc_async(ctx, n, &desc, NULL, &p), "tidal_alloc_async", n);
            desc.alignment = (size_t)1 << 30;
            expect_refused(tidal_alloc(ctx, n, &desc, &p), "tidal_alloc (aligned)", n);
        }
        expect_refused(tidal_prefetch(ctx, managed, n, 0), "tidal_prefetch", n);
        expect_refused(tidal_advise(ctx, managed, n, TIDAL_ADVICE_READ_MOSTLY, 0), "tidal_advise", n);
        tidal_range_info range = TIDAL_RANGE_INFO_INIT;
        expect_refused(tidal_range_query(ctx, managed, n, &range), "tidal_range_query", n);
        expect_refused(tidal_copy(ctx, device, managed, n), "tidal_copy", n);
        expect_refused(tidal_copy_async(ctx, managed, device, n, NULL), "tidal_copy_async", n);

        tidal_access access = TIDAL_ACCESS_INIT;
        access.ptr = managed;
        access.size = 4096;
        access.device = 0;
        access.mode = TIDAL_ACCESS_READ;
        expect_refused(tidal_declare(ctx, NULL, &access, n, 0), "tidal_declare (count)", n);
        access.size = n;
        expect_refused(tidal_declare(ctx, NULL, &access, 1, 0), "tidal_declare (size)", n);

        tidal_copy_item item = TIDAL_COPY_ITEM_INIT;
        item.dst = device;
        item.src = managed;
        item.size = 4096;
        expect_refused(tidal_copy_batch(ctx, &item, n, NULL), "tidal_copy_batch (count)", n);
        item.size = n;
        expect_refused(tidal_copy_batch(ctx, &item, 1, NULL), "tidal_copy_batch (size)", n);

        tidal_check check = TIDAL_CHECK_INIT;
        check.kind = TIDAL_CHECK_COPY;
        check.target = device;
        check.source = managed;
        check.size = n & ~(size_t)7;
        expect_refused(tidal_check_run(ctx, &check), "tidal_check_run", n);
    }
    assert_ok(tidal_free(ctx, device));
    assert_ok(tidal_free(ctx, managed));
    assert_ok(tidal_context_destroy(ctx));
}

/* --- kind names ------------------------------------------------------------------------ */

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(tidal_kind_name(TIDAL_KIND_AUTO), "auto");
    assert_string_equal(tidal_kind_name(TIDAL_KIND_DEVICE), "device");
    assert_string_equal(tidal_kind_name(TIDAL_KIND_MANAGED), "managed");
    assert_string_equal(tidal_kind_name(TIDAL_KIND_PINNED), "pinned");
    assert_string_equal(tidal_kind_name(TIDAL_KIND_PAGEABLE), "pageable");
    assert_string_equal(tidal_kind_name(TIDAL_KIND_DEVICE_FINE), "device-fine");
    assert_string_equal(tidal_kind_name(TIDAL_KIND_MANAGED_COARSE), "managed-coarse");
    assert_string_equal(tidal_kind_name(TIDAL_KIND_ELASTIC), "elastic");
}

static void test_kind_name_of_bad_kind_is_unknown(void **state)
{
    (void)state;
    assert_string_equal(tidal_kind_name((tidal_kind)TIDAL_KIND_COUNT), "unknown");
    assert_string_equal(tidal_kind_name((tidal_kind)99), "unknown");
    assert_string_equal(tidal_kind_name((tidal_kind)-1), "unknown");
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_number_matches_header),
        cmocka_unit_test(test_version_string_matches_header),
        cmocka_unit_test(test_status_name_of_out_of_memory),
        cmocka_unit_test(test_every_status_has_its_enumerator_name),
        cmocka_unit_test(test_status_names_and_strings_are_distinct),
        cmocka_unit_test(test_unknown_status_has_a_name_and_string),
        cmocka_unit_test(test_last_error_empty_on_a_fresh_thread),
        cmocka_unit_test(test_last_error_describes_a_failure),
        cmocka_unit_test(test_failure_on_another_thread_does_not_leak_here),
        cmocka_unit_test(test_absurd_sizes_and_counts_never_reach_internal),
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_kind_name_of_bad_kind_is_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
