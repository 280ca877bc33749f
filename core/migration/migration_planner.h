// The scheduler's planning step, on its own: which units a declaration or an explicit
// prefetch needs on which device, and which resident units a device gives up when it would
// exceed its budget. It asks the policy chain and reads residency through a question ("is
// this unit resident on that device?"), and touches no runtime, no lock and no state of its
// own, so that it can be tested without a device (tests/unit/test_migration_planner.cpp).
//
// A unit is a [migration] chunk_size window aligned to its allocation's start (the last one
// of an allocation may be shorter), or a piece of one where declarations named different
// devices for its bytes (migration/unit_split.h: the scheduler cuts them). The planner does not care what kind of residency a unit
// has (managed pages today): moving units is the scheduler's queue step.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "migration/address_table.h"
#include "policy/policy_chain.h"
#include "registry/allocation_record.h"

namespace tidal {

// What the planner, the scheduler and the policies read of a declared range's allocation: a
// quarter of its record's 144 bytes, so that a DeclaredRange is one cache line. A declaration of 10^4
// ranges walks its ranges in several passes, and the whole record (its 64-byte tag inline)
// pushed them out of a 2 MiB L2. The tag is read only when a unit is first made
// (MigrationScheduler::set_tag_source).
struct RangeOwner {
    void *base = nullptr;
    size_t size = 0;
    tidal_kind kind = TIDAL_KIND_AUTO;
    int32_t device = TIDAL_DEVICE_HOST;
    int32_t runtime_device = 0;
    uint32_t hints = 0;
    uint32_t advice = 0;

    RangeOwner() = default;
    // Implicit: a record stands wherever its owner's fields are wanted.
    RangeOwner(const AllocationRecord &r) noexcept // NOLINT(google-explicit-constructor)
        : base(r.base), size(r.size), kind(r.kind), device(r.device), runtime_device(r.runtime_device),
          hints(r.hints), advice(r.advice)
    {
    }
};

// One declared (or prefetched) range, already checked to lie inside `owner`.
struct DeclaredRange {
    RangeOwner owner;
    const void *ptr = nullptr;
    size_t size = 0;
    int32_t device = 0; // index or TIDAL_DEVICE_HOST
    uint32_t mode = TIDAL_ACCESS_READ;
};
// A call's passes stream its ranges: 10^4 of them must stay a small part of a 2 MiB L2.
static_assert(sizeof(DeclaredRange) <= 64, "a declared range is one cache line");

struct UnitSpan {
    uintptr_t start;
    size_t size;
    void *tracked = nullptr; // the tiling's own record of the unit, if it has one (opaque here)
};

// A unit a call needs on a device, and what to do about it.
struct Need {
    uintptr_t start;
    size_t size;
    const DeclaredRange *range; // the first range of the call that named it
    uint64_t call_limit;        // bytes per runtime call, 0 = no limit
    uint32_t advice_set;        // what the plans of every range naming it asked for
    bool move;                  // false: already resident there
    void *tracked = nullptr;    // UnitSpan::tracked of the unit: its owner finds it again without a search
};

// What one call needs on one device.
struct DevicePlan {
    int32_t device = 0;
    std::vector<Need> needs; // in the order the ranges named them
    uint64_t incoming = 0;   // bytes of the needs that move
    std::unordered_map<uintptr_t, uint32_t> chunk_modes; // elastic chunk -> the modes of every range naming it
    // Every need's start, sorted: what making room for this call must not evict.
    std::vector<uintptr_t> keep() const;
};

// A declaration's plans, device by device in the order their first unit was named. A unit
// named twice is needed once, where it was first named, with both plans' advice.
struct DeclarationPlan {
    std::vector<DevicePlan> devices;
    std::vector<UnitSpan> spans; // one range's units, reused from range to range
    std::vector<std::vector<Need>> spare; // needs' buffers of an earlier call, for new device plans

    // The (device, need) that names the unit at `start`, if a range of this call named it.
    const std::pair<size_t, size_t> *named(uintptr_t start)
    {
        return rises_past_current(start) ? nullptr : named_elsewhere(start);
    }
    // The unit at `start`, named for the first time, is need `need` of device plan `device`.
    void name(uintptr_t start, size_t device, size_t need)
    {
        if (rises_past_current(start))
            runs_[current_].hi = last_ = start;
        else
            name_elsewhere(start, device, need);
    }

