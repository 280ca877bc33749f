/*
 * tidal policy plugin ABI, version 1.
 *
 * A policy is a shared object exporting ONE symbol, TIDAL_POLICY_ENTRY_SYMBOL, of type
 * tidal_policy_negotiate_fn. The core calls it with the highest policy ABI version it speaks;
 * the plugin answers with the version it will use (<= the offer, >= the lowest it supports)
 * and fills the hook table. A plugin that cannot agree returns TIDAL_ERROR_NOT_SUPPORTED;
 * the core then fails with TIDAL_ERROR_PLUGIN naming the file and both versions.
 *
 * Rules both sides keep (the Vulkan loader's negotiation, libomptarget's plugin table):
 *  - every struct crossing the boundary starts with its size; a side reads only the fields
 *    both sizes cover, and new fields are only ever appended. The core zero-fills every
 *    out-struct before a hook fills it, so a field appended to one means "not set" at 0,
 *    which is all a plugin built against an older policy.h leaves there;
 *  - the elements of the arrays the core hands over (tidal_policy_system.devices,
 *    tidal_evict_request.candidates) are laid out at the core's struct_size: step by
 *    element[0].struct_size. Because plugins built against 0.1 index them by their own
 *    sizeof, tidal_policy_device and tidal_resident_range keep their 0.1 size for good; more
 *    per-element data would go in a new array appended to the struct that points to them;
 *  - enums end with a *_FORCE_32BIT = 0x7FFFFFFF sentinel, never a valid value;
 *  - every hook is optional, but at least one decision hook (place, recover, plan_prefetch,
 *    evict) must be set;
 *  - a decision hook answers TIDAL_POLICY_DEFER to let the next policy in the chain decide;
 *    the core's built-in defaults end every chain;
 *  - the core validates every decision before acting on it; a bad one is a TIDAL_ERROR_PLUGIN
 *    naming the plugin, never a crash or a silent fix;
 *  - hooks may be called from several threads at once: state changed after init must be
 *    guarded by the plugin;
 *  - a plugin never links a TOML library: its options arrive through tidal_options_api.
 * This header includes only tidal.h, so a plugin needs nothing else from tidal.
 */
#ifndef TIDAL_POLICY_H
#define TIDAL_POLICY_H

#include "tidal/tidal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TIDAL_POLICY_ABI_VERSION 1
#define TIDAL_POLICY_ENTRY_SYMBOL "tidal_policy_negotiate"

#if defined(__GNUC__)
#  define TIDAL_POLICY_EXPORT __attribute__((visibility("default")))
#else
#  define TIDAL_POLICY_EXPORT
#endif

/* 1 when a size-prefixed struct of `size` bytes holds `field` of `type` entirely, else 0. The
 * other side may be built against an older or newer header than this one, so a side touches
 * only the fields the struct's own struct_size (or, for array elements, the stride it was
 * handed) covers:
 *     if (TIDAL_COVERS(out->struct_size, tidal_placement, flags))
 *         out->flags |= TIDAL_PLACEMENT_CACHEABLE;
 * A constant expression when `size` is one; C99 and C++. */
#define TIDAL_COVERS(size, type, field) \
    ((size_t)(size) >= offsetof(type, field) + sizeof(((type *)0)->field))

/* -------------------------------------------------------------------------------------
 * Options: a read-only view of the policy's table [policy.NAME] in the configuration.
 * Keys are dotted paths relative to the view ("limits.max"). Getters return TIDAL_OK,
 * TIDAL_ERROR_NOT_FOUND when the key is absent, TIDAL_ERROR_CONFIG when its type differs
 * (the view has then recorded a positioned error, see `error`). Strings stay valid until
 * the policy's fini.
 * ----------------------------------------------------------------------------------- */
typedef struct tidal_options tidal_options;

