/*
 * The struct-size rule at the C API, against the current headers: a client from a later
 * release (struct_size larger than this library's sizeof) is accepted, its trailing bytes are
 * neither read nor written; the oldest sizes are accepted; smaller sizes are INVALID_ARGUMENT
 * naming the struct and both sizes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidal/tidal.h"

#define EXTRA 64
#define CANARY 0xA5

static int failures = 0;
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: expected %s (last error: %s)\n", __FILE__, __LINE__, #cond,   \
                    tidal_last_error());                                                           \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)

/* A struct from the future: this library's fields, then EXTRA bytes of canary. */
static void *future(const void *init, size_t size)
{
    unsigned char *p = malloc(size + EXTRA);
    memset(p, CANARY, size + EXTRA);
    memcpy(p, init, size);
    size_t grown = size + EXTRA;
    memcpy(p, &grown, sizeof grown);
    return p;
}

static int untouched(const void *p, size_t size)
{
    for (size_t i = size; i < size + EXTRA; ++i)
        if (((const unsigned char *)p)[i] != CANARY)
            return 0;
    return 1;
}

static void expect_refused(tidal_status status, const char *name)
{
    EXPECT(status == TIDAL_ERROR_INVALID_ARGUMENT);
    EXPECT(strstr(tidal_last_error(), name) != NULL);
    EXPECT(strstr(tidal_last_error(), "struct_size is 8") != NULL);
}

