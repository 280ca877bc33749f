/*
 * The `lru` policy: which resident ranges leave a device over its budget, least recently used
 * first.
 *
 *   policies = ["xnack", "lru"]
 *   [policy.lru]
 *   prefer_clean = true   # first evict clean ranges (elastic chunks whose home is current, read-only
 *                         # read-mostly ranges): they go without a copy back
 *   clean_window = 0      # ...but only those unused for more than this many ticks (0: any)
 *   min_age = 0           # ranges used within this many ticks go only as a last resort
 *
 * The core hands over only ranges that no work in flight and no lookahead declaration
 * protects, so the policy never has to know about streams: it only orders. It picks until the
 * bytes reach `need`, or offers every candidate when they do not (the core then reports).
 * Built from api/tidal/policy.h alone, as any third-party plugin would be.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "tidal/policy.h"

typedef struct lru_state {
    int prefer_clean;
    uint64_t clean_window; /* 0: any clean range qualifies */
    uint64_t min_age;      /* 0: no range is too young */
} lru_state;

static const char *const option_keys[] = {"prefer_clean", "clean_window", "min_age", NULL};

/* Eviction tiers, taken in this order. */
enum { TIER_CLEAN = 0, TIER_LRU = 1, TIER_YOUNG = 2 };

typedef struct ranked {
    int tier;
    uint64_t last_use;
    size_t size;
    size_t index;
} ranked;

/* Reads an optional tick count; a wrong type has been recorded by the view. */
static int read_ticks(const tidal_options_api *api, const tidal_options *opts, const char *key, uint64_t *out)
{
    int64_t v = 0;
    tidal_status st = api->get_int(opts, key, &v);
    if (st == TIDAL_ERROR_NOT_FOUND)
        return 1;
    if (st != TIDAL_OK)
        return 0;
    if (v < 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s must be a number of ticks >= 0", key);
        api->error(opts, key, msg);
        return 0;
    }
    *out = (uint64_t)v;
    return 1;
}

static tidal_status lru_init(const tidal_policy_init_args *args, void **state_out)
{
    const tidal_options_api *api = args->options_api;
    const tidal_options *opts = args->options;
    lru_state *st = calloc(1, sizeof *st);
    if (!st)
        return TIDAL_ERROR_OUT_OF_MEMORY;
    st->prefer_clean = 1;
    /* Every option is read even after a bad one, so one run reports all mistakes. */
    tidal_status pc = api->get_bool(opts, "prefer_clean", &st->prefer_clean);
    int ok = pc == TIDAL_OK || pc == TIDAL_ERROR_NOT_FOUND;
    ok &= read_ticks(api, opts, "clean_window", &st->clean_window);
    ok &= read_ticks(api, opts, "min_age", &st->min_age);
    if (!ok) {
        /* The core calls fini only after a successful init. */
        free(st);
        return TIDAL_ERROR_CONFIG;
    }
    *state_out = st;
    return TIDAL_OK;
}

static void lru_fini(void *state) { free(state); }

/* Ticks since the range was last used; a clock reading from the future counts as "just now". */
static uint64_t age_of(uint64_t now, uint64_t last_use) { return last_use < now ? now - last_use : 0; }

/* `flags`: the candidate's TIDAL_RESIDENT_* bits (0 from a core that does not send them). */
static int tier_of(const lru_state *st, const tidal_resident_range *c, uint32_t flags, uint64_t now)
{
    const uint64_t age = age_of(now, c->last_use);
    if (age < st->min_age)
        return TIER_YOUNG;
    const int clean = (flags & TIDAL_RESIDENT_CLEAN) ||
                      (!(c->mode & TIDAL_ACCESS_WRITE) && (c->advice & TIDAL_ADVICE_READ_MOSTLY));
    if (st->prefer_clean && clean && (st->clean_window == 0 || age > st->clean_window))
        return TIER_CLEAN;
    return TIER_LRU;
}

static int compare_ranked(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->tier != b->tier)
        return a->tier < b->tier ? -1 : 1;
    if (a->last_use != b->last_use)
        return a->last_use < b->last_use ? -1 : 1;
    /* Among equally old ranges the larger frees the need with fewer moves. */
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    /* qsort is not stable: the index keeps equal ranges in a reproducible order. */
    return a->index < b->index ? -1 : a->index > b->index;
}

