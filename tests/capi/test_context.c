/* Context life cycle: creation from a string, a file and the environment; its failures;
 * destruction. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A pointer no successful call returns, to prove failures reset *out. */
#define NOT_NULL_SENTINEL ((tidal_context *)(uintptr_t)0x10)

static int32_t device_count_of(tidal_context *ctx)
{
    tidal_system_info info = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &info));
    return info.device_count;
}

static void test_create_from_string_null_text(void **state)
{
    (void)state;
    tidal_context *ctx = NOT_NULL_SENTINEL;
    assert_status(tidal_context_create_from_string(NULL, &ctx), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_null(ctx);
}

static void test_create_from_string_null_out(void **state)
{
    (void)state;
    assert_status(tidal_context_create_from_string(HARNESS_SIM_CONFIG, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_create_from_file_null_arguments(void **state)
{
    (void)state;
    tidal_context *ctx = NOT_NULL_SENTINEL;
    assert_status(tidal_context_create_from_file(NULL, &ctx), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_status(tidal_context_create_from_file("/nonexistent.toml", NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_create_null_out(void **state)
{
    (void)state;
    assert_status(tidal_context_create(NULL), TIDAL_ERROR_INVALID_ARGUMENT);
}

static void test_bad_toml_names_string_and_line(void **state)
{
    (void)state;
    tidal_context *ctx = NOT_NULL_SENTINEL;
    /* The syntax error sits on line 4. */
    const char *toml = "runtime = \"sim\"\n"
                       "\n"
                       "[sim]\n"
                       "devices = = 2\n";
    assert_status(tidal_context_create_from_string(toml, &ctx), TIDAL_ERROR_CONFIG);
    assert_null(ctx);
    const char *message = tidal_last_error();
    assert_contains(message, "<string>:");
    if (!harness_contains_number(message, 4))
        fail_msg("the message does not name line 4: \"%s\"", message);
}

static void test_unknown_key_suggests_the_nearest(void **state)
{
    (void)state;
    tidal_context *ctx = NOT_NULL_SENTINEL;
    assert_status(tidal_context_create_from_string("runtme = \"sim\"\n", &ctx), TIDAL_ERROR_CONFIG);
    assert_null(ctx);
    assert_last_error_contains("did you mean 'runtime'");
}

static void test_bad_value_is_a_config_error(void **state)
{
    (void)state;
    tidal_context *ctx = NOT_NULL_SENTINEL;
    assert_status(tidal_context_create_from_string("runtime = \"opencl\"\n", &ctx),
                  TIDAL_ERROR_CONFIG);
    assert_null(ctx);
    assert_last_error_contains("opencl");
}

static void test_missing_file_names_the_file(void **state)
{
    (void)state;
    tidal_context *ctx = NOT_NULL_SENTINEL;
    assert_status(tidal_context_create_from_file("/nonexistent.toml", &ctx), TIDAL_ERROR_CONFIG);
    assert_null(ctx);
    assert_last_error_contains("/nonexistent.toml");
}

static void test_create_from_file(void **state)
{
    (void)state;
    char *dir = harness_temp_dir();
    char *path = harness_write_file(dir, "tidal.toml", "runtime = \"sim\"\n[sim]\ndevices = 3\n");
    tidal_context *ctx = NULL;
    assert_ok(tidal_context_create_from_file(path, &ctx));
    assert_non_null(ctx);
    assert_int_equal(device_count_of(ctx), 3);
    assert_ok(tidal_context_destroy(ctx));
    harness_remove_dir(dir);
    free(path);
    free(dir);
}

static void test_bad_toml_in_file_names_file_and_line(void **state)
{
    (void)state;
    char *dir = harness_temp_dir();
    char *path = harness_write_file(dir, "broken.toml",
                                    "runtime = \"sim\"\n"
                                    "[sim]\n"
                                    "devices = 1\n"
                                    "\n"
                                    "capacity = [\n");
    tidal_context *ctx = NOT_NULL_SENTINEL;
    assert_status(tidal_context_create_from_file(path, &ctx), TIDAL_ERROR_CONFIG);
    assert_null(ctx);
    char *message = harness_format("%s", tidal_last_error());
    assert_contains(message, "broken.toml");
    if (!harness_contains_number(message, 5))
        fail_msg("the message does not name line 5: \"%s\"", message);
    free(message);
    harness_remove_dir(dir);
    free(path);
    free(dir);
}

/* Relative paths in a file are taken from the file's folder, not the working directory:
 * the file's folder holds a link "rt" to the fake runtime module's folder. */
static void test_relative_path_in_file_is_taken_from_its_folder(void **state)
{
    (void)state;
    const char *fake_dir = harness_required_env("TIDAL_TEST_RUNTIME_DIR_FAKE");
    char *dir = harness_temp_dir();
    char *link_path = harness_format("%s/rt", dir);
    assert_int_equal(symlink(fake_dir, link_path), 0);
    char *path = harness_write_file(dir, "tidal.toml",
                                    "runtime = \"hip\"\nruntime_path = [\"rt\"]\n");
    tidal_context *ctx = NULL;
    assert_ok(tidal_context_create_from_file(path, &ctx));
    tidal_system_info info = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &info));
    assert_string_equal(info.runtime, "hip");
    tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &device));
    assert_string_equal(device.name, "Fake GPU");
    assert_ok(tidal_context_destroy(ctx));
    harness_remove_dir(dir);
    free(path);
    free(link_path);
    free(dir);
}

/* Relative paths in a string are taken from the working directory. */
static void test_relative_path_in_string_is_taken_from_working_directory(void **state)
{
    (void)state;
    const char *fake_dir = harness_required_env("TIDAL_TEST_RUNTIME_DIR_FAKE");
    char *dir = harness_temp_dir();
    char *link_path = harness_format("%s/rt", dir);
    assert_int_equal(symlink(fake_dir, link_path), 0);
    char *previous = getcwd(NULL, 0);
    assert_non_null(previous);
    assert_int_equal(chdir(dir), 0);

    tidal_context *ctx = NULL;
    tidal_status status =
        tidal_context_create_from_string("runtime = \"hip\"\nruntime_path = [\"rt\"]\n", &ctx);
    char *message = harness_format("%s", tidal_last_error());
    assert_int_equal(chdir(previous), 0);
    if (status != TIDAL_OK)
        fail_msg("create_from_string with runtime_path = [\"rt\"] in %s: %s: %s", dir,
                 tidal_status_name(status), message);
    tidal_system_info info = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &info));
    assert_string_equal(info.runtime, "hip");
    assert_ok(tidal_context_destroy(ctx));
    harness_remove_dir(dir);
    free(message);
    free(previous);
    free(link_path);
    free(dir);
}

static void test_create_reads_tidal_config(void **state)
{
    (void)state;
    char *dir = harness_temp_dir();
    char *path = harness_write_file(dir, "tidal.toml", "runtime = \"sim\"\n[sim]\ndevices = 2\n");
    assert_int_equal(setenv("TIDAL_CONFIG", path, 1), 0);
    tidal_context *ctx = NULL;
    tidal_status status = tidal_context_create(&ctx);
    unsetenv("TIDAL_CONFIG");
    assert_status(status, TIDAL_OK);
    assert_int_equal(device_count_of(ctx), 2);
    tidal_system_info info = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &info));
    assert_string_equal(info.runtime, "sim");
    assert_ok(tidal_context_destroy(ctx));
    harness_remove_dir(dir);
    free(path);
    free(dir);
}