typedef struct tidal_options_api {
    size_t struct_size;
    tidal_status (*get_string)(const tidal_options *view, const char *key, const char **out);
    tidal_status (*get_int)(const tidal_options *view, const char *key, int64_t *out);
    tidal_status (*get_double)(const tidal_options *view, const char *key, double *out);
    tidal_status (*get_bool)(const tidal_options *view, const char *key, int *out);
    /* An integer of bytes, or a string with a unit: "512MiB", "8GiB", "1.5GB", "4096". */
    tidal_status (*get_size)(const tidal_options *view, const char *key, uint64_t *out);
    /* Number of elements of the array at `key` (0 when absent or not an array). */
    size_t (*array_length)(const tidal_options *view, const char *key);
    /* Element `index` of a string array. */
    tidal_status (*get_string_at)(const tidal_options *view, const char *key, size_t index,
                                  const char **out);
    /* A view of the table at `key`, or of element `index` of an array of tables at `key`
     * (pass index (size_t)-1 for a plain table). NULL when absent or not a table. */
    const tidal_options *(*table)(const tidal_options *view, const char *key, size_t index);
    /* The keys directly in this table, in file order: count and i-th name. */
    size_t (*key_count)(const tidal_options *view);
    const char *(*key_at)(const tidal_options *view, size_t index);
    /* Records a configuration error at `key` (NULL: the table itself); the core reports it
     * with file, line and column and the plugin's name, and fails the context creation. */
    void (*error)(const tidal_options *view, const char *key, const char *message);
} tidal_options_api;

/* -------------------------------------------------------------------------------------
 * What a policy sees of the system.
 * ----------------------------------------------------------------------------------- */
typedef struct tidal_policy_device {
    size_t struct_size;
    int32_t index;
    uint32_t flags;       /* TIDAL_DEVICE_FLAG_* */
    tidal_xnack xnack;
    uint64_t total_memory;
    uint64_t page_size;
} tidal_policy_device;

/* tidal_policy_system.features */
#define TIDAL_POLICY_SYSTEM_VIRTUAL_MEMORY 0x1u /* the runtime has a virtual-memory API:
                                                 * TIDAL_KIND_ELASTIC can be allocated */

/* Where one device sits (tidal_policy_system.topology; tidal_policy_device never grows). */
typedef struct tidal_policy_device_topology {
    size_t struct_size;
    int32_t numa_node;    /* -1 when unknown */
    char pci_bus_id[32];  /* "" when unknown */
    uint64_t peer_mask;   /* bit p: this device reaches device p's memory directly */
} tidal_policy_device_topology;

/* How one device reaches another's memory (tidal_policy_system.peers). */
typedef struct tidal_policy_peer {
    size_t struct_size;
    int32_t can_access;       /* 1: directly (peer access) */
    tidal_link_type link;
    int32_t hops;             /* -1 when unknown */
    int32_t performance_rank; /* lower is faster; -1 when unknown */
} tidal_policy_peer;

typedef struct tidal_policy_system {
    size_t struct_size;
    const char *runtime;  /* "sim", "hip", "cuda" */
    int32_t device_count;
    const tidal_policy_device *devices; /* device_count entries */
    /* Appended after devices (read only when struct_size covers them). */
    uint32_t features;    /* TIDAL_POLICY_SYSTEM_* */
    /* The device's budget now ([migration] budget, tidal_budget_set) in bytes, 0 = none; 0 for
     * a bad index. It may change between two calls, so a placement that depends on it must
     * not be TIDAL_PLACEMENT_CACHEABLE. Safe from any thread; never NULL when covered. */
    uint64_t (*device_budget)(const struct tidal_policy_system *system, int32_t device);
    /* Appended after device_budget: the topology found when the context started. Step through
     * both arrays by element[0].struct_size. */
    const tidal_policy_device_topology *topology; /* device_count entries */
    const tidal_policy_peer *peers; /* device_count * device_count: [device * device_count + peer] */
    /* Appended for several devices (issue 16; read only when struct_size covers them; never
     * NULL when covered; 0 for a bad index; safe from any thread). The device's free memory
     * now, as the runtime reports it (cudaMemGetInfo / hipMemGetInfo; the simulated device's
     * capacity less what is allocated). */
    uint64_t (*device_free)(const struct tidal_policy_system *system, int32_t device);
    /* The managed bytes tidal keeps resident on the device, as of the end of the last
     * declaration or prefetch: device_budget() less this is the budget's headroom. */
    uint64_t (*device_resident)(const struct tidal_policy_system *system, int32_t device);
} tidal_policy_system;