    // The plan of `device`, made (last) if the plan has none yet.
    size_t device_index(int32_t device);
    // Empties the plan for another call and keeps its buffers: megabytes at 10^4 ranges, which
    // glibc maps and trims again call after call (page faults on every page) when they are freed.
    void reset();

private:
    // Units named in a few runs of increasing (or decreasing) addresses need no table: a start
    // outside every run's [first, last] cannot have been named, and seen_ is not written (a
    // random write per range into a table of ~1 MB at 10^4 ranges). Ranges declared in address
    // order form one run; pooled blocks in allocation order one per slab (10 at 10^4 blocks of
    // 4 KiB). A start inside a run, or more than kMaxRuns runs, fills seen_ from the needs.
    struct Run {
        uintptr_t lo, hi;
    };
    static constexpr size_t kMaxRuns = 64;
    std::vector<Run> runs_; // disjoint, by address
    size_t current_ = 0;    // the run the last start joined
    uintptr_t last_ = 0;    // that start
    uintptr_t ceiling_ = 0; // the run above when that run rises and its top is last_; else 0
    bool hashed_ = false;
    AddressTable<std::pair<size_t, size_t>> seen_; // unit start -> (device, need), once hashed_
    // The usual case, inline: past the top of the rising run the last start joined, below the
    // run above it.
    bool rises_past_current(uintptr_t start) const noexcept { return last_ < start && start < ceiling_; }
    void rise_from(size_t run) noexcept
    {
        current_ = run;
        ceiling_ = run + 1 < runs_.size() ? runs_[run + 1].lo : UINTPTR_MAX;
    }
    const std::pair<size_t, size_t> *named_elsewhere(uintptr_t start);
    void name_elsewhere(uintptr_t start, size_t device, size_t need);
    // Where `start` would go among the runs: the index of the first run above it, or kInside.
    static constexpr size_t kInside = ~size_t{0};
    size_t slot_among_runs(uintptr_t start) const noexcept;
    void fill_seen();
};

// A unit resident on the device that has to make room, as eviction sees it.
struct ResidentUnit {
    uintptr_t start = 0;
    size_t size = 0;
    bool held = false; // protected by a stream's phase or a lookahead
    uint64_t last_use = 0;
    uint64_t uses = 0;
    uint32_t mode = 0;
    uint32_t hints = 0;
    uint32_t advice = 0;
    const char *tag = "";
    bool clean = false; // leaves with no copy (TIDAL_RESIDENT_CLEAN)
};

// Making room for `incoming` bytes on a device.
struct EvictionPlan {
    uint64_t need = 0;              // bytes over the budget; 0: it fits, nothing to do
    uint64_t available = 0;         // bytes eviction may take (resident, neither held nor kept)
    uint64_t held = 0;              // resident bytes held or needed by the call itself
    std::vector<uintptr_t> victims; // the chain's choice in its order, until `need` is covered
    uint64_t freed = 0;             // the victims' bytes
    const char *chosen_by = "core";
    // Too little may be evicted: the chain was not asked (wait for work to finish, or refuse).
    bool short_of_candidates() const noexcept { return available < need; }
};

class MigrationPlanner {
public:
    // Whether tidal made the unit at `start` resident on `device`.
    using Residency = std::function<bool(uintptr_t start, int32_t device)>;
    // Appends the units tiling the window [start, start + size) to `tiles`, in address order;
    // none when the window is untracked (it is then one unit). Empty function: every window is
    // untracked. (Appending to the caller's vector: no heap block per window.)
    using Tiling = std::function<void(uintptr_t start, size_t size, std::vector<UnitSpan> &tiles)>;

    // `chain` and `system` must outlive the planner; `chunk_size` > 0.
    MigrationPlanner(const PolicyChain &chain, const tidal_policy_system *system, uint64_t chunk_size)
        : chain_(chain), system_(system), chunk_(chunk_size)
    {
    }

    uint64_t chunk_size() const noexcept { return chunk_; }
    // The units [r.ptr, r.ptr + r.size) touches, in address order (none for an empty range).
    std::vector<UnitSpan> units(const DeclaredRange &r, const Tiling &tiling = {}) const;
    // The same into `spans` (emptied first), so that a caller reusing it allocates nothing.
    void units(const DeclaredRange &r, const Tiling &tiling, std::vector<UnitSpan> &spans) const;

    // What the chain's plan_prefetch is asked about a declared range.
    tidal_prefetch_request request(const DeclaredRange &r, bool lookahead) const;
    // Adds a declared device range to `plan` as the chain's plan_prefetch decides (skip:
    // nothing). `r` must outlive `plan`. Throws the chain's TIDAL_ERROR_PLUGIN.
    void add(DeclarationPlan &plan, const DeclaredRange &r, bool lookahead, const Residency &resident,
             const Tiling &tiling = {}) const;
    // An explicit prefetch to a device: every unit of the range, no plan asked. `r` must
    // outlive the result.
    DevicePlan plan_prefetch(const DeclaredRange &r, const Residency &resident, const Tiling &tiling = {}) const;

    // Bytes by which `incoming` more would put a device over `budget` (0 = no budget): 0 when they fit.
    static uint64_t excess(uint64_t budget, uint64_t resident, uint64_t incoming) noexcept
    {
        return budget == 0 || resident + incoming <= budget ? 0 : resident + incoming - budget;
    }
    // What leaves `device` (holding `resident` bytes of `units`, under `budget`, 0 = none) so
    // that `incoming` more fit; `keep` (sorted) are the call's own units. Asks the chain's
    // evict only when enough may be evicted. Throws the chain's TIDAL_ERROR_PLUGIN.
    EvictionPlan make_room(int32_t device, uint64_t budget, uint64_t resident, uint64_t incoming,
                           const std::vector<uintptr_t> &keep, const std::vector<ResidentUnit> &units,
                           uint64_t now) const;
    // The chain chose too little: TIDAL_ERROR_PLUGIN naming the policy.
    static void require_covered(const EvictionPlan &plan, int32_t device);

private:
    const PolicyChain &chain_;
    const tidal_policy_system *system_;
    uint64_t chunk_;
};

} // namespace tidal
