// The scheduler behind access declarations, explicit prefetches and device budgets.
//
// It tracks which pieces ("units": [migration] chunk_size windows aligned to an allocation's
// start) of managed allocations tidal has made resident on which device, moves them on its own
// migration streams, orders callers' streams after those moves with events, and keeps each
// device under its budget by evicting what the policy chain chooses. What it tracks is what
// tidal moved: pages the device faulted in by itself are the runtime's business.
//
// Protection: the units a stream's current phase declared stay protected until an event
// recorded on that stream at its next declaration has completed; lookahead units are protected
// from the moment they are declared. Protected units are never eviction candidates.
//
// A declaration goes through named steps: validate (the devices) -> plan (MigrationPlanner:
// which units move, as the chain's plan_prefetch says) -> make room (each device under its
// budget, victims chosen by the planner with the chain's evict) -> queue (the runtime calls,
// as steps for the device's worker) -> publish (hand the steps to the workers, order the
// caller's stream after the moves it needs). An explicit prefetch takes the same steps but
// issues its one call itself. Only the queue step knows how a unit moves (managed pages: a
// prefetch, advice): a second kind of residency adds its own queue calls and leaves the
// other steps as they are.
//
// Bookkeeping (residency, budgets, protection, the policy's choices) happens in the caller's
// thread under one mutex; the runtime calls a declaration needs (evictions, advice,
// prefetches, event records) go, in order, to the device's MigrationWorker thread, because a
// CUDA prefetch call blocks its calling thread for much of the migration. A plain declaration
// waits for the worker to have issued what its stream must wait for; a lookahead one does not.
//
// Thread-safe; declarations are not the allocation fast path.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/settings.h"
#include "migration/address_table.h"
#include "migration/chunk_residency.h"
#include "migration/migration_planner.h"
#include "migration/migration_worker.h"
#include "migration/unit_split.h"
#include "policy/policy_chain.h"
#include "registry/allocation_record.h"
#include "runtime/event_pool.h"
#include "runtime/runtime.h"

namespace tidal {

class MigrationScheduler {
public:
    // Everything referenced must outlive the scheduler.
    // `threaded`: issue runtime calls from a worker thread per device (GPU runtimes); false
    // issues them in the caller's thread, in order (the simulated device).
    MigrationScheduler(Runtime &runtime, EventPool &events, const PolicyChain &chain,
                       const tidal_policy_system *system, const MigrationSettings &settings, bool threaded);
    // Waits for its migration streams, then destroys them.
    ~MigrationScheduler();
    MigrationScheduler(const MigrationScheduler &) = delete;
    MigrationScheduler &operator=(const MigrationScheduler &) = delete;

    // tidal_declare: managed ranges only (the caller counts the others with count_noop).
    // `stream` is the caller's. Throws BUDGET_EXCEEDED with nothing moved when the protected
    // ranges alone would exceed a budget.
    void declare(void *stream, const std::vector<DeclaredRange> &ranges, bool lookahead);
    // Ends the stream's current phase without declaring anything new.
    void end_phase(void *stream);
    // `stream` is about to be destroyed: its current phase and its lookahead end now, with
    // events recorded while the handle is valid, so what they protect is released once the
    // stream's work is done. Throws the runtime's error (the stream must then stay alive).
    void end_stream(void *stream);
    // tidal_prefetch of a managed range: one runtime call for the range, then waits.
    void prefetch(const DeclaredRange &range);
    // The allocation is being freed: forget its units and unset the advice the scheduler set.
    // Cheap when nothing of it was ever tracked.
    void forget(const AllocationRecord &owner) noexcept;
    bool tracking() const noexcept { return tracked_.load(std::memory_order_relaxed) != 0; }

