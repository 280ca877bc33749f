/*
 * The device-runtime contract: the one interface behind which a GPU API lives.
 *
 * Every device runtime — the built-in simulated device (core/runtime/sim), the HIP module
 * (tidal-runtime-hip.so) and the CUDA module (tidal-runtime-cuda.so) — fills one
 * tidal_rt_ops table. Modules export TIDAL_RT_ENTRY_SYMBOL; the core offers the highest
 * TIDAL_RT_ABI_VERSION it speaks and the module answers with its own; a mismatch is a clear
 * error naming the module file, never a crash. This header is internal to tidal (not
 * installed): runtimes are built from this tree, so the version check guards against a stale
 * module left next to a newer library, not against third parties.
 *
 * Rules every implementation keeps (mimalloc prim.h style):
 *  - Plain C across the boundary; no exception escapes an entry point.
 *  - Every entry point returns a NATIVE error code: 0 = success, otherwise the runtime's own
 *    number (hipError_t / cudaError_t; the simulated device uses HIP's numbers). The core
 *    turns it into a tidal_status through its one translation table
 *    (core/runtime/error_table.h) using `family` and error_name().
 *  - Preconditions the core guarantees, so runtimes need not re-check: `rt` is the instance
 *    create() returned; device indices are in [0, device_count); sizes are > 0 and do not
 *    overflow; pointers passed to free()/prefetch()/advise() came from this runtime's alloc()
 *    with the same kind and device, and are freed once.
 *  - Postconditions runtimes guarantee: on success out-parameters are set; on failure nothing
 *    was allocated and out-pointers are untouched. alloc() returns memory aligned to at least
 *    TIDAL_RT_ALLOC_ALIGNMENT(kind); the core over-allocates for more.
 *  - Thread safety: every entry point may be called from several threads at once.
 *  - Streams and events are opaque handles; NULL stream = the runtime's default stream.
 *    Kernel entry points are asynchronous on their stream unless stated otherwise.
 *  - An optional entry point may be NULL; the core then reports TIDAL_ERROR_NOT_SUPPORTED.
 *    The core reaches the table only through the Runtime class (core/runtime/runtime.h), which
 *    checks presence once per operation and says the same thing every time.
 *
 * One naming scheme for every runtime (the simulated device, HIP and CUDA alike):
 *  - A runtime named N ("sim", "hip", "cuda") lives in core/runtime/N/, in namespace tidal::N.
 *  - Its files are N_<concern>.{h,cpp}, one concern each: N_module.cpp (the ops table and, for
 *    a loadable module, the one exported symbol), N_lifecycle, N_devices, N_memory,
 *    N_migration, N_transfers, N_streams, N_kernels, N_vmm, N_peers, N_errors, N_device_scope.h.
 *  - The entry point that fills field F of tidal_rt_ops is named rt_F (rt_alloc, rt_memcpy,
 *    rt_vmm_map, ...), so one search for a field finds its implementation in every runtime.
 *  - The ops table is one constant built with designated initialisers in field order in
 *    N_module.cpp; fields a build cannot fill (kernels without a kernel compiler) stay NULL.
 *  - The RAII class that makes a device current for one call is N's DeviceScope.
 *  - A loadable module's version script is tidal-runtime-N.map.
 */
#ifndef TIDAL_RUNTIME_CONTRACT_H
#define TIDAL_RUNTIME_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "tidal/policy.h" /* tidal_options / tidal_options_api for module options */

