/* A plugin that decides a device that does not exist (77): the core must refuse the decision
 * with TIDAL_ERROR_PLUGIN naming this plugin. */
#include "hook_table.h"

#define BAD_DEVICE_INDEX 77

static tidal_policy_verdict place(void *state, const tidal_place_request *request,
                                  tidal_placement *out)
{
    (void)state;
    (void)request;
    out->kind = TIDAL_KIND_DEVICE;
    out->device = BAD_DEVICE_INDEX;
    out->advice = 0;
    hook_table_reason(out, "a device that is not there, on purpose");
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "bad-device", "decides device 77",
                               NULL, NULL, NULL, place, NULL, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
