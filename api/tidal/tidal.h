/*
 * tidal — decides where GPU memory lives and when it moves.
 *
 * The stable C ABI, version 1. Rules this header keeps (see ARCHITECTURE.md):
 *  - every function returns a tidal_status, except the few that only name things
 *    (tidal_status_name, tidal_status_string, tidal_last_error, tidal_version_*);
 *  - status numbers and enum values are explicit and only ever appended;
 *  - structs that may grow start with `struct_size`: set it to sizeof(the struct) (the
 *    *_INIT macros do). New fields are only ever appended, and the library accepts every
 *    size from release 0.1's up. It reads the fields your size covers (fields your header
 *    lacks take their *_INIT value; fields it does not know are ignored), writes only the
 *    bytes your size covers, and steps arrays of such structs (tidal_access,
 *    tidal_copy_item) by the first element's struct_size. A size below 0.1's is
 *    TIDAL_ERROR_INVALID_ARGUMENT naming the struct and both sizes. So a program built
 *    against an older tidal.h runs unchanged on a newer library, and one built against a
 *    newer tidal.h on an older library, for the fields both know;
 *  - enums carried in structs end with a *_FORCE_32BIT = 0x7FFFFFFF sentinel (as Vulkan's
 *    *_MAX_ENUM) so that every compiler makes them 32 bits wide; it is never a valid value;
 *  - handles are opaque; all functions are thread-safe on one context;
 *  - no C++ exception ever crosses this boundary.
 */
#ifndef TIDAL_TIDAL_H
#define TIDAL_TIDAL_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  define TIDAL_API __declspec(dllexport)
#elif defined(__GNUC__)
#  define TIDAL_API __attribute__((visibility("default")))
#else
#  define TIDAL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* =====================================================================================
 * Version
 * =================================================================================== */
#define TIDAL_VERSION_MAJOR 0
#define TIDAL_VERSION_MINOR 1
#define TIDAL_VERSION_PATCH 0
#define TIDAL_VERSION_NUMBER (TIDAL_VERSION_MAJOR * 10000 + TIDAL_VERSION_MINOR * 100 + TIDAL_VERSION_PATCH)
#define TIDAL_VERSION_STRING "0.1.0"
/* The C ABI generation. A change that breaks a caller compiled against an older header
 * gets a new function name instead (sqlite3_close_v2 style); this number only grows. */
#define TIDAL_ABI_VERSION 1

/*! tidal_version_number() : the library's TIDAL_VERSION_NUMBER, which may be newer than the
 *  header the caller compiled against. */
TIDAL_API unsigned tidal_version_number(void);
/*! tidal_version_string() : e.g. "0.1.0". */
TIDAL_API const char *tidal_version_string(void);

/* =====================================================================================
 * Status
 * =================================================================================== */
typedef enum tidal_status {
    TIDAL_OK = 0,
    TIDAL_ERROR_INVALID_ARGUMENT = 1, /* NULL where a value is needed, bad size, bad flag */
    TIDAL_ERROR_OUT_OF_MEMORY = 2,    /* the runtime or a device could not supply the bytes */
    TIDAL_ERROR_NOT_SUPPORTED = 3,    /* the runtime or device lacks the asked capability */
    TIDAL_ERROR_NO_DEVICE = 4,        /* no usable GPU for the asked runtime */
    TIDAL_ERROR_UNKNOWN_POINTER = 5,  /* a pointer tidal did not return, or already freed */
    TIDAL_ERROR_CONFIG = 6,           /* configuration file or string is invalid */
    TIDAL_ERROR_PLUGIN = 7,           /* a policy plugin failed to load or decided badly */
    TIDAL_ERROR_RUNTIME = 8,          /* the device runtime failed in another way */
    TIDAL_ERROR_BUDGET_EXCEEDED = 9,  /* a device budget could not be honoured */
    TIDAL_ERROR_ILLEGAL_ACCESS = 10,  /* the device touched memory it must not */
    TIDAL_ERROR_INTERNAL = 11,        /* a bug in tidal: please report it */
    TIDAL_ERROR_NOT_FOUND = 12,       /* a looked-up key, device or name does not exist */
    TIDAL_ERROR_BUFFER_TOO_SMALL = 13, /* an output buffer is shorter than the result */
    TIDAL_STATUS_FORCE_32BIT = 0x7FFFFFFF /* not a value: keeps the enum 32 bits wide */
} tidal_status;

/*! tidal_status_name() : the enumerator's name, e.g. "TIDAL_ERROR_OUT_OF_MEMORY";
 *  "TIDAL_STATUS_UNKNOWN" for a number this library does not know. Never NULL. */
TIDAL_API const char *tidal_status_name(tidal_status status);
/*! tidal_status_string() : a short English description. Never NULL. */
TIDAL_API const char *tidal_status_string(tidal_status status);
/*! tidal_last_error() : the detailed message of the last call on this thread that did not
 *  return TIDAL_OK: what failed, the native error's name and number when there was one,
 *  and a hint of what to do. "" when no call on this thread has failed. The string stays
 *  valid until the next tidal call on the same thread. Never NULL. */
TIDAL_API const char *tidal_last_error(void);

/* =====================================================================================
 * Context
 * =================================================================================== */
typedef struct tidal_context tidal_context;

/*! tidal_context_create() : a context from the file named by the TIDAL_CONFIG environment
 *  variable, or from built-in defaults when it is unset or empty.
 *  @return TIDAL_OK and *out set; TIDAL_ERROR_CONFIG, _PLUGIN, _NO_DEVICE, _RUNTIME,
 *  _NOT_SUPPORTED (a setting the runtime cannot honour, e.g. [pool] backend = "vendor" on a
 *  runtime without a stream-ordered pool; the message names the key's line). */
TIDAL_API tidal_status tidal_context_create(tidal_context **out);
/*! tidal_context_create_from_file() : a context from a TOML file. Relative paths inside it
 *  (policy_path, runtime_path, sim.profile) are taken relative to the file's folder. */
TIDAL_API tidal_status tidal_context_create_from_file(const char *path, tidal_context **out);
/*! tidal_context_create_from_string() : a context from TOML text. Relative paths inside it
 *  are taken relative to the current directory. */
TIDAL_API tidal_status tidal_context_create_from_string(const char *toml, tidal_context **out);
/*! tidal_context_destroy() : frees every allocation still live (each is reported as a leak
 *  on the log at warning level), unloads the policies and the runtime. NULL is accepted
 *  and does nothing. No other thread may use the context during or after this call. */
TIDAL_API tidal_status tidal_context_destroy(tidal_context *ctx);

/* =====================================================================================
 * Allocation
 * =================================================================================== */
