/* A plugin that refuses every allocation; its reason must reach tidal_last_error(). */
#include "hook_table.h"

static tidal_policy_verdict place(void *state, const tidal_place_request *request,
                                  tidal_placement *out)
{
    (void)state;
    (void)request;
    hook_table_reason(out, "no thanks");
    return TIDAL_POLICY_REFUSE;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "refuse", "refuses every allocation",
                               NULL, NULL, NULL, place, NULL, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
