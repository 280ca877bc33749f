// Simulated time: one timeline for the host and one per stream.
#pragma once

#include <cstdint>
#include <mutex>

namespace tidal::sim {

// A stream handle of the simulated device: the time its last operation completes.
struct SimStream {
    int32_t device = 0;
    double time = 0.0;
    std::mutex order; // its work runs in issue order (SimRuntime's unserialised mode)
};

// An event handle: the simulated time it completes, once recorded.
struct SimEvent {
    int32_t device = 0;
    bool recorded = false;
    double time = 0.0;
};

// The simulated device does all its work synchronously on the calling thread, but time is
// modelled as if streams ran concurrently, so overlap (copy on one stream, kernel on another)
// shows up in the figures a policy is judged by:
//  - the host has a timeline; host-synchronous work (allocation, the NULL stream, synchronous
//    kernels, synchronize calls) advances it;
//  - an operation on a stream starts when both the stream is free and the host has issued it:
//    start = max(stream time, host time); the stream's time becomes start + duration;
//  - the NULL stream is host-synchronous: its operations run on the host timeline;
//  - an event records max(stream time, host time); waiting on it moves the waiter forward;
//  - now() is the latest completion time of anything issued so far, i.e. what a host clock
//    would read after synchronizing everything;
//  - a transfer over a host link also waits for the link: copies and migrations in one
//    direction on different streams share it one after the other (a GPU's copy engines in one
//    direction share the PCIe/NVLink-C2C bandwidth), while the two directions overlap.
// Not thread-safe by itself: the runtime serialises calls with its lock.
class SimClock {
public:
    double now() const noexcept { return horizon_; }
    double host() const noexcept { return host_; }

    // Runs `duration` seconds of work on `stream` (NULL = host-synchronous); returns its end.
    double run(SimStream *stream, double duration) noexcept;
    // The same for a transfer that occupies a link: it starts no earlier than `*link_free`,
    // which becomes its end.
    double run_on_link(SimStream *stream, double duration, double *link_free) noexcept;
    // The host waits until `time` (synchronous calls, stream/event synchronize).
    void host_wait(double time) noexcept;
    void record(SimEvent &event, const SimStream *stream) noexcept;
    // `stream` (NULL = the host) waits until `event` completes; an unrecorded event is
    // complete already, as in HIP.
    void wait(SimStream *stream, const SimEvent &event) noexcept;

private:
    void reach(double time) noexcept;

    double host_ = 0.0;
    double horizon_ = 0.0;
};

} // namespace tidal::sim
