/* tidal_copy / tidal_copy_async / tidal_register on the simulated device: every direction and
 * kind, staged copies across many chunks, streams, registration rules, and bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

/* pageable -> kind -> pageable, checking the bytes arrive intact. */
static void round_trip(tidal_context *ctx, tidal_kind kind, size_t size, void *stream)
{
    unsigned char *src = malloc(size), *back = malloc(size);
    assert_non_null(src);
    assert_non_null(back);
    harness_fill(src, size, (unsigned)size);
    memset(back, 0, size);
    void *mid = harness_alloc(ctx, kind, size, 0);
    if (stream) {
        assert_ok(tidal_copy_async(ctx, mid, src, size, stream));
        assert_ok(tidal_copy_async(ctx, back, mid, size, stream));
        assert_ok(tidal_stream_synchronize(ctx, stream));
    } else {
        assert_ok(tidal_copy(ctx, mid, src, size));
        assert_ok(tidal_copy(ctx, back, mid, size));
    }
    assert_true(harness_holds(back, size, (unsigned)size));
    assert_ok(tidal_free(ctx, mid));
    free(src);
    free(back);
}

static void test_every_kind_and_size(void **state)
{
    tidal_context *ctx = *state;
    const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED, TIDAL_KIND_PAGEABLE};
    const size_t sizes[] = {1, 4097, (16u << 20) + 12345, 40u << 20};
    for (size_t k = 0; k < 4; ++k)
        for (size_t s = 0; s < 4; ++s)
            round_trip(ctx, kinds[k], sizes[s], NULL);
}

static void test_many_small_chunks(void **state)
{
    (void)state;
    /* 4 KiB chunks and two slots: every slot is reused many times in one copy. */
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[copy]\nchunk_size = \"4KiB\"\nring_depth = 2\nthreads = 3\n");
    round_trip(ctx, TIDAL_KIND_DEVICE, (1u << 20) + 100, NULL);
    void *stream = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &stream));
    round_trip(ctx, TIDAL_KIND_DEVICE, (1u << 20) + 8, stream);
    assert_ok(tidal_stream_destroy(ctx, stream));
    assert_ok(tidal_context_destroy(ctx));
}

static void test_device_to_device_and_async(void **state)
{
    tidal_context *ctx = *state;
    const size_t size = 3u << 20;
    unsigned char *a = harness_alloc(ctx, TIDAL_KIND_DEVICE, size, 0);
    unsigned char *b = harness_alloc(ctx, TIDAL_KIND_DEVICE, size, 0);
    harness_fill(a, size, 9); /* simulated device memory is host memory */
    void *stream = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &stream));
    assert_ok(tidal_copy_async(ctx, b, a, size, stream));
    assert_ok(tidal_stream_synchronize(ctx, stream));
    assert_true(harness_holds(b, size, 9));
    round_trip(ctx, TIDAL_KIND_MANAGED, size, stream);
    assert_ok(tidal_stream_destroy(ctx, stream));
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, b));
}

