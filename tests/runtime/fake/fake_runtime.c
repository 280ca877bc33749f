/*
 * A fake HIP runtime module for the C API tests: one device named "Fake GPU" whose memory of
 * every kind is malloc'd host memory. It implements only what a context needs to start,
 * describe its device and allocate (a stream-ordered pool included, for [pool] backend =
 * "vendor", which keeps freed blocks until trimmed); every other entry point is NULL, which the core reports as
 * TIDAL_ERROR_NOT_SUPPORTED. Native codes follow HIP's numbering (family HIP).
 *
 * Built twice: as tests/runtime/fake/tidal-runtime-hip.so, and with FAKE_RUNTIME_ABI=999 as
 * tests/runtime/mismatch/tidal-runtime-hip.so, a module from a future tree the core must refuse.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime_contract.h"

#ifndef FAKE_RUNTIME_ABI
#define FAKE_RUNTIME_ABI TIDAL_RT_ABI_VERSION
#endif

#define FAKE_EXPORT __attribute__((visibility("default")))

/* hipError_t numbers this module returns. */
enum {
    FAKE_SUCCESS = 0,
    FAKE_INVALID_VALUE = 1,
    FAKE_OUT_OF_MEMORY = 2,
    FAKE_INVALID_DEVICE = 101
};

#define FAKE_TOTAL_MEMORY ((uint64_t)16 << 30)
#define FAKE_PAGE_SIZE ((uint64_t)2 << 20)
/* The contract asks for at least 256 bytes for device kinds; one value serves all kinds. */
#define FAKE_ALIGNMENT 256

/* A block of the stream-ordered pool: this header, then FAKE_ALIGNMENT - sizeof header bytes
 * of padding, then the caller's bytes. */
struct fake_block {
    size_t size;
    struct fake_block *next; /* while kept by the pool */
};

struct fake_runtime {
    atomic_uint_fast64_t used;
    /* The stream-ordered pool: freed blocks are kept (as a vendor pool with a release
     * threshold keeps them) until pool_trim; tests are single-threaded, but a lock is cheap. */
    atomic_flag pool_lock;
    struct fake_block *kept;
    uint64_t pool_reserved, pool_used;
};

static int fake_create(const tidal_options *options, const tidal_options_api *api, void **rt,
                       char *detail, size_t detail_capacity)
{
    (void)options; /* may be an empty view; the fake has no options */
    (void)api;
    struct fake_runtime *fake = malloc(sizeof *fake);
    if (fake == NULL)
        return FAKE_OUT_OF_MEMORY;
    atomic_init(&fake->used, 0);
    atomic_flag_clear(&fake->pool_lock);
    fake->kept = NULL;
    fake->pool_reserved = fake->pool_used = 0;
    if (detail != NULL && detail_capacity > 0)
        snprintf(detail, detail_capacity, "fake HIP runtime for tests (ABI %u)",
                 (unsigned)FAKE_RUNTIME_ABI);
    *rt = fake;
    return FAKE_SUCCESS;
}

static void fake_destroy(void *rt)
{
    struct fake_runtime *fake = rt;
    while (fake->kept != NULL) {
        struct fake_block *b = fake->kept;
        fake->kept = b->next;
        free(b);
    }
    free(rt);
}

static const char *fake_error_name(int native)
{
    switch (native) {
    case FAKE_SUCCESS: return "hipSuccess";
    case FAKE_INVALID_VALUE: return "hipErrorInvalidValue";
    case FAKE_OUT_OF_MEMORY: return "hipErrorOutOfMemory";
    case 100: return "hipErrorNoDevice";
    case FAKE_INVALID_DEVICE: return "hipErrorInvalidDevice";
    default: return "hipErrorUnknown";
    }
}

static const char *fake_error_string(int native)
{
    switch (native) {
    case FAKE_SUCCESS: return "no error";
    case FAKE_INVALID_VALUE: return "invalid argument";
    case FAKE_OUT_OF_MEMORY: return "out of memory";
    case 100: return "no ROCm-capable device is detected";
    case FAKE_INVALID_DEVICE: return "invalid device ordinal";
    default: return "unknown error";
    }
}