    // Elastic memory: declared ranges of TIDAL_KIND_ELASTIC are chunks `chunks` owns, moved as
    // it says and counted against the budgets with the managed units. NULL (at teardown): waits
    // for every queued move first. `chunks` must outlive its use here.
    void set_chunk_residency(ChunkResidency *chunks);
    // Before tidal_copy, offload, restore or a check kernel on elastic memory in [lo, hi): the
    // moves queued on it are issued, and `stream` waits for those still in flight.
    void settle(uintptr_t lo, uintptr_t hi, void *stream);
    // A managed allocation split over devices (tidal_placement.parts, validated): its units are
    // cut at the parts' edges now, each piece's home being its part's device (advice the
    // scheduler sets names it), so that each part's later declarations move that part only.
    void split(const AllocationRecord &owner, const std::vector<tidal_policy_part> &parts);
    // The managed bytes resident on `device` as of the end of the last call; any thread, no
    // lock (policy hooks the scheduler calls under its lock read it: device_resident). 0 for
    // a bad index.
    uint64_t resident_now(int32_t device) const noexcept;

    // Where a new unit's tag comes from (a DeclaredRange does not carry it): called with the
    // allocation's base, under the scheduler's lock, only when a unit is first made. It must
    // take no lock the scheduler's holder may wait on, and may answer "" (an allocation freed
    // meanwhile). Unset: units are untagged. Set once, before the first declaration.
    using TagSource = std::function<std::string(const void *base)>;
    void set_tag_source(TagSource source) { tag_source_ = std::move(source); }

