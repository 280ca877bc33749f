/* Device suite: the C API on a real GPU. Skips (exit 77) when the best runtime found is the
 * simulated device. Plain C (no cmocka) so it runs on GPU machines that lack test libraries.
 * Managed memory stays far below the card's memory: at most 2 x 256 MiB at a time. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tidal/tidal.h>

#define EXPECT_NOTE() fprintf(stderr, " [last error: %s]", tidal_last_error())
#include "device_expect.h"

#define EXPECT_STATUS(call, want)                                                                  \
    do {                                                                                           \
        tidal_status got_ = (call);                                                                \
        EXPECT(got_ == (want), "%s returned %s, expected %s", #call, tidal_status_name(got_),      \
               tidal_status_name(want));                                                           \
    } while (0)

static tidal_status run(tidal_context *ctx, tidal_check_kind kind, int32_t dev, void *t, const void *s, size_t size,
                        uint64_t seed, uint64_t *result)
{
    tidal_check c = TIDAL_CHECK_INIT;
    c.kind = kind;
    c.device = dev;
    c.target = t;
    c.source = s;
    c.size = size;
    c.seed = seed;
    tidal_status st = tidal_check_run(ctx, &c);
    if (result)
        *result = c.result;
    return st;
}

static void kind_round_trip(tidal_context *ctx, const tidal_device_info *dev, tidal_kind kind, size_t size)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    desc.device = dev->index;
    desc.tag = "device-test";
    void *p = NULL;
    tidal_status s = tidal_alloc(ctx, size, &desc, &p);
    const int fine = kind == TIDAL_KIND_DEVICE_FINE || kind == TIDAL_KIND_MANAGED_COARSE;
    if (fine && !(dev->flags & TIDAL_DEVICE_FLAG_FINE_GRAINED)) {
        EXPECT(s == TIDAL_ERROR_NOT_SUPPORTED, "%s on a device without fine-grained kinds: %s", tidal_kind_name(kind),
               tidal_status_name(s));
        return;
    }
    EXPECT(s == TIDAL_OK, "alloc %s", tidal_kind_name(kind));
    if (s != TIDAL_OK)
        return;
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    EXPECT_STATUS(tidal_pointer_query(ctx, (char *)p + size - 1, &info), TIDAL_OK);
    EXPECT(info.base == p && info.kind == kind, "query of %s", tidal_kind_name(kind));
    printf("  %-15s alloc ok", tidal_kind_name(kind));
    if (kind == TIDAL_KIND_PAGEABLE && !(dev->flags & TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS)) {
        printf(", kernels skipped (no pageable access: a kernel would fault)\n");
        EXPECT_STATUS(tidal_prefetch(ctx, p, size, dev->index), TIDAL_OK); /* a counted no-op */
        EXPECT_STATUS(tidal_free(ctx, p), TIDAL_OK);
        return;
    }
    uint64_t bad = 1;
    EXPECT_STATUS(run(ctx, TIDAL_CHECK_TOUCH_WRITE, dev->index, p, NULL, size, 0, NULL), TIDAL_OK);
    EXPECT_STATUS(run(ctx, TIDAL_CHECK_PATTERN_FILL, dev->index, p, NULL, size, 77, NULL), TIDAL_OK);
    EXPECT_STATUS(run(ctx, TIDAL_CHECK_PATTERN_VERIFY, dev->index, p, NULL, size, 77, &bad), TIDAL_OK);
    EXPECT(bad == 0, "%s: %llu words corrupted after fill", tidal_kind_name(kind), (unsigned long long)bad);
    EXPECT_STATUS(run(ctx, TIDAL_CHECK_PATTERN_VERIFY, dev->index, p, NULL, size, 78, &bad), TIDAL_OK);
    EXPECT(bad == size / 8, "%s: a wrong seed must mismatch every word, got %llu", tidal_kind_name(kind),
           (unsigned long long)bad);
    const int managed = TIDAL_KIND_IS_MANAGED(kind);
    const int32_t places[] = {TIDAL_DEVICE_HOST, dev->index, TIDAL_DEVICE_HOST, dev->index};
    for (int i = 0; i < 4; ++i) {
        EXPECT_STATUS(tidal_prefetch(ctx, p, size, places[i]), TIDAL_OK);
        if (managed) {
            tidal_range_info r = TIDAL_RANGE_INFO_INIT;
            EXPECT_STATUS(tidal_range_query(ctx, p, size, &r), TIDAL_OK);
            EXPECT(r.last_prefetch_location == places[i], "%s: last prefetch location %d, expected %d",
                   tidal_kind_name(kind), r.last_prefetch_location, places[i]);
        }
        EXPECT_STATUS(run(ctx, TIDAL_CHECK_PATTERN_VERIFY, dev->index, p, NULL, size, 77, &bad), TIDAL_OK);
        EXPECT(bad == 0, "%s: %llu words corrupted after move %d", tidal_kind_name(kind), (unsigned long long)bad, i);
    }
    if (TIDAL_KIND_IS_HOST(kind) || TIDAL_KIND_IS_MANAGED(kind)) {
        /* Host-visible kinds: device atomics, then the host reads the counters directly (not
         * device or elastic memory: the host cannot touch them; the H200 run faulted on elastic). */
        memset(p, 0, 8192);
        EXPECT_STATUS(tidal_prefetch(ctx, p, size, dev->index), TIDAL_OK);
        EXPECT_STATUS(run(ctx, TIDAL_CHECK_ATOMIC_ADD, dev->index, p, NULL, 8192, 1000, NULL), TIDAL_OK);
        size_t wrong = 0;
        for (size_t i = 0; i < 1024; ++i)
            wrong += ((const uint64_t *)p)[i] != 1000;
        EXPECT(wrong == 0, "%s: %zu atomic counters wrong", tidal_kind_name(kind), wrong);
    }
    printf(", touch/pattern/%s/atomics ok\n", managed ? "prefetch both ways" : "no-op prefetch");
    EXPECT_STATUS(tidal_free(ctx, p), TIDAL_OK);
}

