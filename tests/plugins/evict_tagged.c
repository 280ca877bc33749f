/* A plugin that evicts the candidates tagged "victim*" first, then the others in the core's
 * order: what it evicts shows that a unit carries its allocation's tag to eviction. */
#include "hook_table.h"

static const tidal_resident_range *candidate(const tidal_evict_request *request, size_t i)
{
    /* Stepped by the core's struct_size, not this plugin's sizeof. */
    return (const tidal_resident_range *)((const char *)request->candidates + i * request->candidates[0].struct_size);
}

static tidal_policy_verdict evict(void *state, const tidal_evict_request *request, tidal_evict_plan *out)
{
    (void)state;
    size_t n = 0;
    for (int victims = 1; victims >= 0; --victims)
        for (size_t i = 0; i < request->candidate_count; ++i)
            if ((strncmp(candidate(request, i)->tag, "victim", 6) == 0) == victims)
                out->order[n++] = i;
    out->count = n;
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "evict-tagged", "evicts units tagged victim* first",
                               NULL, NULL, NULL, NULL, NULL, NULL, evict};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