/* -------------------------------------------------------------------------------------
 * Decisions
 * ----------------------------------------------------------------------------------- */
typedef enum tidal_policy_verdict {
    TIDAL_POLICY_DEFER = 0,   /* no opinion: ask the next policy */
    TIDAL_POLICY_DECIDED = 1, /* the out-struct holds the decision */
    TIDAL_POLICY_REFUSE = 2,  /* fail the operation; the out-struct's `reason` says why */
    TIDAL_POLICY_FORCE_32BIT = 0x7FFFFFFF /* not a value: keeps the enum 32 bits wide */
} tidal_policy_verdict;

typedef struct tidal_place_request {
    size_t struct_size;
    size_t size;
    size_t alignment;
    tidal_kind kind;        /* as asked: AUTO or an explicit kind */
    int32_t device;         /* as asked: index or TIDAL_DEVICE_DEFAULT */
    uint32_t hints;         /* TIDAL_HINT_* */
    const char *tag;        /* "" when untagged; never NULL */
    const tidal_policy_system *system;
} tidal_place_request;

/* Placement flags. */
#define TIDAL_PLACEMENT_NO_POOL 0x1u /* allocate straight from the runtime, not from tidal's pool */
/* The same request (size, alignment, kind, device, hints and tag) always gets this answer: the
 * core may reuse it on later identical requests without asking the chain again. Only for
 * answers that depend on nothing else (no counters, no clock, no memory state). Set in a
 * DEFER answer too, it says "I would defer this request again": the core caches a decision
 * only when the decider and every policy that deferred before it set the flag. */
#define TIDAL_PLACEMENT_CACHEABLE 0x2u
#define TIDAL_PLACEMENT_FLAGS_ALL 0x3u

typedef struct tidal_placement {
    size_t struct_size;
    tidal_kind kind;        /* never AUTO in a DECIDED answer */
    int32_t device;         /* index; TIDAL_DEVICE_HOST allowed for pinned/pageable */
    uint32_t advice;        /* TIDAL_ADVICE_*; only managed kinds take advice */
    char reason[128];       /* optional, for logs and REFUSE messages */
    uint32_t flags;         /* TIDAL_PLACEMENT_*; 0 = pooled when [pool] enabled = true */
    /* Appended for several devices (issue 16): a split of a managed allocation over devices,
     * read from `place` answers only. `parts` points at `part_count` parts the plugin owns,
     * valid until the hook returns; 0 parts: no split. The parts must cover the allocation:
     * in address order, the first at offset 0, each beginning where the one before ends, the
     * last ending at the request's size, none empty, each on a device index. Each part gets
     * preferred-location and accessed-by advice for its own device, and tidal's residency
     * units are cut at the parts' edges, so a declaration of a part moves it to its device
     * only. A split that does not cover the allocation fails the tidal_alloc with
     * TIDAL_ERROR_INVALID_ARGUMENT naming the plugin; one on another kind, or naming no
     * device, with TIDAL_ERROR_PLUGIN. A split answer is never cached. */
    const struct tidal_policy_part *parts;
    size_t part_count;
} tidal_placement;

/* One part of a split (tidal_placement.parts): [offset, offset + size) of the allocation. */
typedef struct tidal_policy_part {
    size_t struct_size;     /* sizeof(tidal_policy_part); parts are stepped by the first one's */
    size_t offset;
    size_t size;
    int32_t device;         /* a device index */
} tidal_policy_part;

