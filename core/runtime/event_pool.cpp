#include "runtime/event_pool.h"

#include <fmt/format.h>

#include "log/logger.h"
#include "status/error.h"

namespace tidal {

EventPool::~EventPool()
{
    if (out_ != 0)
        log_error(fmt::format("{} runtime event(s) still in use when their pool was destroyed", out_));
    for (auto &events : free_)
        for (void *e : events)
            runtime_.event_destroy(e);
}

void *EventPool::acquire(int32_t device)
{
    {
        std::lock_guard lock(mutex_);
        if (static_cast<size_t>(device) < free_.size() && !free_[static_cast<size_t>(device)].empty()) {
            void *e = free_[static_cast<size_t>(device)].back();
            free_[static_cast<size_t>(device)].pop_back();
            ++out_;
            return e;
        }
    }
    // Events that cannot be recorded are of no use to anyone here.
    runtime_.require(RuntimeOp::event_record);
    void *event = runtime_.event_create(device, [&] { return fmt::format("creating an event on device {}", device); });
    std::lock_guard lock(mutex_);
    ++out_;
    return event;
}

void EventPool::release(int32_t device, void *event) noexcept
{
    std::lock_guard lock(mutex_);
    --out_;
    try {
        if (static_cast<size_t>(device) >= free_.size())
            free_.resize(static_cast<size_t>(device) + 1);
        free_[static_cast<size_t>(device)].push_back(event);
    } catch (...) {
        runtime_.event_destroy(event); // no room to keep it
    }
}

bool EventPool::complete(void *event) const noexcept
{
    int32_t done = 0;
    return runtime_.event_query(event, &done) == 0 && done != 0;
}

} // namespace tidal