/* The atomic set on the real device: every operation exact on each kind the device reaches,
 * and with host threads on the same words at once where the host reaches them too; what the
 * device reports as host-native atomics is printed beside it. Known exceptions are accepted
 * with their reason (MI200: float atomics do nothing on fine-grained memory). */
static void atomic_set(tidal_context *ctx, const tidal_device_info *dev)
{
    printf("device %d: host-native atomics reported: %s\n", dev->index,
           dev->flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS ? "yes" : "no");
    const int mi200 = strncmp(dev->arch, "gfx90a", 6) == 0;
    for (int k = TIDAL_KIND_DEVICE; k < TIDAL_KIND_COUNT; ++k) {
        const tidal_kind kind = (tidal_kind)k;
        if (kind == TIDAL_KIND_PAGEABLE && !(dev->flags & TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS))
            continue; /* unreachable: refused before the launch (the capi suite checks it) */
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.kind = kind;
        desc.device = dev->index;
        void *p = NULL;
        if (tidal_alloc(ctx, 4096, &desc, &p) != TIDAL_OK)
            continue; /* a kind this device lacks: kind_round_trip reports it */
        const int fine = kind == TIDAL_KIND_PINNED || kind == TIDAL_KIND_PAGEABLE || kind == TIDAL_KIND_DEVICE_FINE ||
                         kind == TIDAL_KIND_MANAGED;
        const uint64_t allowed = mi200 && fine ? TIDAL_ATOMIC_FADD32 : 0;
        const int shared = TIDAL_KIND_IS_HOST(kind) || TIDAL_KIND_IS_MANAGED(kind);
        for (int pass = 0; pass < 1 + shared; ++pass) {
            /* Without host-native atomics nothing is promised on host memory against host
             * threads (the H200 lost add32/sub32/exch32/cas32 or xor32 updates there); the
             * device alone must still be exact. */
            const uint64_t unpromised = pass && TIDAL_KIND_IS_HOST(kind) && !(dev->flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS)
                                            ? TIDAL_ATOMIC_ALL
                                            : 0;
            uint64_t wrong = ~0ull;
            EXPECT_STATUS(run(ctx, pass ? TIDAL_CHECK_ATOMIC_SET_SHARED : TIDAL_CHECK_ATOMIC_SET, dev->index, p, NULL,
                              4096, 16, &wrong),
                          TIDAL_OK);
            printf("  atomic set on %s, %s: wrong mask 0x%llx\n", tidal_kind_name(kind), pass ? "host+device" : "device",
                   (unsigned long long)wrong);
            EXPECT((wrong & ~(allowed | unpromised)) == 0, "%s (%s): operations 0x%llx came out wrong", tidal_kind_name(kind),
                   pass ? "host+device" : "device", (unsigned long long)(wrong & ~(allowed | unpromised)));
        }
        EXPECT_STATUS(tidal_free(ctx, p), TIDAL_OK);
    }
}

