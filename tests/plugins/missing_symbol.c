/* A plugin whose entry point is misspelt: it exports no TIDAL_POLICY_ENTRY_SYMBOL, so loading
 * it must fail with TIDAL_ERROR_PLUGIN naming the file and the missing symbol. */
#include "hook_table.h"

/* The misspelling is the point of this plugin. */
TIDAL_POLICY_EXPORT tidal_status tidal_policy_negociate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negociate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "missing-symbol", "exports a misspelt entry point",
                               NULL, NULL, NULL, hook_table_defer_place, NULL, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