static int fake_device_count(void *rt, int32_t *count)
{
    (void)rt;
    *count = 1;
    return FAKE_SUCCESS;
}

static int fake_device_props(void *rt, int32_t device, tidal_rt_device_props *props)
{
    (void)rt;
    if (device != 0)
        return FAKE_INVALID_DEVICE;
    tidal_rt_device_props mine;
    memset(&mine, 0, sizeof mine);
    mine.struct_size = sizeof mine;
    snprintf(mine.name, sizeof mine.name, "%s", "Fake GPU");
    snprintf(mine.arch, sizeof mine.arch, "%s", "gfx000:xnack-");
    mine.total_memory = FAKE_TOTAL_MEMORY;
    mine.page_size = FAKE_PAGE_SIZE;
    mine.l2_size = 0;
    mine.managed = 1;
    mine.concurrent_managed = 0;
    mine.pageable_access = 0;
    mine.migrates_on_fault = 0;
    mine.host_native_atomics = 0;
    mine.fine_grained = 0;
    mine.xnack = TIDAL_XNACK_OFF;
    mine.numa_node = -1;
    mine.simulated = 0;

    /* Only the fields the core's struct covers; its struct_size stays as it set it. */
    size_t size = props->struct_size < sizeof mine ? props->struct_size : sizeof mine;
    if (size > sizeof mine.struct_size)
        memcpy((char *)props + sizeof mine.struct_size, (const char *)&mine + sizeof mine.struct_size,
               size - sizeof mine.struct_size);
    return FAKE_SUCCESS;
}

static int fake_mem_info(void *rt, int32_t device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    struct fake_runtime *fake = rt;
    if (device != 0)
        return FAKE_INVALID_DEVICE;
    uint64_t used = atomic_load(&fake->used);
    *total_bytes = FAKE_TOTAL_MEMORY;
    *free_bytes = used < FAKE_TOTAL_MEMORY ? FAKE_TOTAL_MEMORY - used : 0;
    return FAKE_SUCCESS;
}

static int fake_alloc(void *rt, int32_t kind, int32_t device, size_t size, void **out)
{
    struct fake_runtime *fake = rt;
    (void)device;
    if (kind <= TIDAL_KIND_AUTO || kind >= TIDAL_KIND_COUNT)
        return FAKE_INVALID_VALUE;
    void *ptr = NULL;
    if (posix_memalign(&ptr, FAKE_ALIGNMENT, size) != 0)
        return FAKE_OUT_OF_MEMORY;
    atomic_fetch_add(&fake->used, (uint_fast64_t)size);
    *out = ptr;
    return FAKE_SUCCESS;
}

static int fake_free(void *rt, int32_t kind, int32_t device, void *ptr, size_t size)
{
    struct fake_runtime *fake = rt;
    (void)kind;
    (void)device;
    free(ptr);
    atomic_fetch_sub(&fake->used, (uint_fast64_t)size);
    return FAKE_SUCCESS;
}

/* The stream-ordered pool: device memory like fake_alloc's, preceded by a header that holds
 * its size (free_async is not told it). A freed block is kept for the next request of its
 * size until pool_trim. The stream handle FAKE_REFUSED_STREAM is refused with
 * hipErrorInvalidValue, so a test can see that the caller's stream reached the runtime. */
#define FAKE_REFUSED_STREAM ((void *)(uintptr_t)0xbad)

static void pool_lock(struct fake_runtime *fake)
{
    while (atomic_flag_test_and_set(&fake->pool_lock))
        ;
}

static void pool_unlock(struct fake_runtime *fake)
{
    atomic_flag_clear(&fake->pool_lock);
}

