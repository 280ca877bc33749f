/*
 * The `spread` policy: memory over several devices (issue 16).
 *
 *   policies = ["spread"]
 *   [policy.spread]
 *   kind = "managed"               # optional: the kind it gives TIDAL_KIND_AUTO requests (default managed)
 *   affinity = true                # optional: keep the device an AUTO request names while it has room
 *                                  # (false: the roomiest device, whatever the request names)
 *   [[policy.spread.split]]        # first match wins: a managed allocation split over devices
 *   tag = "weights*"               # fnmatch(3) glob on the tag (required)
 *   min_size = "64MiB"             # optional, inclusive
 *   [[policy.spread.split.part]]   # optional, in address order; none: one equal part per device
 *   device = 0                     # required
 *   size = "16MiB"                 # optional: parts without a size share the rest equally
 *
 * Device choice: a request that leaves the device to the policies (TIDAL_DEVICE_DEFAULT, any
 * kind but the host ones), or names one with kind AUTO (the caller's affinity hint), goes to
 * the device with the most room: its free memory, and for managed kinds no more than its
 * budget's headroom (budget less what tidal keeps resident there). The hinted device wins
 * while it has room for the request. An explicit kind on an explicit device is the caller's
 * decision (deferred).
 *
 * Split: each part gets preferred-location and accessed-by advice for its own device, and a
 * declaration of a part moves it to that device only. Parts that do not cover the allocation
 * (sizes adding up to more or less than it) fail the tidal_alloc with
 * TIDAL_ERROR_INVALID_ARGUMENT. Equal shares are whole pages of the first device; an
 * allocation too small for one page per unsized part is not split (it is placed as above).
 *
 * Built from api/tidal/policy.h alone, as any third-party plugin would be.
 */
#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidal/policy.h"

#include "../common/option_keys.h"

#define MAX_PARTS 64 /* as many as the simulated device has devices */

typedef struct part_spec {
    int32_t device;
    uint64_t size; /* 0: an equal share of what the sized parts leave */
} part_spec;

typedef struct split_rule {
    const char *tag;
    uint64_t min_size;
    size_t part_count; /* 0: one part per device, in index order */
    part_spec parts[MAX_PARTS];
} split_rule;

typedef struct spread_state {
    tidal_kind kind;
    int affinity;
    size_t split_count;
    split_rule *splits;
} spread_state;

static const char *const top_keys[] = {"kind", "affinity", "split", NULL};
static const char *const split_keys[] = {"tag", "min_size", "part", NULL};
static const char *const part_keys[] = {"device", "size", NULL};

static const char *const kind_names[TIDAL_KIND_COUNT] = {
    "auto", "device", "managed", "pinned", "pageable", "device-fine", "managed-coarse", "elastic"};

static void read_split(const tidal_options_api *api, const tidal_options *view, const tidal_policy_system *sys,
                       split_rule *r)
{
    const char *tag = NULL;
    if (!tidal_plugin_check_keys(api, view, split_keys, "a split"))
        return;
    if (api->get_string(view, "tag", &tag) == TIDAL_OK)
        r->tag = tag;
    else
        api->error(view, NULL, "a split needs a 'tag' (an fnmatch glob on the allocation's tag)");
    api->get_size(view, "min_size", &r->min_size);
    r->part_count = api->array_length(view, "part");
    if (r->part_count > MAX_PARTS) {
        api->error(view, "part", "a split has at most 64 parts");
        r->part_count = 0;
        return;
    }
    for (size_t i = 0; i < r->part_count; ++i) {
        const tidal_options *p = api->table(view, "part", i);
        int64_t device = -1;
        if (!p) {
            api->error(view, "part", "'part' must be an array of tables ([[policy.spread.split.part]])");
            return;
        }
        if (!tidal_plugin_check_keys(api, p, part_keys, "a part"))
            continue;
        if (api->get_int(p, "device", &device) != TIDAL_OK)
            api->error(p, NULL, "a part needs a 'device' (a device index)");
        else if (device < 0 || device >= sys->device_count)
            api->error(p, "device", "no such device on this system");
        r->parts[i].device = (int32_t)device;
        api->get_size(p, "size", &r->parts[i].size);
    }
}

