/* tidal_copy_batch on the simulated device: every direction and kind in one call, on a stream
 * and without, items of odd sizes and alignments, large items, two devices, threads, bad input
 * (nothing copied), an injected kernel failure, and the simulated clock's verdict against one
 * tidal_copy_async per item. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

enum { KINDS = 5, BUFFER = 4u << 20 };

typedef struct buffers {
    unsigned char *src[KINDS];
    unsigned char *dst[KINDS];
} buffers;

/* k: the four tidal kinds a copy meets (device, managed, pinned, pageable), then malloc memory
 * tidal never saw. */
static void *alloc_kind(tidal_context *ctx, int k, size_t size)
{
    static const tidal_kind kinds[KINDS - 1] = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED,
                                                TIDAL_KIND_PAGEABLE};
    if (k == KINDS - 1) {
        void *p = malloc(size);
        assert_non_null(p);
        return p;
    }
    return harness_alloc(ctx, kinds[k], size, 0);
}

static tidal_copy_item item_of(void *dst, const void *src, size_t size)
{
    tidal_copy_item it = TIDAL_COPY_ITEM_INIT;
    it.dst = dst;
    it.src = src;
    it.size = size;
    return it;
}

static void free_kind(tidal_context *ctx, int k, void *p)
{
    if (k == KINDS - 1)
        free(p);
    else
        assert_ok(tidal_free(ctx, p));
}

static void make_buffers(tidal_context *ctx, buffers *b)
{
    for (int k = 0; k < KINDS; ++k) {
        b->src[k] = alloc_kind(ctx, k, BUFFER);
        b->dst[k] = alloc_kind(ctx, k, BUFFER);
    }
}

static void free_buffers(tidal_context *ctx, buffers *b)
{
    for (int k = 0; k < KINDS; ++k) {
        free_kind(ctx, k, b->src[k]);
        free_kind(ctx, k, b->dst[k]);
    }
}

/* Items from every kind to every kind, sizes from 1 byte to past the 1 MiB batching limit, at
 * odd offsets so source and destination alignments differ. Sources are filled with the item's
 * index as seed and destinations cleared. Returns the count. */
static size_t make_items(buffers *b, tidal_copy_item *items, size_t capacity)
{
    static const size_t sizes[] = {1, 7, 16, 100, 4096, 4099, 65536 + 3, 1000};
    size_t n = 0, src_at[KINDS] = {0}, dst_at[KINDS] = {0};
    for (int s = 0; s < KINDS; ++s)
        for (int d = 0; d < KINDS; ++d)
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
                assert_true(n < capacity);
                const size_t size = sizes[(i + (size_t)s + 2 * (size_t)d) % (sizeof sizes / sizeof sizes[0])];
                items[n] = item_of(b->dst[d] + dst_at[d] + (n % 3), b->src[s] + src_at[s] + (n % 5), size);
                ++n;
                src_at[s] += size + 32;
                dst_at[d] += size + 32;
            }
    /* One item above the batching limit: it goes alone, through tidal_copy's path. */
    items[n++] = item_of(b->dst[0] + dst_at[0] + 8, b->src[3] + src_at[3] + 8, (1u << 20) + 5);
    for (int k = 0; k < KINDS; ++k)
        assert_true(src_at[k] + (1u << 20) + 64 <= BUFFER && dst_at[k] + (1u << 20) + 64 <= BUFFER);
    for (int k = 0; k < KINDS; ++k)
        memset(b->dst[k], 0, BUFFER); /* simulated device memory is host memory */
    for (size_t i = 0; i < n; ++i)
        harness_fill((void *)items[i].src, items[i].size, (unsigned)i + 1);
    return n;
}

static void check_items(const tidal_copy_item *items, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (!harness_holds(items[i].dst, items[i].size, (unsigned)i + 1)) {
            print_error("item %zu (%zu bytes) did not arrive intact\n", i, items[i].size);
            fail();
        }
}

static void test_every_direction_and_kind(void **state)
{
    tidal_context *ctx = *state;
    buffers b;
    make_buffers(ctx, &b);
    tidal_copy_item items[256];
    size_t n = make_items(&b, items, 256);
    assert_ok(tidal_copy_batch(ctx, items, n, NULL)); /* NULL stream: complete on return */
    check_items(items, n);

    void *stream = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &stream));
    n = make_items(&b, items, 256);
    assert_ok(tidal_copy_batch(ctx, items, n, stream));
    assert_ok(tidal_stream_synchronize(ctx, stream));
    check_items(items, n);
    assert_ok(tidal_stream_destroy(ctx, stream));
    free_buffers(ctx, &b);
}

/* [copy] batch_direct = false stages pinned ends too: every item still arrives, and the staged
 * path and the in-place path take different simulated times (the pinned items move by DMA). */
