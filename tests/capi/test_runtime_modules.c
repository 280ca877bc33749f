/* Loadable device-runtime modules: the fake module of tests/runtime/fake, modules that must be
 * rejected (tests/runtime/mismatch, tests/runtime/nosymbol), and the real ones where built. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define NOT_NULL_SENTINEL ((tidal_context *)(uintptr_t)0x10)

/* runtime = "hip" with the module folder named by the environment variable `dir_variable`. */
static char *hip_config(const char *dir_variable)
{
    char *dir = harness_toml_string(harness_required_env(dir_variable));
    char *toml = harness_format("runtime = \"hip\"\nruntime_path = [%s]\n", dir);
    free(dir);
    return toml;
}

static void test_fake_module_describes_its_device(void **state)
{
    (void)state;
    char *toml = hip_config("TIDAL_TEST_RUNTIME_DIR_FAKE");
    tidal_context *ctx = harness_context(toml);

    tidal_system_info system = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &system));
    assert_string_equal(system.runtime, "hip");
    assert_int_equal(system.device_count, 1);
    /* The module's create() wrote this line into `detail`. */
    assert_contains(system.runtime_detail, "fake");

    tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &device));
    assert_string_equal(device.name, "Fake GPU");
    assert_int_equal(device.index, 0);
    assert_false(device.flags & TIDAL_DEVICE_FLAG_SIMULATED);
    assert_int_equal(device.total_memory, (uint64_t)16 << 30);
    tidal_device_info missing = TIDAL_DEVICE_INFO_INIT;
    assert_status(tidal_device_info_get(ctx, 1, &missing), TIDAL_ERROR_NOT_FOUND);

    assert_ok(tidal_context_destroy(ctx));
    free(toml);
}

static void test_fake_module_allocates(void **state)
{
    (void)state;
    char *toml = hip_config("TIDAL_TEST_RUNTIME_DIR_FAKE");
    tidal_context *ctx = harness_context(toml);

    const size_t size = 1 << 20;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.tag = "on the fake";
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, size, &desc, &ptr));
    assert_non_null(ptr);
    /* The fake module backs device memory with malloc, so the test may touch it. */
    harness_fill(ptr, size, 2);
    assert_true(harness_holds(ptr, size, 2));

    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, (unsigned char *)ptr + 10, &info));
    assert_ptr_equal(info.base, ptr);
    assert_int_equal(info.size, size);
    assert_int_equal(info.kind, TIDAL_KIND_DEVICE);
    assert_int_equal(info.device, 0);
    assert_string_equal(info.tag, "on the fake");
    assert_ok(tidal_free(ctx, ptr));
    assert_status(tidal_free(ctx, ptr), TIDAL_ERROR_UNKNOWN_POINTER);

    /* Leave one allocation live: destroy returns it to the module. */
    assert_ok(tidal_alloc(ctx, 4096, &desc, &ptr));
    assert_ok(tidal_context_destroy(ctx));
    free(toml);
}

/* The fake module leaves most optional entry points NULL. Each call that needs one answers
 * TIDAL_ERROR_NOT_SUPPORTED with the one sentence for a missing operation; tidal_copy and
 * tidal_stream_synchronize used to call through the NULL pointer instead. */
