/*
 * The `xnack` policy: placement and prefetch planning by whether managed memory migrates on a
 * device page fault (DESIGN.md, "XNACK-aware placement").
 *
 *   policies = ["xnack", "lru"]
 *   [policy.xnack]
 *   demand_paging = false          # true: skip declared prefetches where pages migrate on fault
 *   chunk_size = 0                 # bytes per migration call; 0 = [migration] chunk_size
 *   host_heavy_accessed_by = true  # host-heavy managed buffers also get accessed-by-device
 *   pinned_streaming = false       # no migration on fault: streaming host buffers become pinned
 *   elastic_under_budget = true    # no migration on fault and a device budget: elastic memory
 *   elastic_min_size = "2MiB"      # ... for buffers of at least this size
 *
 * With migration on fault (NVIDIA with concurrent managed access, AMD xnack+, simulated
 * xnack = true) managed memory plus advice and declared prefetches is the best default. Without
 * it (AMD xnack-) managed memory is pinned host memory read over the bus, so buffers the GPU
 * works on go to device memory and tidal stages copies; managed stays for host-heavy buffers.
 * There, once the device has a budget (out-of-core work), they go to elastic memory instead,
 * where the runtime has a virtual-memory API: it moves in whole chunks at copy-engine speed.
 * Pageable memory is never chosen: a kernel touching it faults with XNACK off.
 * Only TIDAL_KIND_AUTO requests are decided: an explicit kind is the caller's decision.
 * Built from api/tidal/policy.h alone, as any third-party plugin would be.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "tidal/policy.h"

typedef struct xnack_state {
    int demand_paging;
    uint64_t chunk_size; /* 0: the core's [migration] chunk_size */
    int host_heavy_accessed_by;
    int pinned_streaming;
    int elastic_under_budget;
    uint64_t elastic_min_size; /* smaller buffers stay device memory */
} xnack_state;

static const char *const option_keys[] = {"demand_paging", "chunk_size", "host_heavy_accessed_by",
                                          "pinned_streaming", "elastic_under_budget", "elastic_min_size", NULL};

/* Reads an optional boolean; a wrong type has been recorded by the view and fails init. */
static int read_bool(const tidal_options_api *api, const tidal_options *opts, const char *key, int *value)
{
    tidal_status st = api->get_bool(opts, key, value);
    return st == TIDAL_OK || st == TIDAL_ERROR_NOT_FOUND;
}

static tidal_status xnack_init(const tidal_policy_init_args *args, void **state_out)
{
    const tidal_options_api *api = args->options_api;
    const tidal_options *opts = args->options;
    xnack_state *st = calloc(1, sizeof *st);
    if (!st)
        return TIDAL_ERROR_OUT_OF_MEMORY;
    st->host_heavy_accessed_by = 1;
    st->elastic_under_budget = 1;
    /* Each elastic allocation takes whole chunks of the runtime's granularity (2 MiB on the
     * H200 and on the simulated device): a smaller buffer would waste most of one. */
    st->elastic_min_size = (uint64_t)2 << 20;
    /* Every option is read even after a bad one, so one run reports all mistakes. */
    int ok = read_bool(api, opts, "demand_paging", &st->demand_paging);
    ok &= read_bool(api, opts, "host_heavy_accessed_by", &st->host_heavy_accessed_by);
    ok &= read_bool(api, opts, "pinned_streaming", &st->pinned_streaming);
    ok &= read_bool(api, opts, "elastic_under_budget", &st->elastic_under_budget);
    tidal_status cs = api->get_size(opts, "chunk_size", &st->chunk_size);
    if (cs == TIDAL_OK && st->chunk_size != 0 &&
        (st->chunk_size < 4096 || st->chunk_size > ((uint64_t)1 << 30) || st->chunk_size % 4096 != 0)) {
        /* Runtimes migrate whole pages; a chunk that splits one would move it twice. */
        api->error(opts, "chunk_size", "chunk_size must be 0 (the core's) or a multiple of 4 KiB between 4 KiB and 1 GiB");
        ok = 0;
    } else if (cs != TIDAL_OK && cs != TIDAL_ERROR_NOT_FOUND) {
        ok = 0;
    }
    tidal_status ms = api->get_size(opts, "elastic_min_size", &st->elastic_min_size);
    if (ms != TIDAL_OK && ms != TIDAL_ERROR_NOT_FOUND)
        ok = 0;
    if (!ok) {
        /* The core calls fini only after a successful init. */
        free(st);
        return TIDAL_ERROR_CONFIG;
    }
    *state_out = st;
    return TIDAL_OK;
}