static void test_pinned_ends_staged_or_in_place(void **state)
{
    (void)state;
    double took[2] = {0, 0};
    for (int direct = 0; direct < 2; ++direct) {
        tidal_context *ctx = harness_context(direct ? "runtime = \"sim\"\n[copy]\nbatch_direct = true\n"
                                                    : "runtime = \"sim\"\n[copy]\nbatch_direct = false\n");
        buffers b;
        make_buffers(ctx, &b);
        tidal_copy_item items[256];
        size_t n = make_items(&b, items, 256);
        double t0 = 0, t1 = 0;
        assert_ok(tidal_clock(ctx, &t0));
        assert_ok(tidal_copy_batch(ctx, items, n, NULL));
        assert_ok(tidal_clock(ctx, &t1));
        check_items(items, n);
        took[direct] = t1 - t0;
        free_buffers(ctx, &b);
        assert_ok(tidal_context_destroy(ctx));
    }
    assert_true(took[0] != took[1]);
}

static void test_many_waves(void **state)
{
    (void)state;
    /* 64 KiB staging slots: 300 items of 3000 bytes take many waves through both slots. */
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[copy]\nchunk_size = \"64KiB\"\n");
    enum { N = 300, SIZE = 3000 };
    unsigned char *host = alloc_kind(ctx, 3, N * 4096), *dev = alloc_kind(ctx, 0, N * 4096);
    unsigned char *back = alloc_kind(ctx, 4, N * 4096);
    tidal_copy_item up[N], down[N];
    for (size_t i = 0; i < N; ++i) {
        harness_fill(host + i * 4096, SIZE, (unsigned)i);
        up[i] = item_of(dev + (N - 1 - i) * 4096 + 1, host + i * 4096, SIZE); /* reversed, misaligned */
        down[i] = item_of(back + i * 4096, up[i].dst, SIZE);
    }
    assert_ok(tidal_copy_batch(ctx, up, N, NULL));
    memset(back, 0, N * 4096);
    assert_ok(tidal_copy_batch(ctx, down, N, NULL));
    for (size_t i = 0; i < N; ++i)
        assert_true(harness_holds(back + i * 4096, SIZE, (unsigned)i));
    free_kind(ctx, 3, host);
    free_kind(ctx, 0, dev);
    free_kind(ctx, 4, back);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_zero_count_and_zero_sizes(void **state)
{
    tidal_context *ctx = *state;
    assert_ok(tidal_copy_batch(ctx, NULL, 0, NULL));
    char a[8] = "abcdefg", b[8] = {0};
    tidal_copy_item items[2] = {TIDAL_COPY_ITEM_INIT, TIDAL_COPY_ITEM_INIT};
    items[0].dst = b;
    items[0].src = a;
    items[1].dst = b; /* size 0: overlaps nothing, copies nothing */
    items[1].src = a;
    assert_ok(tidal_copy_batch(ctx, items, 2, NULL));
    assert_int_equal(b[0], 0);
    items[0].size = 8;
    assert_ok(tidal_copy_batch(ctx, items, 2, NULL));
    assert_string_equal(b, "abcdefg");
}

