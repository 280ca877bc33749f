// Typed, validated settings: what a configuration file means once it has been read.
// Produced by ConfigLoader; everything downstream reads these instead of TOML.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "log/log_level.h"

namespace toml {
inline namespace v3 {
class table;
}
} // namespace toml

namespace tidal {

// One injected fault: the Nth call (1-based) of `operation` on the simulated device fails with
// `native_error` (HIP numbering); `count` consecutive calls fail from there (0 = all after).
struct FaultSpec {
    std::string operation; // one of kFaultOperations (config/fault_operations.h)
    uint64_t nth = 1;
    uint64_t count = 1;
    int native_error = 2; // hipErrorOutOfMemory
};

// A hardware profile: the numbers the simulated device's cost model is calibrated with.
struct SimProfile {
    std::string name = "h200";
    std::string vendor = "nvidia";   // nvidia | amd
    std::string device_name = "Simulated NVIDIA H200";
    std::string arch = "sm_90";
    uint64_t capacity = 0;           // bytes per device
    uint64_t page_size = 0;          // migration granularity
    uint64_t l2_size = 0;
    bool xnack = true;               // managed pages migrate on a device fault
    bool host_native_atomics = true; // the device reports host-native atomics (hostNativeAtomicSupported)
    // Bandwidths in bytes/second, latencies in seconds.
    double h2d_pageable_bw = 0, h2d_pinned_bw = 0, d2h_pageable_bw = 0, d2h_pinned_bw = 0;
    double d2d_bw = 0, prefetch_h2d_bw = 0, prefetch_d2h_bw = 0, fault_bw = 0, zero_copy_bw = 0;
    double prefetch_h2d_duplicate_bw = 0; // read-mostly pages duplicated by a prefetch; 0 = prefetch_h2d_bw
    double remote_managed_bw = 0;         // managed pages read over the link without migrating; 0 = zero_copy_bw
    double readmostly_collapse_bw = 0;    // read-mostly duplicates collapsed onto one copy; 0 = free
    double host_memcpy_bw = 0;
    double staging_memcpy_bw = 0;         // host memcpy into/out of pinned staging slots; 0 = host_memcpy_bw
    double host_memcpy_thread_bw = 0;     // host memcpy of one thread; 0 = no per-thread limit
    double copy_latency = 0, kernel_latency = 0, fault_latency = 0;
    double alloc_latency_device = 0, alloc_latency_pinned = 0, alloc_latency_managed = 0;
    // Virtual-memory API (elastic memory): chunk size and alignment, and the cost of each call;
    // a latency of 0 (the key left out) costs nothing.
    uint64_t vmm_granularity = uint64_t{2} << 20;
    double vmm_create_latency = 0, vmm_map_latency = 0, vmm_unmap_latency = 0;
    double vmm_set_access_latency = 0, vmm_destroy_latency = 0;
    std::filesystem::path source; // file it came from; empty for a built-in profile
    // Optional [topology]: a machine of `machine_devices` GPUs ([sim] devices defaults to it)
    // and the links between them. A pair not listed has no peer path (host staging only).
    struct Link {
        int32_t a = 0, b = 0;     // both directions
        int32_t type = 0;         // tidal_link_type
        int32_t hops = 1;
        bool peer = true;         // peer access possible
        double bandwidth = 0;     // bytes/second one way
        double latency = 0;       // seconds per transfer
    };
    int32_t machine_devices = 0;  // 0: no [topology]
    std::vector<Link> links;
    std::vector<int32_t> numa_nodes; // per device of the machine; empty: unknown (-1)
    const Link *link(int32_t a, int32_t b) const
    {
        for (const Link &l : links)
            if ((l.a == a && l.b == b) || (l.a == b && l.b == a))
                return &l;
        return nullptr;
    }
};

struct SimSettings {
    int32_t devices = 1;
    std::optional<uint64_t> capacity;   // overrides the profile's
    std::optional<uint64_t> page_size;  // overrides the profile's
    std::optional<bool> xnack;          // overrides the profile's
    SimProfile profile;                 // resolved: built-in name or file
    std::vector<FaultSpec> faults;
};

enum class SlotStores { automatic, streaming, cached, demote };
// Their names in [copy] slot_stores, in the enum's order: read and described from this one list.
inline constexpr std::array<std::string_view, 4> kSlotStoresNames = {"auto", "streaming", "cached", "demote"};

// [copy]: staged copies of pageable memory (tidal_copy).
struct CopySettings {
    uint64_t chunk_size = uint64_t{16} << 20; // bytes per pinned staging slot
    uint32_t ring_depth = 4;                  // slots in the ring (2..64)
    uint32_t threads = 0;                     // host memcpy threads; 0 = min(cores, 16)
    // How long an idle host memcpy thread looks for work before it sleeps: waking a sleeping
    // one costs 5-50 us, much of a 16 MiB copy's ~0.5 ms. 0: sleep at once (shared machines).
    uint32_t spin_us = 200;
    // How host threads write a staging slot that a DMA to the device reads next (x86-64; plain
    // stores elsewhere): streaming (non-temporal) stores send each line to memory; cached ones
    // leave it modified in the filling core's cache, where the DMA fetches it; demote writes it
    // cached, then pushes it to the shared L3 (CLDEMOTE; a no-op where the processor lacks it).
    // automatic: demote for copies of kDemoteFrom bytes and more where the processor has
    // CLDEMOTE, streaming otherwise (slot_stores.h says why).
    SlotStores slot_stores = SlotStores::automatic;
    // tidal_copy_batch: items whose host end is pinned (or otherwise device-mapped) are read
    // or written by the batch kernel in place, over the link, instead of being packed into
    // staging and moved by a DMA; false stages them like pageable memory.
    bool batch_direct = true;
};

// Who serves device memory when pools are on: tidal's own pools, or the runtime's
// stream-ordered pool (cudaMallocAsync / hipMallocAsync); other kinds always use tidal's.
enum class PoolBackend { tidal, vendor };

// [pool]: the per-(kind, device) pools tidal_alloc serves device, managed and pinned memory from.
struct PoolConfig {
    bool enabled = true;
    PoolBackend backend = PoolBackend::tidal;
    // "FILE:LINE:COLUMN: " of the backend key (empty when absent): the runtime's lack of a
    // stream-ordered pool is found when the context starts, long after the file was read.
    std::string backend_where;
    uint64_t release_threshold = 0;         // tidal_pool_trim keeps at most this many spare bytes per pool
    uint64_t growth = uint64_t{64} << 20;   // smallest upstream chunk for large blocks
    // Per-thread caches (the lock-free fast path). A block a thread caches serves only that
    // thread, so a program that frees on one thread and allocates on another (PyTorch's
    // autograd thread) holds more memory with them; 0 switches them off. Large blocks kept by
    // threads go back to the pool before it grows, so they never cost an upstream allocation.
    uint32_t thread_cache_blocks = 32;                  // blocks per small size class
    uint64_t thread_cache_large = uint64_t{1} << 30;    // bytes of large blocks (at most 4)
    // Requests up to this size use size classes (slabs of one size each: fast, but a class
    // with few blocks still holds a whole slab); larger ones, and all with 0, share best-fit
    // chunks of `growth` bytes as PyTorch's caching allocator does.
    uint64_t small_max = uint64_t{1} << 20;
};

// [elastic]: elastic device memory (TIDAL_KIND_ELASTIC), whose physical backing tidal maps
// and unmaps in chunks.
struct ElasticSettings {
    // When an allocation's pinned host home is made: at its first offload that copies (lazy),
    // or with the allocation (eager), so that no offload pays for it.
    bool eager_home = false;
    uint64_t chunk_size = uint64_t{64} << 20; // rounded up to the runtime's granularity
    uint32_t copy_streams = 4;                // offload copies in flight per device
};

// [topology]: copies between devices and where host memory lives.
struct TopologySettings {
    // auto: a copy between two devices that can reach each other enables peer access for the
    // pair on first use and copies over the link; off: never enabled, such copies stage.
    bool peer_access = true;
    // A copy between devices with no peer path (or peer_access = off): stage through pinned
    // host memory (true), or refuse with NOT_SUPPORTED naming both devices (false).
    bool peer_fallback_stage = true;
    // Pinned and pageable allocations with a device, and the staging rings, on that device's
    // NUMA node (hwloc); a failure to bind is a warning.
    bool numa_bind = true;
};

// [migration]: the scheduler behind tidal_declare / tidal_prefetch, budgets and eviction.
struct MigrationSettings {
    uint64_t budget = 0;                      // managed bytes tidal keeps resident per device; 0 = no limit
    // Residency is tracked, and ranges are moved, in pieces of this size aligned to the
    // allocation's start. On the H200 prefetches of 64 MiB ran at 41 GB/s, 2 MiB at 14.5:
    // big pieces amortise the driver's per-call cost; adjacent pieces still coalesce into
    // one call.
    uint64_t chunk_size = uint64_t{64} << 20;
    // Migration streams per device (1..16) for managed prefetches: the H200's per-64-MiB
    // lookahead loop ran at 0.888x a whole-range prefetch with one, 1.001x with two.
    uint32_t streams = 2;
    // Evictions on a second worker thread, alongside the moves in: the device may hold up to
    // one declaration's bytes over budget while both run, in exchange for overlapping them.
    bool parallel_eviction = false;
    // A lookahead's moves wait this long for the application's next tidal call before they start
    // (0: at once): the driver's prefetch call holds up kernel launches made while it runs.
    // H200, overlap scenario, interleaved in one call: 1.022-1.032x max(transfer, compute) with
    // 50, 1.073 with 200, 1.32-1.34 with 0; the stream's lookahead row 0.99-1.02x with any on
    // machines in its fast state, and on one between states 1.016-1.020 with 50 against
    // 0.933-0.936 with 200 (results/2026-12-02-h200-session9, calls 2-4). Held longer, the move
    // starts later than the kernel it should overlap, or the next step, needs.
    uint32_t lookahead_hold_us = 50;
    // A worker whose jobs come at a steady pace (declarations in a loop) waits for the next one
    // spinning, up to 1.25x the last gap between them and never longer than this (0: it sleeps
    // at once). Woken from sleep, a worker on the H200 issued an elastic chunk's copy ~0.2 ms
    // late each step, and the next kernel waited for it.
    uint32_t worker_spin_us = 2000;
};

// [security]: what tidal will dlopen.
struct SecuritySettings {
    // Policy plugins and runtime modules in a file or folder anyone may write are refused (as
    // PAM and the Vulkan loader refuse them): another user could replace the code tidal runs.
    bool allow_writable_plugins = false;
};

// What TIDAL_DEVICE_DEFAULT means: the policy chain's choice (core default 0), or one device
// per process picked by its node-local rank (config/job_environment.h).
enum class DeviceSelection { first, local_rank };
// [telemetry], statistics and leaks block: what a context reports about its memory.
struct TelemetrySettings {
    // Where the statistics snapshot goes when the context is destroyed: "" = nowhere, "stderr",
    // or a file (absolute after loading). TIDAL_STATS overrides it.
    std::string stats;
    // Tags are grouped by their first tag_depth parts ('/' or '.' separate parts); 0 = whole tags.
    uint32_t tag_depth = 0;
    // Remember each allocation's call stack (backtrace(), symbolised only when a leak is
    // reported). Allocations then skip the decision cache's direct route to their pool.
    bool leak_backtrace = false;
    // Name tidal's migrations, evictions and copies as ranges in the vendor's profiler (NVTX,
    // roctx). Off: one predictable branch per such operation.
    bool ranges = false;
};

// [telemetry] trace / TIDAL_TRACE: the file every API event is recorded to as JSON lines
// (core/trace); empty = not recorded.
struct TraceSettings {
    std::filesystem::path file;
    std::string where; // "FILE:LINE:COLUMN: telemetry.trace" or "TIDAL_TRACE", for messages
};

struct Settings {
    std::string runtime = "auto";                          // auto | sim | hip | cuda
    LogLevel log_level = LogLevel::warn;
    DeviceSelection device_selection = DeviceSelection::first;
    std::vector<std::filesystem::path> policy_path;        // absolute after loading
    std::vector<std::filesystem::path> runtime_path;       // absolute after loading
    std::vector<std::string> policies;                     // the chain, in order
    // [policy.NAME] tables, kept as parsed TOML so each plugin gets its read-only view with
    // source positions. Shared because several contexts may hold one parse.
    std::shared_ptr<const toml::table> document;
    std::filesystem::path source;                          // config file, empty for a string
    std::filesystem::path base_dir;                        // where relative paths start
    SimSettings sim;
    CopySettings copy;
    PoolConfig pool;
    MigrationSettings migration;
    ElasticSettings elastic;
    TopologySettings topology;
    SecuritySettings security;
    TelemetrySettings telemetry;
    TraceSettings trace;
    std::vector<std::string> env_overrides;                // "TIDAL_RUNTIME=sim", for describe()
};

} // namespace tidal
