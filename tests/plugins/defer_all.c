/* A plugin with an opinion about nothing: every placement and every error is deferred to the
 * next policy in the chain. */
#include "hook_table.h"

static tidal_policy_verdict recover(void *state, const tidal_error_event *event,
                                    tidal_recovery *out)
{
    (void)state;
    (void)event;
    (void)out;
    return TIDAL_POLICY_DEFER;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "defer-all", "defers every decision",
                               NULL, NULL, NULL, hook_table_defer_place, recover, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