static void test_bad_input_copies_nothing(void **state)
{
    tidal_context *ctx = *state;
    unsigned char *dev = alloc_kind(ctx, 0, 8192), *host = alloc_kind(ctx, 2, 8192);
    memset(dev, 0, 8192);
    harness_fill(host, 8192, 4);
    tidal_copy_item items[4];
    for (size_t i = 0; i < 4; ++i)
        items[i] = item_of(dev + i * 1024, host + i * 1024, 1024);
    assert_status(tidal_copy_batch(NULL, items, 4, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_status(tidal_copy_batch(ctx, NULL, 4, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("items is NULL");

    items[2].dst = NULL;
    assert_status(tidal_copy_batch(ctx, items, 4, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("item 2 has a NULL dst");
    items[2].dst = dev + 2048;
    items[3].src = NULL;
    assert_status(tidal_copy_batch(ctx, items, 4, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("item 3 has a NULL src");
    items[3].src = host + 3072;

    items[1].struct_size = 16;
    assert_status(tidal_copy_batch(ctx, items, 4, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("item 1 has struct_size 16");
    items[0].struct_size = items[1].struct_size = 16;
    assert_status(tidal_copy_batch(ctx, items, 4, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("TIDAL_COPY_ITEM_INIT");
    items[0].struct_size = items[1].struct_size = sizeof(tidal_copy_item);

    items[3].dst = dev + 1500; /* into item 1's destination */
    assert_status(tidal_copy_batch(ctx, items, 4, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("items 1 and 3 have overlapping destinations");
    items[3].dst = dev + 3072;
    items[0].src = dev + 3500; /* reads item 3's destination */
    assert_status(tidal_copy_batch(ctx, items, 4, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("item 0's source overlaps item 3's destination");
    items[0].src = host;
    items[2].size = 8192 - 2048 + 1; /* one byte past the end of the device buffer */
    items[2].src = host;
    assert_status(tidal_copy_batch(ctx, items, 3, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_last_error_contains("item 2: the destination");
    assert_last_error_contains("runs past the end of its allocation");
    for (size_t i = 0; i < 8192; ++i)
        if (dev[i] != 0)
            fail_msg("byte %zu was copied by a refused batch", i);
    free_kind(ctx, 0, dev);
    free_kind(ctx, 2, host);
}

/* A count larger than any array is refused before a single item past the first is read (the one
 * real item ends where an inaccessible page begins) and before anything is copied. */
static void test_absurd_counts_are_refused_before_reading(void **state)
{
    tidal_context *ctx = *state;
    unsigned char *dev = alloc_kind(ctx, 0, 4096), *host = alloc_kind(ctx, 2, 4096);
    memset(dev, 0, 4096);
    harness_fill(host, 4096, 9);
    tidal_copy_item *item = harness_alloc_fenced(sizeof *item);
    *item = item_of(dev, host, 4096);
    const size_t counts[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 2, SIZE_MAX / 2 + 1, SIZE_MAX / sizeof *item + 1,
                             (size_t)PTRDIFF_MAX / sizeof *item + 1};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
        assert_status(tidal_copy_batch(ctx, item, counts[i], NULL), TIDAL_ERROR_INVALID_ARGUMENT);
        char number[32];
        snprintf(number, sizeof number, "count %zu is too large", counts[i]);
        assert_contains(tidal_last_error(), number);
        assert_contains(tidal_last_error(), "would not fit in the address space");
    }
    item->struct_size = (size_t)1 << 20; /* a newer caller's larger items: their bytes overflow */
    assert_status(tidal_copy_batch(ctx, item, (size_t)1 << 44, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_contains(tidal_last_error(), "1048576 bytes");
    for (size_t i = 0; i < 4096; ++i)
        if (dev[i] != 0)
            fail_msg("byte %zu was copied by a refused batch", i);
    *item = item_of(dev, host, 4096);
    assert_ok(tidal_copy_batch(ctx, item, 1, NULL));
    assert_true(harness_holds(dev, 4096, 9));
    harness_free_fenced(item, sizeof *item);
    free_kind(ctx, 0, dev);
    free_kind(ctx, 2, host);
}

/* What the issue asks of the H200, on its simulated profile: 1000 host->device copies of 4 KiB
 * in one batch against one tidal_copy_async each (each a runtime memcpy from pinned memory). */
static void test_batch_is_cheaper_on_the_sim_clock(void **state)
{
    tidal_context *ctx = *state;
    enum { N = 1000, SIZE = 4096 };
    unsigned char *src = alloc_kind(ctx, 2, N * SIZE), *dev = alloc_kind(ctx, 0, 2 * N * SIZE);
    static tidal_copy_item items[N];
    for (size_t i = 0; i < N; ++i)
        items[i] = item_of(dev + ((i * 7919) % N) * 2 * SIZE, src + i * SIZE, SIZE); /* scattered */
    void *stream = NULL;
    assert_ok(tidal_stream_create(ctx, 0, &stream));
    assert_ok(tidal_copy_batch(ctx, items, N, stream)); /* staging is allocated once: not timed */
    assert_ok(tidal_stream_synchronize(ctx, stream));
    double t0, t1, t2;
    assert_ok(tidal_clock(ctx, &t0));
    for (size_t i = 0; i < N; ++i)
        assert_ok(tidal_copy_async(ctx, items[i].dst, items[i].src, SIZE, stream));
    assert_ok(tidal_stream_synchronize(ctx, stream));
    assert_ok(tidal_clock(ctx, &t1));
    assert_ok(tidal_copy_batch(ctx, items, N, stream));
    assert_ok(tidal_stream_synchronize(ctx, stream));
    assert_ok(tidal_clock(ctx, &t2));
    const double separate = t1 - t0, batched = t2 - t1;
    if (!(batched > 0 && separate >= 5 * batched))
        fail_msg("separate copies took %.1f us, the batch %.1f us: less than 5x", separate * 1e6, batched * 1e6);
    assert_ok(tidal_stream_destroy(ctx, stream));
    free_kind(ctx, 2, src);
    free_kind(ctx, 0, dev);
}

static void test_kernel_failure_loses_nothing(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[[sim.fault]]\noperation = \"kernel\"\nnth = 1\n"
                                         "error = \"hipErrorLaunchFailure\"\n");
    unsigned char *host = alloc_kind(ctx, 3, 64 * 1024), *dev = alloc_kind(ctx, 0, 64 * 1024);
    tidal_copy_item items[16];
    for (size_t i = 0; i < 16; ++i) {
        items[i] = item_of(dev + i * 4096, host + i * 4096, 4000);
        harness_fill(host + i * 4096, 4000, (unsigned)i);
    }
    const tidal_status s = tidal_copy_batch(ctx, items, 16, NULL);
    assert_true(s != TIDAL_OK);
    assert_last_error_contains("cudaErrorLaunchFailure (719)");
    assert_last_error_contains("batch copy kernel");
    /* The sources are untouched and the staging usable: the same batch goes through now. */
    assert_ok(tidal_copy_batch(ctx, items, 16, NULL));
    for (size_t i = 0; i < 16; ++i)
        assert_true(harness_holds(dev + i * 4096, 4000, (unsigned)i));
    free_kind(ctx, 3, host);
    free_kind(ctx, 0, dev);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_two_devices(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\ndevices = 2\n");
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    unsigned char *d0 = NULL, *d1 = NULL;
    desc.device = 0;
    assert_ok(tidal_alloc(ctx, 65536, &desc, (void **)&d0));
    desc.device = 1;
    assert_ok(tidal_alloc(ctx, 65536, &desc, (void **)&d1));
    unsigned char *host = alloc_kind(ctx, 4, 65536);
    tidal_copy_item items[3] = {
        item_of(d0, host, 5000),                /* host -> device 0: batched */
        item_of(d1, host + 8192, 5000),         /* host -> device 1: alone */
        item_of(d1 + 16384, d0 + 16384, 5000),  /* device 0 -> device 1: alone */
    };
    for (size_t i = 0; i < 3; ++i)
        harness_fill((void *)items[i].src, 5000, 40 + (unsigned)i);
    assert_ok(tidal_copy_batch(ctx, items, 3, NULL));
    for (size_t i = 0; i < 3; ++i)
        assert_true(harness_holds(items[i].dst, 5000, 40 + (unsigned)i));
    assert_ok(tidal_free(ctx, d0));
    assert_ok(tidal_free(ctx, d1));
    free(host);
    assert_ok(tidal_context_destroy(ctx));
}

typedef struct worker {
    tidal_context *ctx;
    unsigned char *host, *dev;
    unsigned seed;
    int failures;
} worker;

static void *batch_worker(void *arg)
{
    worker *w = arg;
    enum { N = 64, SIZE = 2048 };
    void *stream = NULL;
    if (tidal_stream_create(w->ctx, 0, &stream) != TIDAL_OK)
        return (void *)1;
    for (int round = 0; round < 20; ++round) {
        tidal_copy_item items[N];
        for (size_t i = 0; i < N; ++i) {
            items[i] = item_of(w->dev + i * SIZE, w->host + i * SIZE, SIZE);
            harness_fill(w->host + i * SIZE, SIZE, w->seed + (unsigned)round + (unsigned)i);
        }
        if (tidal_copy_batch(w->ctx, items, N, stream) != TIDAL_OK ||
            tidal_stream_synchronize(w->ctx, stream) != TIDAL_OK)
            ++w->failures;
        for (size_t i = 0; i < N; ++i)
            if (!harness_holds(w->dev + i * SIZE, SIZE, w->seed + (unsigned)round + (unsigned)i))
                ++w->failures;
    }
    tidal_stream_destroy(w->ctx, stream);
    return NULL;
}

static void test_threads(void **state)
{
    tidal_context *ctx = *state;
    enum { THREADS = 4 };
    worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        w[i] = (worker){ctx, alloc_kind(ctx, 2, 64 * 2048), alloc_kind(ctx, 0, 64 * 2048), 1000u * (unsigned)i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, batch_worker, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; ++i) {
        void *result = NULL;
        assert_int_equal(pthread_join(t[i], &result), 0);
        assert_null(result);
        assert_int_equal(w[i].failures, 0);
        free_kind(ctx, 2, w[i].host);
        free_kind(ctx, 0, w[i].dev);
    }
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        HARNESS_SIM_TEST(test_every_direction_and_kind),
        cmocka_unit_test(test_pinned_ends_staged_or_in_place),
        cmocka_unit_test(test_many_waves),
        HARNESS_SIM_TEST(test_zero_count_and_zero_sizes),
        HARNESS_SIM_TEST(test_bad_input_copies_nothing),
        HARNESS_SIM_TEST(test_absurd_counts_are_refused_before_reading),
        HARNESS_SIM_TEST(test_batch_is_cheaper_on_the_sim_clock),
        cmocka_unit_test(test_kernel_failure_loses_nothing),
        cmocka_unit_test(test_two_devices),
        HARNESS_SIM_TEST(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
