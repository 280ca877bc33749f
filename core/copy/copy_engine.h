// tidal_copy: any direction, any kinds. Pinned, device and managed memory copy directly with
// the runtime. Pageable memory on one side goes through a ring of pinned chunks: host threads
// copy into (or out of) one slot while the device DMA works on another, so the copy runs at
// the slower of the bus and the host's parallel memcpy, not at the runtime's pageable rate.
// Host memory the caller registered (tidal_register) copies directly, like pinned memory.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "config/settings.h"
#include "copy/host_workers.h"
#include "registry/allocation_registry.h"
#include "runtime/runtime.h"

namespace tidal {

class CopyEngine {
public:
    CopyEngine(Runtime &runtime, const AllocationRegistry &registry, const CopySettings &settings);
    ~CopyEngine();
    CopyEngine(const CopyEngine &) = delete;
    CopyEngine &operator=(const CopyEngine &) = delete;

    // stream NULL: returns when the copy is complete. Otherwise ordered on `stream`; returns
    // once the caller may reuse a pageable source or read a pageable destination.
    void copy(void *dst, const void *src, size_t size, void *stream);

    // Page-locks user memory for direct copies until unregister(). Explicit by design: a cache
    // of registrations would go stale when the user frees the memory.
    void register_host(void *ptr, size_t size);
    void unregister_host(void *ptr);

    // tidal's own copy stream on `device`, created on first use (what NULL-stream copies run on).
    void *stream_for(int32_t device);
    // The host memcpy threads, shared with batched copies.
    HostWorkers &workers() noexcept { return workers_; }

    struct Counters {
        uint64_t direct = 0, staged_h2d = 0, staged_d2h = 0, host = 0;
    };
    Counters counters() const;

    // The pieces a staged copy of `size` bytes moves through the ring, in order: equal, of
    // about sqrt(size x kPieceOverhead x kLinkRate) bytes, between kMinPiece and `chunk`.
    // Host copy and DMA overlap only between pieces, so the last DMA runs alone (a 64 MiB
    // copy in 16 MiB chunks spent about a fifth of its time so: 0.78x the bound on the H200)
    // while every piece costs a hand-off to the host threads and a DMA call; that size
    // minimises the sum. Shrinking only the last pieces does not help: their DMAs queue behind
    // the last large one whenever filling is about as fast as the link (the H200's case).
    static std::vector<size_t> staging_pieces(size_t size, size_t chunk);
    static constexpr size_t kMinPiece = size_t{1} << 20;
    static constexpr double kPieceOverhead = 20e-6; // s per piece: a guess, the H200 run should confirm
    static constexpr double kLinkRate = 50e9;       // B/s: the H200's pinned copy, round

private:
    enum class Side { pageable, host_locked, device };
    struct Slot {
        void *buffer = nullptr;
        void *event = nullptr;
        bool in_flight = false;
    };
    // Where [p, p+size) lives. Throws INVALID_ARGUMENT when it starts inside a tidal allocation
    // and runs past its end.
    Side side_of(const void *p, size_t size, bool destination, int32_t *device) const;
    void ensure_ring();
    void wait(Slot &slot);
    void staged_to_device(void *dst, const char *src, size_t size, void *stream);
    void staged_to_host(char *dst, const void *src, size_t size, void *stream);
    // Host threads fill or empty a slot: split finely, so a small end piece still moves at
    // the threads' full rate.
    void host_part(void *dst, const void *src, size_t size);

    Runtime &runtime_;
    const AllocationRegistry &registry_;
    CopySettings settings_;
    HostWorkers workers_;

    std::mutex staging_mutex_; // one staged copy at a time uses the ring
    std::vector<Slot> ring_;
    std::mutex streams_mutex_;
    std::vector<void *> streams_; // internal copy stream per device, created on first use

    mutable std::shared_mutex registrations_mutex_;
    std::map<uintptr_t, size_t> registrations_; // base -> size

    // Bumped by every copy from any thread: atomics, not a mutex all copies would queue on.
    std::atomic<uint64_t> direct_{0}, staged_h2d_{0}, staged_d2h_{0}, host_{0};
};

} // namespace tidal
