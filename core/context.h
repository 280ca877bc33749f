// One tidal_context: the settings, the device runtime, the policy chain and the registry of
// live allocations. Everything here may be called from several threads at once.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "config/job_environment.h"
#include "config/settings.h"
#include "copy/batch_copier.h"
#include "copy/copy_engine.h"
#include "elastic/elastic_residency.h"
#include "elastic/elastic_space.h"
#include "migration/migration_scheduler.h"
#include "migration/split_placements.h"
#include "policy/decision_cache.h"
#include "policy/policy_chain.h"
#include "pool/pool_set.h"
#include "registry/allocation_registry.h"
#include "runtime/event_pool.h"
#include "runtime/peer_matrix.h"
#include "runtime/runtime.h"
#include "telemetry/call_sites.h"
#include "telemetry/error_counts.h"
#include "telemetry/stats_snapshot.h"
#include "telemetry/usage_ledger.h"
#include "validation/check_runner.h"

namespace tidal {

class Context {
public:
    // Starts the runtime and loads the policies; throws tidal::Error on any failure.
    explicit Context(Settings settings);
    // Frees what is still live (reported as leaks), then unloads policies and the runtime.
    ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    // `stream` non-null: stream-ordered (tidal_alloc_async / tidal_free_async).
    void *allocate(size_t size, const tidal_alloc_desc &desc, const pool::StreamHandle *stream = nullptr);
    void release(void *ptr, const pool::StreamHandle *stream = nullptr);
    // allocate() for a traced call: `routed` gets the cached decision that placed the block when
    // the pooled route served it (valid until this thread allocates again), else nullptr (then
    // query() says how it was placed). Spares the trace a registry lookup per allocation.
    void *allocate_traced(size_t size, const tidal_alloc_desc &desc, const pool::StreamHandle *stream,
                          const Decision *&routed);
    AllocationRecord query(const void *ptr) const;
    // What a pointer query tells: query() into `out`, every field of which but raw and raw_size
    // it writes, so `out` may be storage no constructor has filled (tidal_pointer_query passes
    // such storage: writing the defaults first was ~20 stores a query, a cost of its own at
    // 10^6 live allocations; AllocationRegistry::describe).
    void describe(const void *ptr, AllocationRecord &out) const;

    // Moves a range of managed memory and waits; a counted no-op for other kinds.
    void prefetch(const void *ptr, size_t size, int32_t device);
    tidal_range_info range_query(const void *ptr, size_t size) const;
    void advise(const void *ptr, size_t size, uint32_t set, uint32_t unset);
    void declare(void *stream, const tidal_access *accesses, size_t count, uint32_t flags);
    void budget_set(int32_t device, uint64_t bytes);
    tidal_migration_stats migration_stats(int32_t device) const;
    double clock() const;
    void run_check(tidal_check &check);
    CopyEngine &copies() { return *copies_; }
    // tidal_copy / tidal_copy_async: through the elastic space when either end may be elastic.
    void copy(void *dst, const void *src, size_t size, void *stream);
    // tidal_offload* / tidal_restore*: `out` says what was done, also when they throw.
    void offload(const char *glob, uint32_t flags, void *stream, tidal_elastic_result &out);
    void offload_range(void *ptr, size_t size, uint32_t flags, void *stream, tidal_elastic_result &out);
    void restore(const char *glob, uint32_t flags, void *stream, tidal_elastic_result &out);
    void restore_range(void *ptr, size_t size, uint32_t flags, void *stream, tidal_elastic_result &out);
    // Resident, offloaded and discarded bytes of an elastic allocation (all 0 for other kinds,
    // told apart here: every pointer query asks, and few are of elastic memory).
    elastic::ChunkBytes elastic_bytes(const AllocationRecord &record) const
    {
        return record.kind == TIDAL_KIND_ELASTIC ? elastic_->bytes(record.base, 0, 0) : elastic::ChunkBytes{};
    }
    // Gives the physical chunks kept by TIDAL_OFFLOAD_KEEP_PHYSICAL back; returns their bytes.
    // *failure gets the first refusal (what it refused is tried again by the next trim).
    uint64_t trim_elastic(std::exception_ptr *failure) { return elastic_->trim(failure); }
    // tidal_copy_batch: reads the caller's items (stepping by their struct_size) and checks them.
    void copy_batch(const tidal_copy_item *items, size_t count, void *stream);
    pool::PoolSet &pools() { return *pools_; }
    void *stream_create(int32_t device);
    // Settles what the pools and the scheduler hold for `stream` (see tidal_stream_forget),
    // then destroys it.
    void stream_destroy(void *stream);
    void stream_forget(void *stream);
    void stream_synchronize(void *stream);

