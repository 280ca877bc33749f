// The JSON-lines form of a trace (README, "Traces"): the header, one line per event, the end
// record. Formatting lives here, on the writer thread's side of the ring.
#pragma once

#include <string>

#include "trace/trace_event.h"

namespace tidal::trace {

// The trace format's version; a reader refuses a header with another.
inline constexpr int kTraceFormat = 1;

// {"tidal_trace":1,...}: the first line, what the trace was recorded on.
std::string header_line(const char *runtime, int32_t devices, const char *library_version);
// One event of thread number `thread` at `time_ns`, ending in '\n', appended to `out`.
void append_event_line(const TraceEvent &e, uint64_t time_ns, uint32_t thread, std::string &out);
// {"end":true,"events":N}: the last line. A trace without it was cut short. With
// "ring_full_waits":W when W events found their thread's ring full and waited for the writer
// (none was lost; the calls were slowed).
std::string end_line(uint64_t events, uint64_t ring_full_waits = 0);

} // namespace tidal::trace
