// One reserved range of simulated device address space (vmm_reserve), owned RAII-style, and
// the chunks mapped into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "runtime/sim/sim_chunk.h"

namespace tidal::sim {

// Host address space reserved inaccessible (PROT_NONE). A chunk is mapped into it at a fixed
// address still inaccessible, becomes readable and writable when access is set, and on unmap
// the range goes back to inaccessible anonymous memory: a program that touches what is not
// resident really faults, as a GPU kernel would. Not thread-safe: SimRuntime's lock guards it.
class SimReservation {
public:
    struct Mapping {
        SimChunk *chunk = nullptr;
        uint64_t size = 0;
        uint64_t access = 0; // bit d: device d may read and write it
    };

    // `size` and `alignment` are multiples of the host page; throws std::bad_alloc when the
    // host has no address space left.
    SimReservation(std::size_t size, std::size_t alignment, int32_t device);
    ~SimReservation();
    SimReservation(const SimReservation &) = delete;
    SimReservation &operator=(const SimReservation &) = delete;

    uintptr_t base() const noexcept { return base_; }
    uint64_t size() const noexcept { return size_; }
    uintptr_t end() const noexcept { return base_ + size_; }
    int32_t device() const noexcept { return device_; }
    bool contains(uintptr_t p, uint64_t size) const noexcept
    {
        return p >= base_ && p < end() && size <= end() - p;
    }
    bool empty() const noexcept { return mappings_.empty(); }

    // True when no mapping overlaps [p, p + size).
    bool unmapped(uintptr_t p, uint64_t size) const;
    // True when [p, p + size) is exactly a run of whole mappings, with no hole.
    bool whole_mappings(uintptr_t p, uint64_t size) const;
    // Every byte of [p, p + size) is mapped and accessible from `device`; *chunk_device is
    // then the device whose memory it is (the first chunk's, for a range over several).
    bool accessible(uintptr_t p, uint64_t size, int32_t device, int32_t *chunk_device) const;
    // The device whose chunk is mapped at p, or the reservation's own where nothing is.
    int32_t device_at(uintptr_t p) const;

    // The host calls behind the entry points; false when the host refuses (out of memory or
    // of mappings). Preconditions (alignment, free or whole ranges) are the caller's checks.
    bool map(uintptr_t p, SimChunk &chunk);
    bool set_access(uintptr_t p, uint64_t size, int32_t device);
    // Unmaps the whole mappings of [p, p + size); returns how many there were.
    bool unmap(uintptr_t p, uint64_t size, uint64_t *chunks);

private:
    // The mapping containing p, or mappings_.end().
    std::map<uintptr_t, Mapping>::const_iterator mapping_at(uintptr_t p) const;

    uintptr_t base_ = 0;
    uint64_t size_ = 0;
    int32_t device_ = 0;
    std::map<uintptr_t, Mapping> mappings_; // by address
};

} // namespace tidal::sim