typedef enum tidal_kind {
    TIDAL_KIND_AUTO = 0,           /* let the policy chain decide */
    TIDAL_KIND_DEVICE = 1,         /* device memory (hipMalloc / cudaMalloc) */
    TIDAL_KIND_MANAGED = 2,        /* managed memory (hipMallocManaged / cudaMallocManaged) */
    TIDAL_KIND_PINNED = 3,         /* page-locked host memory (hipHostMalloc / cudaHostAlloc) */
    TIDAL_KIND_PAGEABLE = 4,       /* ordinary host memory (malloc) */
    TIDAL_KIND_DEVICE_FINE = 5,    /* AMD fine-grained device memory */
    TIDAL_KIND_MANAGED_COARSE = 6, /* AMD managed memory with coarse-grain advice */
    TIDAL_KIND_ELASTIC = 7,        /* device memory at a fixed address whose backing can be
                                    * offloaded and restored (see "Elastic device memory") */
    TIDAL_KIND_FORCE_32BIT = 0x7FFFFFFF /* not a value: keeps the enum 32 bits wide */
} tidal_kind;
#define TIDAL_KIND_COUNT 8

/*! tidal_kind_name() : "auto", "device", "managed", "pinned", "pageable", "device-fine",
 *  "managed-coarse", "elastic"; "unknown" otherwise. Never NULL. */
TIDAL_API const char *tidal_kind_name(tidal_kind kind);
/* 1 when `kind` is host memory (pinned, pageable), or managed memory (plain or AMD
 * coarse-grained), else 0: the two questions policies, tools and tidal itself ask of a kind.
 * Macros, so they are constant expressions in C99; `kind` is evaluated twice. */
#define TIDAL_KIND_IS_HOST(kind) ((kind) == TIDAL_KIND_PINNED || (kind) == TIDAL_KIND_PAGEABLE)
#define TIDAL_KIND_IS_MANAGED(kind) ((kind) == TIDAL_KIND_MANAGED || (kind) == TIDAL_KIND_MANAGED_COARSE)

/* Usage hints: what the caller knows about how a buffer will be used. Policies match on them. */
#define TIDAL_HINT_READ_MOSTLY 0x01u /* written once, read many times */
#define TIDAL_HINT_HOST_READ 0x02u   /* the host reads it often */
#define TIDAL_HINT_HOST_WRITE 0x04u  /* the host writes it often */
#define TIDAL_HINT_DEVICE_ONLY 0x08u /* the host never touches it */
#define TIDAL_HINT_STREAMING 0x10u   /* read or written once, in order */
#define TIDAL_HINT_TEMPORARY 0x20u   /* short-lived; contents die with the phase */
#define TIDAL_HINT_ALL 0x3Fu

/* Advice a placement attaches to managed memory (applied by the runtime where it exists). */
#define TIDAL_ADVICE_READ_MOSTLY 0x01u        /* duplicate read-only pages on readers */
#define TIDAL_ADVICE_PREFERRED_DEVICE 0x02u   /* preferred location = the placement's device */
#define TIDAL_ADVICE_PREFERRED_HOST 0x04u     /* preferred location = host */
#define TIDAL_ADVICE_ACCESSED_BY_DEVICE 0x08u /* map on the device to avoid faults */
#define TIDAL_ADVICE_COARSE_GRAIN 0x10u       /* AMD: coarse-grained coherence */
#define TIDAL_ADVICE_ALL 0x1Fu

/* Device selectors. */
#define TIDAL_DEVICE_DEFAULT (-1) /* let the policy chain choose (the core default is 0) */
#define TIDAL_DEVICE_HOST (-2)    /* for host kinds: no device affinity */

#define TIDAL_TAG_MAX 64 /* bytes in a tag, the terminating NUL included */

/*! Describes one allocation. Start from TIDAL_ALLOC_DESC_INIT. */
typedef struct tidal_alloc_desc {
    size_t struct_size; /* sizeof(tidal_alloc_desc) */
    tidal_kind kind;    /* TIDAL_KIND_AUTO lets the policies decide */
    int32_t device;     /* device index, or TIDAL_DEVICE_DEFAULT */
    size_t alignment;   /* 0 = the kind's natural alignment; otherwise a power of two <= 1 GiB */
    const char *tag;    /* NULL or a name of at most TIDAL_TAG_MAX-1 bytes; copied */
    uint32_t hints;     /* TIDAL_HINT_* bits */
} tidal_alloc_desc;
#define TIDAL_ALLOC_DESC_INIT \
    { sizeof(tidal_alloc_desc), TIDAL_KIND_AUTO, TIDAL_DEVICE_DEFAULT, 0, NULL, 0u }

/*! tidal_alloc() : allocates `size` bytes where the policy chain places them.
 *  @desc NULL means TIDAL_ALLOC_DESC_INIT.
 *  @return TIDAL_OK and *out set; INVALID_ARGUMENT (NULL ctx/out, size 0, bad alignment,
 *  hints or tag, struct_size too small), OUT_OF_MEMORY (including sizes that can never fit),
 *  NOT_SUPPORTED (kind the device lacks), NOT_FOUND (no such device), PLUGIN (a policy
 *  decided badly). On error *out is set to NULL and nothing is allocated. */
TIDAL_API tidal_status tidal_alloc(tidal_context *ctx, size_t size, const tidal_alloc_desc *desc,
                                   void **out);
/*! tidal_free() : frees memory returned by tidal_alloc. NULL is accepted and does nothing.
 *  @return INVALID_ARGUMENT for an interior pointer (the message names the base),
 *  UNKNOWN_POINTER for a pointer tidal never returned or already freed; nothing is freed
 *  then. */
TIDAL_API tidal_status tidal_free(tidal_context *ctx, void *ptr);

/*! tidal_alloc_async() : as tidal_alloc, for work ordered on `stream` (a cudaStream_t /
 *  hipStream_t, NULL = the default stream). The pool may hand out a block that was freed
 *  with tidal_free_async on the same stream while work on it is still queued: the stream's
 *  own order makes that safe, as with cudaMallocAsync. The memory may be used on `stream` at
 *  once, and elsewhere once the caller has ordered that work after `stream`. */
TIDAL_API tidal_status tidal_alloc_async(tidal_context *ctx, size_t size,
                                         const tidal_alloc_desc *desc, void *stream, void **out);
/*! tidal_free_async() : frees `ptr` once the work queued on `stream` so far has finished,
 *  without waiting for it: until then only tidal_alloc_async on the same stream reuses the
 *  block. Memory that does not come from a pool (pageable, [pool] enabled = false,
 *  TIDAL_PLACEMENT_NO_POOL) is freed after synchronising `stream`. Errors as tidal_free. */
TIDAL_API tidal_status tidal_free_async(tidal_context *ctx, void *ptr, void *stream);