    void set_budget(int32_t device, uint64_t bytes);
    void count_noop(int32_t device) noexcept;
    tidal_migration_stats stats(int32_t device) const;

private:
    struct Batch; // an event recorded after a group of migrations on one migration stream
    struct alignas(64) Unit {
        // What a declaration of a resident unit reads and writes comes first, in one cache
        // line (aligned: the map node's header takes a line of its own before it); the rest is
        // read when it moves.
        uint64_t id = 0;            // unique: phases name units by (start, id)
        size_t size = 0;
        int32_t device = -1;        // where tidal made it resident
        uint32_t mode = 0;
        uint64_t last_use = 0;
        uint64_t uses = 0;
        uint32_t advice = 0;        // the allocation's advice plus what plans set
        uint32_t protect = 0;       // phases and lookaheads holding it
        std::shared_ptr<Batch> ready; // its migration, while maybe in flight
        uint32_t hints = 0;
        uint32_t applied = 0;       // advice bits the scheduler set itself (unset at forget)
        int32_t alloc_device = 0;
        // An elastic chunk: its residency is the ChunkResidency's (device stays -1); the unit
        // keeps what eviction and protection need.
        bool elastic = false;
        std::string tag;
    };
    struct UnitRef {
        uintptr_t start;
        uint64_t id;
    };
    // A window one declared range touches, and the bytes of it the range claims (cut_units).
    struct CutClaim {
        uintptr_t start;
        size_t size;
        const DeclaredRange *range;
        UnitClaim claim;
    };
    struct Closing {
        void *event;
        int32_t device;
        std::vector<UnitRef> units;
    };
    struct StreamPhases {
        std::vector<UnitRef> current;
        std::vector<UnitRef> lookahead;
        std::deque<Closing> closing; // oldest first
        // The phase a plain declaration in progress ends, until just before it publishes:
        // dropped then when the new phase holds all its units, else closed with an event.
        std::vector<UnitRef> ending;
        int32_t ending_device = 0;
    };
    // A runtime call for a worker, with the memory it touches (none: {0, 0}), so that an
    // explicit prefetch waits only for the calls on its range.
    struct Step {
        MigrationWorker::Range touches;
        std::function<void()> run;
        // A managed prefetch: on CUDA the call lasts as long as the move, holding up the
        // application's launches meanwhile; only jobs with one are held (see MigrationWorker).
        bool long_call = false;
    };
    // A lookahead prefetch handed to a worker and not yet issued; the worker reads its range
    // only when it issues the call, so a later lookahead declaration of the range just after
    // it can still join it (one runtime call instead of two: a CUDA prefetch call has a cost of its own).
    struct OpenPrefetch {
        std::mutex mutex;
        uintptr_t start = 0;
        size_t size = 0;
        bool issued = false;
    };
    struct DeviceState {
        uint64_t budget = 0;
        uint64_t resident = 0;
        tidal_migration_stats stats{};
        std::vector<void *> streams; // made on first use
        size_t next_stream = 0;
        std::unique_ptr<MigrationWorker> worker;      // made with the first stream
        std::vector<Step> steps;                      // runtime calls of the declaration in hand
        // [migration] parallel_eviction: evictions go to a worker of their own.
        std::unique_ptr<MigrationWorker> evictor;
        std::vector<Step> evict_steps;
        std::vector<UnitSpan> chunk_victims;  // elastic chunks make_room chose, moved by queue_chunks
        void *chunk_out = nullptr;            // elastic chunks' copies home (made on first use)
        // The last lookahead prefetch queued, its allocation and its batch: open for joining
        // while its job is the worker's last and the call is not issued.
        std::shared_ptr<OpenPrefetch> open;
        uintptr_t open_base = 0;
        uint64_t open_limit = 0;
        std::shared_ptr<Batch> open_batch;
    };
    // Holds the lock for one declaration or prefetch, and shares their prologue and epilogue.
    struct Call;
    DeviceState &device(int32_t d);
    // Hands the steps gathered for each device to its worker; batches made for them learn the
    // job that records their event. Returns nothing to wait for; see queue.
    // `hold`: how long the moves' jobs that contain a prefetch may wait (see MigrationWorker).
    void submit_steps(std::chrono::microseconds hold = std::chrono::microseconds{0});
    // Held lookahead moves may start (see MigrationWorker).
    void release_held() noexcept;
    void wait_for(const std::shared_ptr<Batch> &batch);
    // Waits until no worker has a job queued or running on `range` (explicit prefetch, free).
    void wait_for_jobs_on(MigrationWorker::Range range);
    std::shared_ptr<Batch> record_batch(int32_t d, void *ms);
    void *migration_stream(int32_t d);
    Unit *find(const UnitRef &ref);
    // The unit starting at `start`, or nullptr: one probe of index_, no tree search.
    Unit *unit_at(uintptr_t start) noexcept
    {
        Unit *const *u = index_.find(start);
        return u ? *u : nullptr;
    }
    const Unit *unit_at(uintptr_t start) const noexcept
    {
        Unit *const *u = index_.find(start);
        return u ? *u : nullptr;
    }
    // How many ranges or needs ahead a pass over a call's ranges starts its cache misses.
    static constexpr size_t kLookAhead = 8;
    // The start of the window (unit, unless cut) holding the range's first byte.
    uintptr_t window_of(const DeclaredRange &r) const noexcept
    {
        const uintptr_t base = reinterpret_cast<uintptr_t>(r.owner.base);
        return base + (reinterpret_cast<uintptr_t>(r.ptr) - base) / settings_.chunk_size * settings_.chunk_size;
    }
    void unprotect(const std::vector<UnitRef> &units) noexcept;
    void reap_closing(bool wait_oldest);
    void close_phase(void *stream, StreamPhases &phases, int32_t device);
    // Records the event that ends phases.ending and hands its units to the closing list. On a
    // failure they go back to the current phase (closed at the stream's next declaration).
    void close_ending(void *stream, StreamPhases &phases);
    // Whether every unit of `ended` that still exists is held by `held` too.
    bool holds_all(const std::vector<UnitRef> &held, const std::vector<UnitRef> &ended);
    // Closes the stream's current phase (if it has one), with its event on the device of its first unit.
    void close_current(void *stream);
    // The steps of a declaration (see the top of this file).
    std::vector<std::shared_ptr<Batch>> bring_home(const std::vector<DeclaredRange> &ranges);
    // Fills plan_ (emptied first) and returns it.
    DeclarationPlan &plan(const std::vector<DeclaredRange> &ranges, bool lookahead);
    void make_room(const DevicePlan &plan);
    // Where a declaration's protected units go: the phase's (or lookahead's) list, and the units
    // themselves in the same order.
    struct Protection {
        std::vector<UnitRef> &held;
        std::vector<Unit *> &units;
    };
    // Queues the plan's moves and protects its units; returns the batches its needs depend on
    // that are not known complete.
    std::vector<std::shared_ptr<Batch>> queue(DevicePlan &plan, bool lookahead, Protection &protect);
    // A need's unit is used by this call, and protected by it.
    void use(Unit &u, const Need &n, Protection &protect);
    // Lookahead: the plan's moves are one run just after the device's open prefetch, which
    // takes them (no new runtime call). False leaves everything as it was.
    bool join_open_prefetch(DevicePlan &plan);
    void publish(void *stream, const std::vector<std::shared_ptr<Batch>> &waits, bool lookahead);
    // The steps of an explicit prefetch that a declaration does not take.
    void order_after_moves_of(const DeclaredRange &range);
    void flush_evictions(DeviceState &ds);
    // Elastic ranges (chunk_residency.h): their needs, and the one move per device that brings
    // them in and takes out the victims make_room chose.
    void plan_chunks(DeclarationPlan &plan, const DeclaredRange &r);
    void queue_chunks(DevicePlan &plan);
    static bool is_chunk(const Need &n) noexcept { return n.range->owner.kind == TIDAL_KIND_ELASTIC; }
    uint64_t resident_total(int32_t d) const;

