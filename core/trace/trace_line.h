// The JSON-lines form of a trace (README, "Traces"): the header, one line per event, the end
// record. Formatting lives here, on the writer thread's side of the ring.
#pragma once

#include <cstddef>
#include <string>

#include "trace/trace_event.h"

namespace tidal::trace {

// The trace format's version; a reader refuses a header with another.
inline constexpr int kTraceFormat = 1;

// {"tidal_trace":1,...}: the first line, what the trace was recorded on.
std::string header_line(const char *runtime, int32_t devices, const char *library_version);
// The longest line one event makes: its fixed text, nine numbers of at most 20 digits, a tag of
// 63 bytes and a policy name of 31, each byte escaped to at most 6, come to under half of it
// (922 bytes: tests/unit/test_trace_line.cpp).
inline constexpr size_t kMaxEventLine = 2048;
// One event of thread number `thread` at `time_ns`, ending in '\n', written at `to`, which has
// room for kMaxEventLine bytes; returns the end. No allocation, no format string parsed.
char *format_event_line(const TraceEvent &e, uint64_t time_ns, uint32_t thread, char *to);
// The same, appended to `out`.
void append_event_line(const TraceEvent &e, uint64_t time_ns, uint32_t thread, std::string &out);
// {"end":true,"events":N}: the last line. A trace without it was cut short. With
// "ring_full_waits":W when W events found their thread's ring full and waited for the writer
// (none was lost; the calls were slowed).
std::string end_line(uint64_t events, uint64_t ring_full_waits = 0);

} // namespace tidal::trace