/*! What tidal knows about one allocation. */
typedef struct tidal_pointer_info {
    size_t struct_size;     /* sizeof(tidal_pointer_info), set by the caller */
    void *base;             /* the pointer tidal_alloc returned */
    size_t size;            /* the size asked for */
    tidal_kind kind;        /* where it was placed (never AUTO) */
    int32_t device;         /* the device, or TIDAL_DEVICE_HOST for host kinds without one */
    uint32_t hints;         /* as given */
    uint32_t advice;        /* TIDAL_ADVICE_* applied */
    size_t alignment;       /* alignment guaranteed for base */
    char tag[TIDAL_TAG_MAX];      /* "" when untagged */
    char placed_by[32];           /* the policy that decided, or "core" for the defaults */
    /* Elastic memory (0 for other kinds), in bytes of whole chunks: */
    uint64_t resident_bytes;      /* mapped on the device */
    uint64_t offloaded_bytes;     /* not mapped; the contents are in the host home */
    uint64_t discarded_bytes;     /* not mapped; the contents were dropped */
} tidal_pointer_info;
#define TIDAL_POINTER_INFO_INIT { sizeof(tidal_pointer_info), NULL, 0, TIDAL_KIND_AUTO, 0, 0u, 0u, 0, {0}, {0}, 0, 0, 0 }

/*! tidal_pointer_query() : looks up the allocation containing `ptr` (interior pointers
 *  included). @return UNKNOWN_POINTER when no live allocation contains it. */
TIDAL_API tidal_status tidal_pointer_query(tidal_context *ctx, const void *ptr,
                                           tidal_pointer_info *info);

/* =====================================================================================
 * Pools
 * =================================================================================== */
/* tidal_alloc serves device, managed, pinned and fine/coarse-grained memory from one pool per
 * (kind, device): size classes with per-thread caches for small blocks, best-fit with
 * coalescing for large ones. A freed block goes back to its pool, not to the runtime, until
 * tidal_pool_trim or tidal_context_destroy. [pool] enabled = false, or a placement with
 * TIDAL_PLACEMENT_NO_POOL, allocates straight from the runtime instead. Pooled managed blocks
 * are 64 KiB-aligned and their advice is unset when freed and applied again when reused.
 * With [pool] backend = "vendor", device memory comes from the runtime's stream-ordered pool:
 * its statistics count tidal's calls, reserved_bytes is that device pool's reserve (shared
 * with anything else using it) where the runtime reports it, and tidal_pool_trim waits for
 * the device (stream-ordered frees must have run) and trims it. */
typedef struct tidal_pool_stats {
    size_t struct_size;          /* sizeof(tidal_pool_stats) */
    uint64_t reserved_bytes;     /* held from the runtime */
    uint64_t reserved_high_water;
    uint64_t in_use_bytes;       /* handed out (an upper bound while threads cache blocks) */
    uint64_t in_use_high_water;
    uint64_t allocations;
    uint64_t frees;
    uint64_t cache_hits;         /* allocations served lock-free from a thread's cache */
    uint64_t runtime_allocations;/* calls to the runtime's allocator */
    uint64_t runtime_frees;
    double fragmentation;        /* 1 - largest free range / free bytes, large blocks; 0 if none free */
} tidal_pool_stats;
#define TIDAL_POOL_STATS_INIT { sizeof(tidal_pool_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0 }

/*! tidal_pool_stats_get() : the pool of `kind` on `device` (TIDAL_DEVICE_HOST for pinned
 *  memory); all zero when it was never used. @return INVALID_ARGUMENT for AUTO or PAGEABLE
 *  (not pooled), NOT_FOUND for a device that does not exist. */
TIDAL_API tidal_status tidal_pool_stats_get(tidal_context *ctx, tidal_kind kind, int32_t device,
                                            tidal_pool_stats *stats);
/*! tidal_pool_trim() : gives every pool's free memory back to the runtime, keeping at most
 *  [pool] release_threshold spare bytes per pool; *released (may be NULL) gets the bytes.
 *  Free memory includes what the calling thread and threads that have ended kept in their
 *  caches, and every thread's large blocks; the small blocks another running thread keeps
 *  come back at its next call into the pool or its own tidal_pool_trim.
 *  @return the runtime's error when it refused memory back, after trimming all else (*released
 *  is then what did go back): that memory stays reserved and the next trim tries again. */
TIDAL_API tidal_status tidal_pool_trim(tidal_context *ctx, uint64_t *released);

/* =====================================================================================
 * Migration: explicit prefetch and advice, access declarations, budgets and eviction
 * =================================================================================== */
#define TIDAL_LOCATION_NONE (-3) /* no location recorded, or not applicable to the kind */

/*! tidal_prefetch() : makes [ptr, ptr+size) resident on `device` (an index) or on the host
 *  (TIDAL_DEVICE_HOST) and waits until it is. The range must lie inside one live allocation.
 *  Managed memory moves; memory of other kinds cannot move and stays where it is — the call
 *  succeeds and is counted as a no-op, so callers need not know the kind. A move to a device
 *  counts toward its budget and evicts first where needed, as tidal_declare does.
 *  @return UNKNOWN_POINTER (ptr not in a live allocation), INVALID_ARGUMENT (size 0, or the
 *  range runs past the allocation's end), NOT_FOUND (no such device), OUT_OF_MEMORY. */
TIDAL_API tidal_status tidal_prefetch(tidal_context *ctx, const void *ptr, size_t size, int32_t device);

typedef enum tidal_coherency {
    TIDAL_COHERENCY_UNKNOWN = 0,       /* the runtime cannot tell (e.g. NVIDIA) */
    TIDAL_COHERENCY_FINE = 1,
    TIDAL_COHERENCY_COARSE = 2,
    TIDAL_COHERENCY_INDETERMINATE = 3, /* the range mixes both */
    TIDAL_COHERENCY_FORCE_32BIT = 0x7FFFFFFF /* not a value: keeps the enum 32 bits wide */
} tidal_coherency;

/*! Where the runtime says a managed range lives and what advice it carries. */
typedef struct tidal_range_info {
    size_t struct_size;             /* sizeof(tidal_range_info) */
    int32_t last_prefetch_location; /* device index, TIDAL_DEVICE_HOST or TIDAL_LOCATION_NONE */
    int32_t preferred_location;     /* device index, TIDAL_DEVICE_HOST or TIDAL_LOCATION_NONE */
    int32_t read_mostly;            /* 1 or 0 */
    tidal_coherency coherency;
    /* Elastic memory (0 for managed memory): bytes of the chunks the range touches. */
    uint64_t resident_bytes;
    uint64_t offloaded_bytes;
    uint64_t discarded_bytes;
} tidal_range_info;
#define TIDAL_RANGE_INFO_INIT { sizeof(tidal_range_info), TIDAL_LOCATION_NONE, TIDAL_LOCATION_NONE, 0, TIDAL_COHERENCY_UNKNOWN, 0, 0, 0 }

