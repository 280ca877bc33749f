/*
 * What every test policy plugin shares: filling the core's hook table within the size the
 * core says it knows, and writing a placement's reason within the out-struct's size.
 * Test plugins include only the public plugin ABI (tidal/policy.h) and this header, exactly
 * as a third-party plugin would.
 */
#ifndef TIDAL_TESTS_PLUGINS_HOOK_TABLE_H
#define TIDAL_TESTS_PLUGINS_HOOK_TABLE_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tidal/policy.h"

/* Copies `mine` into `hooks` for the fields hooks->struct_size covers, keeping the core's
 * struct_size: a core that knows fewer fields never gets bytes written past them. */
static inline void hook_table_fill(tidal_policy_hooks *hooks, const tidal_policy_hooks *mine)
{
    size_t size = hooks->struct_size < sizeof *mine ? hooks->struct_size : sizeof *mine;
    if (size > sizeof hooks->struct_size)
        memcpy((char *)hooks + sizeof hooks->struct_size,
               (const char *)mine + sizeof mine->struct_size, size - sizeof hooks->struct_size);
}

static inline void hook_table_reason(tidal_placement *out, const char *reason)
{
    if (TIDAL_COVERS(out->struct_size, tidal_placement, reason))
        snprintf(out->reason, sizeof out->reason, "%s", reason);
}

/* A place hook with no opinion, so the chain goes on as if the plugin were not there: for
 * defer-all, and for plugins whose point is how they load or negotiate rather than a decision. */
static inline tidal_policy_verdict hook_table_defer_place(void *state, const tidal_place_request *request,
                                                          tidal_placement *out)
{
    (void)state;
    (void)request;
    (void)out;
    return TIDAL_POLICY_DEFER;
}

/* The usual negotiation: this tree's policy ABI, version 1. */
static inline tidal_status hook_table_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                tidal_policy_hooks *hooks,
                                                const tidal_policy_hooks *mine)
{
    if (core_abi < 1 || chosen_abi == NULL || hooks == NULL)
        return TIDAL_ERROR_NOT_SUPPORTED;
    *chosen_abi = TIDAL_POLICY_ABI_VERSION;
    hook_table_fill(hooks, mine);
    return TIDAL_OK;
}

#endif /* TIDAL_TESTS_PLUGINS_HOOK_TABLE_H */