static void test_create_with_tidal_config_naming_a_missing_file(void **state)
{
    (void)state;
    assert_int_equal(setenv("TIDAL_CONFIG", "/nonexistent/tidal.toml", 1), 0);
    tidal_context *ctx = NOT_NULL_SENTINEL;
    tidal_status status = tidal_context_create(&ctx);
    unsetenv("TIDAL_CONFIG");
    assert_status(status, TIDAL_ERROR_CONFIG);
    assert_null(ctx);
    assert_last_error_contains("/nonexistent/tidal.toml");
}

/* On this GPU-less machine runtime "auto" ends on the simulated device; where a real GPU
 * runtime answers, the defaults must still work but name that runtime. */
static void check_default_context(tidal_context *ctx)
{
    tidal_system_info info = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &info));
    if (strcmp(info.runtime, "hip") == 0 || strcmp(info.runtime, "cuda") == 0) {
        print_message("a real GPU runtime (%s) answered; the sim fallback is not checked\n",
                      info.runtime);
    } else {
        assert_string_equal(info.runtime, "sim");
    }
    assert_true(info.device_count >= 1);
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, 4096, NULL, &ptr));
    assert_non_null(ptr);
    assert_ok(tidal_free(ctx, ptr));
}

static void test_create_without_tidal_config_uses_defaults(void **state)
{
    (void)state;
    unsetenv("TIDAL_CONFIG");
    tidal_context *ctx = NULL;
    assert_ok(tidal_context_create(&ctx));
    assert_non_null(ctx);
    check_default_context(ctx);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_create_with_empty_tidal_config_uses_defaults(void **state)
{
    (void)state;
    assert_int_equal(setenv("TIDAL_CONFIG", "", 1), 0);
    tidal_context *ctx = NULL;
    tidal_status status = tidal_context_create(&ctx);
    unsetenv("TIDAL_CONFIG");
    assert_status(status, TIDAL_OK);
    check_default_context(ctx);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_empty_string_is_all_defaults(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("");
    check_default_context(ctx);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_destroy_null(void **state)
{
    (void)state;
    assert_ok(tidal_context_destroy(NULL));
}

static void test_destroy_with_live_allocations(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(HARNESS_SIM_CONFIG);
    static const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED,
                                       TIDAL_KIND_PAGEABLE, TIDAL_KIND_AUTO};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.kind = kinds[i];
        desc.tag = "leaked on purpose";
        void *ptr = NULL;
        assert_ok(tidal_alloc(ctx, (i + 1) * 65536, &desc, &ptr));
        assert_non_null(ptr);
    }
    assert_ok(tidal_context_destroy(ctx));
}

static void test_two_contexts_are_independent(void **state)
{
    (void)state;
    tidal_context *one = harness_context("runtime = \"sim\"\n[sim]\ndevices = 1\n");
    tidal_context *two = harness_context("runtime = \"sim\"\n[sim]\ndevices = 4\n");
    assert_int_equal(device_count_of(one), 1);
    assert_int_equal(device_count_of(two), 4);

    void *ptr = NULL;
    assert_ok(tidal_alloc(one, 4096, NULL, &ptr));
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    /* A pointer belongs to the context that returned it. */
    assert_status(tidal_pointer_query(two, ptr, &info), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_status(tidal_free(two, ptr), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_ok(tidal_free(one, ptr));

    assert_ok(tidal_context_destroy(two));
    assert_int_equal(device_count_of(one), 1);
    assert_ok(tidal_context_destroy(one));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_from_string_null_text),
        cmocka_unit_test(test_create_from_string_null_out),
        cmocka_unit_test(test_create_from_file_null_arguments),
        cmocka_unit_test(test_create_null_out),
        cmocka_unit_test(test_bad_toml_names_string_and_line),
        cmocka_unit_test(test_unknown_key_suggests_the_nearest),
        cmocka_unit_test(test_bad_value_is_a_config_error),
        cmocka_unit_test(test_missing_file_names_the_file),
        cmocka_unit_test(test_create_from_file),
        cmocka_unit_test(test_bad_toml_in_file_names_file_and_line),
        cmocka_unit_test(test_relative_path_in_file_is_taken_from_its_folder),
        cmocka_unit_test(test_relative_path_in_string_is_taken_from_working_directory),
        cmocka_unit_test(test_create_reads_tidal_config),
        cmocka_unit_test(test_create_with_tidal_config_naming_a_missing_file),
        cmocka_unit_test(test_create_without_tidal_config_uses_defaults),
        cmocka_unit_test(test_create_with_empty_tidal_config_uses_defaults),
        cmocka_unit_test(test_empty_string_is_all_defaults),
        cmocka_unit_test(test_destroy_null),
        cmocka_unit_test(test_destroy_with_live_allocations),
        cmocka_unit_test(test_two_contexts_are_independent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