    MigrationPlanner::Residency residency() const;
    MigrationPlanner::Tiling tiling();
    // Cuts units where the device ranges of one call name different devices than the bytes
    // around them (migration/unit_split.h), before the call is planned.
    // `homes`: new and cut units take their range's device as their home (a split's parts).
    void cut_units(const std::vector<DeclaredRange> &ranges, bool homes = false);
    // Whether every range (for a device) covers whole windows, all for one device: nothing to cut.
    bool whole_windows_for_one_device(const std::vector<DeclaredRange> &ranges);
    void publish_resident() noexcept;
    // The unit at `it` ends at `at`; a new unit with its state begins there, named wherever
    // the old one is (phases, lookaheads), so protection ends for both pieces together.
    void split_unit(std::map<uintptr_t, Unit>::iterator it, uintptr_t at);
    Unit &make_unit(uintptr_t start, size_t size, const RangeOwner &owner);
    // A unit just inserted at `start` takes its id, size and what it keeps of its allocation.
    void init_unit(uintptr_t start, Unit &u, size_t size, const RangeOwner &owner);
    std::vector<ResidentUnit> resident_units(int32_t d) const;
    // One runtime prefetch of [ptr, ptr + size) to `location` on migration stream `ms`, for a
    // worker; `what` formats the error's description from (size, ptr, d).
    void queue_prefetch(std::vector<Step> &steps, const void *ptr, size_t size, int32_t location, void *ms,
                        int32_t d, const char *what);
    // `freed`: the unit's allocation is being freed (its contents need not survive, its advice is gone).
    void evict_unit(uintptr_t start, Unit &u, bool freed = false);
    // Bookkeeping: the unit is no longer tidal's on its device.
    void leave_device(Unit &u) noexcept;
    Unit &adopt(uintptr_t start, size_t size, const DeclaredRange &range);
    void apply_advice(Unit &u, uintptr_t start, uint32_t bits);

    Runtime &runtime_;
    EventPool &events_;
    MigrationSettings settings_;
    bool threaded_;
    MigrationPlanner planner_;

    mutable std::mutex mutex_;
    std::map<uintptr_t, Unit> units_; // by start address: for walks in address order
    AddressTable<Unit *> index_;      // units_ by start address, for the lookups of a unit (same entries)
    std::unordered_map<void *, StreamPhases> phases_;
    std::vector<DeviceState> devices_;
    std::unique_ptr<std::atomic<uint64_t>[]> resident_now_; // copies of devices_[d].resident
    uint64_t clock_ = 0;
    uint64_t next_id_ = 1;
    std::atomic<uint64_t> tracked_{0}; // units_.size(), readable without the lock
    std::vector<std::shared_ptr<Batch>> unsubmitted_; // batches whose recording step is queued in `steps`
    // A declaration's buffers, kept from call to call (see DeclarationPlan::reset).
    DeclarationPlan plan_;
    std::vector<Unit *> protected_now_;
    std::vector<CutClaim> cut_claimed_;
    std::vector<UnitClaim> cut_claims_, cut_existing_;
    ChunkResidency *chunks_ = nullptr;
    TagSource tag_source_;
    const AllocationRecord *splitting_ = nullptr; // split()'s record, not in the registry yet
};

} // namespace tidal