static int fake_alloc_async(void *rt, int32_t device, size_t size, void *stream, void **out)
{
    struct fake_runtime *fake = rt;
    if (stream == FAKE_REFUSED_STREAM)
        return FAKE_INVALID_VALUE;
    pool_lock(fake);
    for (struct fake_block **at = &fake->kept; *at != NULL; at = &(*at)->next) {
        if ((*at)->size != size)
            continue;
        struct fake_block *b = *at;
        *at = b->next;
        fake->pool_used += size;
        pool_unlock(fake);
        *out = (char *)b + FAKE_ALIGNMENT;
        return FAKE_SUCCESS;
    }
    pool_unlock(fake);
    void *block = NULL;
    int rc = fake_alloc(rt, TIDAL_KIND_DEVICE, device, FAKE_ALIGNMENT + size, &block);
    if (rc != FAKE_SUCCESS)
        return rc;
    ((struct fake_block *)block)->size = size;
    pool_lock(fake);
    fake->pool_reserved += size;
    fake->pool_used += size;
    pool_unlock(fake);
    *out = (char *)block + FAKE_ALIGNMENT;
    return FAKE_SUCCESS;
}

static int fake_free_async(void *rt, int32_t device, void *ptr, void *stream)
{
    struct fake_runtime *fake = rt;
    (void)device;
    if (stream == FAKE_REFUSED_STREAM)
        return FAKE_INVALID_VALUE;
    struct fake_block *b = (struct fake_block *)((char *)ptr - FAKE_ALIGNMENT);
    pool_lock(fake);
    b->next = fake->kept;
    fake->kept = b;
    fake->pool_used -= b->size;
    pool_unlock(fake);
    return FAKE_SUCCESS;
}

static int fake_pool_trim(void *rt, int32_t device, uint64_t keep)
{
    struct fake_runtime *fake = rt;
    if (device != 0)
        return FAKE_INVALID_DEVICE;
    pool_lock(fake);
    while (fake->kept != NULL && fake->pool_reserved - fake->pool_used > keep) {
        struct fake_block *b = fake->kept;
        fake->kept = b->next;
        fake->pool_reserved -= b->size;
        fake_free(rt, TIDAL_KIND_DEVICE, device, b, FAKE_ALIGNMENT + b->size);
    }
    pool_unlock(fake);
    return FAKE_SUCCESS;
}

static int fake_pool_usage(void *rt, int32_t device, uint64_t *reserved, uint64_t *used)
{
    struct fake_runtime *fake = rt;
    if (device != 0)
        return FAKE_INVALID_DEVICE;
    pool_lock(fake);
    *reserved = fake->pool_reserved;
    *used = fake->pool_used;
    pool_unlock(fake);
    return FAKE_SUCCESS;
}

static int fake_pointer_kind(void *rt, const void *ptr, int32_t *kind, int32_t *device)
{
    (void)rt;
    (void)ptr;
    /* Like a real runtime asked about memory it does not track: plain host memory. */
    *kind = TIDAL_KIND_PAGEABLE;
    *device = TIDAL_DEVICE_HOST;
    return FAKE_SUCCESS;
}

static const tidal_rt_ops fake_ops = {
    .abi_version = FAKE_RUNTIME_ABI,
    .struct_size = sizeof(tidal_rt_ops),
    .name = "hip",
    .family = TIDAL_RT_FAMILY_HIP,
    .create = fake_create,
    .destroy = fake_destroy,
    .error_name = fake_error_name,
    .error_string = fake_error_string,
    .device_count = fake_device_count,
    .device_props = fake_device_props,
    .mem_info = fake_mem_info,
    .alloc = fake_alloc,
    .free = fake_free,
    .pointer_kind = fake_pointer_kind,
    .alloc_async = fake_alloc_async,
    .free_async = fake_free_async,
    .pool_trim = fake_pool_trim,
    .pool_usage = fake_pool_usage,
    /* Everything else stays NULL: not supported by the fake. */
};

FAKE_EXPORT int tidal_runtime_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                        const tidal_rt_ops **ops);

FAKE_EXPORT int tidal_runtime_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                        const tidal_rt_ops **ops)
{
    (void)core_abi;
    /* Answers with the version it implements whatever the offer; with FAKE_RUNTIME_ABI=999
     * that is a version no core speaks, which the core must notice and refuse. */
    *chosen_abi = FAKE_RUNTIME_ABI;
    *ops = &fake_ops;
    return 0;
}
