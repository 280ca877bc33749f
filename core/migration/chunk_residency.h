// A second kind of residency the scheduler moves: chunks whose backing is mapped and unmapped
// (elastic memory), owned by a layer above the scheduler (elastic/), which implements this.
// The scheduler decides (which chunks a declaration needs, which leave under a budget, with the
// policy chain) and orders streams; the owner keeps the chunks' state and knows how they move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tidal {

struct ResidencyChunk {
    uintptr_t start = 0;
    size_t size = 0;
    bool resident = false;
    bool clean = false; // resident, and its host copy is current: it can leave with no copy
};

// A chunk a declaration names, with the modes of every entry that names it.
struct ChunkNeed {
    uintptr_t start = 0;
    uint32_t mode = 0; // TIDAL_ACCESS_*: a write makes the chunk dirty
};

class ChunkResidency {
public:
    virtual ~ChunkResidency() = default;

    // The chunks [ptr, ptr + size) touches of the allocation at `base`, in address order.
    virtual std::vector<ResidencyChunk> chunks(const void *base, const void *ptr, size_t size) const = 0;
    // Every resident chunk of `device`, and their bytes.
    virtual std::vector<ResidencyChunk> resident(int32_t device) const = 0;
    virtual uint64_t resident_bytes(int32_t device) const = 0;
    // Books a move on `device` at once (the victims leave, the needs are resident from now on,
    // the written ones dirty) and returns the runtime calls that carry it out, for the device's
    // worker: dirty victims copied home on `out_stream` first, the victims' physical chunks
    // mapped at the incoming ranges, their contents copied in on `in_stream` (which the caller
    // then records an event on). If those calls fail, the owner puts its state right before
    // rethrowing. Throws (nothing booked) when a host home cannot be made.
    virtual std::function<void()> move(int32_t device, const std::vector<uintptr_t> &victims,
                                       const std::vector<ChunkNeed> &needs, void *in_stream, void *out_stream) = 0;
};

} // namespace tidal
