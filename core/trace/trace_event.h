// One recorded API call, as the calling thread hands it to the trace writer: fixed size and
// plain data, so that recording is a copy into the thread's ring and all formatting happens on
// the writer thread, off the caller's path.
#pragma once

#include <cstdint>

namespace tidal::trace {

// The calls a trace records: those that change what the device holds or where it moves.
// Queries (pointer, range, stats, clock) change nothing and are left out.
enum class TraceCall : uint16_t {
    alloc,
    alloc_async,
    free,
    free_async,
    prefetch,
    advise,
    declare,       // one event per access; `index` of `count`
    budget_set,
    copy,
    copy_async,
    copy_batch,    // one event per item; `index` of `count`
    stream_create,
    stream_destroy,
    stream_synchronize,
    check_run,
    offload,
    offload_range,
    restore,
    restore_range,
    pool_trim,
};

// The JSON name of a call ("alloc", "copy_batch", ...).
const char *call_name(TraceCall call) noexcept;

struct TraceEvent {
    uint64_t time_ns = 0;  // since the recorder started (steady clock)
    uint32_t thread = 0;   // the recorder's number for the calling thread
    TraceCall call = TraceCall::alloc;
    uint16_t pad = 0;
    int32_t status = 0;    // tidal_status of the call
    int32_t device = 0;
    int32_t kind = 0;      // asked kind (alloc), check kind (check_run)
    uint32_t hints = 0;    // alloc hints; advise: bits set
    uint32_t flags = 0;    // declare/offload/restore flags; access mode; advise: bits unset
    uint64_t ptr = 0;      // the address the call is about (alloc: the result)
    uint64_t ptr2 = 0;     // copies: the source; check_run: the source
    uint64_t size = 0;
    uint64_t stream = 0;
    uint64_t aux = 0;      // alloc: alignment; check_run: seed; pool_trim: bytes released
    uint32_t index = 0;    // declare / copy_batch: item index
    uint32_t count = 0;    // declare / copy_batch: items in the call
    double seconds = 0;    // check_run: elapsed device time (s)
    // The placement the chain decided (alloc only).
    int32_t placed_kind = 0;
    int32_t placed_device = 0;
    char placed_by[32] = {};
    char tag[64] = {};     // alloc: the tag; offload/restore: the glob (cut to 63 bytes)
};

} // namespace tidal::trace