static void test_registered_memory(void **state)
{
    tidal_context *ctx = *state;
    const size_t size = 8u << 20;
    unsigned char *user = malloc(size);
    assert_non_null(user);
    harness_fill(user, size, 5);
    assert_ok(tidal_register(ctx, user, size));
    assert_status(tidal_register(ctx, user + 4096, 4096), TIDAL_ERROR_INVALID_ARGUMENT); /* overlaps */
    assert_last_error_contains("overlap");
    void *dev = harness_alloc(ctx, TIDAL_KIND_DEVICE, size, 0);
    assert_ok(tidal_copy(ctx, dev, user, size));
    memset(user, 0, size);
    assert_ok(tidal_copy(ctx, user, dev, size));
    assert_true(harness_holds(user, size, 5));
    assert_status(tidal_unregister(ctx, user + 1), TIDAL_ERROR_UNKNOWN_POINTER);
    assert_ok(tidal_unregister(ctx, user));
    assert_status(tidal_unregister(ctx, user), TIDAL_ERROR_UNKNOWN_POINTER);
    void *pinned = harness_alloc(ctx, TIDAL_KIND_PINNED, 4096, 0);
    assert_status(tidal_register(ctx, pinned, 4096), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("needs no registration");
    assert_status(tidal_register(ctx, user, 0), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_register(ctx, NULL, 8), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_register(NULL, user, 8), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_free(ctx, pinned));
    assert_ok(tidal_free(ctx, dev));
    free(user);
}

static void test_copy_errors(void **state)
{
    tidal_context *ctx = *state;
    char a[16] = {0}, b[16] = {0};
    assert_status(tidal_copy(NULL, a, b, 16), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_copy(ctx, NULL, b, 16), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_copy(ctx, a, NULL, 16), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_copy(ctx, a, b, 0));
    /* Sizes that wrap around the address space are refused before anything is read. */
    assert_status(tidal_copy(ctx, a, b + 1, SIZE_MAX), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("wrap around the address space");
    assert_status(tidal_copy_async(ctx, a, b, SIZE_MAX - 8, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    void *stream = NULL;
    assert_status(tidal_stream_create(ctx, 4, &stream), TIDAL_ERROR_NOT_FOUND);
    assert_null(stream);
    assert_status(tidal_stream_create(ctx, 0, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_stream_destroy(ctx, NULL));
}

/* A copy one byte past a 4 KiB allocation of each kind is refused, names the allocation, and
 * leaves the neighbouring block (the pool's next one) and the heap untouched. */
static void test_copy_past_the_end_is_refused(void **state)
{
    tidal_context *ctx = *state;
    const tidal_kind kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED, TIDAL_KIND_PAGEABLE};
    const size_t size = 4096;
    unsigned char *host = malloc(2 * size);
    assert_non_null(host);
    harness_fill(host, 2 * size, 77);
    for (size_t k = 0; k < 4; ++k) {
        unsigned char *a = harness_alloc(ctx, kinds[k], size, 0);
        unsigned char *b = harness_alloc(ctx, kinds[k], size, 0); /* often the pool's next block */
        harness_fill(a, size, 1);
        harness_fill(b, size, 2);
        assert_status(tidal_copy(ctx, a, host, size + 1), TIDAL_ERROR_INVALID_ARGUMENT);
        assert_last_error_contains("destination");
        assert_last_error_contains("runs past the end of its allocation (4096 bytes");
        assert_status(tidal_copy(ctx, host, a, size + 1), TIDAL_ERROR_INVALID_ARGUMENT);
        assert_last_error_contains("source");
        /* An interior start that runs one byte too far, and the async entry point. */
        assert_status(tidal_copy(ctx, a + 100, host, size - 99), TIDAL_ERROR_INVALID_ARGUMENT);
        assert_status(tidal_copy_async(ctx, a + 100, host, size - 99, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
        assert_true(harness_holds(a, size, 1));
        assert_true(harness_holds(b, size, 2));
        /* Exactly to the end is fine. */
        assert_ok(tidal_copy(ctx, a + 100, host, size - 100));
        assert_ok(tidal_free(ctx, a));
        assert_ok(tidal_free(ctx, b));
    }
    free(host);
}

/* A range that starts outside every tidal allocation must not run into one. */
static void test_copy_into_an_allocation_is_refused(void **state)
{
    tidal_context *ctx = *state;
    unsigned char *a = harness_alloc(ctx, TIDAL_KIND_DEVICE, 4096, 0);
    unsigned char src[64];
    memset(src, 1, sizeof src);
    /* 16 bytes before the block: whatever lies there, the copy reaches into the block. */
    const tidal_status s = tidal_copy(ctx, a - 16, src, 32);
    assert_int_equal(s, TIDAL_ERROR_INVALID_ARGUMENT);
    assert_true(harness_contains(tidal_last_error(), "runs into the tidal allocation", 0) ||
                harness_contains(tidal_last_error(), "runs past the end", 0));
    assert_ok(tidal_free(ctx, a));
}

/* Overlapping ranges: memmove on the host, refused where the runtime copies. */
static void test_overlapping_copies(void **state)
{
    tidal_context *ctx = *state;
    enum { size = 1u << 20 };
    static unsigned char expect[size]; /* static: GCC's bounds warning cannot follow cmocka's asserts */
    const tidal_kind host_kinds[] = {TIDAL_KIND_PAGEABLE, TIDAL_KIND_PINNED};
    for (size_t k = 0; k < 2; ++k) {
        unsigned char *buf = harness_alloc(ctx, host_kinds[k], size, 0);
        harness_fill(buf, size, 4);
        memcpy(expect, buf, size);
        memmove(expect + 1, expect, size - 4096);
        assert_ok(tidal_copy(ctx, buf + 1, buf, size - 4096)); /* forward overlap */
        assert_memory_equal(buf, expect, size);
        memmove(expect, expect + 3, size - 4096);
        assert_ok(tidal_copy(ctx, buf, buf + 3, size - 4096)); /* backward overlap */
        assert_memory_equal(buf, expect, size);
        assert_ok(tidal_free(ctx, buf));
    }
    /* Plain malloc memory too (the host path whatever tidal knows). */
    unsigned char *heap = malloc(size);
    assert_non_null(heap);
    harness_fill(heap, size, 6);
    memcpy(expect, heap, size);
    memmove(expect + 4096, expect, size - 4096);
    assert_ok(tidal_copy(ctx, heap + 4096, heap, size - 4096));
    assert_memory_equal(heap, expect, size);
    free(heap);
    const tidal_kind device_kinds[] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED};
    for (size_t k = 0; k < 2; ++k) {
        unsigned char *buf = harness_alloc(ctx, device_kinds[k], size, 0);
        harness_fill(buf, size, 8);
        assert_status(tidal_copy(ctx, buf + 8, buf, 4096), TIDAL_ERROR_INVALID_ARGUMENT);
        assert_last_error_contains("overlap");
        assert_true(harness_holds(buf, size, 8)); /* nothing was copied */
        assert_ok(tidal_copy(ctx, buf + 4096, buf, 4096)); /* disjoint ranges of one block are fine */
        assert_ok(tidal_free(ctx, buf));
    }
}

static void test_runtime_failure_mid_copy_leaves_engine_usable(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[copy]\nchunk_size = \"1MiB\"\n"
                                         "[[sim.fault]]\noperation = \"memcpy\"\nnth = 2\nerror = \"hipErrorOutOfMemory\"\n");
    const size_t size = 4u << 20;
    unsigned char *src = malloc(size);
    assert_non_null(src);
    harness_fill(src, size, 3);
    void *dev = harness_alloc(ctx, TIDAL_KIND_DEVICE, size, 0);
    assert_status(tidal_copy(ctx, dev, src, size), TIDAL_ERROR_OUT_OF_MEMORY);
    assert_last_error_contains("cudaErrorMemoryAllocation (2)");
    assert_ok(tidal_copy(ctx, dev, src, size));
    assert_true(harness_holds(dev, size, 3));
    assert_ok(tidal_free(ctx, dev));
    free(src);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_bad_copy_settings(void **state)
{
    (void)state;
    tidal_context *ctx = NULL;
    assert_status(tidal_context_create_from_string("[copy]\nchunk_size = \"3000\"\n", &ctx), TIDAL_ERROR_CONFIG);
    assert_last_error_contains("<string>:2:");
    assert_status(tidal_context_create_from_string("[copy]\nring_depth = 1\n", &ctx), TIDAL_ERROR_CONFIG);
    assert_status(tidal_context_create_from_string("[copy]\nthread = 4\n", &ctx), TIDAL_ERROR_CONFIG);
    assert_last_error_contains("did you mean 'threads'");
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        HARNESS_SIM_TEST(test_every_kind_and_size),
        cmocka_unit_test(test_many_small_chunks),
        HARNESS_SIM_TEST(test_device_to_device_and_async),
        HARNESS_SIM_TEST(test_registered_memory),
        HARNESS_SIM_TEST(test_copy_errors),
        HARNESS_SIM_TEST(test_copy_past_the_end_is_refused),
        HARNESS_SIM_TEST(test_copy_into_an_allocation_is_refused),
        HARNESS_SIM_TEST(test_overlapping_copies),
        cmocka_unit_test(test_runtime_failure_mid_copy_leaves_engine_usable),
        cmocka_unit_test(test_bad_copy_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
