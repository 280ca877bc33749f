// Every live allocation of a context, looked up by any address inside it. Thread-safe:
// lookups share a reader lock, insertions and removals take it exclusively.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <shared_mutex>
#include <unordered_set>
#include <vector>

#include "registry/allocation_record.h"

namespace tidal {

class AllocationRegistry {
public:
    enum class Removal { removed, interior, unknown, already_freed };

    // Records a new allocation. Throws TIDAL_ERROR_INTERNAL if it overlaps a live one.
    void insert(const AllocationRecord &record);
    // The allocation containing `p` (its base or any interior byte).
    std::optional<AllocationRecord> find(const void *p) const;
    // Removes the allocation whose base is exactly `p`. `out` gets it when removed, or the
    // containing allocation for an interior pointer (which is left in place).
    Removal remove(const void *p, AllocationRecord *out);
    // Removes and returns every live allocation (context teardown).
    std::vector<AllocationRecord> drain();
    size_t live_count() const;

private:
    // Bases freed recently, to tell a double free from a wild pointer in the message. Bounded
    // so a long-running job does not grow it; forgetting one only weakens the message.
    static constexpr size_t kFreedMemory = 4096;
    void remember_freed(uintptr_t base);

    mutable std::shared_mutex mutex_;
    std::map<uintptr_t, AllocationRecord> live_; // keyed by base
    std::deque<uintptr_t> freed_order_;
    std::unordered_multiset<uintptr_t> freed_;
};

} // namespace tidal
