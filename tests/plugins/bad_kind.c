/* A plugin that decides a kind that does not exist (42): the core must refuse the decision
 * with TIDAL_ERROR_PLUGIN naming this plugin, never act on it. */
#include "hook_table.h"

static tidal_policy_verdict place(void *state, const tidal_place_request *request,
                                  tidal_placement *out)
{
    (void)state;
    (void)request;
    out->kind = (tidal_kind)42;
    out->device = 0;
    out->advice = 0;
    hook_table_reason(out, "an impossible kind, on purpose");
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "bad-kind", "decides kind 42",
                               NULL, NULL, NULL, place, NULL, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