/* Declarations, a budget and eviction, stream-ordered allocation on the real device: data
 * stays intact through every move, the caller's stream is ordered after tidal's migrations,
 * and the budget holds. Managed memory: 3 x 64 MiB. */
static void declarations(tidal_context *ctx, int32_t d)
{
    const size_t n = (size_t)64 << 20;
    void *stream = NULL;
    EXPECT_STATUS(tidal_stream_create(ctx, d, &stream), TIDAL_OK);
    EXPECT_STATUS(tidal_budget_set(ctx, d, 2 * n), TIDAL_OK);
    void *arr[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; ++i) {
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.kind = TIDAL_KIND_MANAGED;
        desc.device = d;
        desc.hints = i == 2 ? TIDAL_HINT_READ_MOSTLY : 0;
        EXPECT_STATUS(tidal_alloc(ctx, n, &desc, &arr[i]), TIDAL_OK);
        EXPECT_STATUS(run(ctx, TIDAL_CHECK_PATTERN_FILL, d, arr[i], NULL, n, 50 + (uint64_t)i, NULL), TIDAL_OK);
        EXPECT_STATUS(tidal_prefetch(ctx, arr[i], n, TIDAL_DEVICE_HOST), TIDAL_OK);
    }
    for (int round = 0; round < 6; ++round) {
        const int i = round % 3;
        tidal_access a = TIDAL_ACCESS_INIT;
        a.ptr = arr[i];
        a.size = n;
        a.device = d;
        a.mode = i == 2 ? TIDAL_ACCESS_READ : TIDAL_ACCESS_READ_WRITE;
        EXPECT_STATUS(tidal_declare(ctx, stream, &a, 1, 0), TIDAL_OK);
        tidal_check c = TIDAL_CHECK_INIT;
        c.kind = TIDAL_CHECK_PATTERN_VERIFY;
        c.device = d;
        c.target = arr[i];
        c.size = n;
        c.seed = 50 + (uint64_t)i;
        c.stream = stream;
        EXPECT_STATUS(tidal_check_run(ctx, &c), TIDAL_OK);
        EXPECT(c.result == 0, "round %d: %llu words wrong after a declared migration", round,
               (unsigned long long)c.result);
        tidal_migration_stats st = TIDAL_MIGRATION_STATS_INIT;
        EXPECT_STATUS(tidal_migration_stats_get(ctx, d, &st), TIDAL_OK);
        EXPECT(st.resident_bytes <= 2 * n, "resident %llu over the budget", (unsigned long long)st.resident_bytes);
    }
    tidal_migration_stats st = TIDAL_MIGRATION_STATS_INIT;
    EXPECT_STATUS(tidal_migration_stats_get(ctx, d, &st), TIDAL_OK);
    EXPECT(st.evictions > 0 && st.budget_refusals == 0, "evictions %llu, refusals %llu",
           (unsigned long long)st.evictions, (unsigned long long)st.budget_refusals);
    printf("declarations: %llu MiB migrated, %llu evictions (%llu MiB copied back, %llu MiB dropped), data intact\n",
           (unsigned long long)(st.migrated_bytes >> 20), (unsigned long long)st.evictions,
           (unsigned long long)(st.evicted_bytes >> 20), (unsigned long long)(st.dropped_bytes >> 20));
    EXPECT_STATUS(tidal_declare(ctx, stream, NULL, 0, 0), TIDAL_OK);
    EXPECT_STATUS(tidal_budget_set(ctx, d, 0), TIDAL_OK);
    /* Stream-ordered allocation: a block freed on the stream is reused on it at once. */
    void *p = NULL, *q = NULL;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = d;
    EXPECT_STATUS(tidal_alloc_async(ctx, n, &desc, stream, &p), TIDAL_OK);
    EXPECT_STATUS(run(ctx, TIDAL_CHECK_PATTERN_FILL, d, p, NULL, n, 9, NULL), TIDAL_OK);
    EXPECT_STATUS(tidal_free_async(ctx, p, stream), TIDAL_OK);
    EXPECT_STATUS(tidal_alloc_async(ctx, n, &desc, stream, &q), TIDAL_OK);
    EXPECT(q == p, "a block freed on a stream was not reused on it");
    EXPECT_STATUS(tidal_free_async(ctx, q, stream), TIDAL_OK);
    EXPECT_STATUS(tidal_stream_synchronize(ctx, stream), TIDAL_OK);
    for (int i = 0; i < 3; ++i)
        EXPECT_STATUS(tidal_free(ctx, arr[i]), TIDAL_OK);
    EXPECT_STATUS(tidal_stream_destroy(ctx, stream), TIDAL_OK);
}

