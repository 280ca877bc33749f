// SimRuntime's streams, events and synchronisation on the simulated clock.
#include "runtime/sim/sim_runtime.h"

#include <algorithm>

#include "runtime/sim/sim_errors.h"
#include "runtime/sim/sim_tsan_annotations.h"

namespace tidal::sim {

int SimRuntime::stream_create(int32_t device, void **stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::stream_create))
        return e;
    if (stream == nullptr)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    auto s = std::make_unique<SimStream>();
    s->device = device;
    s->time = clock_.host(); // a new stream has nothing queued before "now"
    streams_.insert(s.get());
    *stream = s.release();
    return kSuccess;
}

int SimRuntime::stream_destroy(void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::stream_destroy))
        return e;
    auto *s = static_cast<SimStream *>(stream);
    if (s == nullptr || streams_.erase(s) == 0)
        return kInvalidHandle;
    // Destroying a stream with work queued lets that work finish; the clock already holds it.
    delete s;
    return kSuccess;
}

int SimRuntime::stream_synchronize(void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::stream_synchronize))
        return e;
    SimStream *s = nullptr;
    if (int e = lookup_stream(stream, &s))
        return e;
    if (s != nullptr)
        clock_.host_wait(s->time);
    do_work(s, [] {}); // the host now comes after the stream's work
    return kSuccess;
}

int SimRuntime::event_create(int32_t device, void **event)
{
    Lock lock(*this);
    if (int e = injected(Operation::event_create))
        return e;
    if (event == nullptr)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    auto e = std::make_unique<SimEvent>();
    e->device = device;
    events_.insert(e.get());
    *event = e.release();
    return kSuccess;
}

int SimRuntime::event_destroy(void *event)
{
    Lock lock(*this);
    if (int e = injected(Operation::event_destroy))
        return e;
    auto *e = static_cast<SimEvent *>(event);
    if (e == nullptr || events_.erase(e) == 0)
        return kInvalidHandle;
    delete e;
    return kSuccess;
}

int SimRuntime::event_record(void *event, void *stream)
{
    Lock lock(*this);
    if (int rc = injected(Operation::event_record))
        return rc;
    SimEvent *e = nullptr;
    SimStream *s = nullptr;
    if (int rc = lookup_event(event, &e))
        return rc;
    if (int rc = lookup_stream(stream, &s))
        return rc;
    clock_.record(*e, s);
    do_work(s, [e] { tsan_happens_before(e); });
    return kSuccess;
}

int SimRuntime::stream_wait_event(void *stream, void *event)
{
    Lock lock(*this);
    if (int rc = injected(Operation::stream_wait_event))
        return rc;
    SimEvent *e = nullptr;
    SimStream *s = nullptr;
    if (int rc = lookup_event(event, &e))
        return rc;
    if (int rc = lookup_stream(stream, &s))
        return rc;
    clock_.wait(s, *e);
    do_work(s, [e] { tsan_happens_after(e); });
    return kSuccess;
}

int SimRuntime::event_synchronize(void *event)
{
    Lock lock(*this);
    if (int rc = injected(Operation::event_synchronize))
        return rc;
    SimEvent *e = nullptr;
    if (int rc = lookup_event(event, &e))
        return rc;
    clock_.wait(nullptr, *e);
    tsan_after_books(e);
    return kSuccess;
}

int SimRuntime::event_query(void *event, int32_t *complete)
{
    Lock lock(*this);
    if (int rc = injected(Operation::event_query))
        return rc;
    if (complete == nullptr)
        return kInvalidValue;
    SimEvent *e = nullptr;
    if (int rc = lookup_event(event, &e))
        return rc;
    *complete = 1;
    tsan_after_books(e);
    return kSuccess;
}

int SimRuntime::event_elapsed_ms(void *start, void *end, float *ms) const
{
    Lock lock(*this);
    if (int rc = injected(Operation::event_elapsed_ms))
        return rc;
    if (ms == nullptr)
        return kInvalidValue;
    SimEvent *a = nullptr;
    SimEvent *b = nullptr;
    if (int rc = lookup_event(start, &a))
        return rc;
    if (int rc = lookup_event(end, &b))
        return rc;
    if (!a->recorded || !b->recorded)
        return kInvalidHandle; // what hipEventElapsedTime says for an unrecorded event
    *ms = static_cast<float>((b->time - a->time) * 1000.0);
    return kSuccess;
}

// Work already ran when it was issued; synchronizing only brings the host timeline up to the
// device's streams, so what follows on the host starts after them.
int SimRuntime::device_synchronize(int32_t device)
{
    Lock lock(*this);
    if (int e = injected(Operation::device_synchronize))
        return e;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    for (const SimStream *s : streams_)
        if (s->device == device)
            clock_.host_wait(s->time);
    tsan_after_books(&all_work_);
    return kSuccess;
}

int SimRuntime::range_push(const char *name) const
{
    Lock lock(*this);
    if (int e = injected(Operation::range_push))
        return e;
    return name ? kSuccess : kInvalidValue;
}

int SimRuntime::range_pop() const
{
    Lock lock(*this);
    return injected(Operation::range_pop);
}

int SimRuntime::clock(double *seconds) const
{
    Lock lock(*this);
    if (int e = injected(Operation::clock))
        return e;
    if (seconds == nullptr)
        return kInvalidValue;
    *seconds = clock_.now();
    return kSuccess;
}

} // namespace tidal::sim
