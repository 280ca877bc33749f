/*
 * The `rules` policy: placement by tag pattern, size range and usage hints.
 *
 *   policies = ["rules"]
 *   [policy.rules]
 *   fallback = "pinned"            # optional: when an allocation runs out of memory, retry as this kind
 *   [[policy.rules.rule]]          # first match wins; no match defers to the next policy
 *   tag = "weights*"               # fnmatch(3) glob on the allocation's tag (optional)
 *   min_size = "1MiB"              # optional, inclusive
 *   max_size = "1GiB"              # optional, inclusive
 *   hints = ["read-mostly"]        # all must be present (optional)
 *   kind = "managed"               # required
 *   device = 0                     # optional; default: the requested device, else 0
 *   advice = ["read-mostly", "preferred-device"]   # optional, managed kinds only
 *
 * Rules apply to TIDAL_KIND_AUTO requests only: an explicit kind is the caller's decision.
 * Built from api/tidal/policy.h alone, as any third-party plugin would be.
 */
#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidal/policy.h"

#include "../common/option_keys.h"

typedef struct rule {
    const char *tag; /* NULL: any */
    uint64_t min_size, max_size;
    uint32_t hints;
    tidal_kind kind;
    int32_t device; /* TIDAL_DEVICE_DEFAULT: the request's */
    uint32_t advice;
} rule;

typedef struct rules_state {
    size_t count;
    rule *rules;
    tidal_kind fallback; /* AUTO: none */
} rules_state;

typedef struct named_bit {
    const char *name;
    uint32_t bit;
} named_bit;

static const named_bit hint_names[] = {
    {"read-mostly", TIDAL_HINT_READ_MOSTLY}, {"host-read", TIDAL_HINT_HOST_READ},
    {"host-write", TIDAL_HINT_HOST_WRITE},   {"device-only", TIDAL_HINT_DEVICE_ONLY},
    {"streaming", TIDAL_HINT_STREAMING},     {"temporary", TIDAL_HINT_TEMPORARY},
    {NULL, 0}};

static const named_bit advice_names[] = {
    {"read-mostly", TIDAL_ADVICE_READ_MOSTLY},
    {"preferred-device", TIDAL_ADVICE_PREFERRED_DEVICE},
    {"preferred-host", TIDAL_ADVICE_PREFERRED_HOST},
    {"accessed-by-device", TIDAL_ADVICE_ACCESSED_BY_DEVICE},
    {"coarse-grain", TIDAL_ADVICE_COARSE_GRAIN},
    {NULL, 0}};

static const char *const top_keys[] = {"rule", "fallback", NULL};
static const char *const rule_keys[] = {"tag", "min_size", "max_size", "hints", "kind", "device", "advice", NULL};

/* The plugin resolves no symbol of libtidal: it needs nothing but the header's constants. */
static const char *const kind_names[TIDAL_KIND_COUNT] = {
    "auto", "device", "managed", "pinned", "pageable", "device-fine", "managed-coarse", "elastic"};

static tidal_kind kind_from_name(const char *name)
{
    for (int k = TIDAL_KIND_DEVICE; k < TIDAL_KIND_COUNT; ++k)
        if (strcmp(name, kind_names[k]) == 0)
            return (tidal_kind)k;
    return TIDAL_KIND_AUTO;
}

/* Reads a string array of names into bits; records an error on an unknown name. */
static uint32_t read_bits(const tidal_options_api *api, const tidal_options *view, const char *key,
                          const named_bit *names)
{
    uint32_t bits = 0;
    size_t n = api->array_length(view, key);
    for (size_t i = 0; i < n; ++i) {
        const char *s = NULL;
        if (api->get_string_at(view, key, i, &s) != TIDAL_OK)
            return bits; /* the view recorded the type error */
        const named_bit *b = names;
        while (b->name && strcmp(b->name, s) != 0)
            ++b;
        if (!b->name) {
            char msg[256];
            int len = snprintf(msg, sizeof msg, "unknown name '%s' in '%s' (accepted:", s, key);
            for (b = names; b->name && len > 0 && (size_t)len < sizeof msg; ++b)
                len += snprintf(msg + len, sizeof msg - (size_t)len, " %s", b->name);
            if (len > 0 && (size_t)len < sizeof msg - 1)
                snprintf(msg + len, sizeof msg - (size_t)len, ")");
            api->error(view, key, msg);
        } else {
            bits |= b->bit;
        }
    }
    return bits;
}

