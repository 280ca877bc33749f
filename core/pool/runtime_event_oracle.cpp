#include "pool/runtime_event_oracle.h"

#include <fmt/format.h>

namespace tidal::pool {

RuntimeEventOracle::~RuntimeEventOracle()
{
    for (void *e : slots_)
        if (e)
            events_.release(device_, e);
}

EventOracle::Token RuntimeEventOracle::record(StreamHandle stream)
{
    void *event = events_.acquire(device_);
    try {
        runtime_.event_record(event, stream.native, "recording an event for a stream-ordered free");
    } catch (...) {
        events_.release(device_, event);
        throw;
    }
    std::lock_guard lock(mutex_);
    try {
        if (!free_slots_.empty()) {
            const Token t = free_slots_.back();
            free_slots_.pop_back();
            slots_[t] = event;
            return t;
        }
        slots_.push_back(event);
    } catch (...) {
        events_.release(device_, event);
        throw;
    }
    return slots_.size() - 1;
}

bool RuntimeEventOracle::complete(Token token) noexcept
{
    void *event = nullptr;
    {
        std::lock_guard lock(mutex_);
        if (token >= slots_.size())
            return false;
        event = slots_[token];
    }
    if (!event)
        return false;
    if (!events_.pollable()) {
        // A runtime that cannot poll: wait for the event (correct, only slower).
        return runtime_.event_synchronize_noexcept(event) == 0;
    }
    return events_.complete(event);
}

void RuntimeEventOracle::synchronize(StreamHandle stream)
{
    runtime_.stream_synchronize(stream.native, "waiting for a stream before its freed blocks serve other work");
}

void RuntimeEventOracle::retire(Token token) noexcept
{
    void *event = nullptr;
    {
        std::lock_guard lock(mutex_);
        if (token >= slots_.size() || !slots_[token])
            return;
        event = slots_[token];
        slots_[token] = nullptr;
        try {
            free_slots_.push_back(token);
        } catch (...) {
            // The slot is lost for reuse; the table only grows a little.
        }
    }
    events_.release(device_, event);
}

} // namespace tidal::pool