typedef enum tidal_operation {
    TIDAL_OP_ALLOC = 1,
    TIDAL_OP_FREE = 2,
    TIDAL_OP_PREFETCH = 3,
    TIDAL_OP_ADVISE = 4,
    TIDAL_OP_COPY = 5,
    TIDAL_OP_FORCE_32BIT = 0x7FFFFFFF /* not a value: keeps the enum 32 bits wide */
} tidal_operation;

/* An operation failed on the runtime; the chain may say how to try again. */
typedef struct tidal_error_event {
    size_t struct_size;
    tidal_operation operation;
    tidal_status status;          /* e.g. TIDAL_ERROR_OUT_OF_MEMORY */
    int32_t native_error;         /* the runtime's code, 0 when none */
    const char *native_name;      /* e.g. "cudaErrorMemoryAllocation"; never NULL */
    const tidal_place_request *request; /* for TIDAL_OP_ALLOC: what was asked */
    const tidal_placement *failed;      /* for TIDAL_OP_ALLOC: the placement that failed */
    uint32_t attempt;             /* 1 for the first failure of this operation */
} tidal_error_event;

typedef enum tidal_recovery_action {
    TIDAL_RECOVER_FAIL = 0,       /* give the error to the caller */
    TIDAL_RECOVER_RETRY = 1,      /* try again with `placement` (TIDAL_OP_ALLOC only) */
    TIDAL_RECOVER_FORCE_32BIT = 0x7FFFFFFF /* not a value: keeps the enum 32 bits wide */
} tidal_recovery_action;

typedef struct tidal_recovery {
    size_t struct_size;
    tidal_recovery_action action;
    tidal_placement placement;
} tidal_recovery;

/* -------------------------------------------------------------------------------------
 * Prefetch planning: asked once per declared (or explicitly prefetched) managed range.
 * ----------------------------------------------------------------------------------- */
typedef struct tidal_prefetch_request {
    size_t struct_size;
    const void *ptr;            /* the declared range */
    size_t size;
    int32_t device;             /* where the work runs: index or TIDAL_DEVICE_HOST */
    uint32_t mode;              /* TIDAL_ACCESS_* */
    int32_t lookahead;          /* 1: declared for the stream's next phase */
    tidal_kind kind;            /* the allocation's kind (always a managed kind here) */
    int32_t alloc_device;       /* the allocation's device */
    uint32_t hints;             /* the allocation's TIDAL_HINT_* */
    uint32_t advice;            /* TIDAL_ADVICE_* the allocation carries now */
    uint64_t chunk_size;        /* [migration] chunk_size */
    const tidal_policy_system *system;
} tidal_prefetch_request;

typedef enum tidal_prefetch_action {
    TIDAL_PREFETCH_MIGRATE = 1, /* move the range to `device` ahead of the work */
    TIDAL_PREFETCH_SKIP = 2,    /* leave it where it is: the device faults it in or reads it remotely */
    TIDAL_PREFETCH_FORCE_32BIT = 0x7FFFFFFF /* not a value: keeps the enum 32 bits wide */
} tidal_prefetch_action;

typedef struct tidal_prefetch_plan {
    size_t struct_size;
    tidal_prefetch_action action;
    uint64_t chunk_size;        /* bytes per runtime call; 0 = the request's chunk_size */
    uint32_t advice_set;        /* TIDAL_ADVICE_* to set on the allocation before moving */
    char reason[128];
} tidal_prefetch_plan;

/* -------------------------------------------------------------------------------------
 * Eviction: asked when a device would exceed its budget. Candidates are resident ranges
 * that no work in flight and no lookahead declaration protects.
 * ----------------------------------------------------------------------------------- */
