#include "trace/api_events.h"

#include <cstring>

#include "trace/trace_clock.h"
#include "trace/trace_recorder.h"

namespace tidal::trace::api_events {
namespace {

uint64_t address(const void *p) { return reinterpret_cast<uintptr_t>(p); }

// Which of an event's lines a call writes (TraceEvent): `first` for those whose fields all lie
// on the first.
enum class Lines { both, first };

// The calling thread's next event in its ring, with what every call has; the caller fills in
// the rest in place and commits it. `ticks`: when the call began, or 0 for now.
TraceEvent &begin(TraceRing &ring, TraceCall call, tidal_status status, const void *stream, uint64_t ticks = 0,
                  Lines lines = Lines::both)
{
    const uint64_t time = ticks ? ticks : TraceClock::ticks();
    TraceEvent &e = lines == Lines::first ? ring.claim_first_line() : ring.claim();
    e.time_ns = time;
    e.call = call;
    e.status = status;
    e.stream = address(stream);
    return e;
}

// The tag (or glob), cut to 63 bytes; an empty one leaves the tag's cache line alone.
void copy_tag(TraceEvent &e, const char *from)
{
    if (!from || !*from)
        return;
    const size_t n = strnlen(from, sizeof e.tag - 1);
    std::memcpy(e.tag, from, n);
    e.tag_length = static_cast<uint16_t>(n);
}

} // namespace

void alloc(TraceRecorder &r, TraceCall call, size_t size, const tidal_alloc_desc *desc, void *stream, void *result,
           tidal_status status, const Placement &placed)
{
    TraceRing &ring = r.ring();
    TraceEvent &e = begin(ring, call, status, stream);
    e.size = size;
    e.ptr = address(result);
    e.device = TIDAL_DEVICE_DEFAULT;
    // Only the fields every desc since 0.1 has, read when its size says they are there.
    if (desc && desc->struct_size >= offsetof(tidal_alloc_desc, hints) + sizeof desc->hints) {
        std::memcpy(&e.kind, &desc->kind, sizeof e.kind);
        e.device = desc->device;
        e.aux = desc->alignment;
        e.hints = desc->hints;
        copy_tag(e, desc->tag);
    }
    e.placed_kind = placed.kind;
    e.placed_device = placed.device;
    e.placed_by = placed.placed_by ? placed.placed_by : "";
    ring.commit();
}

void pointer(TraceRecorder &r, TraceCall call, const void *ptr, void *stream, tidal_status status, uint64_t ticks)
{
    // A free's fields are all on the event's first line: the second is left as it was.
    TraceRing &ring = r.ring();
    begin(ring, call, status, stream, ticks, Lines::first).ptr = address(ptr);
    ring.commit();
}

void range(TraceRecorder &r, TraceCall call, const void *ptr, size_t size, int32_t device, uint32_t flags,
           void *stream, tidal_status status)
{
    TraceRing &ring = r.ring();
    TraceEvent &e = begin(ring, call, status, stream);
    e.ptr = address(ptr);
    e.size = size;
    e.device = device;
    e.flags = flags;
    ring.commit();
}

void advise(TraceRecorder &r, const void *ptr, size_t size, uint32_t set, uint32_t unset, tidal_status status)
{
    TraceRing &ring = r.ring();
    TraceEvent &e = begin(ring, TraceCall::advise, status, nullptr);
    e.ptr = address(ptr);
    e.size = size;
    e.hints = set;
    e.flags = unset;
    ring.commit();
}

void declare(TraceRecorder &r, void *stream, const tidal_access *accesses, size_t count, uint32_t flags,
             tidal_status status)
{
    TraceRing &ring = r.ring();
    if (status != TIDAL_OK || !accesses || count == 0) {
        TraceEvent &e = begin(ring, TraceCall::declare, status, stream);
        e.flags = flags;
        e.count = static_cast<uint32_t>(count);
        ring.commit();
        return;
    }
    const uint64_t ticks = TraceClock::ticks(); // one time for every item of the call
    const size_t step = accesses->struct_size;
    for (size_t i = 0; i < count; ++i) {
        const auto *a = reinterpret_cast<const tidal_access *>(reinterpret_cast<const char *>(accesses) + i * step);
        TraceEvent &e = begin(ring, TraceCall::declare, status, stream, ticks);
        e.flags = flags;
        e.count = static_cast<uint32_t>(count);
        e.index = static_cast<uint32_t>(i);
        e.ptr = address(a->ptr);
        e.size = a->size;
        e.device = a->device;
        e.hints = a->mode;
        ring.commit();
    }
}

void copy(TraceRecorder &r, TraceCall call, const void *dst, const void *src, size_t size, void *stream,
          tidal_status status)
{
    TraceRing &ring = r.ring();
    TraceEvent &e = begin(ring, call, status, stream);
    e.ptr = address(dst);
    e.ptr2 = address(src);
    e.size = size;
    ring.commit();
}

void copy_batch(TraceRecorder &r, const tidal_copy_item *items, size_t count, void *stream, tidal_status status)
{
    TraceRing &ring = r.ring();
    if (status != TIDAL_OK || !items || count == 0) {
        begin(ring, TraceCall::copy_batch, status, stream).count = static_cast<uint32_t>(count);
        ring.commit();
        return;
    }
    const uint64_t ticks = TraceClock::ticks(); // one time for every item of the call
    const size_t step = items->struct_size;
    for (size_t i = 0; i < count; ++i) {
        const auto *item = reinterpret_cast<const tidal_copy_item *>(reinterpret_cast<const char *>(items) + i * step);
        TraceEvent &e = begin(ring, TraceCall::copy_batch, status, stream, ticks);
        e.count = static_cast<uint32_t>(count);
        e.index = static_cast<uint32_t>(i);
        e.ptr = address(item->dst);
        e.ptr2 = address(item->src);
        e.size = item->size;
        ring.commit();
    }
}

void stream(TraceRecorder &r, TraceCall call, int32_t device, void *stream, tidal_status status)
{
    TraceRing &ring = r.ring();
    TraceEvent &e = begin(ring, call, status, call == TraceCall::stream_create ? nullptr : stream);
    e.device = device;
    if (call == TraceCall::stream_create)
        e.ptr = address(stream);
    ring.commit();
}

void check(TraceRecorder &r, const tidal_check *check, tidal_status status)
{
    TraceRing &ring = r.ring();
    TraceEvent &e = begin(ring, TraceCall::check_run, status, nullptr);
    // The fields of every tidal_check since 0.1; a refused struct size records none.
    if (check && check->struct_size >= offsetof(tidal_check, stream) + sizeof check->stream) {
        std::memcpy(&e.kind, &check->kind, sizeof e.kind);
        e.device = check->device;
        e.ptr = address(check->target);
        e.ptr2 = address(check->source);
        e.size = check->size;
        e.aux = check->seed;
        e.seconds = check->elapsed_ms / 1e3;
        e.stream = address(check->stream);
    }
    ring.commit();
}

void elastic(TraceRecorder &r, TraceCall call, const char *glob, const void *ptr, size_t size, uint32_t flags,
             void *stream, tidal_status status)
{
    TraceRing &ring = r.ring();
    TraceEvent &e = begin(ring, call, status, stream);
    copy_tag(e, glob);
    e.ptr = address(ptr);
    e.size = size;
    e.flags = flags;
    ring.commit();
}

void amount(TraceRecorder &r, TraceCall call, int32_t device, uint64_t bytes, tidal_status status)
{
    TraceRing &ring = r.ring();
    TraceEvent &e = begin(ring, call, status, nullptr);
    e.device = device;
    e.size = bytes;
    e.aux = bytes;
    ring.commit();
}

} // namespace tidal::trace::api_events
