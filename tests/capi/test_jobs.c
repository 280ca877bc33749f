/* tidal in parallel jobs: one device per process by its node-local rank, and %r / %p in the
 * names of the files tidal writes. Ranks come from the launcher's environment only. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const kRankVariables[] = {
    "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK",
    "OMPI_COMM_WORLD_RANK",       "PMI_RANK",        "SLURM_PROCID",  "RANK",
};

/* Every test starts outside any job, whatever launched the test runner. */
static int outside_a_job(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof kRankVariables / sizeof kRankVariables[0]; ++i)
        unsetenv(kRankVariables[i]);
    unsetenv("TIDAL_DEVICE_SELECTION");
    return 0;
}

static int32_t device_of(tidal_context *ctx, const void *ptr)
{
    tidal_pointer_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    assert_ok(tidal_pointer_query(ctx, ptr, &info));
    return info.device;
}

static void test_local_rank_picks_the_device_round_robin(void **state)
{
    (void)state;
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
    setenv("OMPI_COMM_WORLD_RANK", "7", 1);
    tidal_context *ctx =
        harness_context("runtime = \"sim\"\ndevice_selection = \"local-rank\"\n[sim]\ndevices = 2\n");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &sys));
    assert_int_equal(sys.local_rank, 3);
    assert_int_equal(sys.rank, 7);
    assert_int_equal(sys.default_device, 1); /* 3 mod 2 */

    /* TIDAL_DEVICE_DEFAULT is that device for device, managed and elastic-free kinds alike. */
    const tidal_kind kinds[] = {TIDAL_KIND_AUTO, TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        void *p = harness_alloc(ctx, kinds[i], 4096, 0);
        assert_int_equal(device_of(ctx, p), 1);
        assert_ok(tidal_free(ctx, p));
    }
    /* A device named by the caller is still the caller's. */
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = 0;
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, 4096, &desc, &p));
    assert_int_equal(device_of(ctx, p), 0);
    assert_ok(tidal_free(ctx, p));
    tidal_context_destroy(ctx);
}

static void test_first_selection_leaves_default_to_the_chain(void **state)
{
    (void)state;
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ndevices = 2\n");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &sys));
    assert_int_equal(sys.default_device, TIDAL_DEVICE_DEFAULT);
    assert_int_equal(sys.local_rank, 1); /* still reported */
    assert_int_equal(sys.rank, -1);
    void *p = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4096, 0);
    assert_int_equal(device_of(ctx, p), 0);
    assert_ok(tidal_free(ctx, p));
    tidal_context_destroy(ctx);
}

static void test_the_first_rank_variable_set_wins(void **state)
{
    (void)state;
    setenv("LOCAL_RANK", "0", 1);
    setenv("SLURM_LOCALID", "2", 1);
    setenv("MPI_LOCALRANKID", "5", 1); /* before SLURM_LOCALID and LOCAL_RANK */
    setenv("TIDAL_DEVICE_SELECTION", "local-rank", 1); /* the environment override */
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ndevices = 4\n");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &sys));
    assert_int_equal(sys.local_rank, 5);
    assert_int_equal(sys.default_device, 1); /* 5 mod 4 */
    tidal_context_destroy(ctx);
}

static void test_no_local_rank_means_device_zero(void **state)
{
    (void)state;
    tidal_context *ctx =
        harness_context("runtime = \"sim\"\ndevice_selection = \"local-rank\"\n[sim]\ndevices = 3\n");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &sys));
    assert_int_equal(sys.local_rank, -1);
    assert_int_equal(sys.default_device, 0);
    tidal_context_destroy(ctx);
}

static void test_a_local_rank_that_is_no_number_is_a_config_error(void **state)
{
    (void)state;
    setenv("SLURM_LOCALID", "two", 1);
    char *message = harness_context_fails(
        "runtime = \"sim\"\ndevice_selection = \"local-rank\"\n[sim]\ndevices = 2\n", TIDAL_ERROR_CONFIG);
    assert_non_null(strstr(message, "SLURM_LOCALID"));
    assert_non_null(strstr(message, "two"));
    free(message);
    /* Unused, it harms nothing: with "first" the context is made. */
    tidal_context *ctx = harness_context("runtime = \"sim\"\n");
    tidal_context_destroy(ctx);
}