/*! tidal_range_query() : the runtime's own view of a range inside one managed allocation (it
 *  reads the runtime's range attributes; it is not tidal's bookkeeping). For elastic memory it
 *  answers tidal's bookkeeping instead: the resident, offloaded and discarded bytes of the
 *  chunks the range touches (the location fields stay TIDAL_LOCATION_NONE).
 *  @return NOT_SUPPORTED for memory that is neither managed nor elastic, plus tidal_prefetch's
 *  errors. */
TIDAL_API tidal_status tidal_range_query(tidal_context *ctx, const void *ptr, size_t size,
                                         tidal_range_info *info);

/*! tidal_advise() : sets the TIDAL_ADVICE_* bits `set` and clears the bits `unset` on
 *  [ptr, ptr+size) of one managed allocation (PREFERRED_DEVICE and ACCESSED_BY_DEVICE name
 *  the allocation's device; on an allocation a policy split over devices, each part's own
 *  device: see tidal_placement.parts in policy.h). The allocation remembers its advice: what is set when it is freed
 *  is unset first (coarse-grain included), and a pooled block gets its new owner's advice.
 *  Memory of other kinds takes no advice: the call succeeds as a counted no-op.
 *  @return UNKNOWN_POINTER, INVALID_ARGUMENT (size 0, range past the allocation, unknown
 *  bits, a bit both set and unset), NOT_SUPPORTED (COARSE_GRAIN off AMD), RUNTIME. */
TIDAL_API tidal_status tidal_advise(tidal_context *ctx, const void *ptr, size_t size, uint32_t set,
                                    uint32_t unset);

/* Access declarations: what the work about to be queued on a stream will touch. */
#define TIDAL_ACCESS_READ 0x1u       /* the work reads the range */
#define TIDAL_ACCESS_WRITE 0x2u      /* the work writes the range */
#define TIDAL_ACCESS_READ_WRITE 0x3u

typedef struct tidal_access {
    size_t struct_size; /* sizeof(tidal_access); the same in every element of one call */
    const void *ptr;    /* inside a live tidal allocation */
    size_t size;        /* > 0, not past the allocation's end */
    int32_t device;     /* the device whose work touches it, or TIDAL_DEVICE_HOST */
    uint32_t mode;      /* TIDAL_ACCESS_* */
} tidal_access;
#define TIDAL_ACCESS_INIT { sizeof(tidal_access), NULL, 0, 0, TIDAL_ACCESS_READ }

/* tidal_declare flags. */
#define TIDAL_DECLARE_LOOKAHEAD 0x1u /* for the stream's NEXT phase: start moving now, order nothing */
#define TIDAL_DECLARE_FLAGS_ALL 0x1u

/*! tidal_declare() : starts a phase of work on `stream`. The ranges of the stream's previous
 *  phase stay protected from eviction until the stream has run everything queued before this
 *  call. Managed ranges are made resident on their device on tidal's own migration streams
 *  (in [migration] chunk_size pieces, adjacent ranges coalesced, as the policy plans), and
 *  `stream` is made to wait for those migrations with events: the host never blocks. If a
 *  device would go over its budget, the policy chooses ranges to evict first (ranges of
 *  phases in flight and lookahead ranges are never chosen). With TIDAL_DECLARE_LOOKAHEAD the
 *  ranges belong to the stream's next phase: their migration starts now while the current
 *  phase runs, and the next plain tidal_declare naming them only waits for it. Memory that
 *  cannot move (device, pinned) needs nothing and is counted. count 0 just ends the phase.
 *  @return INVALID_ARGUMENT (bad access, flags, struct_size, a count no array can hold),
 *  UNKNOWN_POINTER, NOT_FOUND (device), BUDGET_EXCEEDED (the ranges in flight alone exceed
 *  the budget; nothing of this declaration was moved), OUT_OF_MEMORY (no host memory for a
 *  copy of the entries), PLUGIN, RUNTIME. */
TIDAL_API tidal_status tidal_declare(tidal_context *ctx, void *stream, const tidal_access *accesses,
                                     size_t count, uint32_t flags);

/*! tidal_budget_set() : limits the managed bytes tidal keeps resident on `device` ([migration]
 *  budget in the configuration); 0 removes the limit. A lower budget takes effect at the next
 *  declaration or prefetch, which evicts first. @return NOT_FOUND for a bad device. */
TIDAL_API tidal_status tidal_budget_set(tidal_context *ctx, int32_t device, uint64_t bytes);

/*! What the scheduler did on one device. */
typedef struct tidal_migration_stats {
    size_t struct_size;           /* sizeof(tidal_migration_stats) */
    uint64_t budget;              /* 0 = no limit */
    uint64_t resident_bytes;      /* managed bytes tidal made resident there and has not evicted, and resident elastic chunks */
    uint64_t resident_high_water;
    uint64_t protected_bytes;     /* of those, declared for work in flight or lookahead */
    uint64_t declared_ranges;     /* ranges named by tidal_declare */
    uint64_t migrated_bytes;      /* moved to the device by declarations and prefetches */
    uint64_t resident_hits;       /* declared bytes already resident: nothing moved */
    uint64_t migration_calls;     /* runtime prefetch calls issued (after chunking, coalescing) */
    uint64_t noops;               /* declarations and prefetches of memory that cannot move */
    uint64_t evictions;           /* ranges evicted */
    uint64_t evicted_bytes;       /* moved back to the host by eviction */
    uint64_t dropped_bytes;       /* evicted without a copy back (read-mostly duplicates) */
    uint64_t budget_refusals;     /* declarations refused with BUDGET_EXCEEDED */
    /* Elastic memory on this device (tidal_offload*, tidal_restore*): */
    uint64_t elastic_offloads;    /* chunks unmapped */
    uint64_t elastic_restores;    /* chunks mapped again */
    uint64_t elastic_copied_out;  /* bytes copied to host homes */
    uint64_t elastic_copied_in;   /* bytes copied back from host homes */
    uint64_t elastic_discarded;   /* bytes unmapped with their contents dropped */
} tidal_migration_stats;
#define TIDAL_MIGRATION_STATS_INIT { sizeof(tidal_migration_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/*! tidal_migration_stats_get() : @return NOT_FOUND for a bad device. */
TIDAL_API tidal_status tidal_migration_stats_get(tidal_context *ctx, int32_t device,
                                                 tidal_migration_stats *stats);

/*! tidal_clock() : seconds on the runtime's clock. GPU runtimes: the host's monotonic clock.
 *  The simulated device: its simulated clock (what a host clock would read once everything
 *  issued has finished), so one program times a GPU and predicts the same run on a profile. */
TIDAL_API tidal_status tidal_clock(tidal_context *ctx, double *seconds);

/* =====================================================================================
 * Elastic device memory
 * =================================================================================== */
