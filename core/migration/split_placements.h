// Managed allocations a policy split over devices (tidal_placement.parts, issue 16): each
// part's advice names its own device, and the scheduler's units are cut at the parts' edges.
// Advice is otherwise given per allocation, naming the allocation's device; a split is the
// one place where accessed-by and preferred-location name another device, so what was set
// here is also unset here (before a pooled block finds its next owner).
//
// Thread-safe; only split allocations pay anything (any() is one relaxed load).
#pragma once

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "migration/migration_scheduler.h"
#include "registry/allocation_record.h"
#include "runtime/runtime.h"

namespace tidal {

class SplitPlacements {
public:
    // The advice each part gets, for its own device.
    static constexpr uint32_t kPartAdvice = TIDAL_ADVICE_PREFERRED_DEVICE | TIDAL_ADVICE_ACCESSED_BY_DEVICE;

    SplitPlacements(Runtime &runtime, MigrationScheduler &scheduler) : runtime_(runtime), scheduler_(scheduler) {}

    // `r` (managed, not yet in the registry) is split into `parts` (validated: they cover it).
    // Throws the runtime's error with the advice set so far unset and nothing remembered.
    void add(const AllocationRecord &r, std::vector<tidal_policy_part> parts);
    // `r` is being freed: its parts' advice goes when its block returns to a pool (the runtime
    // forgets advice with memory it frees).
    void remove(const AllocationRecord &r) noexcept;
    // tidal_advise on [ptr, ptr + size) of `r`: when `r` is split, the bits that name a device
    // (kPartAdvice) are set and unset part by part, naming each part's device. Returns the
    // bits it applied (0: not split, the caller applies everything).
    uint32_t advise(const AllocationRecord &r, const void *ptr, size_t size, uint32_t set, uint32_t unset);
    // The parts of the split allocation at `base`; empty when it is not split.
    std::vector<tidal_policy_part> parts_of(const void *base) const;
    bool any() const noexcept { return count_.load(std::memory_order_relaxed) != 0; }

private:
    void unset(const AllocationRecord &r, const std::vector<tidal_policy_part> &parts) noexcept;

    Runtime &runtime_;
    MigrationScheduler &scheduler_;
    mutable std::mutex mutex_;
    std::unordered_map<const void *, std::vector<tidal_policy_part>> splits_; // by base
    std::atomic<size_t> count_{0};
};

} // namespace tidal
