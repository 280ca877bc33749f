// Blocks freed on a stream, held until that stream is done with them. A block freed on stream
// S may be handed out again on S at once -- work on S runs in order, so the new owner's work
// queues behind the old -- but anywhere else only after an event recorded on S after the free
// has completed. Like cudaFreeAsync / cudaMallocAsync, without the vendor pool underneath.
//
// Events are recorded lazily, one per stream per collect(), not one per free: an event
// recorded later on S covers all work queued before the free as well, so it is as safe, and a
// framework that frees hundreds of tensors per step on one stream (PyTorch) pays for a handful
// of event records instead of one each (an event record is a driver call).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "pool/event_oracle.h"
#include "pool/pooled_block.h"

namespace tidal::pool {

class StreamOrderedFree {
public:
    explicit StreamOrderedFree(EventOracle &oracle);
    // Retires the tokens of blocks still held (their memory goes with the pool's).
    ~StreamOrderedFree();
    StreamOrderedFree(const StreamOrderedFree &) = delete;
    StreamOrderedFree &operator=(const StreamOrderedFree &) = delete;

    // Holds `block` until work queued on `stream` so far has finished. Records nothing yet.
    void hold(const PooledBlock &block, StreamHandle stream);
    // A held block freed on `stream` with the shape of `like` and aligned to `alignment`, if
    // any (newest first).
    std::optional<PooledBlock> take(StreamHandle stream, const PooledBlock &like, size_t alignment);
    // Records one event per stream for the blocks held since the last call, then removes and
    // returns every held block whose event has completed. Events on one stream complete in
    // order, so each stream is queried only up to its first busy event. A failed record
    // leaves those blocks held (and tried again next time): waiting is always safe.
    std::vector<PooledBlock> collect();
    // `stream` is about to be destroyed: its held blocks get their event now, while the handle
    // is valid, and leave its queue (a stream made later may get the same handle, and must
    // not take them). collect() returns them once the event completes. When no event can be
    // recorded, waits for the stream and returns the blocks, free for anyone. Throws the
    // oracle's error when that fails too: the blocks then stay held under the handle.
    std::vector<PooledBlock> end_stream(StreamHandle stream);
    // Removes and returns every held block, complete or not (teardown only).
    std::vector<PooledBlock> drain() noexcept;

    size_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
    uint64_t bytes() const noexcept { return bytes_.load(std::memory_order_relaxed); }

private:
    struct Held {
        PooledBlock block;
        EventOracle::Token token;
        bool sealed; // token is meaningful only once an event covers the block
    };
    struct StreamHash {
        size_t operator()(StreamHandle s) const noexcept { return std::hash<void *>{}(s.native); }
    };

    void seal(StreamHandle stream, std::deque<Held> &queue);
    // Moves the completed blocks at the front of `queue` to `done`.
    void pop_completed(std::deque<Held> &queue, std::vector<PooledBlock> &done);
    void release_token(const Held &h) noexcept;

    EventOracle &oracle_;
    mutable std::mutex mutex_;
    std::unordered_map<StreamHandle, std::deque<Held>, StreamHash> held_; // oldest first
    std::vector<std::deque<Held>> ended_; // queues of destroyed streams, all sealed
    std::unordered_map<EventOracle::Token, uint32_t> token_refs_;          // held blocks per sealed token
    std::atomic<size_t> count_{0};
    std::atomic<uint64_t> bytes_{0};
};

} // namespace tidal::pool
