// TIDAL_TRACE / [telemetry] trace: records every API event of one context as JSON lines.
// A calling thread fills a fixed-size TraceEvent in place in its own lock-free ring (TraceRing);
// a writer thread drains the rings every millisecond, formats the lines and writes them in
// large blocks, so the caller never formats, allocates or waits on the file.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "trace/trace_clock.h"
#include "trace/trace_event.h"
#include "trace/trace_ring.h"

namespace tidal::trace {

class TraceRecorder {
public:
    // Creates (truncates) `file`; throws Error(CONFIG) naming it when it cannot. `where` says
    // which setting named it ("TIDAL_TRACE" or "FILE:LINE:COL: telemetry.trace").
    TraceRecorder(const std::filesystem::path &file, const std::string &where);
    // Writes what is left and the end record, then closes the file.
    ~TraceRecorder();
    TraceRecorder(const TraceRecorder &) = delete;
    TraceRecorder &operator=(const TraceRecorder &) = delete;

    // The first line; called once, before any event, when the context is up.
    void write_header(const char *runtime, int32_t devices);

    // The calling thread's ring: claim() an event there, fill it, commit() it. The ring is the
    // thread's own, so nothing here locks or waits (unless the ring is full: TraceRing).
    TraceRing &ring() noexcept
    {
        // One slot per thread: a thread that alternates between two traced contexts pays a
        // lookup under the recorder's lock each switch.
        if (this_thread_.recorder == id_) [[likely]]
            return *this_thread_.ring;
        return add_ring();
    }

private:
    // The ring this thread last used, and whose recorder it belongs to (zero: none).
    struct ThreadRing {
        uint64_t recorder;
        TraceRing *ring;
    };
    // constinit: no dynamic initialisation, so other files reach it without a TLS wrapper call.
    static constinit inline thread_local ThreadRing this_thread_{};

    [[gnu::noinline, gnu::cold]] TraceRing &add_ring() noexcept;
    void writer_loop();
    // Drains every ring into the file; returns the events written.
    size_t drain();

    // This recorder's number: a thread's cached ring is this recorder's only if it matches. Read
    // by every calling thread on every event, so on a cache line of its own: the writer's lock
    // and clock, written at every drain, would otherwise make each of those reads a miss.
    alignas(64) const uint64_t id_;
    alignas(64) std::FILE *file_ = nullptr;
    TraceClock clock_;
    std::mutex rings_mutex_;          // guards rings_ (new threads, the writer's walk)
    std::vector<std::unique_ptr<TraceRing>> rings_;
    std::unique_ptr<char[]> text_;    // the writer's formatting buffer: kFlushBytes + one line
    size_t text_used_ = 0;
    uint64_t events_ = 0;
    bool header_written_ = false;
    std::atomic<bool> stop_{false};
    std::thread writer_;
};

} // namespace tidal::trace