/* TIDAL_KIND_ELASTIC memory is device memory at an address fixed for the allocation's whole
 * life, built from the runtime's virtual-memory API (cuMemMap / hipMemMap; on the simulated
 * device, host memory mapped in and out). Its size is rounded up to the granularity and it
 * is split into chunks of [elastic] chunk_size (an allocation smaller than a chunk is one
 * chunk). A chunk is resident (mapped: kernels and copies use it as device memory),
 * offloaded (unmapped; its contents live in the allocation's host home, pinned memory tidal
 * owns, made at the first offload that copies or, with [elastic] home = "eager", with the
 * allocation) or discarded (unmapped, contents dropped). A kernel that touches a chunk that is
 * not resident faults, as on any GPU.
 * Dirty chunks, the rule that never loses data: a chunk's home is current only right after
 * an offload, or after a restore with TIDAL_RESTORE_READ_ONLY (the caller promises not to
 * write it while resident). Every other resident chunk (new, restored without that flag, or
 * written by tidal_copy / tidal_copy_batch) is treated as written, and its next offload
 * copies it.
 * Copies: tidal_copy, tidal_copy_async and tidal_copy_batch take elastic memory whatever part
 * is resident: resident chunks are copied as device memory, offloaded chunks are read and
 * written in their home (a write there keeps the chunk offloaded, with the new contents).
 * Reading or writing a discarded chunk is INVALID_ARGUMENT (restore it first; its contents
 * are then undefined until written). */

/* tidal_offload flags. */
#define TIDAL_OFFLOAD_DISCARD 0x1u       /* drop the contents instead of copying them (a KV cache) */
#define TIDAL_OFFLOAD_KEEP_PHYSICAL 0x2u /* keep the physical chunks in tidal's chunk pool, for
                                          * tidal's own elastic allocations and restores, instead
                                          * of giving them back to the runtime (tidal_pool_trim
                                          * gives them back later) */
#define TIDAL_OFFLOAD_FLAGS_ALL 0x3u
/* tidal_restore flags. */
#define TIDAL_RESTORE_READ_ONLY 0x1u     /* the caller will not write it while resident: its home
                                          * stays current, so the next offload copies nothing */
#define TIDAL_RESTORE_FLAGS_ALL 0x1u

/*! What one offload or restore did. Start from TIDAL_ELASTIC_RESULT_INIT. */
typedef struct tidal_elastic_result {
    size_t struct_size;        /* sizeof(tidal_elastic_result) */
    uint64_t allocations;      /* elastic allocations the tag or range matched */
    uint64_t copied_bytes;     /* copied to (offload) or from (restore) host homes */
    uint64_t discarded_bytes;  /* unmapped with their contents dropped */
    uint64_t released_bytes;   /* physical memory given back to the runtime (offload) */
    uint64_t pooled_bytes;     /* physical memory kept in, or taken from, tidal's chunk pool */
    uint64_t mapped_bytes;     /* physical memory mapped (restore) */
    double home_seconds;       /* spent making host homes (pinned memory), on the runtime's clock */
    double move_seconds;       /* the rest of the call: waits, copies, unmapping and mapping */
} tidal_elastic_result;
#define TIDAL_ELASTIC_RESULT_INIT { sizeof(tidal_elastic_result), 0, 0, 0, 0, 0, 0, 0.0, 0.0 }

/*! tidal_offload() : takes the device memory of every elastic allocation whose tag matches
 *  `tag_glob` (fnmatch(3): "weights*", "*" for all, "" for untagged ones) away, keeping every
 *  address valid. It first waits for the work queued on `stream` (NULL: everything on every
 *  device holding a match), then copies to the host homes what they lack (dirty chunks;
 *  nothing with TIDAL_OFFLOAD_DISCARD), several copies in flight ([elastic] copy_streams),
 *  then unmaps and gives the physical memory back to the runtime (or keeps it, with
 *  TIDAL_OFFLOAD_KEEP_PHYSICAL). Chunks already offloaded are left as they are; an offloaded
 *  chunk may be discarded. A tag that matches nothing is TIDAL_OK with 0 bytes.
 *  @out NULL, or the result (written as far as its struct_size).
 *  @return INVALID_ARGUMENT (NULL ctx or tag_glob, unknown flags, struct_size),
 *  OUT_OF_MEMORY (a host home could not be made: that allocation stays resident, whole),
 *  NOT_SUPPORTED (no virtual-memory API), RUNTIME. After a failure the allocations done
 *  before it stay offloaded, and the result says what was done. */
TIDAL_API tidal_status tidal_offload(tidal_context *ctx, const char *tag_glob, uint32_t flags, void *stream,
                                     tidal_elastic_result *out);
/*! tidal_offload_range() : as tidal_offload, for the chunks of one elastic allocation that
 *  [ptr, ptr+size) touches (whole chunks: the range is widened to its chunks' bounds).
 *  @return also UNKNOWN_POINTER (not inside a live allocation), INVALID_ARGUMENT (size 0,
 *  past the allocation's end, memory that is not elastic). */
TIDAL_API tidal_status tidal_offload_range(tidal_context *ctx, void *ptr, size_t size, uint32_t flags,
                                           void *stream, tidal_elastic_result *out);
/*! tidal_restore() : maps physical memory again under every chunk that is not resident in
 *  the elastic allocations whose tag matches `tag_glob` (from tidal's chunk pool first, then
 *  from the runtime), grants access once per allocation, and copies the offloaded chunks back
 *  from their homes, ordered on `stream` (NULL: complete on return). The data come back
 *  bit-identical at the same addresses; discarded chunks come back with undefined contents.
 *  Either all of one allocation's chunks are mapped or none is: when the device is full
 *  nothing of that allocation is left mapped.
 *  @return INVALID_ARGUMENT (NULL ctx or tag_glob, unknown flags, struct_size),
 *  OUT_OF_MEMORY (the device has no room: the allocations restored before it stay restored),
 *  NOT_SUPPORTED, RUNTIME. */
TIDAL_API tidal_status tidal_restore(tidal_context *ctx, const char *tag_glob, uint32_t flags, void *stream,
                                     tidal_elastic_result *out);
/*! tidal_restore_range() : as tidal_restore, for the chunks [ptr, ptr+size) touches in one
 *  elastic allocation. @return also tidal_offload_range's pointer and range errors. */
TIDAL_API tidal_status tidal_restore_range(tidal_context *ctx, void *ptr, size_t size, uint32_t flags,
                                           void *stream, tidal_elastic_result *out);

/* =====================================================================================
 * Streams and copies
 * =================================================================================== */
/* Streams are the runtime's own handles (cudaStream_t, hipStream_t) passed as void *: a
 * stream the application made with its GPU runtime works wherever tidal takes one. NULL is the
 * runtime's default stream. tidal_stream_create makes one on any runtime, the simulated
 * device included. */