static void test_fake_module_missing_operations_are_not_supported(void **state)
{
    (void)state;
    char *toml = hip_config("TIDAL_TEST_RUNTIME_DIR_FAKE");
    tidal_context *ctx = harness_context(toml);
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    void *a = NULL, *b = NULL;
    assert_ok(tidal_alloc(ctx, 4096, &desc, &a));
    assert_ok(tidal_alloc(ctx, 4096, &desc, &b));
    assert_status(tidal_copy(ctx, a, b, 4096), TIDAL_ERROR_NOT_SUPPORTED);
    assert_last_error_contains("the hip runtime does not support copying memory");
    assert_status(tidal_stream_synchronize(ctx, NULL), TIDAL_ERROR_NOT_SUPPORTED);
    assert_last_error_contains("the hip runtime does not support synchronising a stream");
    void *stream = NULL;
    assert_status(tidal_stream_create(ctx, 0, &stream), TIDAL_ERROR_NOT_SUPPORTED);
    assert_last_error_contains("the hip runtime does not support creating a stream");

    desc.kind = TIDAL_KIND_MANAGED;
    void *m = NULL;
    assert_ok(tidal_alloc(ctx, 4096, &desc, &m));
    assert_status(tidal_prefetch(ctx, m, 4096, 0), TIDAL_ERROR_NOT_SUPPORTED);
    assert_last_error_contains("the hip runtime does not support prefetching managed memory");
    tidal_range_info range = TIDAL_RANGE_INFO_INIT;
    assert_status(tidal_range_query(ctx, m, 4096, &range), TIDAL_ERROR_NOT_SUPPORTED);
    assert_last_error_contains("the hip runtime does not support querying range attributes");

    /* Host memory copies on the host: no runtime call is needed, so none is missing. */
    char host_a[64] = {1}, host_b[64] = {0};
    assert_ok(tidal_copy(ctx, host_b, host_a, sizeof host_a));
    assert_int_equal(host_b[0], 1);
    assert_ok(tidal_free(ctx, m));
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, b));
    assert_ok(tidal_context_destroy(ctx));
    free(toml);
}

static tidal_pool_stats device_pool_stats(tidal_context *ctx)
{
    tidal_pool_stats s = TIDAL_POOL_STATS_INIT;
    assert_ok(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, 0, &s));
    return s;
}

static uint64_t free_memory(tidal_context *ctx)
{
    tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &device));
    return device.free_memory;
}

/* [pool] backend = "vendor": device memory comes from the module's stream-ordered pool, one
 * runtime call per allocation and free (the fake's pool keeps freed blocks, as CUDA's does
 * with a release threshold, and the statistics show the pool's own reserve); tidal_pool_trim
 * gives that reserve back; the caller's stream reaches the runtime; other kinds still come
 * from tidal's pools. */
static void test_vendor_backend_serves_device_memory(void **state)
{
    (void)state;
    char *hip = hip_config("TIDAL_TEST_RUNTIME_DIR_FAKE");
    char *toml = harness_format("%s[pool]\nbackend = \"vendor\"\n", hip);
    tidal_context *ctx = harness_context(toml);
    const uint64_t total = (uint64_t)16 << 30;
    const size_t size = 8u << 20;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, size, &desc, &p));
    harness_fill(p, size, 3);
    tidal_pool_stats s = device_pool_stats(ctx);
    assert_int_equal(s.allocations, 1);
    assert_int_equal(s.runtime_allocations, 1);
    assert_int_equal(s.in_use_bytes, size);
    assert_true(free_memory(ctx) < total);
    assert_ok(tidal_free(ctx, p));
    s = device_pool_stats(ctx);
    assert_int_equal(s.frees, 1);
    assert_int_equal(s.runtime_frees, 1);
    assert_int_equal(s.in_use_bytes, 0);
    assert_int_equal(s.in_use_high_water, size);
    assert_int_equal(s.reserved_bytes, size); /* the vendor's pool keeps the block */
    assert_true(free_memory(ctx) < total);
    uint64_t released = 0;
    assert_ok(tidal_pool_trim(ctx, &released));
    assert_int_equal(released, size);
    assert_int_equal(free_memory(ctx), total);
    s = device_pool_stats(ctx);
    assert_int_equal(s.reserved_bytes, 0);

    /* Over-aligned blocks are padded, as straight from the runtime. */
    desc.alignment = 1u << 16;
    assert_ok(tidal_alloc(ctx, 1000, &desc, &p));
    assert_int_equal((uintptr_t)p % (1u << 16), 0);
    assert_ok(tidal_free(ctx, p));
    desc.alignment = 0;

    /* The fake refuses the stream 0xbad: an error there proves the stream reached it. */
    void *const good = (void *)(uintptr_t)0x1234, *const refused = (void *)(uintptr_t)0xbad;
    assert_status(tidal_alloc_async(ctx, 4096, &desc, refused, &p), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("stream-ordered pool");
    assert_ok(tidal_alloc_async(ctx, 4096, &desc, good, &p));
    assert_status(tidal_free_async(ctx, p, refused), TIDAL_ERROR_INVALID_ARGUMENT);
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    assert_ok(tidal_pointer_query(ctx, p, &info)); /* a refused free loses nothing */
    assert_ok(tidal_free_async(ctx, p, good));
    assert_ok(tidal_pool_trim(ctx, &released));
    assert_true(released >= 4096);
    assert_int_equal(free_memory(ctx), total);

    /* Pinned memory still comes from tidal's pool, which keeps its slab after the free. */
    desc.kind = TIDAL_KIND_PINNED;
    assert_ok(tidal_alloc(ctx, 4096, &desc, &p));
    assert_ok(tidal_free(ctx, p));
    tidal_pool_stats pinned = TIDAL_POOL_STATS_INIT;
    assert_ok(tidal_pool_stats_get(ctx, TIDAL_KIND_PINNED, TIDAL_DEVICE_HOST, &pinned));
    assert_int_equal(pinned.allocations, 1);
    assert_true(pinned.reserved_bytes > 0);

    /* A leak goes back to the vendor's pool when the context is destroyed. */
    desc.kind = TIDAL_KIND_DEVICE;
    assert_ok(tidal_alloc(ctx, 4096, &desc, &p));
    assert_ok(tidal_context_destroy(ctx));
    free(toml);
    free(hip);
}

