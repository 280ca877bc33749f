/*
 * A program built against the frozen 0.1 headers (tests/abi/v0.1, never the current api/),
 * run against the current library: every entry point that takes a struct, with the struct
 * sizes 0.1 had, and a policy plugin built against 0.1's policy.h. It proves that what 0.1
 * promised still holds; each later release adds its own frozen copy and a client like this.
 *
 * usage: abi-old-client PLUGIN_DIR
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidal/policy.h"

/* Fails to compile if the current tidal.h were included instead of the frozen one: 0.1 has no
 * tidal_stream_forget, so here it is free to be a variable. */
static int tidal_stream_forget = 0;

static int failures = 0;
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: expected %s (last error: %s)\n", __FILE__, __LINE__, #cond,   \
                    tidal_last_error());                                                           \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)
#define EXPECT_OK(call) EXPECT((call) == TIDAL_OK)

int main(int argc, char **argv)
{
    (void)tidal_stream_forget;
    if (argc != 2) {
        fprintf(stderr, "usage: %s PLUGIN_DIR\n", argv[0]);
        return 2;
    }
    char config[1024];
    snprintf(config, sizeof config,
             "runtime = \"sim\"\n"
             "policy_path = [\"%s\"]\n"
             "policies = [\"old-0.1\"]\n"
             "[policy.\"old-0.1\"]\n"
             "prefix = \"old-\"\n",
             argv[1]);
    tidal_context *ctx = NULL;
    EXPECT_OK(tidal_context_create_from_string(config, &ctx));
    if (!ctx)
        return 1;

    /* The plugin the library loaded, opened again to read its call counts. */
    char plugin[1024];
    snprintf(plugin, sizeof plugin, "%s/tidal-policy-old-0.1.so", argv[1]);
    void *handle = dlopen(plugin, RTLD_NOW | RTLD_NOLOAD);
    EXPECT(handle != NULL);
    const unsigned long *(*plugin_calls)(void) =
        handle ? (const unsigned long *(*)(void))dlsym(handle, "old_plugin_calls") : NULL;
    EXPECT(plugin_calls != NULL);
    if (!plugin_calls)
        return 1;
    EXPECT(plugin_calls()[0] == 1); /* init */

    tidal_system_info system = TIDAL_SYSTEM_INFO_INIT;
    EXPECT_OK(tidal_system_info_get(ctx, &system));
    EXPECT(strcmp(system.runtime, "sim") == 0 && system.device_count >= 1);
    tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
    EXPECT_OK(tidal_device_info_get(ctx, 0, &device));
    EXPECT(device.index == 0 && device.total_memory > 0 && (device.flags & TIDAL_DEVICE_FLAG_SIMULATED));

    /* tidal_alloc: the plugin places "old-" tags. */
    const size_t mib = (size_t)1 << 20;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.tag = "old-a";
    void *a = NULL, *b = NULL, *dev = NULL, *host = NULL;
    EXPECT_OK(tidal_alloc(ctx, mib, &desc, &a));
    desc.tag = "old-b";
    EXPECT_OK(tidal_alloc(ctx, mib, &desc, &b));
    tidal_alloc_desc device_desc = TIDAL_ALLOC_DESC_INIT;
    device_desc.kind = TIDAL_KIND_DEVICE;
    device_desc.device = 0;
    EXPECT_OK(tidal_alloc(ctx, 4096, &device_desc, &dev));
    tidal_alloc_desc pinned = TIDAL_ALLOC_DESC_INIT;
    pinned.kind = TIDAL_KIND_PINNED;
    EXPECT_OK(tidal_alloc_async(ctx, 4096, &pinned, NULL, &host));
    EXPECT(plugin_calls()[1] >= 2); /* place */

    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    EXPECT_OK(tidal_pointer_query(ctx, a, &info));
    EXPECT(info.base == a && info.size == mib && info.kind == TIDAL_KIND_MANAGED && info.device == 0);
    EXPECT(strcmp(info.tag, "old-a") == 0 && strcmp(info.placed_by, "old-0.1") == 0);
    EXPECT(info.struct_size == sizeof info);

    tidal_pool_stats pool = TIDAL_POOL_STATS_INIT;
    EXPECT_OK(tidal_pool_stats_get(ctx, TIDAL_KIND_MANAGED, 0, &pool));
    EXPECT(pool.allocations >= 2 && pool.in_use_bytes >= 2 * mib);

    /* tidal_declare with 0.1's tidal_access array: the plugin plans the migrations. */
    tidal_access access[2] = {TIDAL_ACCESS_INIT, TIDAL_ACCESS_INIT};
    access[0].ptr = a;
    access[0].size = mib;
    access[1].ptr = b;
    access[1].size = mib / 2;
    access[1].mode = TIDAL_ACCESS_READ_WRITE;
    EXPECT_OK(tidal_declare(ctx, NULL, access, 2, 0));
    EXPECT_OK(tidal_declare(ctx, NULL, NULL, 0, 0)); /* end the phase */
    EXPECT_OK(tidal_stream_synchronize(ctx, NULL));
    EXPECT(plugin_calls()[3] >= 2); /* plan_prefetch */
    tidal_migration_stats migration = TIDAL_MIGRATION_STATS_INIT;
    EXPECT_OK(tidal_migration_stats_get(ctx, 0, &migration));
    EXPECT(migration.declared_ranges == 2 && migration.migrated_bytes >= mib + mib / 2);

    tidal_range_info range = TIDAL_RANGE_INFO_INIT;
    EXPECT_OK(tidal_range_query(ctx, a, mib, &range));
    EXPECT(range.last_prefetch_location == 0);

    /* A budget of one buffer: moving b whole evicts a, in the order the plugin gives. */
    EXPECT_OK(tidal_budget_set(ctx, 0, mib));
    EXPECT_OK(tidal_prefetch(ctx, b, mib, 0));
    EXPECT(plugin_calls()[4] >= 1); /* evict */
    EXPECT_OK(tidal_migration_stats_get(ctx, 0, &migration));
    EXPECT(migration.evictions >= 1 && migration.budget == mib);

    /* tidal_copy_batch with 0.1's tidal_copy_item array. */
    char src[64], dst[64];
    for (int i = 0; i < 64; ++i)
        src[i] = (char)i;
    memset(dst, 0, sizeof dst);
    tidal_copy_item items[2] = {TIDAL_COPY_ITEM_INIT, TIDAL_COPY_ITEM_INIT};
    items[0].dst = dev;
    items[0].src = src;
    items[0].size = sizeof src;
    items[1].dst = (char *)host + 128;
    items[1].src = src + 32;
    items[1].size = 32;
    EXPECT_OK(tidal_copy_batch(ctx, items, 2, NULL));
    items[0].dst = dst;
    items[0].src = dev;
    items[0].size = sizeof dst;
    EXPECT_OK(tidal_copy_batch(ctx, items, 1, NULL));
    EXPECT(memcmp(dst, src, sizeof src) == 0 && memcmp((char *)host + 128, src + 32, 32) == 0);

    /* tidal_check_run with 0.1's tidal_check: fill, then verify, on the device buffer. */
    tidal_check check = TIDAL_CHECK_INIT;
    check.kind = TIDAL_CHECK_PATTERN_FILL;
    check.target = dev;
    check.size = 4096;
    check.seed = 7;
    EXPECT_OK(tidal_check_run(ctx, &check));
    check.kind = TIDAL_CHECK_PATTERN_VERIFY;
    check.result = 99;
    EXPECT_OK(tidal_check_run(ctx, &check));
    EXPECT(check.result == 0 && check.struct_size == sizeof check);

    /* Too small is still refused, naming the struct. */
    tidal_pool_stats tiny = TIDAL_POOL_STATS_INIT;
    tiny.struct_size = 8;
    EXPECT(tidal_pool_stats_get(ctx, TIDAL_KIND_MANAGED, 0, &tiny) == TIDAL_ERROR_INVALID_ARGUMENT);
    EXPECT(strstr(tidal_last_error(), "tidal_pool_stats") != NULL);

    EXPECT_OK(tidal_free(ctx, a));
    EXPECT_OK(tidal_free(ctx, b));
    EXPECT_OK(tidal_free(ctx, dev));
    EXPECT_OK(tidal_free_async(ctx, host, NULL));
    dlclose(handle);
    EXPECT_OK(tidal_context_destroy(ctx));
    if (failures)
        fprintf(stderr, "%d expectation(s) failed\n", failures);
    else
        printf("a 0.1 client and a 0.1 policy plugin work with tidal %s\n", tidal_version_string());
    return failures ? 1 : 0;
}
