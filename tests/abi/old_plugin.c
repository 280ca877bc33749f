/*
 * A policy plugin built against the frozen 0.1 policy.h (tests/abi/v0.1), loaded by the
 * current library in the `abi` suite: a plugin compiled for 0.1 must keep working unchanged.
 * It uses every hook and reads what 0.1 plugins read: its options, the system and its device
 * array (indexed by 0.1's sizeof, as the in-tree xnack policy does), and the requests. It
 * places buffers whose tag starts with "old-" as managed memory on device 0, plans each
 * prefetch as a migration, evicts candidates in the order the core lists them.
 * old_client.c reads its call counts through old_plugin_calls (it opens the same file).
 */
#include <string.h>

#include "tidal/policy.h"

static const char *const option_keys[] = {"prefix", NULL};
static const char *prefix = "old-";
static unsigned long calls[5]; /* init, place, recover, plan_prefetch, evict */

TIDAL_POLICY_EXPORT const unsigned long *old_plugin_calls(void);
TIDAL_POLICY_EXPORT const unsigned long *old_plugin_calls(void) { return calls; }

static tidal_status init(const tidal_policy_init_args *args, void **state)
{
    const tidal_policy_system *system = args->system;
    *state = NULL;
    args->options_api->get_string(args->options, "prefix", &prefix);
    if (system->device_count < 1 || system->devices[0].index != 0 ||
        system->devices[system->device_count - 1].index != system->device_count - 1)
        return TIDAL_ERROR_NOT_FOUND;
    __atomic_add_fetch(&calls[0], 1, __ATOMIC_RELAXED);
    return TIDAL_OK;
}

static tidal_policy_verdict place(void *state, const tidal_place_request *request, tidal_placement *out)
{
    (void)state;
    __atomic_add_fetch(&calls[1], 1, __ATOMIC_RELAXED);
    if (request->kind != TIDAL_KIND_AUTO || strncmp(request->tag, prefix, strlen(prefix)) != 0)
        return TIDAL_POLICY_DEFER;
    out->kind = TIDAL_KIND_MANAGED;
    out->device = 0;
    out->advice = TIDAL_ADVICE_PREFERRED_DEVICE;
    strcpy(out->reason, "a 0.1 plugin");
    return TIDAL_POLICY_DECIDED;
}

static tidal_policy_verdict recover(void *state, const tidal_error_event *event, tidal_recovery *out)
{
    (void)state, (void)event, (void)out;
    __atomic_add_fetch(&calls[2], 1, __ATOMIC_RELAXED);
    return TIDAL_POLICY_DEFER;
}

static tidal_policy_verdict plan_prefetch(void *state, const tidal_prefetch_request *request,
                                          tidal_prefetch_plan *out)
{
    (void)state;
    __atomic_add_fetch(&calls[3], 1, __ATOMIC_RELAXED);
    if (request->system == NULL || request->size == 0)
        return TIDAL_POLICY_DEFER;
    out->action = TIDAL_PREFETCH_MIGRATE;
    out->chunk_size = 0;
    strcpy(out->reason, "a 0.1 plugin");
    return TIDAL_POLICY_DECIDED;
}

static tidal_policy_verdict evict(void *state, const tidal_evict_request *request, tidal_evict_plan *out)
{
    (void)state;
    __atomic_add_fetch(&calls[4], 1, __ATOMIC_RELAXED);
    for (size_t i = 0; i < request->candidate_count; ++i)
        out->order[i] = i;
    out->count = request->candidate_count;
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen,
                                                        tidal_policy_hooks *hooks)
{
    if (core_abi < 1)
        return TIDAL_ERROR_NOT_SUPPORTED;
    *chosen = 1;
    hooks->name = "old-0.1";
    hooks->description = "built against the frozen 0.1 policy.h";
    hooks->option_keys = option_keys;
    hooks->init = init;
    hooks->place = place;
    hooks->recover = recover;
    hooks->plan_prefetch = plan_prefetch;
    hooks->evict = evict;
    return TIDAL_OK;
}