    // Telemetry: the statistics snapshot (tidal_stats_json), what is live (tidal_allocations_list,
    // by address), and the count of a status a call on this context returned.
    telemetry::StatsSnapshot stats();
    std::vector<AllocationRecord> live_allocations() const;
    void count_error(tidal_status status) noexcept { errors_.count(status); }

    const Settings &settings() const noexcept { return settings_; }
    const JobEnvironment &job() const noexcept { return job_; }
    int32_t default_device() const noexcept { return default_device_; }
    const Runtime &runtime() const noexcept { return *runtime_; }
    tidal_device_info device_info(int32_t device) const;
    tidal_peer_info peer_info(int32_t device, int32_t peer) const;
    const PeerMatrix &peers() const noexcept { return *peers_; }
    std::string describe() const;

private:
    // allocate() and allocate_traced(): `on_routed(decision)` when the pooled route served it.
    template <typename OnRouted>
    void *allocate_with(size_t size, const tidal_alloc_desc &desc, const pool::StreamHandle *stream,
                        OnRouted &&on_routed);
    void validate_request(size_t size, const tidal_alloc_desc &desc) const;
    // allocate() and release() past the pooled pair's path, where they count their errors
    // (tidal_stats_json's "errors"): the C boundary does it for every other call, but a test of
    // the status there cost the pooled pair 8 instructions.
    [[gnu::noinline]] void *allocate_general(const DecisionCache::Key &key, DecisionCache::Hit hit, size_t size,
                                             const tidal_alloc_desc &desc, const pool::StreamHandle *stream);
    [[gnu::noinline]] void release_slow(const AllocationRecord &record, const pool::StreamHandle *stream);
    void *allocate_placing(const DecisionCache::Key &key, DecisionCache::Hit hit, size_t size,
                           const tidal_alloc_desc &desc, const pool::StreamHandle *stream);
    void release_unpooled(const AllocationRecord &record, const pool::StreamHandle *stream);
    AllocationRecord allocate_placed(const tidal_place_request &request, const Decision &decision,
                                     const pool::StreamHandle *stream);
    // A request the thread's DecisionCache has a route for: its pool, then the registry.
    // nullptr when the pool cannot serve it (the general path then retries and recovers).
    void *allocate_routed(const DecisionCache::Route &route);
    void apply_advice(const AllocationRecord &record);
    void unset_advice(const AllocationRecord &record) noexcept;
    // A managed allocation's page-fault counts into the statistics, read (and zeroed) as it goes.
    void retire_paging(const AllocationRecord &record) noexcept;
    void release_record(const AllocationRecord &record, const pool::StreamHandle *stream = nullptr) noexcept;
    // A pooled block back to its pool (stream-ordered when `stream` is given); a failure is
    // logged: the block is the pool's either way.
    void return_to_pool(const AllocationRecord &record, const pool::StreamHandle *stream) noexcept;
    // Gives a block back to the runtime's stream-ordered pool; returns the native code.
    int free_vendor_pooled(const AllocationRecord &record, const pool::StreamHandle *stream) noexcept;
    // Waits for `stream` before `record`'s unpooled memory is freed; puts the record back if
    // that fails. Out of line: inside release() it cost the pooled path 2 instructions a call.
    [[gnu::noinline]] void synchronize_before_free(const AllocationRecord &record, const pool::StreamHandle &stream);
    // The allocation holding [ptr, ptr+size), or an error saying why there is none. `head`:
    // only the record's head need be filled (AllocationRegistry::find_head; a declaration).
    AllocationRecord range_owner(const void *ptr, size_t size, bool head = false) const;
    // At destroy: lists what is still live (log, and the snapshot when [telemetry] stats is set).
    void report_leaks(const std::vector<AllocationRecord> &leaked) noexcept;
    // range_owner, and INVALID_ARGUMENT unless it is elastic memory.
    AllocationRecord elastic_owner(const void *ptr, size_t size) const;
    // Elastic memory the scheduler may be moving: its queued moves issued, `stream` after them.
    void settle_elastic(const void *ptr, size_t size, void *stream);
    // The elastic allocations the two ends of a copy lie in (nullptr: not elastic memory).
    elastic::CopyEnds elastic_ends(const void *dst, const void *src) const;