/*! tidal_stream_create() : a non-blocking stream on `device`. */
TIDAL_API tidal_status tidal_stream_create(tidal_context *ctx, int32_t device, void **stream);
/*! tidal_stream_destroy() : destroys a stream (one from tidal_stream_create, or one the
 *  application made). First it settles what tidal holds for the stream, while the handle is
 *  still valid: blocks freed on it with tidal_free_async return to the pool once the work
 *  queued on it so far has finished, its declared phase and lookahead end (their ranges stay
 *  protected only until that work is done), and if tidal's pool served this stream alone it
 *  waits for the stream once. NULL is accepted and does nothing.
 *  @return RUNTIME when the settling or the destruction failed; the stream is then not
 *  destroyed (blocks freed on it are still tied to it; nothing is lost). */
TIDAL_API tidal_status tidal_stream_destroy(tidal_context *ctx, void *stream);
/*! tidal_stream_forget() : the rule for a stream tidal did not destroy itself: call this
 *  before destroying a stream with the GPU runtime (cudaStreamDestroy, hipStreamDestroy) once
 *  tidal has seen it (tidal_alloc_async, tidal_free_async, tidal_declare, copies). It settles
 *  what tidal holds for the stream exactly as tidal_stream_destroy does, and leaves the stream
 *  alive. Without it, blocks freed on the stream stay held and its last declared phase stays
 *  protected, because tidal can no longer record an event on a destroyed handle. A stream
 *  tidal never saw, and NULL, need nothing (TIDAL_OK). The stream may be used again after
 *  this call; tidal then treats it as new.
 *  @return RUNTIME when an event could not be recorded nor the stream waited for. */
TIDAL_API tidal_status tidal_stream_forget(tidal_context *ctx, void *stream);
/*! tidal_stream_synchronize() : waits until all work on `stream` is done. */
TIDAL_API tidal_status tidal_stream_synchronize(tidal_context *ctx, void *stream);

/*! tidal_copy() : copies `size` bytes between any two kinds of memory, in any direction, and
 *  returns when the copy is complete. Device, managed, pinned and registered memory copy
 *  directly; pageable memory on one side is staged through a ring of pinned chunks with host
 *  threads copying one chunk while the device copies another ([copy] in the configuration).
 *  Pointers need not be tidal allocations, but a source or destination that starts inside a
 *  tidal allocation must end inside it, and one that starts outside every tidal allocation
 *  must not run into one. Overlapping source and destination work like memmove when both are
 *  host memory and are refused otherwise. size 0 does nothing.
 *  @return INVALID_ARGUMENT (NULL pointer; a range past the end of its tidal allocation, or
 *  into one, the message naming it; overlapping ranges not both on the host; nothing is then
 *  copied), OUT_OF_MEMORY (staging buffers), RUNTIME. */
TIDAL_API tidal_status tidal_copy(tidal_context *ctx, void *dst, const void *src, size_t size);
/*! tidal_copy_async() : as tidal_copy, ordered on `stream`. It returns once a pageable source
 *  may be reused and a pageable destination read; other copies may still be in flight on the
 *  stream (synchronise it before reading the destination). */
TIDAL_API tidal_status tidal_copy_async(tidal_context *ctx, void *dst, const void *src, size_t size,
                                        void *stream);

/*! One copy of a batch. Start from TIDAL_COPY_ITEM_INIT. */
typedef struct tidal_copy_item {
    size_t struct_size; /* sizeof(tidal_copy_item); the same in every item of one call */
    void *dst;
    const void *src;
    size_t size;        /* bytes; 0 copies nothing (dst and src must still be non-NULL) */
} tidal_copy_item;
#define TIDAL_COPY_ITEM_INIT { sizeof(tidal_copy_item), NULL, NULL, 0 }

/*! tidal_copy_batch() : many copies, each any direction and any kinds as tidal_copy, in few
 *  runtime calls: host->device items are packed into one pinned staging buffer, moved by one
 *  DMA and scattered by one kernel; device->host items are gathered by one kernel and moved by
 *  one DMA; device->device items are copied by the same kernel. Worth it for many small copies
 *  (a runtime call costs microseconds whatever its size); items above 1 MiB (or a quarter of
 *  [copy] chunk_size, which also bounds the staging of one wave), items on a second device and
 *  runtimes without the batch kernel take tidal_copy's path one by one.
 *  Ordered on `stream` like tidal_copy_async: it returns once host sources may be reused and,
 *  when an item goes device->host, once every host destination has its bytes; the rest is
 *  complete once the stream is synchronised. The stream must belong to the device the items
 *  are on. NULL stream: complete on return. No two destinations may overlap, and no source
 *  may overlap a destination (items run in any order, several at once).
 *  @return INVALID_ARGUMENT (NULL items with count > 0, a count no array can hold, a NULL
 *  dst or src, struct_size, overlaps, a range past the end of its tidal allocation; the
 *  message names the item, and nothing is copied), OUT_OF_MEMORY (staging buffers, or no
 *  host memory for a copy of the items), RUNTIME and the runtime's errors
 *  (items may then be partly copied). */
TIDAL_API tidal_status tidal_copy_batch(tidal_context *ctx, const tidal_copy_item *items, size_t count,
                                        void *stream);

/*! tidal_register() : page-locks [ptr, ptr+size) of ordinary host memory (malloc, new, mmap)
 *  so copies from and to it run directly at the bus rate, until tidal_unregister. Explicit by
 *  design: tidal never registers memory behind the caller's back, since a registration cached
 *  across a free() would go stale. Unregister before freeing the memory.
 *  @return INVALID_ARGUMENT (size 0, overlap with a registered range, tidal memory of a kind
 *  other than pageable), NOT_SUPPORTED, RUNTIME. */
TIDAL_API tidal_status tidal_register(tidal_context *ctx, void *ptr, size_t size);
/*! tidal_unregister() : @return UNKNOWN_POINTER when `ptr` does not start a registered range. */
TIDAL_API tidal_status tidal_unregister(tidal_context *ctx, void *ptr);

/* =====================================================================================
 * Validation kernels: small kernels that prove, on the real device, that memory placed by
 * tidal is reachable and intact. They run on the simulated device too (on the CPU, with its
 * XNACK rules), so every caller works everywhere. `tidal validate` is built on these.
 * =================================================================================== */