static tidal_policy_verdict lru_evict(void *state, const tidal_evict_request *req, tidal_evict_plan *out)
{
    const lru_state *st = state;
    if (!TIDAL_COVERS(req->struct_size, tidal_evict_request, candidate_count) ||
        !TIDAL_COVERS(out->struct_size, tidal_evict_plan, count))
        return TIDAL_POLICY_DEFER;
    const int can_say = TIDAL_COVERS(out->struct_size, tidal_evict_plan, reason);
    out->count = 0;
    if (req->candidate_count == 0 || req->need == 0) {
        if (can_say)
            snprintf(out->reason, sizeof out->reason,
                     req->candidate_count == 0 ? "lru: no evictable range" : "lru: nothing to free");
        return TIDAL_POLICY_DECIDED;
    }
    if (!req->candidates || !out->order)
        return TIDAL_POLICY_DEFER;
    /* Candidates are laid out at the core's struct_size, which may exceed this header's. */
    const size_t stride = req->candidates[0].struct_size;
    if (!TIDAL_COVERS(stride, tidal_resident_range, advice)) {
        if (can_say)
            snprintf(out->reason, sizeof out->reason,
                     "lru: candidates are %zu bytes each, too small for a tidal_resident_range", stride);
        return TIDAL_POLICY_REFUSE;
    }
    if (req->candidate_count > SIZE_MAX / sizeof(ranked))
        return TIDAL_POLICY_DEFER;
    ranked *r = malloc(req->candidate_count * sizeof *r);
    if (!r)
        return TIDAL_POLICY_DEFER; /* the core's own order is better than failing the work */
    const unsigned char *base = (const unsigned char *)req->candidates;
    const uint32_t *flags =
        TIDAL_COVERS(req->struct_size, tidal_evict_request, candidate_flags) ? req->candidate_flags : NULL;
    for (size_t i = 0; i < req->candidate_count; ++i) {
        const tidal_resident_range *c = (const tidal_resident_range *)(const void *)(base + i * stride);
        r[i].tier = tier_of(st, c, flags ? flags[i] : 0u, req->now);
        r[i].last_use = c->last_use;
        r[i].size = c->size;
        r[i].index = i;
    }
    qsort(r, req->candidate_count, sizeof *r, compare_ranked);

    uint64_t freed = 0;
    size_t clean = 0, young = 0;
    for (size_t i = 0; i < req->candidate_count && freed < req->need; ++i) {
        out->order[out->count++] = r[i].index;
        freed = r[i].size > UINT64_MAX - freed ? UINT64_MAX : freed + r[i].size;
        clean += r[i].tier == TIER_CLEAN;
        young += r[i].tier == TIER_YOUNG;
    }
    free(r);
    if (can_say) {
        if (freed < req->need)
            snprintf(out->reason, sizeof out->reason,
                     "lru: all %zu candidates free %llu of %llu bytes needed", out->count,
                     (unsigned long long)freed, (unsigned long long)req->need);
        else
            snprintf(out->reason, sizeof out->reason,
                     "lru: %zu of %zu ranges, %llu bytes (%zu clean, %zu recently used)", out->count,
                     req->candidate_count, (unsigned long long)freed, clean, young);
    }
    return TIDAL_POLICY_DECIDED;
}

TIDAL_POLICY_EXPORT tidal_status tidal_policy_negotiate(uint32_t core_abi, uint32_t *chosen_abi,
                                                        tidal_policy_hooks *hooks)
{
    if (core_abi < 1)
        return TIDAL_ERROR_NOT_SUPPORTED;
    /* Eviction is this plugin's only decision: a core that cannot ask for it has no use for it. */
    if (!TIDAL_COVERS(hooks->struct_size, tidal_policy_hooks, evict))
        return TIDAL_ERROR_NOT_SUPPORTED;
    *chosen_abi = 1;
    hooks->name = "lru";
    hooks->description = "evicts least recently used ranges first, clean read-mostly ones before others";
    hooks->option_keys = option_keys;
    hooks->init = lru_init;
    hooks->fini = lru_fini;
    hooks->evict = lru_evict;
    return TIDAL_OK;
}
