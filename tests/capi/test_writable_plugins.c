/* Plugins another user could replace are refused (issue 11, item 9): a policy plugin or runtime
 * module whose file, or a folder above it, is world-writable (a folder with the sticky bit, like
 * /tmp, is fine), unless [security] allow_writable_plugins = true. Each test copies a test
 * plugin into a private folder and changes the copy's permissions. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Copies `folder_variable`/`name` into a new private folder; returns the folder. */
static char *private_copy(const char *folder_variable, const char *name)
{
    char *from = harness_format("%s/%s", harness_required_env(folder_variable), name);
    char *dir = harness_temp_dir();
    char *to = harness_format("%s/%s", dir, name);
    FILE *in = fopen(from, "rb");
    FILE *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buffer[65536];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, in)) > 0)
        assert_int_equal(fwrite(buffer, 1, n, out), n);
    assert_int_equal(fclose(in), 0);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(chmod(to, 0755), 0);
    free(from);
    free(to);
    return dir;
}

/* runtime = `runtime`, `path_key` = [dir], then `rest`; [security] allow_writable_plugins when `allow`. */
static char *config(const char *runtime, const char *path_key, const char *dir, const char *rest, int allow)
{
    char *quoted = harness_toml_string(dir);
    char *toml = harness_format("runtime = \"%s\"\n%s = [%s]\n%s%s", runtime, path_key, quoted, rest,
                                allow ? "[security]\nallow_writable_plugins = true\n" : "");
    free(quoted);
    return toml;
}

static char *policy_config(const char *dir, int allow)
{
    return config("sim", "policy_path", dir, "policies = [\"defer-all\"]\n", allow);
}

static void expect_policy_loads(const char *dir, int allow)
{
    char *toml = policy_config(dir, allow);
    assert_ok(tidal_context_destroy(harness_context(toml)));
    free(toml);
}

static void expect_policy_refused(const char *dir, const char *naming)
{
    char *toml = policy_config(dir, 0);
    char *message = harness_context_fails(toml, TIDAL_ERROR_PLUGIN);
    assert_contains(message, "refusing to load policy 'defer-all'");
    assert_contains(message, naming);
    free(message);
    assert_last_error_contains("allow_writable_plugins");
    free(toml);
}

static void test_world_writable_policy_file(void **state)
{
    (void)state;
    char *dir = private_copy("TIDAL_TEST_PLUGIN_DIR", "tidal-policy-defer-all.so");
    char *file = harness_format("%s/tidal-policy-defer-all.so", dir);
    expect_policy_loads(dir, 0); /* the private copy is fine: the refusals below are its mode's */
    assert_int_equal(chmod(file, 0757), 0);
    char *naming = harness_format("%s is world-writable", file);
    expect_policy_refused(dir, naming);
    expect_policy_loads(dir, 1);
    free(naming);
    free(file);
    harness_remove_dir(dir);
    free(dir);
}

static void test_world_writable_policy_folder(void **state)
{
    (void)state;
    char *dir = private_copy("TIDAL_TEST_PLUGIN_DIR", "tidal-policy-defer-all.so");
    assert_int_equal(chmod(dir, 0777), 0);
    assert_non_null(dir);
    char *naming = harness_format("its folder %s is world-writable (and not sticky)", dir ? dir : "");
    expect_policy_refused(dir, naming);
    expect_policy_loads(dir, 1);
    /* Sticky, as /tmp is: others cannot replace what they do not own. */
    assert_int_equal(chmod(dir, 01777), 0);
    expect_policy_loads(dir, 0);
    free(naming);
    harness_remove_dir(dir);
    free(dir);
}

static char *module_config(const char *dir, int allow)
{
    return config("hip", "runtime_path", dir, "", allow);
}

static void test_world_writable_runtime_module(void **state)
{
    (void)state;
    char *dir = private_copy("TIDAL_TEST_RUNTIME_DIR_FAKE", "tidal-runtime-hip.so");
    char *file = harness_format("%s/tidal-runtime-hip.so", dir);
    assert_int_equal(chmod(file, 0757), 0);
    char *toml = module_config(dir, 0);
    char *message = harness_context_fails(toml, TIDAL_ERROR_RUNTIME);
    char *naming = harness_format("refusing to load runtime module %s: %s is world-writable", file, file);
    assert_contains(message, naming);
    free(message);
    free(toml);

    toml = module_config(dir, 1);
    tidal_context *ctx = harness_context(toml);
    tidal_system_info system = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &system));
    assert_string_equal(system.runtime, "hip");
    assert_ok(tidal_context_destroy(ctx));
    free(toml);
    free(naming);
    free(file);
    harness_remove_dir(dir);
    free(dir);
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_world_writable_policy_file),
        cmocka_unit_test(test_world_writable_policy_folder),
        cmocka_unit_test(test_world_writable_runtime_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