static void *alloc_on(tidal_context *ctx, tidal_kind kind, int32_t d, size_t n)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    desc.device = d;
    void *p = NULL;
    EXPECT_STATUS(tidal_alloc(ctx, n, &desc, &p), TIDAL_OK);
    return p;
}

/* An explicit prefetch of a range whose lookahead move may still be in flight: it runs after
 * that move, so the range ends on the host and the data are intact. Managed memory: 256 MiB. */
static void prefetch_after_lookahead(tidal_context *ctx, int32_t d)
{
    const size_t n = (size_t)256 << 20;
    void *p = alloc_on(ctx, TIDAL_KIND_MANAGED, d, n);
    EXPECT_STATUS(run(ctx, TIDAL_CHECK_PATTERN_FILL, d, p, NULL, n, 77, NULL), TIDAL_OK);
    EXPECT_STATUS(tidal_prefetch(ctx, p, n, TIDAL_DEVICE_HOST), TIDAL_OK);
    tidal_access a = TIDAL_ACCESS_INIT;
    a.ptr = p;
    a.size = n;
    a.device = d;
    a.mode = TIDAL_ACCESS_READ;
    EXPECT_STATUS(tidal_declare(ctx, NULL, &a, 1, TIDAL_DECLARE_LOOKAHEAD), TIDAL_OK);
    EXPECT_STATUS(tidal_prefetch(ctx, p, n, TIDAL_DEVICE_HOST), TIDAL_OK);
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    EXPECT_STATUS(tidal_range_query(ctx, p, n, &info), TIDAL_OK);
    EXPECT(info.last_prefetch_location == TIDAL_DEVICE_HOST, "the range was last prefetched to %d",
           (int)info.last_prefetch_location);
    uint64_t wrong = 1;
    EXPECT_STATUS(run(ctx, TIDAL_CHECK_PATTERN_VERIFY, d, p, NULL, n, 77, &wrong), TIDAL_OK);
    EXPECT(wrong == 0, "%llu words wrong after a lookahead and an explicit prefetch", (unsigned long long)wrong);
    EXPECT_STATUS(tidal_declare(ctx, NULL, NULL, 0, 0), TIDAL_OK);
    EXPECT_STATUS(tidal_free(ctx, p), TIDAL_OK);
    printf("explicit prefetch after a lookahead: on the host, data intact\n");
}

/* [pool] backend = "vendor" where the runtime has a stream-ordered pool: tidal_pool_trim trims
 * it to release_threshold, and the statistics show its reserve. */
