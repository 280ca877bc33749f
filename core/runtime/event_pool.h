// Runtime events kept for reuse. Creating an event is a driver call (microseconds); the pools
// and the migration scheduler record one per stream free batch or per migration, so they take
// them from here and give them back instead.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/runtime.h"

namespace tidal {

class EventPool {
public:
    // `runtime` must outlive the pool.
    explicit EventPool(Runtime &runtime) : runtime_(runtime) {}
    // Destroys every event it holds; events still out are the caller's bug (logged).
    ~EventPool();
    EventPool(const EventPool &) = delete;
    EventPool &operator=(const EventPool &) = delete;

    // An event on `device`. Throws tidal::Error when the runtime cannot make one.
    void *acquire(int32_t device);
    void release(int32_t device, void *event) noexcept;

    // Whether every event of this runtime can be polled (event_query exists).
    bool pollable() const noexcept { return runtime_.supports(RuntimeOp::event_query); }
    // Completed? A failed query answers false: waiting longer is always safe.
    bool complete(void *event) const noexcept;

private:
    Runtime &runtime_;
    std::mutex mutex_;
    std::vector<std::vector<void *>> free_; // per device
    size_t out_ = 0;
};

} // namespace tidal
