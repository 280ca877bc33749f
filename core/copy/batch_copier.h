// tidal_copy_batch: many small copies in a few transfers. A runtime memcpy costs microseconds of
// submission and completion whatever its size, so a thousand 4 KiB copies are bound by calls,
// not bytes. Here the host packs every host->device item into one pinned staging buffer, one
// DMA carries it to a device staging buffer, and one kernel (kernel_batch_copy) scatters it to
// the destinations; device->host items take the mirror path (one gather kernel, one DMA, host
// copies out); device->device items are copied by the same kernel straight from their sources,
// and so are items whose host end is pinned ([copy] batch_direct): the kernel reaches it over
// the link in place.
// Per device there is a ring of two staging slots, so packing one wave overlaps the DMA and
// kernel of the previous one; an event per slot says when its buffers may be written again.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "config/settings.h"
#include "copy/copy_engine.h"
#include "registry/allocation_registry.h"
#include "runtime/runtime.h"

namespace tidal {

class BatchCopier {
public:
    BatchCopier(Runtime &runtime, const AllocationRegistry &registry, CopyEngine &copies, const CopySettings &settings);
    ~BatchCopier();
    BatchCopier(const BatchCopier &) = delete;
    BatchCopier &operator=(const BatchCopier &) = delete;

    // Copies every item. Checks all of them first (overlaps, ranges past an allocation's end)
    // and copies nothing when one is bad. stream NULL: complete on return. Otherwise ordered on
    // `stream` (which must belong to the device of the batched items); returns once host
    // sources may be reused, and, when any item goes device->host, once every host
    // destination holds its bytes. Items the caller gives have non-NULL pointers.
    void copy(std::span<const tidal_copy_item> items, void *stream);

private:
    enum class Route { host, to_device, to_host, on_device, single };
    struct Planned {
        const tidal_copy_item *item;
        Route route;
    };
    struct HostJob {
        void *dst;
        const void *src;
        size_t size;
    };
    struct Slot {
        char *host = nullptr;   // pinned
        char *device = nullptr; // device memory of the ring's device
        size_t capacity = 0;
        void *event = nullptr;
        bool in_flight = false;
    };
    struct Ring {
        std::mutex mutex; // one batch at a time on a device packs and issues
        std::array<Slot, 2> slots;
        size_t next = 0;
    };

    bool can_batch() const noexcept;
    int32_t plan(std::span<const tidal_copy_item> items, std::vector<Planned> &out) const;
    void run_waves(int32_t device, const std::vector<Planned> &batched, void *stream);
    size_t issue_wave(int32_t device, Slot &slot, const std::vector<Planned> &batched, size_t first, void *stream);
    void run_host_jobs(const std::vector<HostJob> &jobs);
    Ring &ring(int32_t device);
    void wait(Slot &slot);
    void reserve(int32_t device, Slot &slot, size_t bytes);
    void free_buffers(int32_t device, Slot &slot) noexcept;
    void release(int32_t device, Slot &slot) noexcept;

    Runtime &runtime_;
    const AllocationRegistry &registry_;
    CopyEngine &copies_;
    size_t wave_limit_;  // staging bytes per slot at most: [copy] chunk_size
    size_t large_item_;  // larger items go alone through tidal_copy's path
    bool direct_;        // [copy] batch_direct: the kernel reaches pinned host ends in place

    std::mutex rings_mutex_;
    std::vector<std::unique_ptr<Ring>> rings_; // per device, made on first use
};

} // namespace tidal
