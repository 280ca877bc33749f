/* A plugin that splits managed allocations badly, as the tag says: "kind" splits device memory,
 * "device" puts a part on device 77, "null" gives two parts and no array, "gap" leaves 4 KiB
 * between its parts. Any other tag: two good halves on devices 0 and 1. The core must refuse
 * each bad split (TIDAL_ERROR_PLUGIN, or INVALID_ARGUMENT for parts that do not cover the
 * allocation) naming this plugin, and allocate nothing. */
#include "hook_table.h"

static tidal_policy_verdict place(void *state, const tidal_place_request *request, tidal_placement *out)
{
    static _Thread_local tidal_policy_part parts[2];
    (void)state;
    if (!TIDAL_COVERS(out->struct_size, tidal_placement, part_count))
        return TIDAL_POLICY_DEFER;
    const size_t half = request->size / 2;
    for (int i = 0; i < 2; ++i) {
        parts[i].struct_size = sizeof parts[i];
        parts[i].offset = i ? half : 0;
        parts[i].size = i ? request->size - half : half;
        parts[i].device = i;
    }
    out->kind = TIDAL_KIND_MANAGED;
    out->device = 0;
    out->parts = parts;
    out->part_count = 2;
    if (strcmp(request->tag, "kind") == 0)
        out->kind = TIDAL_KIND_DEVICE;
    else if (strcmp(request->tag, "device") == 0)
        parts[1].device = 77;
    else if (strcmp(request->tag, "null") == 0)
        out->parts = NULL;
    else if (strcmp(request->tag, "gap") == 0)
        parts[1].offset += 4096;
    hook_table_reason(out, "a split, bad as the tag says");
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "bad-split", "splits managed memory badly, as the tag says",
                               NULL, NULL, NULL, place, NULL, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