int main(void)
{
    tidal_context *ctx = NULL;
    if (tidal_context_create_from_string("runtime = \"sim\"\n", &ctx) != TIDAL_OK)
        return fprintf(stderr, "%s\n", tidal_last_error()), 1;

    /* Inputs from the future: the extra bytes are not read (a garbage kind there is fine). */
    const tidal_alloc_desc desc_init = TIDAL_ALLOC_DESC_INIT;
    tidal_alloc_desc *desc = future(&desc_init, sizeof desc_init);
    desc->kind = TIDAL_KIND_MANAGED;
    desc->device = 0;
    void *managed = NULL, *dev = NULL;
    EXPECT(tidal_alloc(ctx, 1 << 20, desc, &managed) == TIDAL_OK);
    desc->kind = TIDAL_KIND_DEVICE;
    EXPECT(tidal_alloc(ctx, 4096, desc, &dev) == TIDAL_OK);
    EXPECT(untouched(desc, sizeof *desc));

    /* Outputs from the future: written up to this library's sizeof, the rest left alone. */
    const tidal_pointer_info info_init = TIDAL_POINTER_INFO_INIT;
    tidal_pointer_info *info = future(&info_init, sizeof info_init);
    EXPECT(tidal_pointer_query(ctx, managed, info) == TIDAL_OK);
    EXPECT(info->kind == TIDAL_KIND_MANAGED && info->struct_size == sizeof *info + EXTRA);
    EXPECT(untouched(info, sizeof *info));
    const tidal_system_info system_init = TIDAL_SYSTEM_INFO_INIT;
    tidal_system_info *system = future(&system_init, sizeof system_init);
    EXPECT(tidal_system_info_get(ctx, system) == TIDAL_OK && system->device_count >= 1);
    EXPECT(untouched(system, sizeof *system));
    const tidal_device_info device_init = TIDAL_DEVICE_INFO_INIT;
    tidal_device_info *device = future(&device_init, sizeof device_init);
    EXPECT(tidal_device_info_get(ctx, 0, device) == TIDAL_OK && device->total_memory > 0);
    EXPECT(untouched(device, sizeof *device));
    const tidal_pool_stats pool_init = TIDAL_POOL_STATS_INIT;
    tidal_pool_stats *pool = future(&pool_init, sizeof pool_init);
    EXPECT(tidal_pool_stats_get(ctx, TIDAL_KIND_MANAGED, 0, pool) == TIDAL_OK && pool->allocations >= 1);
    EXPECT(untouched(pool, sizeof *pool));
    const tidal_range_info range_init = TIDAL_RANGE_INFO_INIT;
    tidal_range_info *range = future(&range_init, sizeof range_init);
    EXPECT(tidal_range_query(ctx, managed, 4096, range) == TIDAL_OK);
    EXPECT(untouched(range, sizeof *range));

    /* Arrays from the future: stepped by their struct_size. */
    const size_t access_stride = sizeof(tidal_access) + EXTRA;
    unsigned char *accesses = calloc(2, access_stride);
    for (int i = 0; i < 2; ++i) {
        tidal_access a = TIDAL_ACCESS_INIT;
        a.struct_size = access_stride;
        a.ptr = (char *)managed + i * (512 << 10);
        a.size = 512 << 10;
        memcpy(accesses + i * access_stride, &a, sizeof a);
    }
    EXPECT(tidal_declare(ctx, NULL, (const tidal_access *)accesses, 2, 0) == TIDAL_OK);
    EXPECT(tidal_stream_synchronize(ctx, NULL) == TIDAL_OK);
    const tidal_migration_stats migration_init = TIDAL_MIGRATION_STATS_INIT;
    tidal_migration_stats *migration = future(&migration_init, sizeof migration_init);
    EXPECT(tidal_migration_stats_get(ctx, 0, migration) == TIDAL_OK && migration->declared_ranges == 2);
    EXPECT(untouched(migration, sizeof *migration));

    char src[32] = "thirty-one bytes and a NUL ....", dst[32] = {0};
    const size_t item_stride = sizeof(tidal_copy_item) + EXTRA;
    unsigned char *items = calloc(2, item_stride);
    tidal_copy_item item = TIDAL_COPY_ITEM_INIT;
    item.struct_size = item_stride;
    item.dst = dev;
    item.src = src;
    item.size = sizeof src;
    memcpy(items, &item, sizeof item);
    item.dst = (char *)dev + 64;
    memcpy(items + item_stride, &item, sizeof item);
    EXPECT(tidal_copy_batch(ctx, (const tidal_copy_item *)items, 2, NULL) == TIDAL_OK);
    EXPECT(tidal_copy(ctx, dst, (char *)dev + 64, sizeof dst) == TIDAL_OK && memcmp(dst, src, sizeof src) == 0);

    /* tidal_check at its oldest size: the bytes of `stream` (past that size) are neither read
     * (they hold no stream) nor written. */
    const tidal_check check_init = TIDAL_CHECK_INIT;
    tidal_check *check = future(&check_init, sizeof check_init);
    memset(&check->stream, CANARY, sizeof check->stream);
    check->struct_size = offsetof(tidal_check, stream);
    check->kind = TIDAL_CHECK_PATTERN_VERIFY;
    check->target = dev;
    check->size = 4096;
    check->result = 99;
    EXPECT(tidal_check_run(ctx, check) == TIDAL_OK);
    EXPECT(check->result != 99 && check->struct_size == offsetof(tidal_check, stream));
    EXPECT(untouched(check, offsetof(tidal_check, stream))); /* stream's 8 bytes and on */

    /* Too small: refused, naming the struct and both sizes. */
    tidal_alloc_desc small_desc = TIDAL_ALLOC_DESC_INIT;
    small_desc.struct_size = 8;
    void *none = NULL;
    expect_refused(tidal_alloc(ctx, 64, &small_desc, &none), "tidal_alloc_desc");
    char oldest[32];
    snprintf(oldest, sizeof oldest, "this library's is %zu", sizeof(tidal_alloc_desc));
    EXPECT(strstr(tidal_last_error(), oldest) != NULL);
    tidal_pointer_info small_info = TIDAL_POINTER_INFO_INIT;
    small_info.struct_size = 8;
    expect_refused(tidal_pointer_query(ctx, managed, &small_info), "tidal_pointer_info");
    tidal_migration_stats small_stats = TIDAL_MIGRATION_STATS_INIT;
    small_stats.struct_size = 8;
    expect_refused(tidal_migration_stats_get(ctx, 0, &small_stats), "tidal_migration_stats");
    tidal_access small_access = TIDAL_ACCESS_INIT;
    small_access.struct_size = 8;
    small_access.ptr = managed;
    small_access.size = 64;
    expect_refused(tidal_declare(ctx, NULL, &small_access, 1, 0), "tidal_access");
    tidal_check small_check = TIDAL_CHECK_INIT;
    small_check.struct_size = 8;
    expect_refused(tidal_check_run(ctx, &small_check), "tidal_check");

    EXPECT(tidal_free(ctx, managed) == TIDAL_OK && tidal_free(ctx, dev) == TIDAL_OK);
    EXPECT(tidal_context_destroy(ctx) == TIDAL_OK);
    free(desc), free(info), free(system), free(device), free(pool), free(range), free(accesses);
    free(migration), free(items), free(check);
    if (failures)
        fprintf(stderr, "%d expectation(s) failed\n", failures);
    return failures ? 1 : 0;
}
