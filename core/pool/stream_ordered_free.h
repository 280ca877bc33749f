// Blocks freed on a stream, held until that stream is done with them. A block freed on stream
// S may be handed out again on S at once -- work on S runs in order, so the new owner's work
// queues behind the old -- but anywhere else only after the event recorded at the free has
// completed. Like cudaFreeAsync / cudaMallocAsync, without the vendor pool underneath.
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

    // Records an event on `stream` and holds `block` until it completes. If recording throws,
    // nothing is held and the block is still the caller's.
    void hold(const PooledBlock &block, StreamHandle stream);
    // A held block freed on `stream` with the shape of `like` and aligned to `alignment`, if
    // any (newest first).
    std::optional<PooledBlock> take(StreamHandle stream, const PooledBlock &like, size_t alignment);
    // Removes and returns every held block whose event has completed. Events on one stream
    // complete in order, so each stream is queried only up to its first busy event.
    std::vector<PooledBlock> collect();
    // Removes and returns every held block, complete or not (teardown only).
    std::vector<PooledBlock> drain() noexcept;

    size_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
    uint64_t bytes() const noexcept { return bytes_.load(std::memory_order_relaxed); }

private:
    struct Held {
        PooledBlock block;
        EventOracle::Token token;
    };
    struct StreamHash {
        size_t operator()(StreamHandle s) const noexcept { return std::hash<void *>{}(s.native); }
    };

    EventOracle &oracle_;
    mutable std::mutex mutex_;
    std::unordered_map<StreamHandle, std::deque<Held>, StreamHash> held_; // oldest first
    std::atomic<size_t> count_{0};
    std::atomic<uint64_t> bytes_{0};
};

} // namespace tidal::pool