typedef struct tidal_resident_range {
    size_t struct_size;
    const void *ptr;
    size_t size;
    uint64_t last_use;          /* tidal's logical clock at the range's last declaration/prefetch */
    uint64_t uses;              /* how many declarations and prefetches named it */
    uint32_t mode;              /* TIDAL_ACCESS_* of every declaration since it became resident, or-ed */
    uint32_t hints;             /* the allocation's TIDAL_HINT_* */
    uint32_t advice;            /* the allocation's TIDAL_ADVICE_* */
    const char *tag;            /* the allocation's tag; "" when none */
} tidal_resident_range;

typedef struct tidal_evict_request {
    size_t struct_size;
    int32_t device;
    uint64_t budget;
    uint64_t resident;          /* bytes resident now */
    uint64_t need;              /* bytes to free at least */
    uint64_t now;               /* tidal's logical clock now */
    const tidal_resident_range *candidates;
    size_t candidate_count;
    const tidal_policy_system *system;
    /* Appended after system (read only when struct_size covers it): candidate_count entries,
     * TIDAL_RESIDENT_* bits of candidates[i] (tidal_resident_range never grows). */
    const uint32_t *candidate_flags;
} tidal_evict_request;

/* The candidate leaves the device with no copy: its host copy is current (an elastic chunk not
 * written since it came in, or read-only data with read-mostly advice). */
#define TIDAL_RESIDENT_CLEAN 0x1u

typedef struct tidal_evict_plan {
    size_t struct_size;
    size_t *order;              /* core-owned, candidate_count entries: indices in eviction order */
    size_t count;               /* out: entries of `order` filled; each index at most once */
    char reason[128];
} tidal_evict_plan;

/* -------------------------------------------------------------------------------------
 * Hook table
 * ----------------------------------------------------------------------------------- */
typedef struct tidal_policy_init_args {
    size_t struct_size;
    const char *instance_name;   /* the name in the `policies` list */
    const tidal_options *options;/* [policy.NAME], possibly empty; never NULL */
    const tidal_options_api *options_api;
    const tidal_policy_system *system;
} tidal_policy_init_args;

typedef struct tidal_policy_hooks {
    size_t struct_size;          /* set by the core: the size it knows */
    const char *name;            /* the plugin's own name, for messages */
    const char *description;     /* one line */
    /* NULL-terminated list of the keys allowed directly in [policy.NAME]; the core rejects
     * any other key with its line, column and the nearest allowed key. NULL: no check. */
    const char *const *option_keys;
    tidal_status (*init)(const tidal_policy_init_args *args, void **state);
    void (*fini)(void *state);
    tidal_policy_verdict (*place)(void *state, const tidal_place_request *request,
                                  tidal_placement *out);
    tidal_policy_verdict (*recover)(void *state, const tidal_error_event *event,
                                    tidal_recovery *out);
    /* Appended after recover (read only when struct_size covers them). The core evicts the
     * candidates in `order` until `need` bytes are free; too few is a TIDAL_ERROR_PLUGIN. */
    tidal_policy_verdict (*plan_prefetch)(void *state, const tidal_prefetch_request *request,
                                          tidal_prefetch_plan *out);
    tidal_policy_verdict (*evict)(void *state, const tidal_evict_request *request,
                                  tidal_evict_plan *out);
} tidal_policy_hooks;

/*! The plugin's one exported symbol.
 *  @core_abi   the highest TIDAL_POLICY_ABI_VERSION the core speaks.
 *  @chosen_abi out: the version the plugin will use.
 *  @hooks      out: filled within hooks->struct_size.
 *  @return TIDAL_OK, or TIDAL_ERROR_NOT_SUPPORTED when no common version exists. */
typedef tidal_status (*tidal_policy_negotiate_fn)(uint32_t core_abi, uint32_t *chosen_abi,
                                                  tidal_policy_hooks *hooks);

#ifdef __cplusplus
}
#endif
#endif /* TIDAL_POLICY_H */