/* tidal_pool_trim leaves [pool] release_threshold spare in the vendor's pool too. */
static void test_vendor_backend_trims_to_the_release_threshold(void **state)
{
    (void)state;
    char *hip = hip_config("TIDAL_TEST_RUNTIME_DIR_FAKE");
    char *toml = harness_format("%s[pool]\nbackend = \"vendor\"\nrelease_threshold = \"8MiB\"\n", hip);
    tidal_context *ctx = harness_context(toml);
    void *a = harness_alloc(ctx, TIDAL_KIND_DEVICE, 8u << 20, 0);
    void *b = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4u << 20, 0);
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, b));
    assert_int_equal(device_pool_stats(ctx).reserved_bytes, 12u << 20);
    uint64_t released = 0;
    assert_ok(tidal_pool_trim(ctx, &released));
    assert_int_equal(released, 4u << 20); /* 12 MiB spare, 8 MiB may stay */
    assert_int_equal(device_pool_stats(ctx).reserved_bytes, 8u << 20);
    void *again = harness_alloc(ctx, TIDAL_KIND_DEVICE, 8u << 20, 0); /* the kept block serves */
    assert_int_equal(free_memory(ctx), ((uint64_t)16 << 30) - (8u << 20) - 256);
    assert_ok(tidal_free(ctx, again));
    assert_ok(tidal_context_destroy(ctx));
    free(toml);
    free(hip);
}

/* The same module under tidal's own pool: the freed chunk stays with the pool. */
static void test_tidal_backend_keeps_its_chunk(void **state)
{
    (void)state;
    char *toml = hip_config("TIDAL_TEST_RUNTIME_DIR_FAKE");
    tidal_context *ctx = harness_context(toml);
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, 8u << 20, &desc, &p));
    assert_ok(tidal_free(ctx, p));
    assert_true(free_memory(ctx) < ((uint64_t)16 << 30));
    assert_int_equal(device_pool_stats(ctx).runtime_frees, 0);
    assert_ok(tidal_context_destroy(ctx));
    free(toml);
}

static void test_module_with_other_abi_is_rejected(void **state)
{
    (void)state;
    char *toml = hip_config("TIDAL_TEST_RUNTIME_DIR_MISMATCH");
    char *message = harness_context_fails(toml, TIDAL_ERROR_RUNTIME);
    assert_contains(message, "tidal-runtime-hip");
    if (!harness_contains_number(message, 999))
        fail_msg("the message does not name the module's ABI 999: \"%s\"", message);
    free(message);
    free(toml);
}