static void xnack_fini(void *state) { free(state); }

/* The device a request names, or NULL when the policy has nothing sound to say about it. */
static const tidal_policy_device *find_device(const tidal_policy_system *sys, int32_t index)
{
    if (!sys || !sys->devices || index < 0 || index >= sys->device_count)
        return NULL;
    const tidal_policy_device *dev = &sys->devices[index];
    return TIDAL_COVERS(dev->struct_size, tidal_policy_device, flags) ? dev : NULL;
}

/* MANAGED and CONCURRENT_MANAGED read 1 on AMD with XNACK off too: only the fault flag counts. */
static int migrates_on_fault(const tidal_policy_device *dev)
{
    return (dev->flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT) && (dev->flags & TIDAL_DEVICE_FLAG_MANAGED);
}

static int is_host_heavy(uint32_t hints)
{
    return (hints & (TIDAL_HINT_HOST_READ | TIDAL_HINT_HOST_WRITE)) && !(hints & TIDAL_HINT_DEVICE_ONLY);
}

static tidal_policy_verdict decide(tidal_placement *out, tidal_kind kind, int32_t device, uint32_t advice,
                                   const char *reason)
{
    out->kind = kind;
    out->device = device;
    out->advice = advice;
    if (TIDAL_COVERS(out->struct_size, tidal_placement, reason))
        snprintf(out->reason, sizeof out->reason, "%s", reason);
    return TIDAL_POLICY_DECIDED;
}

/* Whether the device has a budget now and elastic memory can be allocated: a core older than
 * these fields says neither. */
static int elastic_usable(const tidal_policy_system *sys)
{
    return TIDAL_COVERS(sys->struct_size, tidal_policy_system, device_budget) && sys->device_budget &&
           (sys->features & TIDAL_POLICY_SYSTEM_VIRTUAL_MEMORY);
}

static tidal_policy_verdict xnack_place(void *state, const tidal_place_request *req, tidal_placement *out)
{
    const xnack_state *st = state;
    /* The answer is a function of the request and the (fixed) system description: the same
     * request always gets it, deferrals included, so the core may cache it. The one exception,
     * a device buffer without migration on fault, depends on the budget and is taken back below. */
    if (TIDAL_COVERS(out->struct_size, tidal_placement, flags))
        out->flags |= TIDAL_PLACEMENT_CACHEABLE;
    if (!TIDAL_COVERS(req->struct_size, tidal_place_request, system) ||
        !TIDAL_COVERS(out->struct_size, tidal_placement, advice) || req->kind != TIDAL_KIND_AUTO)
        return TIDAL_POLICY_DEFER;
    const int32_t index = req->device == TIDAL_DEVICE_DEFAULT ? 0 : req->device;
    /* A bad index (TIDAL_DEVICE_HOST included) is left to the core, which reports it. */
    const tidal_policy_device *dev = find_device(req->system, index);
    if (!dev)
        return TIDAL_POLICY_DEFER;
    const int host_heavy = is_host_heavy(req->hints);
    const uint32_t read_mostly = (req->hints & TIDAL_HINT_READ_MOSTLY) ? TIDAL_ADVICE_READ_MOSTLY : 0;
    const uint32_t host_advice = TIDAL_ADVICE_PREFERRED_HOST | read_mostly |
                                 (st->host_heavy_accessed_by ? TIDAL_ADVICE_ACCESSED_BY_DEVICE : 0);
    /* Host kinds keep the caller's device as affinity, else none, as the core's defaults do. */
    const int32_t host_device = req->device >= 0 ? req->device : TIDAL_DEVICE_HOST;

    if (migrates_on_fault(dev)) {
        if (host_heavy)
            return decide(out, TIDAL_KIND_MANAGED, index, host_advice,
                          "xnack+: host-heavy: managed, preferred on the host");
        return decide(out, TIDAL_KIND_MANAGED, index, TIDAL_ADVICE_PREFERRED_DEVICE | read_mostly,
                      read_mostly ? "xnack+: managed, read-mostly, preferred on the device, declared prefetch"
                                  : "xnack+: managed, preferred on the device, declared prefetch");
    }
    if (!host_heavy && st->elastic_under_budget && req->size >= st->elastic_min_size && elastic_usable(req->system)) {
        /* The budget can change at any time (tidal_budget_set): this answer must be asked again. */
        if (TIDAL_COVERS(out->struct_size, tidal_placement, flags))
            out->flags &= ~TIDAL_PLACEMENT_CACHEABLE;
        /* Managed memory does not migrate here, so out-of-core work under a budget would read
         * host memory over the bus: elastic memory moves whole chunks at the copy engine's rate
         * and keeps its address. */
        if (req->system->device_budget(req->system, index) != 0)
            return decide(out, TIDAL_KIND_ELASTIC, index, 0, "xnack-, device budget: elastic memory, offloaded in chunks");
    }
    if (!host_heavy)
        return decide(out, TIDAL_KIND_DEVICE, index, 0, "xnack-: device memory + staged copies");
    /* Read once in order, a host buffer costs one pass over the bus either way: pinned skips
     * managed memory's bookkeeping. */
    if (st->pinned_streaming && (req->hints & TIDAL_HINT_STREAMING))
        return decide(out, TIDAL_KIND_PINNED, host_device, 0, "xnack-: streaming host buffer: pinned, read over the bus");
    if (!(dev->flags & TIDAL_DEVICE_FLAG_MANAGED))
        return decide(out, TIDAL_KIND_PINNED, host_device, 0, "no managed memory: host-heavy: pinned");
    return decide(out, TIDAL_KIND_MANAGED, index, host_advice, "xnack-: host-heavy: managed, host-resident");
}

