/* A plugin with only a recover hook: an allocation that ran out of memory is retried once as
 * pinned host memory. Anything else is left to the rest of the chain. */
#include "hook_table.h"

static tidal_policy_verdict recover(void *state, const tidal_error_event *event,
                                    tidal_recovery *out)
{
    (void)state;
    if (event->operation != TIDAL_OP_ALLOC || event->status != TIDAL_ERROR_OUT_OF_MEMORY)
        return TIDAL_POLICY_DEFER;
    /* Pinned memory that failed too is not retried as itself forever. */
    if (event->failed != NULL && event->failed->kind == TIDAL_KIND_PINNED)
        return TIDAL_POLICY_DEFER;
    out->action = TIDAL_RECOVER_RETRY;
    out->placement.kind = TIDAL_KIND_PINNED;
    out->placement.device = TIDAL_DEVICE_HOST;
    out->placement.advice = 0;
    hook_table_reason(&out->placement, "device out of memory: pinned host memory instead");
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "oom-retry", "retries out-of-memory as pinned",
                               NULL, NULL, NULL, NULL, recover, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