static void test_module_without_entry_symbol_is_rejected(void **state)
{
    (void)state;
    char *toml = hip_config("TIDAL_TEST_RUNTIME_DIR_NOSYMBOL");
    char *message = harness_context_fails(toml, TIDAL_ERROR_RUNTIME);
    assert_contains(message, "tidal_runtime_negotiate");
    assert_contains(message, "tidal-runtime-hip");
    free(message);
    free(toml);
}

/* Without runtime_path the real modules are looked up where the library keeps them. On a
 * GPU-less machine a module that was built must report the no-device status with the native
 * error's name and number; one that was not built is a missing module. The build tells the
 * test which (TIDAL_TEST_HIP_BUILT / TIDAL_TEST_CUDA_BUILT), so neither case can pass by luck. */
static void expect_real_module_without_gpu(const char *runtime, const char *built_variable,
                                           const char *const *native_names)
{
    char *toml = harness_format("runtime = \"%s\"\n", runtime);
    tidal_context *ctx = NOT_NULL_SENTINEL;
    tidal_status status = tidal_context_create_from_string(toml, &ctx);
    char *message = harness_format("%s", tidal_last_error());
    free(toml);
    if (status == TIDAL_OK) {
        tidal_context_destroy(ctx);
        free(message);
        print_message("a %s device answered; this check is for machines without one\n", runtime);
        skip();
    }
    assert_null(ctx);
    const char *built = getenv(built_variable);
    if (built && strcmp(built, "1") == 0) {
        if (status != TIDAL_ERROR_NO_DEVICE)
            fail_msg("runtime = \"%s\" without a GPU returned %s, expected NO_DEVICE: \"%s\"", runtime,
                     tidal_status_name(status), message);
        int named = 0;
        for (const char *const *n = native_names; *n; ++n)
            named |= harness_contains(message, *n, 0);
        if (!named)
            fail_msg("NO_DEVICE without the native error's name and number: \"%s\"", message);
    } else {
        assert_int_equal(status, TIDAL_ERROR_RUNTIME);
        assert_contains(message, "not found");
    }
    free(message);
}

static void test_real_hip_module_without_gpu(void **state)
{
    (void)state;
    static const char *const names[] = {"hipErrorNoDevice (100)", NULL};
    expect_real_module_without_gpu("hip", "TIDAL_TEST_HIP_BUILT", names);
}

static void test_real_cuda_module_without_gpu(void **state)
{
    (void)state;
    /* Without a driver the CUDA runtime says InsufficientDriver, with one but no GPU NoDevice. */
    static const char *const names[] = {"cudaErrorInsufficientDriver (35)", "cudaErrorNoDevice (100)", NULL};
    expect_real_module_without_gpu("cuda", "TIDAL_TEST_CUDA_BUILT", names);
}

static void test_auto_falls_back_to_sim(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"auto\"\n");
    tidal_system_info system = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &system));
    if (strcmp(system.runtime, "sim") != 0) {
        print_message("runtime \"auto\" found a real GPU runtime (%s); fallback not checked\n",
                      system.runtime);
        assert_ok(tidal_context_destroy(ctx));
        skip();
    }
    assert_int_equal(system.device_count, 1);
    tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &device));
    assert_true(device.flags & TIDAL_DEVICE_FLAG_SIMULATED);
    assert_ok(tidal_context_destroy(ctx));
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fake_module_describes_its_device),
        cmocka_unit_test(test_fake_module_allocates),
        cmocka_unit_test(test_fake_module_missing_operations_are_not_supported),
        cmocka_unit_test(test_vendor_backend_serves_device_memory),
        cmocka_unit_test(test_vendor_backend_trims_to_the_release_threshold),
        cmocka_unit_test(test_tidal_backend_keeps_its_chunk),
        cmocka_unit_test(test_module_with_other_abi_is_rejected),
        cmocka_unit_test(test_module_without_entry_symbol_is_rejected),
        cmocka_unit_test(test_real_hip_module_without_gpu),
        cmocka_unit_test(test_real_cuda_module_without_gpu),
        cmocka_unit_test(test_auto_falls_back_to_sim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