static tidal_status spread_init(const tidal_policy_init_args *args, void **state_out)
{
    const tidal_options_api *api = args->options_api;
    const tidal_options *opts = args->options;
    const tidal_policy_system *sys = args->system;
    if (!TIDAL_COVERS(sys->struct_size, tidal_policy_system, device_resident))
        return TIDAL_ERROR_NOT_SUPPORTED; /* a core that cannot say what is free on each device */
    spread_state *st = calloc(1, sizeof *st);
    if (!st)
        return TIDAL_ERROR_OUT_OF_MEMORY;
    st->kind = TIDAL_KIND_MANAGED;
    st->affinity = 1;
    const char *kind = NULL;
    if (api->get_string(opts, "kind", &kind) == TIDAL_OK) {
        st->kind = TIDAL_KIND_AUTO;
        for (int k = TIDAL_KIND_DEVICE; k < TIDAL_KIND_COUNT; ++k)
            if (strcmp(kind, kind_names[k]) == 0 && !TIDAL_KIND_IS_HOST(k))
                st->kind = (tidal_kind)k;
        if (st->kind == TIDAL_KIND_AUTO)
            api->error(opts, "kind", "kind must be one of device, managed, device-fine, managed-coarse, elastic");
    }
    api->get_bool(opts, "affinity", &st->affinity);
    st->split_count = api->array_length(opts, "split");
    st->splits = st->split_count ? calloc(st->split_count, sizeof *st->splits) : NULL;
    if (st->split_count && !st->splits) {
        free(st);
        return TIDAL_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < st->split_count; ++i) {
        const tidal_options *s = api->table(opts, "split", i);
        if (!s) {
            api->error(opts, "split", "'split' must be an array of tables ([[policy.spread.split]])");
            break;
        }
        read_split(api, s, sys, &st->splits[i]);
    }
    *state_out = st;
    return TIDAL_OK;
}

static void spread_fini(void *state)
{
    spread_state *st = state;
    if (st) {
        free(st->splits);
        free(st);
    }
}

/* Bytes the device can take now: its free memory, and for managed kinds (which a budget
 * bounds) no more than the budget's headroom. */
static uint64_t room(const tidal_policy_system *sys, int32_t device, tidal_kind kind)
{
    uint64_t r = sys->device_free(sys, device);
    const uint64_t budget = sys->device_budget(sys, device);
    if (TIDAL_KIND_IS_MANAGED(kind) && budget != 0) {
        const uint64_t resident = sys->device_resident(sys, device);
        const uint64_t headroom = budget > resident ? budget - resident : 0;
        if (headroom < r)
            r = headroom;
    }
    return r;
}

static int32_t choose_device(const tidal_policy_system *sys, int32_t hint, tidal_kind kind, size_t size,
                             uint64_t *room_out)
{
    if (hint >= 0 && hint < sys->device_count && (*room_out = room(sys, hint, kind)) >= size)
        return hint;
    int32_t best = 0;
    uint64_t best_room = 0;
    for (int32_t d = 0; d < sys->device_count; ++d) {
        const uint64_t r = room(sys, d, kind);
        if (d == 0 || r > best_room) {
            best = d;
            best_room = r;
        }
    }
    *room_out = best_room;
    return best;
}

