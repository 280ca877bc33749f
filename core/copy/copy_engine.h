// tidal_copy: any direction, any kinds. Pinned, device and managed memory copy directly with
// the runtime. Pageable memory on one side goes through a ring of pinned chunks: host threads
// copy into (or out of) one slot while the device DMA works on another, so the copy runs at
// the slower of the bus and the host's parallel memcpy, not at the runtime's pageable rate.
// Host memory the caller registered (tidal_register) copies directly, like pinned memory.
// Device memory on two different devices copies with the runtime's peer copy, peer access
// enabled for the pair on first use, where the pair can reach each other ([topology]
// peer_access); otherwise through the same ring of pinned slots (down, then up), or not at
// all with peer_fallback = "error".
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "config/settings.h"
#include "copy/host_workers.h"
#include "copy/sharded_counter.h"
#include "registry/allocation_registry.h"
#include "runtime/peer_matrix.h"
#include "runtime/runtime.h"

namespace tidal {

class CopyEngine {
public:
    CopyEngine(Runtime &runtime, const AllocationRegistry &registry, const CopySettings &settings,
               PeerMatrix &peers, const TopologySettings &topology);
    // With a peer matrix of its own and the default [topology] (for tests of the engine alone).
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
        uint64_t peer = 0, staged_peer = 0; // between two devices: over the link / through the host
    };
    Counters counters() const;

    // The pieces a staged copy of `size` bytes moves through the ring, in order: of about
    // sqrt(size x kPieceOverhead x kLinkRate) bytes, between kMinPiece and `chunk`, except at
    // the start, which ramps up from kMinPiece (1, 2, 4 MiB ...).
    // Host copy and DMA overlap only between pieces, so the last DMA runs alone (a 64 MiB
    // copy in 16 MiB chunks spent about a fifth of its time so: 0.78x the bound on the H200)
    // while every piece costs a hand-off to the host threads and a DMA call; that size
    // minimises the sum. The ramp starts the device after 1 MiB of host copy (from the
    // device: the host after a 1 MiB DMA) instead of a whole 4-6 MiB piece, 0.1 ms of a 16-32
    // MiB copy that takes 0.3-0.8 ms, and gives host threads woken from sleep a small first
    // piece. Small pieces at the end do not help when filling is about as fast as the link
    // (the H200's case): their DMAs queue behind the last large one (modelled on the simulated
    // device, smaller pieces at both ends were 2% slower at 16 MiB).
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
    // One ring of pinned slots per NUMA node in use (-1: node unknown or binding off), its
    // slots allocated for the first device on that node so they come from the node's memory,
    // and filled by host threads bound to the node's CPUs (the shared workers for -1).
    struct Ring {
        int32_t device = 0; // the device its slots were allocated for
        std::vector<Slot> slots;
        std::unique_ptr<HostWorkers> workers;
        HostWorkers *fill = nullptr;
    };
    // Where [p, p+size) lives. Throws INVALID_ARGUMENT when it starts inside a tidal allocation
    // and runs past its end. *resident: memory that stays on *device (device kinds, not managed).
    Side side_of(const void *p, size_t size, bool destination, int32_t *device, bool *resident = nullptr) const;
    // Device memory on src_device to device memory on dst_device (they differ).
    void between_devices(void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size,
                         void *stream);
    void staged_between(Ring &ring, void *dst, const char *src, size_t size, void *stream);
    // The ring serving `device` (staging_mutex_ held), made on first use.
    Ring &ring_for(int32_t device);
    void wait(Slot &slot);
    void staged_to_device(Ring &ring, void *dst, const char *src, size_t size, void *stream);
    void staged_to_host(Ring &ring, char *dst, const void *src, size_t size, void *stream);
    // Host threads fill or empty the slots in slices, numbered across the whole copy and
    // handed out as slots come free (HostWorkers::begin_stream), so they run from one piece
    // into the next with no hand-off between pieces: the calling thread issues the DMAs, takes a
    // slice when it has nothing to issue, and tells the simulated device what the host did
    // (host_copy). (On the H200 this did not beat one hand-off per piece: same-run rates were
    // within the spread between runs. Slices are fine so a thread that wakes late only takes
    // fewer.)
    static constexpr size_t kSlice = size_t{128} << 10; // even a 1 MiB piece goes to 8 threads
    struct Slicing {
        std::vector<size_t> offset;     // piece i's offset in the copy
        std::vector<unsigned> first;    // piece i's first slice; first[pieces] = the slices
        std::vector<unsigned> piece_of; // slice k's piece
        const std::vector<size_t> *pieces = nullptr; // slicing()'s argument: it outlives the Slicing
        unsigned slices(size_t piece) const { return first[piece + 1] - first[piece]; }
        // Slice k: its piece, and its [begin, end) within the piece.
        struct Slice {
            size_t piece, begin, end;
        };
        Slice slice(unsigned k) const
        {
            const size_t p = piece_of[k], b = (k - first[p]) * kSlice;
            return {p, b, std::min((*pieces)[p], b + kSlice)};
        }
    };
    static Slicing slicing(const std::vector<size_t> &pieces);
    // The slot's last DMA has finished (asked without blocking).
    bool slot_free(Slot &slot);
    // A runtime with a clock of its own (it charges host work: the simulated device) answers
    // every event query "done" without moving that clock, and charges host work in call order
    // on one host clock: there slots are waited for, and host threads work one piece ahead of
    // the DMAs, so its model stays the one calibrated against the H200 (host work and DMAs
    // overlap piece by piece).
    bool clocked() const { return runtime_.supports(RuntimeOp::host_copy); }

    Runtime &runtime_;
    const AllocationRegistry &registry_;
    CopySettings settings_;
    HostWorkers workers_;
    std::unique_ptr<PeerMatrix> own_peers_; // the three-argument constructor's
    PeerMatrix *peers_;
    TopologySettings topology_;

    std::mutex staging_mutex_; // one staged copy at a time uses the rings
    std::map<int, Ring> rings_; // by NUMA node
    std::mutex streams_mutex_;
    std::vector<void *> streams_; // internal copy stream per device, created on first use

    std::atomic<bool> bind_warned_{false};

    mutable std::shared_mutex registrations_mutex_;
    std::map<uintptr_t, size_t> registrations_; // base -> size

    // Bumped by every copy from any thread: atomics, not a mutex all copies would queue on.
    std::atomic<uint64_t> direct_{0}, staged_h2d_{0}, staged_d2h_{0}, peer_{0}, staged_peer_{0};
    ShardedCounter host_; // bumped by every host-to-host copy, which threads run at once without a lock
};

} // namespace tidal