static tidal_policy_verdict plan(tidal_prefetch_plan *out, tidal_prefetch_action action, uint64_t chunk_size,
                                 uint32_t advice_set, const char *reason)
{
    out->action = action;
    out->chunk_size = chunk_size;
    out->advice_set = advice_set;
    if (TIDAL_COVERS(out->struct_size, tidal_prefetch_plan, reason))
        snprintf(out->reason, sizeof out->reason, "%s", reason);
    return TIDAL_POLICY_DECIDED;
}

static tidal_policy_verdict xnack_plan_prefetch(void *state, const tidal_prefetch_request *req,
                                                tidal_prefetch_plan *out)
{
    const xnack_state *st = state;
    if (!TIDAL_COVERS(req->struct_size, tidal_prefetch_request, system) ||
        !TIDAL_COVERS(out->struct_size, tidal_prefetch_plan, advice_set))
        return TIDAL_POLICY_DEFER;
    /* Read-only work on a read-mostly buffer: duplicated pages can be dropped from the device
     * later without a copy back. Advice it already carries is not set again. */
    const uint32_t advice_set = (req->mode == TIDAL_ACCESS_READ && (req->hints & TIDAL_HINT_READ_MOSTLY) &&
                                 !(req->advice & TIDAL_ADVICE_READ_MOSTLY))
                                    ? TIDAL_ADVICE_READ_MOSTLY
                                    : 0;
    if (req->device == TIDAL_DEVICE_HOST)
        return plan(out, TIDAL_PREFETCH_MIGRATE, st->chunk_size, advice_set, "xnack: to the host");
    const tidal_policy_device *dev = find_device(req->system, req->device);
    if (!dev)
        return TIDAL_POLICY_DEFER;
    if (migrates_on_fault(dev)) {
        if (st->demand_paging)
            return plan(out, TIDAL_PREFETCH_SKIP, 0, advice_set, "xnack+: demand paging: the device faults pages in");
        return plan(out, TIDAL_PREFETCH_MIGRATE, st->chunk_size, advice_set, "xnack+: declared prefetch");
    }
    /* No fault-driven migration: a range not moved now would be read over the bus. */
    return plan(out, TIDAL_PREFETCH_MIGRATE, st->chunk_size, advice_set, "xnack-: migrate ahead of the work");
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    if (core_abi < 1)
        return TIDAL_ERROR_NOT_SUPPORTED;
    *chosen_abi = 1;
    hooks->name = "xnack";
    hooks->description = "managed + prefetch where pages migrate on fault, device memory + copies where not";
    hooks->option_keys = option_keys;
    hooks->init = xnack_init;
    hooks->fini = xnack_fini;
    hooks->place = xnack_place;
    /* A core older than the prefetch hook still gets placement. */
    if (TIDAL_COVERS(hooks->struct_size, tidal_policy_hooks, plan_prefetch))
        hooks->plan_prefetch = xnack_plan_prefetch;
    return TIDAL_OK;
}