#ifdef __cplusplus
extern "C" {
#endif

/* 2: traits, and the virtual-memory group (vmm_*). 3: kernel_atomic_set, profiler ranges
 * (range_push/range_pop). */
#define TIDAL_RT_ABI_VERSION 3
#define TIDAL_RT_ENTRY_SYMBOL "tidal_runtime_negotiate"

/* Which error numbering a runtime's native codes follow. */
typedef enum tidal_rt_family {
    TIDAL_RT_FAMILY_HIP = 1,  /* hipError_t (also used by the simulated device) */
    TIDAL_RT_FAMILY_CUDA = 2  /* cudaError_t */
} tidal_rt_family;

/* Allocation kinds, numbered as tidal_kind (AUTO never reaches a runtime; neither does
 * ELASTIC: elastic memory is built by the core from the vmm_* group). */

/* The alignment alloc() guarantees for `kind`, the one statement of it: 256 bytes for device
 * and managed kinds (what hipMalloc / cudaMalloc hand out at least), 64 for host kinds (a
 * cache line; what malloc-like allocators are asked for). */
#define TIDAL_RT_DEVICE_ALIGNMENT ((size_t)256)
#define TIDAL_RT_HOST_ALIGNMENT ((size_t)64)
#define TIDAL_RT_ALLOC_ALIGNMENT(kind) \
    (TIDAL_KIND_IS_HOST(kind) ? TIDAL_RT_HOST_ALIGNMENT : TIDAL_RT_DEVICE_ALIGNMENT)

/* What a runtime declares about itself (tidal_rt_ops.traits), so the core reads a property
 * instead of comparing names. */
typedef enum tidal_rt_trait {
    /* Every call completes, in program order, before it returns, and none blocks waiting for
     * another thread or the device (the simulated device, whose clock must see calls in
     * order). The core then issues migrations in place instead of on a worker thread. */
    TIDAL_RT_TRAIT_IN_ORDER = 1u << 0,
    TIDAL_RT_TRAIT_FORCE_32BIT = 0x7FFFFFFF
} tidal_rt_trait;

typedef struct tidal_rt_device_props {
    size_t struct_size;
    char name[128];
    char arch[64];
    char pci_bus_id[32];        /* "" when unknown; the core looks up the NUMA node with hwloc */
    uint64_t total_memory;
    uint64_t page_size;         /* managed-memory migration granularity */
    uint64_t l2_size;
    int32_t managed;            /* attribute as the runtime reports it */
    int32_t concurrent_managed;
    int32_t pageable_access;
    int32_t migrates_on_fault;  /* the runtime's verdict from the facts, see hip-memory-facts */
    int32_t host_native_atomics;
    int32_t fine_grained;       /* AMD fine/coarse-grained kinds exist */
    int32_t xnack;              /* tidal_xnack */
    int32_t numa_node;          /* -1 unknown (the core may refine it) */
    int32_t simulated;
} tidal_rt_device_props;

/* Range attributes (query_range). */
typedef enum tidal_rt_range_attr {
    TIDAL_RT_ATTR_LAST_PREFETCH_LOCATION = 1, /* device index, -1 host, -2 unknown */
    TIDAL_RT_ATTR_PREFERRED_LOCATION = 2,     /* device index, -1 host, -2 none */
    TIDAL_RT_ATTR_READ_MOSTLY = 3,            /* 0/1 */
    TIDAL_RT_ATTR_COHERENCY_MODE = 4          /* AMD: 0 fine, 1 coarse, 2 indeterminate */
} tidal_rt_range_attr;

/* Advice (advise). `device` is the location for PREFERRED/ACCESSED_BY; -1 = host. */
typedef enum tidal_rt_advice {
    TIDAL_RT_ADVISE_SET_READ_MOSTLY = 1,
    TIDAL_RT_ADVISE_UNSET_READ_MOSTLY = 2,
    TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION = 3,
    TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION = 4,
    TIDAL_RT_ADVISE_SET_ACCESSED_BY = 5,
    TIDAL_RT_ADVISE_UNSET_ACCESSED_BY = 6,
    TIDAL_RT_ADVISE_SET_COARSE_GRAIN = 100,
    TIDAL_RT_ADVISE_UNSET_COARSE_GRAIN = 101
} tidal_rt_advice;

#define TIDAL_RT_LOCATION_HOST (-1)

/* One entry of kernel_batch_copy's table. The kernels read the same layout as
 * tidal_kernel_copy_item (kernels/kernel_launch.h); the modules check that they agree. */
typedef struct tidal_rt_copy_item {
    void *dst;
    const void *src;
    uint64_t size;
} tidal_rt_copy_item;

/* What links one device to another (peer_info). Link types are numbered as tidal_link_type. */
typedef struct tidal_rt_peer_info {
    size_t struct_size;
    int32_t can_access;       /* 1: the device can map the peer's memory */
    int32_t link_type;        /* tidal_link_type; TIDAL_LINK_UNKNOWN when the runtime cannot tell */
    int32_t hops;             /* -1 unknown */
    int32_t performance_rank; /* lower is faster (CUDA's P2P rank); -1 unknown */
    double bandwidth;         /* bytes/second one way; 0 unknown (only the simulated device knows) */
    double latency;           /* seconds per transfer; 0 unknown */
} tidal_rt_peer_info;

/* What a runtime counted of demand paging (paging_stats, range_paging). Only a runtime that
 * models paging fills it (the simulated device); a GPU runtime leaves both entry points NULL and
 * the core reports the figures as unknown, never as 0. Bytes are whole pages. */
typedef struct tidal_rt_paging_stats {
    size_t struct_size;
    uint64_t faults_from_host;      /* serviced page faults that brought a page from the host */
    uint64_t fault_bytes_from_host;
    uint64_t faults_from_peer;      /* ... from another device */
    uint64_t fault_bytes_from_peer;
    uint64_t link_bytes;            /* kernel traffic on managed memory served over the link
                                       without migrating (XNACK off, mapped pages, full device) */
    uint64_t link_page_bytes;       /* the pages those kernels reached over the link, a page
                                       counted once per kernel: comparable with a buffer's size */
    uint64_t moved_to_device_bytes; /* bytes prefetch moved (or duplicated) to a device */
    uint64_t moved_to_host_bytes;   /* bytes prefetch moved from a device to the host */
} tidal_rt_paging_stats;

typedef struct tidal_rt_ops {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *name;          /* "sim", "hip", "cuda" */
    tidal_rt_family family;
    uint32_t traits;           /* tidal_rt_trait bits */

    /* Lifecycle. create() may fail with the runtime's no-device code; the core then reports
     * TIDAL_ERROR_NO_DEVICE (or falls back to sim for runtime = "auto"). `options` is the
     * configuration table [runtime.NAME] (may be empty). `detail` (capacity bytes) gets a
     * one-line description such as the runtime and driver versions. */
    int (*create)(const tidal_options *options, const tidal_options_api *api, void **rt,
                  char *detail, size_t detail_capacity);
    void (*destroy)(void *rt);
    const char *(*error_name)(int native);   /* never NULL */
    const char *(*error_string)(int native); /* never NULL */

    /* Devices. */
    int (*device_count)(void *rt, int32_t *count);
    int (*device_props)(void *rt, int32_t device, tidal_rt_device_props *props);
    int (*mem_info)(void *rt, int32_t device, uint64_t *free_bytes, uint64_t *total_bytes);

    /* Memory. `kind` is a tidal_kind other than AUTO; `device` is ignored for host kinds
     * unless NUMA placement is asked. Pageable memory comes from the runtime too so the
     * simulated device can account for it; GPU runtimes use the C library. */
    int (*alloc)(void *rt, int32_t kind, int32_t device, size_t size, void **out);
    int (*free)(void *rt, int32_t kind, int32_t device, void *ptr, size_t size);
    int (*host_register)(void *rt, void *ptr, size_t size);          /* optional */
    int (*host_unregister)(void *rt, void *ptr);                     /* optional */
    /* What the runtime itself says a pointer is: *kind a tidal_kind (PAGEABLE for unknown
     * host memory), *device the owning device or TIDAL_DEVICE_HOST. */
    int (*pointer_kind)(void *rt, const void *ptr, int32_t *kind, int32_t *device);

    /* Migration and advice (managed kinds). location: device index or TIDAL_RT_LOCATION_HOST. */
    int (*prefetch)(void *rt, const void *ptr, size_t size, int32_t location, void *stream);
    int (*advise)(void *rt, const void *ptr, size_t size, int32_t advice, int32_t location);
    int (*query_range)(void *rt, const void *ptr, size_t size, int32_t attr, int32_t *value);

    /* Copies: any direction; stream NULL = synchronous with respect to the host. */
    int (*memcpy)(void *rt, void *dst, const void *src, size_t size, void *stream);
    int (*memset)(void *rt, void *dst, int value, size_t size, void *stream);

    /* Streams and events. */
    int (*stream_create)(void *rt, int32_t device, void **stream);
    int (*stream_destroy)(void *rt, void *stream);
    int (*stream_synchronize)(void *rt, void *stream);
    int (*event_create)(void *rt, int32_t device, void **event);
    int (*event_destroy)(void *rt, void *event);
    int (*event_record)(void *rt, void *event, void *stream);
    int (*stream_wait_event)(void *rt, void *stream, void *event);
    int (*event_synchronize)(void *rt, void *event);
    int (*event_elapsed_ms)(void *rt, void *start, void *end, float *ms);
    int (*device_synchronize)(void *rt, int32_t device);

    /* Validation kernels (kernels/), run by `device` on `stream`; all optional. Sizes are
     * bytes and multiples of 8 unless stated; pointers 8-byte aligned.
     *  touch:         read (write=0) or read-and-write (write=1) one word of every 4 KiB.
     *  pattern_fill:  word i of the range = f(seed, i) for an address-derived pattern.
     *  pattern_check: counts words that differ from f(seed, i); synchronous.
     *  copy:          dst = src, vectorised.
     *  triad:         a = b + scalar * c over doubles (size = bytes of each array).
     *  atomic_add:    `iterations` rounds of atomicAdd(1) to each of `count` uint64 counters. */
    int (*kernel_touch)(void *rt, int32_t device, void *ptr, size_t size, int32_t write, void *stream);
    int (*kernel_pattern_fill)(void *rt, int32_t device, void *ptr, size_t size, uint64_t seed,
                               void *stream);
    int (*kernel_pattern_check)(void *rt, int32_t device, const void *ptr, size_t size,
                                uint64_t seed, uint64_t *mismatches, void *stream);
    int (*kernel_copy)(void *rt, int32_t device, void *dst, const void *src, size_t size,
                       void *stream);
    int (*kernel_triad)(void *rt, int32_t device, double *a, const double *b, const double *c,
                        double scalar, size_t size, void *stream);
    int (*kernel_atomic_add)(void *rt, int32_t device, uint64_t *counters, size_t count,
                             uint32_t iterations, void *stream);

    /* Appended after the kernels; all optional.
     *  event_query:  *complete = 1 once all work recorded before the event has finished, else
     *                0; never blocks. The pools and the migration scheduler poll with it.
     *  kernel_spin:  a kernel busy for `ns` nanoseconds of wall time that touches no memory
     *                (compute of known length, for overlap benchmarks).
     *  clock:        seconds on the runtime's own clock; NULL means the host's monotonic clock.
     *                The simulated device answers its simulated clock. */
    int (*event_query)(void *rt, void *event, int32_t *complete);
    int (*kernel_spin)(void *rt, int32_t device, uint64_t ns, void *stream);
    int (*clock)(void *rt, double *seconds);

    /* Appended after clock; optional as a pair (both or neither). The runtime's own
     * stream-ordered pool of device memory ([pool] backend = "vendor"): cudaMallocAsync /
     * cudaFreeAsync, hipMallocAsync / hipFreeAsync from `device`'s current memory pool, with
     * the pool's attributes as the application left them.
     *  alloc_async: `size` bytes of device memory usable in `stream`'s order (NULL = the
     *               default stream of `device`), aligned to at least 256 bytes.
     *  free_async:  gives `ptr` (from alloc_async on `device`) back once the work queued on
     *               `stream` so far has finished. */
    int (*alloc_async)(void *rt, int32_t device, size_t size, void *stream, void **out);
    int (*free_async)(void *rt, int32_t device, void *ptr, void *stream);

    /* Appended after free_async; optional (NULL: tidal_copy_batch copies item by item).
     *  kernel_batch_copy: one kernel that copies, for each of `count` items of the table,
     *                     item.size bytes from item.src to item.dst (any alignment). `items`
     *                     is in memory `device` can read (tidal puts it in device memory);
     *                     dst and src are addresses `device` can reach; no two ranges of one
     *                     call overlap. `max_size` >= every item.size (it sizes the grid). */
    int (*kernel_batch_copy)(void *rt, int32_t device, const tidal_rt_copy_item *items,
                             uint32_t count, uint64_t max_size, void *stream);

    /* Appended after kernel_batch_copy; optional as a pair, and only with alloc_async (NULL:
     * tidal_pool_trim leaves the vendor's pool alone and its statistics count tidal's calls).
     * Both act on `device`'s current memory pool, the one alloc_async draws from.
     *  pool_trim:  gives the pool's unused memory back to the device until it holds at most
     *              `keep` bytes beyond what is allocated (cudaMemPoolTrimTo / hipMemPoolTrimTo).
     *  pool_usage: the bytes the pool holds from the device and the bytes allocated from it
     *              (the ReservedMemCurrent / UsedMemCurrent attributes). */
    int (*pool_trim)(void *rt, int32_t device, uint64_t keep);
    int (*pool_usage)(void *rt, int32_t device, uint64_t *reserved, uint64_t *used);

    /* Appended in version 2; optional as a group (all or none; NULL: elastic memory is
     * TIDAL_ERROR_NOT_SUPPORTED, and so is a runtime that answers its not-supported code).
     * The virtual-memory API (cuMemAddressReserve / cuMemCreate / cuMemMap / cuMemSetAccess,
     * hipMemAddressReserve / hipMemCreate / hipMemMap / hipMemSetAccess), from which the core
     * builds elastic device memory: fixed addresses whose physical backing comes and goes.
     * Addresses and sizes passed to the calls below are multiples of vmm_granularity.
     *  vmm_granularity: the size and alignment of every physical chunk and mapping on `device`
     *                   (the minimum granularity of device-local pinned memory).
     *  vmm_reserve:     `size` bytes of address space with nothing mapped; touching it is an
     *                   illegal access. *ptr is aligned to the granularity.
     *  vmm_release:     gives back a whole reservation; nothing may be mapped in it.
     *  vmm_create:      a physical chunk of `size` bytes of `device`'s memory. It counts
     *                   against the device's memory (mem_info) until vmm_destroy.
     *  vmm_destroy:     releases a chunk that is mapped nowhere; mem_info shows it free.
     *  vmm_map:         maps the whole of `chunk` (`size` bytes, offset 0) at `ptr`, inside
     *                   a reservation, where nothing is mapped. Not yet accessible. A chunk
     *                   mapped elsewhere may be mapped here too (one memory under both
     *                   addresses: CUDA's and the simulated device's do); a runtime that
     *                   refuses it returns an error, and the core unmaps the other first.
     *  vmm_set_access:  makes `size` mapped bytes at `ptr` readable and writable from
     *                   `device` (one call may span several chunks of one reservation).
     *  vmm_unmap:       unmaps `size` bytes at `ptr` (whole chunks); after it returns the
     *                   range is inaccessible again and the chunks may be destroyed or mapped
     *                   elsewhere. Work queued that touches the range must have completed. */
    int (*vmm_granularity)(void *rt, int32_t device, uint64_t *bytes);
    int (*vmm_reserve)(void *rt, int32_t device, size_t size, void **ptr);
    int (*vmm_release)(void *rt, void *ptr, size_t size);
    int (*vmm_create)(void *rt, int32_t device, size_t size, void **chunk);
    int (*vmm_destroy)(void *rt, void *chunk);
    int (*vmm_map)(void *rt, void *ptr, size_t size, void *chunk);
    int (*vmm_set_access)(void *rt, int32_t device, void *ptr, size_t size);
    int (*vmm_unmap)(void *rt, void *ptr, size_t size);

    /* Appended after vmm_unmap; optional (NULL: nothing to account, as on a GPU, whose time is
     * the host's own clock).
     *  host_copy: the core has just copied `size` bytes between host buffers with `threads`
     *             threads (filling or draining a pinned staging slot of a copy of pageable
     *             memory); the copy is complete. A runtime with its own clock charges that host
     *             work to the calling host: the simulated device at the profile's host memcpy
     *             rate for that many threads. */
    int (*host_copy)(void *rt, size_t size, uint32_t threads);
    /* Appended after vmm_unmap; optional as a group (all three or none; NULL: every pair of
     * devices is reported unreachable and copies between devices stage through pinned memory).
     * Peer access between two devices (cudaDeviceCanAccessPeer / cudaDeviceGetP2PAttribute /
     * cudaDeviceEnablePeerAccess / cudaMemcpyPeerAsync; hipDeviceCanAccessPeer /
     * hipExtGetLinkTypeAndHopCount / hipDeviceEnablePeerAccess / hipMemcpyPeerAsync).
     * `device` != `peer` in every call.
     *  peer_info:   what links `device` to `peer`: whether `device` can map `peer`'s memory,
     *               the link type, hops and performance rank where the runtime tells them.
     *  peer_enable: lets `device` reach `peer`'s memory directly from now on (for the life of
     *               the process). Enabling a pair that is already enabled succeeds.
     *  memcpy_peer: `size` bytes from `src` on `src_device` to `dst` on `dst_device`, ordered
     *               on `stream` (NULL = synchronous); a direct transfer over the link once
     *               peer access is enabled, otherwise the runtime's own path through the host. */
    int (*peer_info)(void *rt, int32_t device, int32_t peer, struct tidal_rt_peer_info *info);
    int (*peer_enable)(void *rt, int32_t device, int32_t peer);
    int (*memcpy_peer)(void *rt, void *dst, int32_t dst_device, const void *src, int32_t src_device,
                       size_t size, void *stream);
    /* Appended in version 3; optional (NULL: TIDAL_CHECK_ATOMIC_SET is NOT_SUPPORTED).
     *  kernel_atomic_set: the atomic set of kernels/atomic_set.h (its one statement of the
     *                     slots, participants and contributions): `rounds` (> 0) rounds of
     *                     each operation whose bit is set in `ops` on every device thread,
     *                     on the atomic_set::kBytes at `words` (16-byte aligned), at system
     *                     scope, so host threads may work on the same words meanwhile. The
     *                     words hold their initial values before; nothing is read back. */
    int (*kernel_atomic_set)(void *rt, int32_t device, void *words, uint32_t ops, uint32_t rounds,
                             void *stream);
    /* Appended in version 3; optional as a pair (both or neither). Named ranges for the
     * vendor's profiler (NVTX on CUDA, roctx on HIP, counted calls on the simulated device),
     * around tidal's migrations, evictions and copies. The core calls them only with
     * [telemetry] ranges = true, nested properly on each thread; a failure is ignored (a
     * profiler never fails an operation), and a failed push is not popped.
     *  range_push: opens a range named `name` (NUL-terminated, a string literal) on the
     *              calling thread.
     *  range_pop:  closes the innermost range the calling thread opened. */
    int (*range_push)(void *rt, const char *name);
    int (*range_pop)(void *rt);
    /* Appended after range_pop; optional as a pair (both or neither; NULL: the statistics
     * snapshot reports faults as unknown). Demand paging as the runtime counted it.
     *  paging_stats: what kernels on `device` faulted in, read over the link, and what prefetch
     *                moved into `device` and out of it to the host, since create().
     *  range_paging: the same, summed over every device, for the pages covering [ptr, ptr+size)
     *                of one managed allocation; `reset` != 0 zeroes those pages' counts after
     *                reading (the core reads a buffer's counts when it is freed, so that a
     *                pooled block's next owner starts from zero). */
    int (*paging_stats)(void *rt, int32_t device, tidal_rt_paging_stats *out);
    int (*range_paging)(void *rt, const void *ptr, size_t size, int32_t reset, tidal_rt_paging_stats *out);
} tidal_rt_ops;

/*! A module's one exported symbol.
 *  @core_abi   the highest TIDAL_RT_ABI_VERSION the core speaks.
 *  @chosen_abi out: the version the module implements.
 *  @ops        out: the module's static table (lives as long as the module is loaded).
 *  @return 0, or a non-zero value when the module cannot serve `core_abi`. */
typedef int (*tidal_rt_negotiate_fn)(uint32_t core_abi, uint32_t *chosen_abi,
                                     const tidal_rt_ops **ops);

#ifdef __cplusplus
}
#endif
#endif /* TIDAL_RUNTIME_CONTRACT_H */