typedef enum tidal_check_kind {
    TIDAL_CHECK_TOUCH_READ = 1,     /* read one word of every 4 KiB of target */
    TIDAL_CHECK_TOUCH_WRITE = 2,    /* read and write back one word of every 4 KiB (data unchanged) */
    TIDAL_CHECK_PATTERN_FILL = 3,   /* target word i = pattern(seed, i) */
    TIDAL_CHECK_PATTERN_VERIFY = 4, /* result = number of words differing from pattern(seed, i) */
    TIDAL_CHECK_COPY = 5,           /* target = source, vectorised device kernel */
    TIDAL_CHECK_TRIAD = 6,          /* target = source + scalar * source2, doubles */
    TIDAL_CHECK_ATOMIC_ADD = 7,     /* `seed` rounds of atomic +1 on each uint64 of target */
    TIDAL_CHECK_RUNTIME_COPY = 8,   /* target = source with the runtime's own memcpy (the baseline) */
    TIDAL_CHECK_SPIN = 9,           /* compute of known length: busy for `seed` nanoseconds, no memory */
    TIDAL_CHECK_ATOMIC_SET = 10,    /* every TIDAL_ATOMIC_* operation, `seed` rounds (below) */
    TIDAL_CHECK_ATOMIC_SET_SHARED = 11, /* the same with host threads on the same words at once */
    TIDAL_CHECK_FORCE_32BIT = 0x7FFFFFFF /* not a value: keeps the enum 32 bits wide */
} tidal_check_kind;

typedef struct tidal_check {
    size_t struct_size;     /* sizeof(tidal_check) */
    tidal_check_kind kind;
    int32_t device;         /* the device that runs it */
    void *target;
    const void *source;
    const void *source2;
    size_t size;            /* bytes of each operand: > 0, a multiple of 8; pointers 8-byte aligned */
    uint64_t seed;          /* PATTERN_*: the seed; ATOMIC_ADD: rounds */
    double scalar;          /* TRIAD */
    uint32_t repeat;        /* run it this many times back to back (timing); 0 means 1 */
    uint64_t result;        /* out: PATTERN_VERIFY's mismatch count of the last run */
    double elapsed_ms;      /* out: device time of all runs, measured with runtime events */
    void *stream;           /* the caller's stream to run on (it is synchronised before the
                             * call returns), e.g. after tidal_declare; NULL = tidal's own */
} tidal_check;
#define TIDAL_CHECK_INIT { sizeof(tidal_check), TIDAL_CHECK_TOUCH_READ, 0, NULL, NULL, NULL, 0, 0, 0.0, 1u, 0, 0.0, NULL }

/*! tidal_check_run() : runs one validation kernel and waits for it. Pointers inside tidal
 *  allocations must not run past their allocation; other pointers are handed to the runtime as
 *  they are (touching pageable memory from a device without pageable access is then
 *  TIDAL_ERROR_ILLEGAL_ACCESS, as the hardware would fault).
 *  @return INVALID_ARGUMENT (bad kind, size, alignment, NULL operand), NOT_FOUND (device),
 *  NOT_SUPPORTED (this build's runtime has no kernels), ILLEGAL_ACCESS, RUNTIME. */
TIDAL_API tidal_status tidal_check_run(tidal_context *ctx, tidal_check *check);

/* The atomic set (TIDAL_CHECK_ATOMIC_SET, _SHARED): the atomics applications rely on, each on
 * its own word of target (size >= TIDAL_ATOMIC_SET_BYTES, 16-byte aligned), on 256 device
 * threads for `seed` rounds (0: 16). SHARED also runs 4 host threads on the same words while
 * the kernel runs (target must be memory the host can reach: pinned, pageable, managed). tidal
 * sets the words first and checks each final value exactly (every thread's contribution is
 * known); result = the TIDAL_ATOMIC_* bits of the operations whose word came out wrong (0: all
 * exact). The operations run at system scope; float add uses the GPU's hardware float atomic
 * where it has one (gfx90a), the instruction that does nothing on MI200 fine-grained memory. */
#define TIDAL_ATOMIC_AND32 0x00001u
#define TIDAL_ATOMIC_OR32 0x00002u
#define TIDAL_ATOMIC_XOR32 0x00004u
#define TIDAL_ATOMIC_ADD32 0x00008u
#define TIDAL_ATOMIC_SUB32 0x00010u
#define TIDAL_ATOMIC_MIN32 0x00020u  /* unsigned */
#define TIDAL_ATOMIC_MAX32 0x00040u  /* unsigned */
#define TIDAL_ATOMIC_EXCH32 0x00080u
#define TIDAL_ATOMIC_CAS32 0x00100u  /* a compare-and-swap increment loop */
#define TIDAL_ATOMIC_AND64 0x00200u
#define TIDAL_ATOMIC_OR64 0x00400u
#define TIDAL_ATOMIC_XOR64 0x00800u
#define TIDAL_ATOMIC_ADD64 0x01000u
#define TIDAL_ATOMIC_SUB64 0x02000u
#define TIDAL_ATOMIC_MIN64 0x04000u
#define TIDAL_ATOMIC_MAX64 0x08000u
#define TIDAL_ATOMIC_EXCH64 0x10000u
#define TIDAL_ATOMIC_CAS64 0x20000u
#define TIDAL_ATOMIC_FADD32 0x40000u /* float add */
#define TIDAL_ATOMIC_ALL 0x7FFFFu
#define TIDAL_ATOMIC_SET_BYTES 304u

/* =====================================================================================
 * System description
 * =================================================================================== */
typedef enum tidal_xnack {
    TIDAL_XNACK_NOT_APPLICABLE = 0, /* not an AMD device (see pageable_access/migrates) */
    TIDAL_XNACK_ON = 1,
    TIDAL_XNACK_OFF = 2,
    TIDAL_XNACK_UNKNOWN = 3,
    TIDAL_XNACK_FORCE_32BIT = 0x7FFFFFFF /* not a value: keeps the enum 32 bits wide */
} tidal_xnack;

#define TIDAL_DEVICE_FLAG_SIMULATED 0x01u          /* the simulated device, not a GPU */
#define TIDAL_DEVICE_FLAG_MANAGED 0x02u            /* managed allocations work */
#define TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED 0x04u /* the runtime's attribute (not proof of migration on AMD) */
#define TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS 0x08u    /* the device can touch malloc memory */
#define TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT 0x10u  /* managed pages migrate on a device fault */
#define TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS 0x20u
#define TIDAL_DEVICE_FLAG_FINE_GRAINED 0x40u       /* fine/coarse-grained kinds exist (AMD) */

typedef struct tidal_system_info {
    size_t struct_size;   /* sizeof(tidal_system_info) */
    char runtime[16];     /* "sim", "hip" or "cuda" */
    char runtime_detail[128]; /* e.g. "CUDA runtime 13000, driver 13000" or "simulated: profile h200" */
    int32_t device_count;
    /* Appended after 0.1 (written only when struct_size covers them). */
    int32_t default_device; /* what TIDAL_DEVICE_DEFAULT means here: a device index with
                             * device_selection = "local-rank", else TIDAL_DEVICE_DEFAULT
                             * (the policy chain chooses; the core's default is device 0) */
    int32_t local_rank;     /* node-local rank from the launcher's environment, -1 when none */
    int32_t rank;           /* job-wide rank from the launcher's environment, -1 when none */
} tidal_system_info;
#define TIDAL_SYSTEM_INFO_INIT { sizeof(tidal_system_info), {0}, {0}, 0, TIDAL_DEVICE_DEFAULT, -1, -1 }