static void vendor_pool_trim(int32_t d)
{
    tidal_context *ctx = NULL;
    tidal_status s = tidal_context_create_from_string(
        "runtime = \"auto\"\nlog_level = \"error\"\n[pool]\nbackend = \"vendor\"\n", &ctx);
    if (s == TIDAL_ERROR_NOT_SUPPORTED) {
        printf("vendor pool: not supported by this runtime (%s)\n", tidal_last_error());
        return;
    }
    EXPECT_STATUS(s, TIDAL_OK);
    if (s != TIDAL_OK)
        return;
    const size_t n = (size_t)64 << 20;
    void *p = alloc_on(ctx, TIDAL_KIND_DEVICE, d, n);
    tidal_pool_stats st = TIDAL_POOL_STATS_INIT;
    EXPECT_STATUS(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, d, &st), TIDAL_OK);
    EXPECT(st.reserved_bytes >= n && st.in_use_bytes == n, "reserved %llu, in use %llu",
           (unsigned long long)st.reserved_bytes, (unsigned long long)st.in_use_bytes);
    EXPECT_STATUS(tidal_free(ctx, p), TIDAL_OK);
    uint64_t released = 0;
    EXPECT_STATUS(tidal_pool_trim(ctx, &released), TIDAL_OK);
    EXPECT_STATUS(tidal_pool_stats_get(ctx, TIDAL_KIND_DEVICE, d, &st), TIDAL_OK);
    EXPECT(st.in_use_bytes == 0, "in use %llu after the free", (unsigned long long)st.in_use_bytes);
    EXPECT(released >= n, "tidal_pool_trim gave back %llu bytes of the %zu freed", (unsigned long long)released, n);
    printf("vendor pool: %llu MiB given back by tidal_pool_trim, %llu bytes reserved after it\n",
           (unsigned long long)(released >> 20), (unsigned long long)st.reserved_bytes);
    EXPECT_STATUS(tidal_context_destroy(ctx), TIDAL_OK);
}

/* tidal_copy returns when the copy is complete, device to device too: cudaMemcpy alone returns
 * before a device-to-device copy has finished. The end of the destination is read at once on a
 * non-blocking stream, which does not wait for the default stream: a copy still running leaves
 * it stale. And 1 GiB cannot cross HBM in under 0.1 ms (10 TB/s). */
static void device_copy_completes(tidal_context *ctx, int32_t d)
{
    const size_t size = (size_t)1 << 30, tail = (size_t)1 << 20;
    tidal_alloc_desc dd = TIDAL_ALLOC_DESC_INIT, hd = TIDAL_ALLOC_DESC_INIT;
    dd.kind = TIDAL_KIND_DEVICE;
    dd.device = d;
    hd.kind = TIDAL_KIND_PINNED;
    hd.device = d;
    unsigned char *src = NULL, *dst = NULL, *host = NULL, *out = NULL;
    void *stream = NULL;
    EXPECT_STATUS(tidal_alloc(ctx, size, &dd, (void **)&src), TIDAL_OK);
    EXPECT_STATUS(tidal_alloc(ctx, size, &dd, (void **)&dst), TIDAL_OK);
    EXPECT_STATUS(tidal_alloc(ctx, size, &hd, (void **)&host), TIDAL_OK);
    EXPECT_STATUS(tidal_alloc(ctx, tail, &hd, (void **)&out), TIDAL_OK);
    EXPECT_STATUS(tidal_stream_create(ctx, d, &stream), TIDAL_OK);
    if (!src || !dst || !host || !out || !stream)
        return;
    int stale = 0;
    double fastest = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
        memset(host, 0, size);
        EXPECT_STATUS(tidal_copy(ctx, dst, host, size), TIDAL_OK);
        memset(host, 0x5a + rep, size);
        EXPECT_STATUS(tidal_copy(ctx, src, host, size), TIDAL_OK);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        EXPECT_STATUS(tidal_copy(ctx, dst, src, size), TIDAL_OK);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        EXPECT_STATUS(tidal_copy_async(ctx, out, dst + size - tail, tail, stream), TIDAL_OK);
        EXPECT_STATUS(tidal_stream_synchronize(ctx, stream), TIDAL_OK);
        for (size_t i = 0; i < tail; ++i)
            if (out[i] != (unsigned char)(0x5a + rep)) {
                ++stale;
                break;
            }
        const double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        fastest = s < fastest ? s : fastest;
    }
    printf("  device->device tidal_copy of 1 GiB: fastest %.3f ms, %d stale read(s) of its end\n", fastest * 1e3, stale);
    EXPECT(stale == 0, "tidal_copy device->device returned before its end was written (%d of 3)", stale);
    EXPECT(fastest > 1e-4, "tidal_copy of 1 GiB device->device returned in %.1f us: it did not wait", fastest * 1e6);
    EXPECT_STATUS(tidal_stream_destroy(ctx, stream), TIDAL_OK);
    EXPECT_STATUS(tidal_free(ctx, out), TIDAL_OK);
    EXPECT_STATUS(tidal_free(ctx, host), TIDAL_OK);
    EXPECT_STATUS(tidal_free(ctx, dst), TIDAL_OK);
    EXPECT_STATUS(tidal_free(ctx, src), TIDAL_OK);
}