/* The parts of `r` for `size` bytes into `out`; 0 when the allocation is too small to split. */
static size_t make_parts(const split_rule *r, const tidal_policy_system *sys, size_t size, tidal_policy_part *out)
{
    part_spec all[MAX_PARTS];
    size_t n = r->part_count;
    if (n == 0) {
        n = (size_t)sys->device_count < MAX_PARTS ? (size_t)sys->device_count : MAX_PARTS;
        for (size_t i = 0; i < n; ++i) {
            all[i].device = (int32_t)i;
            all[i].size = 0;
        }
    } else {
        memcpy(all, r->parts, n * sizeof *all);
    }
    uint64_t sized = 0;
    size_t unsized = 0;
    for (size_t i = 0; i < n; ++i) {
        sized += all[i].size;
        unsized += all[i].size == 0;
    }
    const uint64_t page = sys->devices[0].page_size ? sys->devices[0].page_size : 4096;
    const uint64_t rest = sized < size ? size - sized : 0;
    const uint64_t share = unsized ? rest / unsized / page * page : 0;
    if (unsized && share == 0)
        return 0;
    size_t offset = 0, seen_unsized = 0;
    for (size_t i = 0; i < n; ++i) {
        uint64_t bytes = all[i].size;
        if (bytes == 0)
            bytes = ++seen_unsized == unsized ? rest - share * (unsized - 1) : share; /* the last takes the rest */
        out[i].struct_size = sizeof out[i];
        out[i].offset = offset;
        out[i].size = (size_t)bytes;
        out[i].device = all[i].device;
        offset += (size_t)bytes; /* sizes adding up to more or less than `size`: the core refuses */
    }
    return n;
}

static tidal_policy_verdict spread_place(void *state, const tidal_place_request *req, tidal_placement *out)
{
    /* Thread-local: the core copies the parts before the hook's thread calls again. */
    static _Thread_local tidal_policy_part parts[MAX_PARTS];
    const spread_state *st = state;
    const tidal_policy_system *sys = req->system;
    if (TIDAL_KIND_IS_HOST(req->kind))
        return TIDAL_POLICY_DEFER;
    if (req->kind == TIDAL_KIND_AUTO || TIDAL_KIND_IS_MANAGED(req->kind)) {
        for (size_t i = 0; i < st->split_count; ++i) {
            const split_rule *r = &st->splits[i];
            if (!r->tag || fnmatch(r->tag, req->tag, 0) != 0 || req->size < r->min_size)
                continue;
            const size_t n = make_parts(r, sys, req->size, parts);
            if (n == 0)
                break; /* too small to split: placed on one device below */
            if (!TIDAL_COVERS(out->struct_size, tidal_placement, part_count))
                return TIDAL_POLICY_DEFER;
            out->kind = req->kind == TIDAL_KIND_AUTO ? TIDAL_KIND_MANAGED : req->kind;
            out->device = parts[0].device;
            out->parts = parts;
            out->part_count = n;
            snprintf(out->reason, sizeof out->reason, "split %zu: %zu parts", i + 1, n);
            return TIDAL_POLICY_DECIDED;
        }
    }
    if (req->device >= 0 && req->kind != TIDAL_KIND_AUTO)
        return TIDAL_POLICY_DEFER; /* an explicit kind on an explicit device: the caller's decision */
    const tidal_kind kind = req->kind == TIDAL_KIND_AUTO ? st->kind : req->kind;
    uint64_t r = 0;
    out->kind = kind;
    out->device = choose_device(sys, st->affinity ? req->device : TIDAL_DEVICE_DEFAULT, kind, req->size, &r);
    snprintf(out->reason, sizeof out->reason, "device %d: %llu bytes of room%s", (int)out->device,
             (unsigned long long)r, out->device == req->device ? " (the hinted device)" : "");
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    if (core_abi < 1)
        return TIDAL_ERROR_NOT_SUPPORTED;
    *chosen_abi = 1;
    hooks->name = "spread";
    hooks->description = "device choice by free memory, budget headroom and affinity; managed allocations split over devices";
    hooks->option_keys = top_keys;
    hooks->init = spread_init;
    hooks->fini = spread_fini;
    hooks->place = spread_place;
    return TIDAL_OK;
}
