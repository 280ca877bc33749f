/* Configuration input a careless user or a broken generator produces (issue 11, items 4-6):
 * text nested a million levels deep, special files, [cuda] keys under the simulated device, and
 * the 64 simulated devices the README promises. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "[policy]\n" + a.a.a... (`levels` parts) + " = 1\n"; the caller frees it. */
static char *deep_key(size_t levels)
{
    const char *head = "[policy]\n";
    const size_t length = strlen(head) + 2 * levels + 8;
    char *text = malloc(length);
    assert_non_null(text);
    char *p = text + strlen(strcpy(text, head));
    for (size_t i = 0; i < levels; ++i) {
        if (i)
            *p++ = '.';
        *p++ = 'a';
    }
    strcpy(p, " = 1\n");
    return text;
}

static void test_million_level_key_is_a_config_error(void **state)
{
    (void)state;
    char *text = deep_key(1000000);
    char *message = harness_context_fails(text, TIDAL_ERROR_CONFIG);
    assert_contains(message, "<string>:2:");
    assert_contains(message, "longer than 1048576 bytes");
    free(message);
    free(text);
    /* Within the size limit, deep enough to overflow toml++'s stack before the fix. */
    text = deep_key(300000);
    message = harness_context_fails(text, TIDAL_ERROR_CONFIG);
    assert_contains(message, "<string>:2:126: nesting deeper than 64 levels");
    free(message);
    free(text);
}

static void test_special_files_are_refused(void **state)
{
    (void)state;
    tidal_context *ctx = NULL;
    assert_status(tidal_context_create_from_file("/dev/zero", &ctx), TIDAL_ERROR_CONFIG);
    assert_null(ctx);
    assert_last_error_contains("'/dev/zero' is a character device, not a regular file");

    char *dir = harness_temp_dir();
    char *fifo = harness_format("%s/config.toml", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* No writer: reading it would block for ever. */
    assert_status(tidal_context_create_from_file(fifo, &ctx), TIDAL_ERROR_CONFIG);
    assert_last_error_contains("is a FIFO (named pipe)");
    /* TIDAL_CONFIG goes the same way. */
    setenv("TIDAL_CONFIG", fifo, 1);
    assert_status(tidal_context_create(&ctx), TIDAL_ERROR_CONFIG);
    unsetenv("TIDAL_CONFIG");
    assert_last_error_contains("is a FIFO (named pipe)");
    free(fifo);
    harness_remove_dir(dir);
    free(dir);
}

static void test_module_tables_are_checked_under_the_simulated_device(void **state)
{
    (void)state;
    char *message = harness_context_fails("runtime = \"sim\"\n[cuda]\nfoo = 1\n", TIDAL_ERROR_CONFIG);
    assert_contains(message, "<string>:3:1: unknown key 'foo' in [cuda]");
    free(message);
    message = harness_context_fails("runtime = \"sim\"\n[hip]\nbar = 1\n", TIDAL_ERROR_CONFIG);
    assert_contains(message, "<string>:3:1: unknown key 'bar' in [hip]");
    free(message);
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[cuda]\n[hip]\n");
    assert_ok(tidal_context_destroy(ctx));
}

static void test_sixty_four_simulated_devices(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ndevices = 64\ncapacity = \"1GiB\"\n");
    tidal_system_info system = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &system));
    assert_int_equal(system.device_count, 64);

    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = 63;
    void *device = NULL;
    assert_ok(tidal_alloc(ctx, 1 << 20, &desc, &device));
    harness_fill(device, 1 << 20, 63);
    assert_true(harness_holds(device, 1 << 20, 63));

    /* Managed pages resident on device 63 (the highest residency bit), and back. */
    desc.kind = TIDAL_KIND_MANAGED;
    void *managed = NULL;
    assert_ok(tidal_alloc(ctx, 4 << 20, &desc, &managed));
    harness_fill(managed, 4 << 20, 7);
    assert_ok(tidal_prefetch(ctx, managed, 4 << 20, 63));
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    assert_ok(tidal_range_query(ctx, managed, 4 << 20, &info));
    assert_int_equal(info.last_prefetch_location, 63);
    /* Read-mostly: a copy on device 63 and one on device 0 at once; accessed-by device 63. */
    assert_ok(tidal_advise(ctx, managed, 4 << 20,
                           TIDAL_ADVICE_READ_MOSTLY | TIDAL_ADVICE_PREFERRED_DEVICE | TIDAL_ADVICE_ACCESSED_BY_DEVICE, 0));
    info = (tidal_range_info)TIDAL_RANGE_INFO_INIT;
    assert_ok(tidal_range_query(ctx, managed, 4 << 20, &info));
    assert_int_equal(info.preferred_location, 63);
    assert_int_equal(info.read_mostly, 1);
    assert_ok(tidal_prefetch(ctx, managed, 4 << 20, 0));
    assert_ok(tidal_prefetch(ctx, managed, 4 << 20, TIDAL_DEVICE_HOST));
    assert_true(harness_holds(managed, 4 << 20, 7));

    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = 64;
    void *none = NULL;
    assert_status(tidal_alloc(ctx, 4096, &desc, &none), TIDAL_ERROR_NOT_FOUND);
    assert_ok(tidal_free(ctx, managed));
    assert_ok(tidal_free(ctx, device));
    assert_ok(tidal_context_destroy(ctx));

    char *message = harness_context_fails("runtime = \"sim\"\n[sim]\ndevices = 65\n", TIDAL_ERROR_CONFIG);
    assert_contains(message, "<string>:3:11: sim.devices = 65 is out of range; it must be from 1 to 64");
    free(message);
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_million_level_key_is_a_config_error),
        cmocka_unit_test(test_special_files_are_refused),
        cmocka_unit_test(test_module_tables_are_checked_under_the_simulated_device),
        cmocka_unit_test(test_sixty_four_simulated_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
