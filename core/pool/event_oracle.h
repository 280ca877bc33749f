// How a pool learns that a stream is done with a freed block: it records an event on the
// stream when the block is freed and asks later whether the event has completed. Abstract so
// that tests simulate streams; the lead maps it onto the runtime's events.
#pragma once

#include <cstdint>

#include "pool/stream_handle.h"

namespace tidal::pool {

class EventOracle {
public:
    using Token = uint64_t;

    virtual ~EventOracle() = default;
    // Records an event on `stream` now: it completes once all work enqueued on the stream
    // before it has finished. Throws tidal::Error on failure (the block then stays the
    // caller's). May be called from several threads at once.
    virtual Token record(StreamHandle stream) = 0;
    // Whether the event `token` stands for has completed. A query that fails answers false:
    // the block then waits, which is always safe.
    virtual bool complete(Token token) noexcept = 0;
    // The pool is done with `token` (its event may be reused or destroyed).
    virtual void retire(Token token) noexcept = 0;
    // Waits until all work enqueued on `stream` so far has finished. Throws tidal::Error.
    virtual void synchronize(StreamHandle stream) = 0;
};

} // namespace tidal::pool
