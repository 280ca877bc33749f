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
            runtime_.ops().event_destroy(runtime_.instance(), e);
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
    const tidal_rt_ops &ops = runtime_.ops();
    if (!ops.event_create || !ops.event_record)
        throw Error(TIDAL_ERROR_NOT_SUPPORTED, fmt::format("the {} runtime has no events", runtime_.name()));
    void *event = nullptr;
    runtime_.check(ops.event_create(runtime_.instance(), device, &event),
                   [&] { return fmt::format("creating an event on device {}", device); });
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
        runtime_.ops().event_destroy(runtime_.instance(), event); // no room to keep it
    }
}

bool EventPool::complete(void *event) const noexcept
{
    int32_t done = 0;
    return runtime_.ops().event_query(runtime_.instance(), event, &done) == 0 && done != 0;
}

} // namespace tidal