static void test_bad_device_selection_is_a_config_error(void **state)
{
    (void)state;
    char *message = harness_context_fails("runtime = \"sim\"\ndevice_selection = \"local_rank\"\n", TIDAL_ERROR_CONFIG);
    assert_non_null(strstr(message, "local-rank")); /* did you mean */
    free(message);
    setenv("TIDAL_DEVICE_SELECTION", "rank", 1);
    message = harness_context_fails("runtime = \"sim\"\n", TIDAL_ERROR_CONFIG);
    assert_non_null(strstr(message, "TIDAL_DEVICE_SELECTION"));
    free(message);
}

static void test_file_names_expand_rank_and_pid(void **state)
{
    (void)state;
    char buf[256];
    size_t needed = 0;
    char expected[256];

    assert_ok(tidal_file_name_expand("stats-%r-%p.json", buf, sizeof buf, &needed));
    snprintf(expected, sizeof expected, "stats-0-%ld.json", (long)getpid()); /* no job: rank 0 */
    assert_string_equal(buf, expected);
    assert_int_equal(needed, strlen(expected) + 1);

    setenv("PMI_RANK", "12", 1);
    assert_ok(tidal_file_name_expand("/tmp/trace.%r.jsonl", buf, sizeof buf, NULL));
    assert_string_equal(buf, "/tmp/trace.12.jsonl");
    setenv("OMPI_COMM_WORLD_RANK", "3", 1); /* first in the list */
    assert_ok(tidal_file_name_expand("r%r 100%%", buf, sizeof buf, NULL));
    assert_string_equal(buf, "r3 100%");
    assert_ok(tidal_file_name_expand("plain", buf, sizeof buf, NULL));
    assert_string_equal(buf, "plain");

    /* Asking for the length first. */
    assert_int_equal(tidal_file_name_expand("a-%r", NULL, 0, &needed), TIDAL_ERROR_BUFFER_TOO_SMALL);
    assert_int_equal(needed, 4);
    memset(buf, 'x', sizeof buf);
    assert_int_equal(tidal_file_name_expand("a-%r", buf, 3, &needed), TIDAL_ERROR_BUFFER_TOO_SMALL);
    assert_string_equal(buf, "a-"); /* truncated, terminated */
}

static void test_file_name_bad_input(void **state)
{
    (void)state;
    char buf[64] = "untouched";
    assert_int_equal(tidal_file_name_expand("out-%d.json", buf, sizeof buf, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(tidal_last_error(), "%d"));
    assert_int_equal(tidal_file_name_expand("out%", buf, sizeof buf, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(tidal_last_error(), "lone %"));
    assert_string_equal(buf, "untouched"); /* nothing written on failure */
    assert_int_equal(tidal_file_name_expand(NULL, buf, sizeof buf, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tidal_file_name_expand("x", NULL, 4, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    setenv("RANK", "-1", 1);
    assert_int_equal(tidal_file_name_expand("x%r", buf, sizeof buf, NULL), TIDAL_ERROR_CONFIG);
    assert_non_null(strstr(tidal_last_error(), "RANK"));
    /* Without %r the rank is not needed, so a bad one does not matter. */
    assert_ok(tidal_file_name_expand("x%%", buf, sizeof buf, NULL));
    assert_string_equal(buf, "x%");
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_local_rank_picks_the_device_round_robin, outside_a_job),
        cmocka_unit_test_setup(test_first_selection_leaves_default_to_the_chain, outside_a_job),
        cmocka_unit_test_setup(test_the_first_rank_variable_set_wins, outside_a_job),
        cmocka_unit_test_setup(test_no_local_rank_means_device_zero, outside_a_job),
        cmocka_unit_test_setup(test_a_local_rank_that_is_no_number_is_a_config_error, outside_a_job),
        cmocka_unit_test_setup(test_bad_device_selection_is_a_config_error, outside_a_job),
        cmocka_unit_test_setup(test_file_names_expand_rank_and_pid, outside_a_job),
        cmocka_unit_test_setup(test_file_name_bad_input, outside_a_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
