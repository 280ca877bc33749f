/* Device suite: the virtual-memory group (vmm_*) of a GPU runtime module, driven through the
 * module's ops table exactly as the core reaches it (dlopen, tidal_runtime_negotiate), since
 * elastic memory has no public API yet.
 *
 * usage: tidal-device-vmm-test MODULE.so
 *
 * Without a GPU: checks only that the module negotiates and fills the whole vmm group (that
 * part fails, exit 1, on a module that lacks it), then skips (exit 77) with a message. On a
 * GPU: 16 chunks of 64 MiB are reserved, created, mapped, made accessible in one call,
 * filled, copied to a host home, unmapped and destroyed (mem_info must show the memory free
 * again), then created and mapped again at the same addresses, the data copied back in and
 * compared. The median time of each operation is printed for the record. */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device_expect.h"
#include "runtime/runtime_contract.h"
#include "tidal/tidal.h"

enum { kChunks = 16 };
static const size_t kChunkSize = (size_t)64 << 20;

static const tidal_rt_ops *ops;
static void *rt;

/* A native call that must succeed; says which and with what code otherwise. */
#define NATIVE_OK(call)                                                                            \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        EXPECT(rc_ == 0, "%s returned %d (%s)", #call, rc_, ops->error_name(rc_));                 \
    } while (0)

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *samples, int count)
{
    qsort(samples, (size_t)count, sizeof *samples, by_value);
    return count % 2 ? samples[count / 2] : (samples[count / 2 - 1] + samples[count / 2]) / 2;
}

static void report(const char *what, double *samples, int count)
{
    double total = 0;
    for (int i = 0; i < count; ++i)
        total += samples[i];
    printf("  %-34s median %9.2f us  total %9.2f us  (%d calls)\n", what, median(samples, count), total, count);
}

static uint64_t free_bytes(void)
{
    uint64_t free_now = 0, total = 0;
    NATIVE_OK(ops->mem_info(rt, 0, &free_now, &total));
    return free_now;
}

/* The contract's guarantee without a GPU: the group is there, all of it. */
static void check_table(void)
{
    EXPECT(ops->vmm_granularity && ops->vmm_reserve && ops->vmm_release && ops->vmm_create && ops->vmm_destroy &&
               ops->vmm_map && ops->vmm_set_access && ops->vmm_unmap,
           "the %s module must fill the whole virtual-memory group", ops->name);
}

/* With TIDAL_TEST_EXPECT_NO_VMM=1 (a driver without the API, as no_vmm_driver.so fakes):
 * every op must answer the not-supported code (the core's error says why: test_runtime.cpp). */
static void expect_no_vmm(void)
{
    void *ptr = NULL;
    uint64_t bytes = 0;
    const int codes[] = {
        ops->vmm_granularity(rt, 0, &bytes),     ops->vmm_reserve(rt, 0, kChunkSize, &ptr),
        ops->vmm_release(rt, NULL, kChunkSize),  ops->vmm_create(rt, 0, kChunkSize, &ptr),
        ops->vmm_destroy(rt, NULL),              ops->vmm_map(rt, NULL, kChunkSize, NULL),
        ops->vmm_set_access(rt, 0, NULL, kChunkSize), ops->vmm_unmap(rt, NULL, kChunkSize),
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; ++i) {
        const char *name = ops->error_name(codes[i]);
        EXPECT(codes[i] == 801, "op %zu answered %d (%s)", i, codes[i], name);
    }
    printf("  without the API every op answers: %s\n", ops->error_name(ops->vmm_unmap(rt, NULL, kChunkSize)));
}

/* Each chunk gets its own byte, so a chunk mapped at the wrong place reads wrong. */
static int chunk_byte(int i) { return 0x11 + i; }

