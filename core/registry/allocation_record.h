// One live allocation as the registry knows it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tidal/tidal.h"

namespace tidal {

// What AllocationRecord::placed_by (and the policy chain's Decision::placed_by) point at is
// NUL-padded to the size of tidal_pointer_info's placed_by, so that a query copies the name
// whole. strncpy was 46 of a query's ~293 instructions; at 10^6 live allocations, the fewer
// instructions a query has, the more of the next query's cache misses the processor starts
// before this one's have come in.
inline constexpr size_t kPlacedByBytes = sizeof(tidal_pointer_info::placed_by);
inline constexpr char kPlacedByNone[kPlacedByBytes] = {};

// In the order a registry node wants it (AllocationRegistry::Slot): what an interior query or
// a declaration reads (the head: base to vendor_pooled) last, so that it fills one 64-byte line
// of the node with the slot's flags; the tag on the line before (a query reads it only when the
// allocation has one); raw and raw_size, which only the paths that allocate and free read,
// first. At 10^6 live allocations a query's record is a cache miss: one line a query where the
// record spread over three or four.
struct AllocationRecord {
    void *raw = nullptr;      // what the runtime returned (differs when over-aligned)
    size_t raw_size = 0;
    char tag[TIDAL_TAG_MAX] = {};
    void *base = nullptr;     // what the caller got
    size_t size = 0;          // what the caller asked for
    size_t alignment = 0;
    const char *placed_by = kPlacedByNone; // kPlacedByBytes, NUL-padded; owned by the policy chain, which outlives every record
    tidal_kind kind = TIDAL_KIND_AUTO;
    int32_t device = TIDAL_DEVICE_HOST;  // the runtime device, or TIDAL_DEVICE_HOST
    int32_t runtime_device = 0;          // device passed to the runtime (host kinds: 0)
    uint32_t hints = 0;
    uint32_t advice = 0;
    bool pooled = false;                 // raw/raw_size/alignment came from the context's pool
    bool vendor_pooled = false;          // raw came from the runtime's stream-ordered pool ([pool] backend = "vendor")

    bool contains(const void *p) const noexcept
    {
        auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(base);
        return a >= b && a - b < size;
    }
};

} // namespace tidal