int main(void)
{
    tidal_context *ctx = NULL;
    tidal_status s = tidal_context_create_from_string("runtime = \"auto\"\nlog_level = \"error\"\n", &ctx);
    if (s != TIDAL_OK) {
        fprintf(stderr, "cannot create a context: %s: %s\n", tidal_status_name(s), tidal_last_error());
        return 1;
    }
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    EXPECT_STATUS(tidal_system_info_get(ctx, &sys), TIDAL_OK);
    if (strcmp(sys.runtime, "sim") == 0) {
        printf("SKIP: no GPU runtime is usable here (the best runtime is the simulated device)\n");
        tidal_context_destroy(ctx);
        return 77;
    }
    printf("runtime %s (%s), %d device(s)\n", sys.runtime, sys.runtime_detail, sys.device_count);
    for (int32_t d = 0; d < sys.device_count; ++d) {
        tidal_device_info dev = TIDAL_DEVICE_INFO_INIT;
        EXPECT_STATUS(tidal_device_info_get(ctx, d, &dev), TIDAL_OK);
        printf("device %d: %s (%s), %.1f GiB, flags 0x%x\n", d, dev.name, dev.arch, dev.total_memory / 1073741824.0,
               dev.flags);
        EXPECT(!(dev.flags & TIDAL_DEVICE_FLAG_SIMULATED), "a GPU runtime reported a simulated device");
        EXPECT(dev.total_memory > 0 && dev.free_memory > 0 && dev.free_memory <= dev.total_memory, "memory figures");
        for (int k = TIDAL_KIND_DEVICE; k < TIDAL_KIND_COUNT; ++k)
            kind_round_trip(ctx, &dev, (tidal_kind)k, 256u << 20);
        atomic_set(ctx, &dev);
        device_copy_completes(ctx, d);
        /* An absurd request fails cleanly and the context stays usable. */
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.kind = TIDAL_KIND_DEVICE;
        desc.device = d;
        void *p = NULL;
        EXPECT_STATUS(tidal_alloc(ctx, (size_t)1 << 50, &desc, &p), TIDAL_ERROR_OUT_OF_MEMORY);
        EXPECT(strstr(tidal_last_error(), "(2)") != NULL, "the native error number is named: %s", tidal_last_error());
        EXPECT_STATUS(tidal_alloc(ctx, 4096, &desc, &p), TIDAL_OK);
        EXPECT_STATUS(tidal_free(ctx, p), TIDAL_OK);
        if (dev.flags & TIDAL_DEVICE_FLAG_MANAGED) {
            declarations(ctx, d);
            prefetch_after_lookahead(ctx, d);
        }
        vendor_pool_trim(d);
    }
    EXPECT_STATUS(tidal_context_destroy(ctx), TIDAL_OK);
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
