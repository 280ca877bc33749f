/* A plugin built for a policy ABI this core does not speak yet: it needs version 2 or newer
 * and answers TIDAL_ERROR_NOT_SUPPORTED to an older offer, naming the version it wanted. */
#include "hook_table.h"

#define FUTURE_ABI_MINIMUM 2u

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    if (core_abi < FUTURE_ABI_MINIMUM) {
        /* Tell the core which version would have worked, so its message can say so. */
        if (chosen_abi != NULL)
            *chosen_abi = FUTURE_ABI_MINIMUM;
        return TIDAL_ERROR_NOT_SUPPORTED;
    }
    tidal_policy_hooks mine = {sizeof mine, "future-abi", "needs policy ABI 2",
                               NULL, NULL, NULL, hook_table_defer_place, NULL, NULL, NULL};
    *chosen_abi = FUTURE_ABI_MINIMUM;
    hook_table_fill(hooks, &mine);
    return TIDAL_OK;
}
