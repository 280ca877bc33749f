/* A stateful plugin: its place answers alternate device, pinned, device, pinned ... per call,
 * so a test can tell whether the core asked it again or reused a cached decision.
 *   [policy.alternating]
 *   cacheable = true   # mark the answers TIDAL_PLACEMENT_CACHEABLE (a lie, on purpose)
 *   defer = false      # true: defer every request instead (with the flag as `cacheable` says) */
#include <stdatomic.h>
#include <stdlib.h>

#include "hook_table.h"

struct alternating_state {
    atomic_uint calls;
    int cacheable;
    int defer;
};

static const char *const option_keys[] = {"cacheable", "defer", NULL};

static tidal_status init(const tidal_policy_init_args *args, void **state)
{
    struct alternating_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return TIDAL_ERROR_OUT_OF_MEMORY;
    const tidal_options_api *api = args->options_api;
    tidal_status s = api->get_bool(args->options, "cacheable", &st->cacheable);
    if (s == TIDAL_OK || s == TIDAL_ERROR_NOT_FOUND)
        s = api->get_bool(args->options, "defer", &st->defer);
    if (s != TIDAL_OK && s != TIDAL_ERROR_NOT_FOUND) {
        free(st);
        return s;
    }
    *state = st;
    return TIDAL_OK;
}

static void fini(void *state)
{
    free(state);
}

static tidal_policy_verdict place(void *state, const tidal_place_request *request, tidal_placement *out)
{
    struct alternating_state *st = state;
    if (st->cacheable && TIDAL_COVERS(out->struct_size, tidal_placement, flags))
        out->flags |= TIDAL_PLACEMENT_CACHEABLE;
    if (st->defer)
        return TIDAL_POLICY_DEFER;
    const unsigned n = atomic_fetch_add(&st->calls, 1u);
    out->kind = n % 2 ? TIDAL_KIND_PINNED : TIDAL_KIND_DEVICE;
    out->device = n % 2 ? TIDAL_DEVICE_HOST : (request->device >= 0 ? request->device : 0);
    out->advice = 0;
    hook_table_reason(out, "alternating");
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks);

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    tidal_policy_hooks mine = {sizeof mine, "alternating", "alternates device and pinned per call",
                               option_keys, init, fini, place, NULL, NULL, NULL};
    return hook_table_negotiate(core_abi, chosen_abi, hooks, &mine);
}