static void run_on_gpu(void)
{
    uint64_t granularity = 0;
    int rc = ops->vmm_granularity(rt, 0, &granularity);
    if (rc != 0) {
        EXPECT(rc == 0, "vmm_granularity on device 0: %d (%s)", rc, ops->error_name(rc));
        return;
    }
    printf("  granularity %llu KiB\n", (unsigned long long)(granularity >> 10));
    EXPECT(granularity > 0 && kChunkSize % granularity == 0, "64 MiB must be a multiple of the granularity");
    const size_t total = kChunkSize * kChunks;

    double create_us[kChunks], map_us[kChunks], unmap_us[kChunks], destroy_us[kChunks], access_us[kChunks];
    void *chunks[kChunks] = {0};
    void *home = NULL, *scratch = NULL;
    NATIVE_OK(ops->alloc(rt, TIDAL_KIND_PINNED, 0, total, &home));
    NATIVE_OK(ops->alloc(rt, TIDAL_KIND_PINNED, 0, kChunkSize, &scratch));
    if (!home || !scratch)
        return;

    const uint64_t free_before = free_bytes();
    void *base = NULL;
    double t = now_us();
    NATIVE_OK(ops->vmm_reserve(rt, 0, total, &base));
    printf("  reserve %zu MiB: %.2f us at %p\n", total >> 20, now_us() - t, base);
    if (!base)
        return;
    EXPECT((uintptr_t)base % granularity == 0, "the reservation must be aligned to the granularity");

    for (int i = 0; i < kChunks; ++i) {
        t = now_us();
        NATIVE_OK(ops->vmm_create(rt, 0, kChunkSize, &chunks[i]));
        create_us[i] = now_us() - t;
        t = now_us();
        NATIVE_OK(ops->vmm_map(rt, (char *)base + i * kChunkSize, kChunkSize, chunks[i]));
        map_us[i] = now_us() - t;
    }
    t = now_us();
    NATIVE_OK(ops->vmm_set_access(rt, 0, base, total));
    const double access_once_us = now_us() - t;
    const uint64_t free_mapped = free_bytes();
    EXPECT(free_before - free_mapped >= total - 2 * kChunkSize, "mem_info must count the chunks: %llu MiB taken",
           (unsigned long long)((free_before - free_mapped) >> 20));

    for (int i = 0; i < kChunks; ++i)
        NATIVE_OK(ops->memset(rt, (char *)base + i * kChunkSize, chunk_byte(i), kChunkSize, NULL));
    if (ops->kernel_touch)
        NATIVE_OK(ops->kernel_touch(rt, 0, base, total, 0, NULL)); /* a kernel reads the whole range */
    NATIVE_OK(ops->device_synchronize(rt, 0));

    t = now_us();
    NATIVE_OK(ops->memcpy(rt, home, base, total, NULL));
    const double out_us = now_us() - t;

    for (int i = 0; i < kChunks; ++i) {
        t = now_us();
        NATIVE_OK(ops->vmm_unmap(rt, (char *)base + i * kChunkSize, kChunkSize));
        unmap_us[i] = now_us() - t;
        t = now_us();
        NATIVE_OK(ops->vmm_destroy(rt, chunks[i]));
        destroy_us[i] = now_us() - t;
    }
    const uint64_t free_offloaded = free_bytes();
    EXPECT(free_offloaded - free_mapped >= total - 2 * kChunkSize,
           "mem_info must show the destroyed chunks free: %llu MiB came back",
           (unsigned long long)((free_offloaded - free_mapped) >> 20));

    /* Back at the same addresses, access granted chunk by chunk this time to time both ways. */
    const double remap_start = now_us();
    for (int i = 0; i < kChunks; ++i) {
        NATIVE_OK(ops->vmm_create(rt, 0, kChunkSize, &chunks[i]));
        NATIVE_OK(ops->vmm_map(rt, (char *)base + i * kChunkSize, kChunkSize, chunks[i]));
        t = now_us();
        NATIVE_OK(ops->vmm_set_access(rt, 0, (char *)base + i * kChunkSize, kChunkSize));
        access_us[i] = now_us() - t;
    }
    const double remap_us = now_us() - remap_start;
    t = now_us();
    NATIVE_OK(ops->memcpy(rt, base, home, total, NULL));
    const double in_us = now_us() - t;

    for (int i = 0; i < kChunks; ++i) {
        memset(scratch, 0, kChunkSize);
        NATIVE_OK(ops->memcpy(rt, scratch, (char *)base + i * kChunkSize, kChunkSize, NULL));
        const unsigned char *bytes = scratch;
        size_t wrong = 0;
        for (size_t b = 0; b < kChunkSize; ++b)
            wrong += bytes[b] != chunk_byte(i);
        EXPECT(wrong == 0, "chunk %d: %zu bytes differ after the round trip", i, wrong);
    }

    const double teardown_start = now_us();
    for (int i = 0; i < kChunks; ++i) {
        NATIVE_OK(ops->vmm_unmap(rt, (char *)base + i * kChunkSize, kChunkSize));
        NATIVE_OK(ops->vmm_destroy(rt, chunks[i]));
    }
    const double teardown_us = now_us() - teardown_start;
    NATIVE_OK(ops->vmm_release(rt, base, total));
    NATIVE_OK(ops->free(rt, TIDAL_KIND_PINNED, 0, home, total));
    NATIVE_OK(ops->free(rt, TIDAL_KIND_PINNED, 0, scratch, kChunkSize));

    printf("timings (%d chunks of %zu MiB, device 0):\n", kChunks, kChunkSize >> 20);
    report("vmm_create per chunk", create_us, kChunks);
    report("vmm_map per chunk", map_us, kChunks);
    printf("  %-34s %9.2f us for %zu MiB\n", "vmm_set_access, one call", access_once_us, total >> 20);
    report("vmm_set_access per chunk", access_us, kChunks);
    report("vmm_unmap per chunk", unmap_us, kChunks);
    report("vmm_destroy per chunk", destroy_us, kChunks);
    printf("  %-34s %9.2f us\n", "create+map+access again, all", remap_us);
    printf("  %-34s %9.2f us\n", "unmap+destroy, all", teardown_us);
    printf("  copy out to pinned %.1f GB/s, back in %.1f GB/s\n", total / out_us / 1e3, total / in_us / 1e3);
    printf("  mem_info free: %llu MiB before, %llu mapped, %llu after unmap+destroy\n",
           (unsigned long long)(free_before >> 20), (unsigned long long)(free_mapped >> 20),
           (unsigned long long)(free_offloaded >> 20));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODULE.so\n", argv[0]);
        return 2;
    }
    void *module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!module) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
        return 1;
    }
    tidal_rt_negotiate_fn negotiate = (tidal_rt_negotiate_fn)(uintptr_t)dlsym(module, TIDAL_RT_ENTRY_SYMBOL);
    uint32_t chosen = 0;
    if (!negotiate || negotiate(TIDAL_RT_ABI_VERSION, &chosen, &ops) != 0 || chosen != TIDAL_RT_ABI_VERSION) {
        fprintf(stderr, "%s does not negotiate contract version %d\n", argv[1], TIDAL_RT_ABI_VERSION);
        return 1;
    }
    check_table();
    if (failures)
        return 1;

    char detail[512] = "";
    int rc = ops->create(NULL, NULL, &rt, detail, sizeof detail);
    if (rc != 0) {
        printf("SKIP: the %s runtime found no usable GPU (%s, %d)%s%s\n", ops->name, ops->error_name(rc), rc,
               detail[0] ? ": " : "", detail);
        return 77;
    }
    printf("%s runtime: %s\n", ops->name, detail);
    const char *no_vmm = getenv("TIDAL_TEST_EXPECT_NO_VMM");
    if (no_vmm && strcmp(no_vmm, "1") == 0) {
        expect_no_vmm();
        ops->destroy(rt);
        return failures ? 1 : 0;
    }
    uint64_t granularity = 0;
    rc = ops->vmm_granularity(rt, 0, &granularity);
    /* 801 is the not-supported code of HIP and CUDA alike. */
    if (rc == 801) {
        printf("SKIP: device 0 has no virtual-memory API: %s\n", ops->error_name(rc));
        ops->destroy(rt);
        return 77;
    }
    run_on_gpu();
    ops->destroy(rt);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("OK\n");
    return 0;
}
