#include "runtime/sim/sim_clock.h"

#include <algorithm>

namespace tidal::sim {

void SimClock::reach(double time) noexcept { horizon_ = std::max(horizon_, time); }

double SimClock::run(SimStream *stream, double duration) noexcept
{
    if (stream == nullptr) {
        host_ += duration;
        reach(host_);
        return host_;
    }
    const double start = std::max(stream->time, host_);
    stream->time = start + duration;
    reach(stream->time);
    return stream->time;
}

double SimClock::run_on_link(SimStream *stream, double duration, double *link_free) noexcept
{
    double start = std::max(stream == nullptr ? host_ : std::max(stream->time, host_), *link_free);
    const double end = start + duration;
    *link_free = end;
    if (stream == nullptr)
        host_ = end;
    else
        stream->time = end;
    reach(end);
    return end;
}

void SimClock::host_wait(double time) noexcept
{
    host_ = std::max(host_, time);
    reach(host_);
}

void SimClock::record(SimEvent &event, const SimStream *stream) noexcept
{
    event.time = stream == nullptr ? host_ : std::max(stream->time, host_);
    event.recorded = true;
}

void SimClock::wait(SimStream *stream, const SimEvent &event) noexcept
{
    if (!event.recorded)
        return;
    if (stream == nullptr)
        host_wait(event.time);
    else
        stream->time = std::max(stream->time, event.time);
}

} // namespace tidal::sim