    Settings settings_;
    std::unique_ptr<Runtime> runtime_;
    JobEnvironment job_ = JobEnvironment::read(); // the ranks the launcher exported, read once
    // TIDAL_DEVICE_DEFAULT's meaning: itself (the chain chooses), or with device_selection =
    // "local-rank" this process's device.
    int32_t default_device_ = TIDAL_DEVICE_DEFAULT;
    std::vector<tidal_policy_device> policy_devices_;
    std::vector<tidal_policy_device_topology> policy_topology_; // what policy_system_ points to
    std::vector<tidal_policy_peer> policy_peers_;
    // What policies see of the system, with the budgets its device_budget reads: a copy of the
    // scheduler's, which policy hooks called under the scheduler's lock can read too.
    struct PolicySystem : tidal_policy_system {
        std::unique_ptr<std::atomic<uint64_t>[]> budgets; // device_count entries
        Runtime *device_runtime = nullptr;                 // device_free
        const MigrationScheduler *scheduler = nullptr;     // device_resident; set once it exists
    };
    static uint64_t policy_device_budget(const tidal_policy_system *system, int32_t device);
    static uint64_t policy_device_free(const tidal_policy_system *system, int32_t device);
    static uint64_t policy_device_resident(const tidal_policy_system *system, int32_t device);
    PolicySystem policy_system_{};
    std::unique_ptr<PolicyChain> chain_;
    uint64_t generation_; // this context's key in the per-thread DecisionCache
    std::unique_ptr<EventPool> events_;    // outlives the pools' oracles and the scheduler
    std::unique_ptr<pool::PoolSet> pools_; // after runtime_: destroyed before it
    std::unique_ptr<MigrationScheduler> scheduler_;
    std::unique_ptr<SplitPlacements> splits_; // after scheduler_: destroyed before it
    AllocationRegistry registry_;
    std::unique_ptr<CheckRunner> checks_; // after registry_ and runtime_: destroyed before them
    std::unique_ptr<PeerMatrix> peers_;   // before copies_, which enables pairs through it
    std::unique_ptr<CopyEngine> copies_;
    std::unique_ptr<BatchCopier> batches_; // after copies_: destroyed before it
    std::unique_ptr<elastic::ElasticSpace> elastic_; // after copies_ and runtime_: destroyed before them
    std::unique_ptr<elastic::ElasticResidency> elastic_moves_; // the scheduler's view of elastic_
    telemetry::UsageLedger usage_;
    telemetry::ErrorCounts errors_;
    std::unique_ptr<telemetry::CallSites> call_sites_; // only with [telemetry] leak_backtrace
    std::string stats_destination_; // [telemetry] stats with %r and %p expanded: "", "stderr" or a file
};

} // namespace tidal