typedef struct tidal_device_info {
    size_t struct_size;   /* sizeof(tidal_device_info) */
    int32_t index;
    char name[128];       /* marketing name, e.g. "NVIDIA H200" */
    char arch[64];        /* e.g. "gfx90a:sramecc+:xnack+" or "sm_90" */
    uint64_t total_memory;
    uint64_t free_memory;
    uint64_t page_size;   /* migration granularity of managed memory */
    uint64_t l2_size;     /* 0 when unknown */
    uint32_t flags;       /* TIDAL_DEVICE_FLAG_* */
    tidal_xnack xnack;
    int32_t numa_node;    /* -1 when unknown */
    /* Appended after numa_node (topology, found once when the context is created). */
    char pci_bus_id[32];  /* "dddd:bb:dd.f"; "" when unknown (the simulated device makes one up) */
    char local_cpus[128]; /* the CPUs of numa_node as a list, "0-15,32-47"; "" when unknown */
    uint64_t peer_mask;   /* bit p: this device can reach device p's memory directly (its own bit set) */
} tidal_device_info;
#define TIDAL_DEVICE_INFO_INIT { sizeof(tidal_device_info), 0, {0}, {0}, 0, 0, 0, 0, 0u, TIDAL_XNACK_NOT_APPLICABLE, -1, {0}, {0}, 0u }

/* How two devices are linked (tidal_peer_info.link). */
typedef enum tidal_link_type {
    TIDAL_LINK_UNKNOWN = 0, /* the runtime cannot tell (CUDA names no link type) */
    TIDAL_LINK_SAME = 1,    /* a device and itself */
    TIDAL_LINK_PCIE = 2,
    TIDAL_LINK_XGMI = 3,    /* AMD Infinity Fabric */
    TIDAL_LINK_NVLINK = 4,
    TIDAL_LINK_NONE = 5,    /* no path between the two but through host memory */
    TIDAL_LINK_FORCE_32BIT = 0x7FFFFFFF
} tidal_link_type;

/* One entry of the peer matrix: what `device` sees of `peer`'s memory. */
typedef struct tidal_peer_info {
    size_t struct_size;       /* sizeof(tidal_peer_info) */
    int32_t device;
    int32_t peer;
    int32_t can_access;       /* 1: `device` can reach `peer`'s memory directly (peer access) */
    tidal_link_type link;
    int32_t hops;             /* -1 when unknown; 0 for a device and itself */
    int32_t performance_rank; /* the runtime's rank, lower is faster; -1 when unknown */
    int32_t enabled;          /* 1 once tidal has enabled peer access for the pair (first copy) */
    double bandwidth;         /* GB/s one way, 0 when unknown (simulated profiles say it) */
    double latency_us;        /* microseconds per transfer, 0 when unknown */
} tidal_peer_info;
#define TIDAL_PEER_INFO_INIT { sizeof(tidal_peer_info), 0, 0, 0, TIDAL_LINK_UNKNOWN, -1, -1, 0, 0.0, 0.0 }

/*! tidal_peer_info_get() : how `device` reaches `peer`'s memory (device == peer: itself).
 *  @return NOT_FOUND when either index is not a device. */
TIDAL_API tidal_status tidal_peer_info_get(tidal_context *ctx, int32_t device, int32_t peer,
                                           tidal_peer_info *info);

/*! tidal_system_info_get() : the runtime in use and how many devices it has. */
TIDAL_API tidal_status tidal_system_info_get(tidal_context *ctx, tidal_system_info *info);
/*! tidal_device_info_get() : one device's capabilities. @return NOT_FOUND for a bad index. */
TIDAL_API tidal_status tidal_device_info_get(tidal_context *ctx, int32_t device,
                                             tidal_device_info *info);

/* =====================================================================================
 * Configuration introspection
 * =================================================================================== */
/*! tidal_config_describe() : the resolved settings and the policy chain as TOML text, as
 *  the context uses them (defaults filled in, environment overrides applied). Writes at
 *  most `capacity` bytes including the NUL; *needed (may be NULL) gets the full length + 1.
 *  @return BUFFER_TOO_SMALL when capacity < *needed (buf then holds a truncated text). */
TIDAL_API tidal_status tidal_config_describe(tidal_context *ctx, char *buf, size_t capacity,
                                             size_t *needed);

/* =====================================================================================
 * Parallel jobs
 * =================================================================================== */
/*! tidal_file_name_expand() : `pattern` with %r (the job-wide rank, from the first of
 *  OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, RANK that is set; 0 outside a job), %p (the
 *  process id) and %% (a percent sign) expanded, as tidal expands every file name it writes.
 *  Writes like tidal_config_describe. Needs no context.
 *  @return INVALID_ARGUMENT for any other % sequence; CONFIG when the rank variable holds no
 *  whole number; BUFFER_TOO_SMALL when capacity < *needed. */
TIDAL_API tidal_status tidal_file_name_expand(const char *pattern, char *buf, size_t capacity, size_t *needed);

/* =====================================================================================
 * Telemetry: statistics snapshot, live allocations
 * =================================================================================== */
/*! tidal_stats_json() : one statistics snapshot of the context as JSON (schema
 *  docs/stats.schema.json, "tidal-stats/1"): live bytes and counts by kind and device and by
 *  tag ([telemetry] tag_depth groups tags by their first parts), each pool's counters, each
 *  device's migrations by direction, prefetches, evictions and drops, and the errors returned
 *  by calls on the context, by status. Peaks of live bytes are the highest a snapshot saw;
 *  pools and devices carry running peaks. Buffer rules as tidal_config_describe: at most
 *  `capacity` bytes including the NUL, *needed (may be NULL) the full length + 1,
 *  BUFFER_TOO_SMALL when capacity < *needed. With TIDAL_STATS=stderr|FILE (or [telemetry]
 *  stats) the same snapshot, with a "leaks" array, is written when the context is destroyed. */
TIDAL_API tidal_status tidal_stats_json(tidal_context *ctx, char *buf, size_t capacity, size_t *needed);
/*! tidal_allocations_list() : every live allocation, by address, as tidal_pointer_query
 *  describes it. Set infos[0].struct_size (the array is stepped by it); *count gets the number
 *  live. infos may be NULL with capacity 0 to learn the count. @return BUFFER_TOO_SMALL when
 *  capacity < *count (the first `capacity` entries are written). */
TIDAL_API tidal_status tidal_allocations_list(tidal_context *ctx, tidal_pointer_info *infos, size_t capacity,
                                              size_t *count);

#ifdef __cplusplus
}
#endif
#endif /* TIDAL_TIDAL_H */