static int read_rule(const tidal_options_api *api, const tidal_options *view, rule *r)
{
    const char *s = NULL;
    int64_t device = 0;
    memset(r, 0, sizeof *r);
    r->max_size = UINT64_MAX;
    r->device = TIDAL_DEVICE_DEFAULT;
    if (!tidal_plugin_check_keys(api, view, rule_keys, "a rule"))
        return 0;
    if (api->get_string(view, "tag", &s) == TIDAL_OK)
        r->tag = s;
    api->get_size(view, "min_size", &r->min_size);
    api->get_size(view, "max_size", &r->max_size);
    if (r->min_size > r->max_size)
        api->error(view, "max_size", "max_size is smaller than min_size");
    r->hints = read_bits(api, view, "hints", hint_names);
    r->advice = read_bits(api, view, "advice", advice_names);
    tidal_status st = api->get_string(view, "kind", &s);
    if (st == TIDAL_ERROR_NOT_FOUND) {
        api->error(view, NULL, "a rule needs a 'kind' (device, managed, pinned, pageable, device-fine, managed-coarse, elastic)");
        return 0;
    }
    if (st != TIDAL_OK)
        return 0;
    r->kind = kind_from_name(s);
    if (r->kind == TIDAL_KIND_AUTO) {
        api->error(view, "kind", "kind must be one of device, managed, pinned, pageable, device-fine, managed-coarse, elastic");
        return 0;
    }
    if (r->advice && !TIDAL_KIND_IS_MANAGED(r->kind))
        api->error(view, "advice", "advice applies to managed kinds only");
    if (api->get_int(view, "device", &device) == TIDAL_OK) {
        if (device < 0 || device > 1024)
            api->error(view, "device", "device must be a device index");
        r->device = (int32_t)device;
    }
    return 1;
}

static tidal_status rules_init(const tidal_policy_init_args *args, void **state_out)
{
    const tidal_options_api *api = args->options_api;
    const tidal_options *opts = args->options;
    rules_state *st = calloc(1, sizeof *st);
    if (!st)
        return TIDAL_ERROR_OUT_OF_MEMORY;
    const char *fallback = NULL;
    if (api->get_string(opts, "fallback", &fallback) == TIDAL_OK) {
        st->fallback = kind_from_name(fallback);
        if (st->fallback == TIDAL_KIND_AUTO)
            api->error(opts, "fallback", "fallback must be one of device, managed, pinned, pageable");
    }
    st->count = api->array_length(opts, "rule");
    st->rules = st->count ? calloc(st->count, sizeof *st->rules) : NULL;
    if (st->count && !st->rules) {
        free(st);
        return TIDAL_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < st->count; ++i) {
        const tidal_options *r = api->table(opts, "rule", i);
        if (!r) {
            api->error(opts, "rule", "'rule' must be an array of tables ([[policy.rules.rule]])");
            break;
        }
        if (!read_rule(api, r, &st->rules[i]))
            continue;
        if (st->rules[i].device >= args->system->device_count)
            api->error(r, "device", "no such device on this system");
    }
    *state_out = st;
    return TIDAL_OK;
}

static void rules_fini(void *state)
{
    rules_state *st = state;
    if (st) {
        free(st->rules);
        free(st);
    }
}

static int matches(const rule *r, const tidal_place_request *req)
{
    if (r->tag && fnmatch(r->tag, req->tag, 0) != 0)
        return 0;
    if (req->size < r->min_size || req->size > r->max_size)
        return 0;
    return (req->hints & r->hints) == r->hints;
}

static tidal_policy_verdict rules_place(void *state, const tidal_place_request *req, tidal_placement *out)
{
    const rules_state *st = state;
    /* Rules read the request only (tag, size, hints, kind, device): the same request always
     * gets the same answer, deferrals included, so the core may cache it. */
    if (TIDAL_COVERS(out->struct_size, tidal_placement, flags))
        out->flags |= TIDAL_PLACEMENT_CACHEABLE;
    if (req->kind != TIDAL_KIND_AUTO)
        return TIDAL_POLICY_DEFER;
    for (size_t i = 0; i < st->count; ++i) {
        const rule *r = &st->rules[i];
        if (!r->kind || !matches(r, req))
            continue;
        out->kind = r->kind;
        if (r->device >= 0)
            out->device = r->device;
        else if (req->device >= 0)
            out->device = req->device;
        else
            out->device = TIDAL_KIND_IS_HOST(r->kind) ? TIDAL_DEVICE_HOST : 0;
        out->advice = r->advice;
        snprintf(out->reason, sizeof out->reason, "rule %zu", i + 1);
        return TIDAL_POLICY_DECIDED;
    }
    return TIDAL_POLICY_DEFER;
}

static tidal_policy_verdict rules_recover(void *state, const tidal_error_event *ev, tidal_recovery *out)
{
    const rules_state *st = state;
    if (st->fallback == TIDAL_KIND_AUTO || ev->operation != TIDAL_OP_ALLOC ||
        ev->status != TIDAL_ERROR_OUT_OF_MEMORY || !ev->failed || ev->failed->kind == st->fallback)
        return TIDAL_POLICY_DEFER;
    out->action = TIDAL_RECOVER_RETRY;
    out->placement.kind = st->fallback;
    out->placement.device = TIDAL_KIND_IS_HOST(st->fallback) ? TIDAL_DEVICE_HOST
                                                       : (ev->failed->device >= 0 ? ev->failed->device : 0);
    out->placement.advice = 0;
    snprintf(out->placement.reason, sizeof out->placement.reason, "fallback after out of memory");
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    if (core_abi < 1)
        return TIDAL_ERROR_NOT_SUPPORTED;
    *chosen_abi = 1;
    hooks->name = "rules";
    hooks->description = "placement by tag pattern, size range and usage hints";
    hooks->option_keys = top_keys;
    hooks->init = rules_init;
    hooks->fini = rules_fini;
    hooks->place = rules_place;
    hooks->recover = rules_recover;
    return TIDAL_OK;
}
