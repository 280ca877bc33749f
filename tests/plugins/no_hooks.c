/* A plugin that negotiates but sets no decision hook (neither place nor recover): the core
 * must reject it at context creation with TIDAL_ERROR_PLUGIN. */
#include <stdlib.h>

#include "hook_table.h"

static tidal_status init(const tidal_policy_init_args *args, void **state)
{
    (void)args;
    *state = NULL;
    return TIDAL_OK;
}

static void fini(void *state)
{
    free(state);
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    /* init and fini but nothing that decides. */
    tidal_policy_hooks mine = {sizeof mine, "no-hooks", "has no decision hook",
                               NULL, init, fini, NULL, NULL, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
