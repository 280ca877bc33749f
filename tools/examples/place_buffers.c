/* place-buffers: allocate a few buffers through the `rules` policy and print where each one
 * went. Usage: place-buffers [CONFIG.toml] (default: the place_buffers.toml shipped beside it). */
#include <stdio.h>
#include <string.h>

#include <tidal/tidal.h>

#ifndef TIDAL_EXAMPLE_CONFIG
#define TIDAL_EXAMPLE_CONFIG "place_buffers.toml"
#endif

static int check(tidal_status s, const char *what)
{
    if (s != TIDAL_OK)
        fprintf(stderr, "%s: %s: %s\n", what, tidal_status_name(s), tidal_last_error());
    return s == TIDAL_OK;
}

int main(int argc, char **argv)
{
    const char *config = argc > 1 ? argv[1] : TIDAL_EXAMPLE_CONFIG;
    tidal_context *ctx = NULL;
    if (!check(tidal_context_create_from_file(config, &ctx), "tidal_context_create_from_file"))
        return 1;

    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    if (!check(tidal_system_info_get(ctx, &sys), "tidal_system_info_get"))
        return 1;
    printf("runtime: %s (%s), %d device(s)\n\n", sys.runtime, sys.runtime_detail, sys.device_count);

    struct { const char *tag; size_t size; uint32_t hints; } wanted[] = {
        {"weights.layer0", 64u << 20, TIDAL_HINT_READ_MOSTLY},
        {"batch.input", 8u << 20, TIDAL_HINT_HOST_WRITE},
        {"scratch.attention", 32u << 20, TIDAL_HINT_TEMPORARY},
        {"loss", 4096, TIDAL_HINT_HOST_READ},
        {"small.scratch", 4096, 0},
    };
    enum { N = sizeof wanted / sizeof wanted[0] };
    void *ptrs[N] = {0};
    printf("%-20s %10s  %-15s %-8s %-10s %s\n", "tag", "bytes", "kind", "device", "placed by", "advice");
    for (int i = 0; i < N; ++i) {
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.tag = wanted[i].tag;
        desc.hints = wanted[i].hints;
        if (!check(tidal_alloc(ctx, wanted[i].size, &desc, &ptrs[i]), wanted[i].tag))
            continue;
        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        if (!check(tidal_pointer_query(ctx, ptrs[i], &info), "tidal_pointer_query"))
            continue;
        char device[16];
        if (info.device == TIDAL_DEVICE_HOST)
            snprintf(device, sizeof device, "host");
        else
            snprintf(device, sizeof device, "%d", info.device);
        printf("%-20s %10zu  %-15s %-8s %-10s %s%s%s\n", info.tag, info.size, tidal_kind_name(info.kind), device,
               info.placed_by, info.advice & TIDAL_ADVICE_READ_MOSTLY ? "read-mostly " : "",
               info.advice & TIDAL_ADVICE_PREFERRED_DEVICE ? "preferred-device " : "",
               info.advice == 0 ? "-" : "");
    }
    for (int i = 0; i < N; ++i)
        check(tidal_free(ctx, ptrs[i]), "tidal_free");
    return check(tidal_context_destroy(ctx), "tidal_context_destroy") ? 0 : 1;
}
