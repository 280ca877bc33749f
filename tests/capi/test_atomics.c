/* The atomic set (TIDAL_CHECK_ATOMIC_SET, _SHARED) on the simulated device: every operation
 * exact on every kind the device reaches, host threads on the same words at once where the
 * host reaches them too, the MI200 rule (float atomics do nothing on fine-grained memory) on
 * an AMD gfx90a profile, and clear statuses for bad requests. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

enum { WORDS = 4096 };

static uint64_t atomic_set(tidal_context *ctx, tidal_check_kind kind, void *p, uint64_t rounds, tidal_status expected)
{
    uint64_t wrong = 0xdead;
    assert_status(harness_check(ctx, kind, p, NULL, WORDS, rounds, NULL, &wrong), expected);
    return wrong;
}

static void test_every_kind_exact(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n");
    const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        void *p = harness_alloc(ctx, kinds[i], WORDS, 0);
        memset(p, 0x5a, WORDS); /* tidal sets the words itself */
        assert_int_equal(atomic_set(ctx, TIDAL_CHECK_ATOMIC_SET, p, 0, TIDAL_OK), 0);
        assert_int_equal(atomic_set(ctx, TIDAL_CHECK_ATOMIC_SET, p, 3, TIDAL_OK), 0);
        if (kinds[i] != TIDAL_KIND_DEVICE)
            assert_int_equal(atomic_set(ctx, TIDAL_CHECK_ATOMIC_SET_SHARED, p, 8, TIDAL_OK), 0);
        assert_ok(tidal_free(ctx, p));
    }
    /* The H200 reports no host-native atomics, and so does its simulation. */
    tidal_device_info dev = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &dev));
    assert_int_equal(dev.flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS, 0);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_bad_requests(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n");
    char *dev = harness_alloc(ctx, TIDAL_KIND_DEVICE, WORDS, 0);
    char *pinned = harness_alloc(ctx, TIDAL_KIND_PINNED, WORDS, 0);
    assert_status(harness_check(ctx, TIDAL_CHECK_ATOMIC_SET, dev, NULL, TIDAL_ATOMIC_SET_BYTES - 8, 1, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("at least 304");
    assert_status(harness_check(ctx, TIDAL_CHECK_ATOMIC_SET, dev + 8, NULL, WORDS - 8, 1, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("16-byte aligned");
    assert_status(harness_check(ctx, TIDAL_CHECK_ATOMIC_SET, dev, NULL, WORDS, 1u << 20, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("2^24");
    assert_status(harness_check(ctx, TIDAL_CHECK_ATOMIC_SET, dev + WORDS - 256, NULL, 512, 1, NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("past the end");
    /* Host threads cannot touch device memory. */
    atomic_set(ctx, TIDAL_CHECK_ATOMIC_SET_SHARED, dev, 1, TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("host cannot reach");
    /* Pageable memory on a device without pageable access: refused before the launch. */
    void *heap = aligned_alloc(64, WORDS);
    atomic_set(ctx, TIDAL_CHECK_ATOMIC_SET, heap, 1, TIDAL_ERROR_ILLEGAL_ACCESS);
    atomic_set(ctx, TIDAL_CHECK_ATOMIC_SET_SHARED, heap, 1, TIDAL_ERROR_ILLEGAL_ACCESS);
    free(heap);
    /* A kind past the last is still refused. */
    assert_status(harness_check(ctx, (tidal_check_kind)(TIDAL_CHECK_ATOMIC_SET_SHARED + 1), pinned, NULL, WORDS, 1,
                                NULL, NULL),
                  TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_free(ctx, dev));
    assert_ok(tidal_free(ctx, pinned));
    assert_ok(tidal_context_destroy(ctx));
}

/* The built-in H200 profile turned into an MI200-class AMD one (gfx90a), written to a file. */
static const char *mi200_profile(void)
{
    static char path[64];
    FILE *in = fopen(TIDAL_SOURCE_ROOT "/core/runtime/sim/profiles/h200.toml", "r");
    assert_non_null(in);
    static char text[16384];
    const size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    snprintf(path, sizeof path, "/tmp/tidal-test-mi200-%ld.toml", (long)getpid());
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "vendor", 6) == 0)
            fputs("vendor = \"amd\"\n", out);
        else if (strncmp(line, "arch", 4) == 0)
            fputs("arch = \"gfx90a:sramecc+:xnack+\"\n", out);
        else if (strncmp(line, "name = ", 7) == 0)
            fputs("name = \"mi200-test\"\n", out);
        else
            fprintf(out, "%s\n", line);
    }
    fclose(out);
    return path;
}

static void test_mi200_float_atomics_on_fine_grained_memory(void **state)
{
    (void)state;
    const char *profile = mi200_profile();
    tidal_context *ctx = harness_context_format("runtime = \"sim\"\n[sim]\nprofile = \"%s\"\nxnack = true\n", profile);
    remove(profile);
    static const struct {
        tidal_kind kind;
        uint64_t wrong; /* fine-grained memory: the float adds do nothing */
    } cases[] = {
        {TIDAL_KIND_DEVICE, 0},
        {TIDAL_KIND_MANAGED_COARSE, 0},
        {TIDAL_KIND_DEVICE_FINE, TIDAL_ATOMIC_FADD32},
        {TIDAL_KIND_PINNED, TIDAL_ATOMIC_FADD32},
        {TIDAL_KIND_MANAGED, TIDAL_ATOMIC_FADD32},
        {TIDAL_KIND_PAGEABLE, TIDAL_ATOMIC_FADD32}, /* reachable: XNACK on */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        void *p = harness_alloc(ctx, cases[i].kind, WORDS, 0);
        assert_int_equal(atomic_set(ctx, TIDAL_CHECK_ATOMIC_SET, p, 2, TIDAL_OK), cases[i].wrong);
        if (TIDAL_KIND_IS_HOST(cases[i].kind) || TIDAL_KIND_IS_MANAGED(cases[i].kind))
            assert_int_equal(atomic_set(ctx, TIDAL_CHECK_ATOMIC_SET_SHARED, p, 2, TIDAL_OK), cases[i].wrong);
        assert_ok(tidal_free(ctx, p));
    }
    assert_ok(tidal_context_destroy(ctx));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_exact),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_mi200_float_atomics_on_fine_grained_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
