// Reads a trace written by TIDAL_TRACE (README, "Traces"): the header, the events, the end
// record. Anything else -- a line that is not JSON, a field missing or of the wrong type, an
// unknown call, a file cut short -- is a TraceError naming the file and the line.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tidal_tool {

class TraceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One item of a declare or copy_batch call, or the single range of other calls.
struct TraceItem {
    uint64_t ptr = 0;   // declare: the range; copies: dst
    uint64_t src = 0;   // copies
    uint64_t size = 0;
    int32_t device = 0; // declare
    uint32_t mode = 0;  // declare: TIDAL_ACCESS_*
};

// One API call as recorded. Fields the call does not have stay 0 / empty.
struct TraceRecord {
    size_t line = 0;        // of its first line in the file
    uint64_t time_ns = 0;
    uint32_t thread = 0;
    std::string call;       // "alloc", "free", ...
    uint64_t stream = 0;
    std::string result;     // "TIDAL_OK", "TIDAL_ERROR_..."
    bool ok() const { return result == "TIDAL_OK"; }
    // Arguments.
    uint64_t ptr = 0;       // alloc: the result; free, prefetch, advise, ranges; check_run: target
    uint64_t src = 0;       // check_run: source
    uint64_t size = 0;      // alloc, prefetch, advise, ranges, check_run; budget_set: bytes
    int32_t device = 0;
    std::string kind;       // alloc: asked kind name; check_run: the check's name
    uint64_t alignment = 0;
    uint32_t hints = 0, flags = 0, set = 0, unset = 0;
    uint64_t seed = 0;
    std::string tag;        // alloc: tag; offload/restore: glob
    std::vector<TraceItem> items; // declare, copy, copy_async, copy_batch
    uint64_t new_stream = 0;      // stream_create
    double elapsed_s = 0;         // check_run, as recorded
    // The decision (alloc that succeeded).
    std::string placed_kind;
    int32_t placed_device = 0;
    std::string policy;
};

struct Trace {
    std::string path;
    std::string runtime;    // where it was recorded
    int32_t devices = 1;
    std::vector<TraceRecord> records; // in time order (a thread's own calls in their order)
};

// Throws TraceError.
Trace read_trace(const std::string &path);

} // namespace tidal_tool
