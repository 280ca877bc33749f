/* A plugin that places everything as one kind, read from its options:
 *   [policy.fixed]
 *   kind = "managed"     # device managed pinned pageable device-fine managed-coarse
 * It declares its option keys, so the core rejects any other key in [policy.fixed]. */
#include <stdlib.h>
#include <string.h>

#include "hook_table.h"

struct fixed_state {
    tidal_kind kind;
};

static const char *const option_keys[] = {"kind", NULL};

static const struct {
    const char *name;
    tidal_kind kind;
} kind_names[] = {
    {"device", TIDAL_KIND_DEVICE},
    {"managed", TIDAL_KIND_MANAGED},
    {"pinned", TIDAL_KIND_PINNED},
    {"pageable", TIDAL_KIND_PAGEABLE},
    {"device-fine", TIDAL_KIND_DEVICE_FINE},
    {"managed-coarse", TIDAL_KIND_MANAGED_COARSE},
};

static tidal_status init(const tidal_policy_init_args *args, void **state)
{
    const tidal_options_api *api = args->options_api;
    const char *name = NULL;
    tidal_status status = api->get_string(args->options, "kind", &name);
    if (status == TIDAL_ERROR_NOT_FOUND) {
        api->error(args->options, NULL, "the key 'kind' is required");
        return TIDAL_ERROR_CONFIG;
    }
    if (status != TIDAL_OK)
        return status; /* the view has recorded the type error */

    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; ++i) {
        if (strcmp(name, kind_names[i].name) == 0) {
            struct fixed_state *fixed = malloc(sizeof *fixed);
            if (fixed == NULL)
                return TIDAL_ERROR_OUT_OF_MEMORY;
            fixed->kind = kind_names[i].kind;
            *state = fixed;
            return TIDAL_OK;
        }
    }
    char message[160];
    snprintf(message, sizeof message,
             "unknown kind '%.64s' (device, managed, pinned, pageable, device-fine, "
             "managed-coarse)",
             name);
    api->error(args->options, "kind", message);
    return TIDAL_ERROR_CONFIG;
}

static void fini(void *state)
{
    free(state);
}

static tidal_policy_verdict place(void *state, const tidal_place_request *request,
                                  tidal_placement *out)
{
    const struct fixed_state *fixed = state;
    out->kind = fixed->kind;
    if (request->device != TIDAL_DEVICE_DEFAULT)
        out->device = request->device;
    else
        out->device = TIDAL_KIND_IS_HOST(fixed->kind) ? TIDAL_DEVICE_HOST : 0;
    out->advice = 0;
    hook_table_reason(out, "the configured kind");
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "fixed", "places everything as one configured kind",
                               option_keys, init, fini, place, NULL, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
