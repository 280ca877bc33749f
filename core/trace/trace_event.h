// One recorded API call, as the calling thread hands it to the trace writer: fixed size and
// plain data, so that recording is a copy into the thread's ring and all formatting happens on
// the writer thread, off the caller's path.
#pragma once

#include <cstddef>
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

// One slot of a thread's ring, filled in place by the calling thread (TraceRing::claim resets
// it first). Laid out by cache line, so that the pooled pair touches as few as it can: a free
// the first line only, other calls the first two, the tag's only when there is a tag. The
// calling thread's number is the ring's, not the event's.
struct alignas(64) TraceEvent {
    // First line: every call.
    uint64_t time_ns = 0;  // TraceClock ticks when queued; the writer makes them nanoseconds
    uint64_t ptr = 0;      // the address the call is about (alloc: the result)
    uint64_t size = 0;
    uint64_t stream = 0;
    uint64_t ptr2 = 0;     // copies: the source; check_run: the source
    uint64_t aux = 0;      // alloc: alignment; check_run: seed; pool_trim: bytes released
    TraceCall call = TraceCall::alloc;
    uint16_t tag_length = 0; // bytes of `tag` in use (0: the tag's line is not read)
    int32_t status = 0;    // tidal_status of the call
    int32_t device = 0;
    int32_t kind = 0;      // asked kind (alloc), check kind (check_run)
    // Second line.
    uint32_t hints = 0;    // alloc hints; advise: bits set
    uint32_t flags = 0;    // declare/offload/restore flags; access mode; advise: bits unset
    uint32_t index = 0;    // declare / copy_batch: item index
    uint32_t count = 0;    // declare / copy_batch: items in the call
    double seconds = 0;    // check_run: elapsed device time (s)
    // The placement the chain decided (alloc only). `placed_by` is the policy's name, owned by
    // the context's policy chain, which outlives the recorder (tidal_context destroys it first).
    int32_t placed_kind = 0;
    int32_t placed_device = 0;
    const char *placed_by = "";
    // Third line, written only when there is text.
    alignas(64) char tag[64] = {}; // alloc: the tag; offload/restore: the glob (cut to 63 bytes)

    // Every field but the tag to its default: a slot is reused, and each call sets only its own.
    // Eight 16-byte stores written out: GCC made a memset of these 128 bytes `rep stos`, which
    // takes tens of cycles to start.
    void reset() noexcept
    {
        reset_first_line();
        auto *line = reinterpret_cast<Chunk *>(this);
        line[4] = Chunk{}, line[5] = Chunk{}, line[6] = Chunk{}, line[7] = Chunk{};
        placed_by = "";
    }
    // The first line only, for the calls whose line the writer reads no further (frees): one
    // cache line per event instead of two.
    void reset_first_line() noexcept
    {
        auto *line = reinterpret_cast<Chunk *>(this);
        line[0] = Chunk{}, line[1] = Chunk{}, line[2] = Chunk{}, line[3] = Chunk{};
    }

private:
    using Chunk = uint64_t __attribute__((vector_size(16), may_alias));
};
static_assert(offsetof(TraceEvent, tag) == 128 && sizeof(TraceEvent) == 192, "three cache lines: see above");

} // namespace tidal::trace
