// What capi.cpp hands the trace recorder after each call: one function per shape of call,
// each filling TraceEvents in the calling thread's ring from the caller's own arguments. Out of
// line, so that a context without a trace pays only the test of its recorder pointer; cold
// except for allocations and frees, the calls a traced program makes most (cold code is
// optimised for size, which kept the ring's few instructions from being inlined).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tidal/tidal.h"
#include "trace/trace_event.h"

namespace tidal::trace {

class TraceRecorder;

// The placement an allocation got (read back from the registry), or none when it failed.
struct Placement {
    int32_t kind = 0;
    int32_t device = 0;
    const char *placed_by = ""; // owned by the context's policy chain, which outlives the recorder
};

namespace api_events {

[[gnu::noinline]] void alloc(TraceRecorder &r, TraceCall call, size_t size, const tidal_alloc_desc *desc, void *stream,
                         void *result, tidal_status status, const Placement &placed);
// `ticks`: when the call began (TraceClock::ticks()), for frees: a free must sort before the
// allocation on another thread that gets the same address back, so it is stamped before it
// runs (an allocation after it returns).
[[gnu::noinline]] void pointer(TraceRecorder &r, TraceCall call, const void *ptr, void *stream, tidal_status status,
                           uint64_t ticks = 0);
[[gnu::cold]] void range(TraceRecorder &r, TraceCall call, const void *ptr, size_t size, int32_t device,
                         uint32_t flags, void *stream, tidal_status status);
[[gnu::cold]] void advise(TraceRecorder &r, const void *ptr, size_t size, uint32_t set, uint32_t unset,
                          tidal_status status);
// The entries are read only when the call succeeded (then they were checked).
[[gnu::cold]] void declare(TraceRecorder &r, void *stream, const tidal_access *accesses, size_t count,
                           uint32_t flags, tidal_status status);
[[gnu::cold]] void copy(TraceRecorder &r, TraceCall call, const void *dst, const void *src, size_t size, void *stream,
                        tidal_status status);
[[gnu::cold]] void copy_batch(TraceRecorder &r, const tidal_copy_item *items, size_t count, void *stream,
                              tidal_status status);
[[gnu::cold]] void stream(TraceRecorder &r, TraceCall call, int32_t device, void *stream, tidal_status status);
[[gnu::cold]] void check(TraceRecorder &r, const tidal_check *check, tidal_status status);
[[gnu::cold]] void elastic(TraceRecorder &r, TraceCall call, const char *glob, const void *ptr, size_t size,
                           uint32_t flags, void *stream, tidal_status status);
[[gnu::cold]] void amount(TraceRecorder &r, TraceCall call, int32_t device, uint64_t bytes, tidal_status status);

} // namespace api_events
} // namespace tidal::trace
