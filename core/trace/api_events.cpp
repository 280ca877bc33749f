#include "trace/api_events.h"

#include <cstring>

#include "trace/trace_recorder.h"

namespace tidal::trace::api_events {
namespace {

uint64_t address(const void *p) { return reinterpret_cast<uintptr_t>(p); }

TraceEvent event(TraceCall call, tidal_status status, void *stream)
{
    TraceEvent e;
    e.call = call;
    e.status = status;
    e.stream = address(stream);
    return e;
}

void copy_text(char *to, size_t capacity, const char *from)
{
    if (!from)
        return;
    const size_t n = strnlen(from, capacity - 1);
    std::memcpy(to, from, n);
    to[n] = '\0';
}

} // namespace

void alloc(TraceRecorder &r, TraceCall call, size_t size, const tidal_alloc_desc *desc, void *stream, void *result,
           tidal_status status, const Placement &placed)
{
    TraceEvent e = event(call, status, stream);
    e.size = size;
    e.ptr = address(result);
    e.device = TIDAL_DEVICE_DEFAULT;
    // Only the fields every desc since 0.1 has, read when its size says they are there.
    if (desc && desc->struct_size >= offsetof(tidal_alloc_desc, hints) + sizeof desc->hints) {
        std::memcpy(&e.kind, &desc->kind, sizeof e.kind);
        e.device = desc->device;
        e.aux = desc->alignment;
        e.hints = desc->hints;
        copy_text(e.tag, sizeof e.tag, desc->tag);
    }
    e.placed_kind = placed.kind;
    e.placed_device = placed.device;
    copy_text(e.placed_by, sizeof e.placed_by, placed.placed_by);
    r.record(e);
}

void pointer(TraceRecorder &r, TraceCall call, const void *ptr, void *stream, tidal_status status, uint64_t ticks)
{
    TraceEvent e = event(call, status, stream);
    e.time_ns = ticks;
    e.ptr = address(ptr);
    r.record(e);
}

void range(TraceRecorder &r, TraceCall call, const void *ptr, size_t size, int32_t device, uint32_t flags,
           void *stream, tidal_status status)
{
    TraceEvent e = event(call, status, stream);
    e.ptr = address(ptr);
    e.size = size;
    e.device = device;
    e.flags = flags;
    r.record(e);
}

void advise(TraceRecorder &r, const void *ptr, size_t size, uint32_t set, uint32_t unset, tidal_status status)
{
    TraceEvent e = event(TraceCall::advise, status, nullptr);
    e.ptr = address(ptr);
    e.size = size;
    e.hints = set;
    e.flags = unset;
    r.record(e);
}

void declare(TraceRecorder &r, void *stream, const tidal_access *accesses, size_t count, uint32_t flags,
             tidal_status status)
{
    TraceEvent e = event(TraceCall::declare, status, stream);
    e.flags = flags;
    e.count = static_cast<uint32_t>(count);
    if (status != TIDAL_OK || !accesses || count == 0) {
        r.record(e);
        return;
    }
    const size_t step = accesses->struct_size;
    for (size_t i = 0; i < count; ++i) {
        const auto *a = reinterpret_cast<const tidal_access *>(reinterpret_cast<const char *>(accesses) + i * step);
        e.index = static_cast<uint32_t>(i);
        e.ptr = address(a->ptr);
        e.size = a->size;
        e.device = a->device;
        e.hints = a->mode;
        r.record(e);
    }
}

void copy(TraceRecorder &r, TraceCall call, const void *dst, const void *src, size_t size, void *stream,
          tidal_status status)
{
    TraceEvent e = event(call, status, stream);
    e.ptr = address(dst);
    e.ptr2 = address(src);
    e.size = size;
    r.record(e);
}

void copy_batch(TraceRecorder &r, const tidal_copy_item *items, size_t count, void *stream, tidal_status status)
{
    TraceEvent e = event(TraceCall::copy_batch, status, stream);
    e.count = static_cast<uint32_t>(count);
    if (status != TIDAL_OK || !items || count == 0) {
        r.record(e);
        return;
    }
    const size_t step = items->struct_size;
    for (size_t i = 0; i < count; ++i) {
        const auto *item = reinterpret_cast<const tidal_copy_item *>(reinterpret_cast<const char *>(items) + i * step);
        e.index = static_cast<uint32_t>(i);
        e.ptr = address(item->dst);
        e.ptr2 = address(item->src);
        e.size = item->size;
        r.record(e);
    }
}

void stream(TraceRecorder &r, TraceCall call, int32_t device, void *stream, tidal_status status)
{
    TraceEvent e = event(call, status, call == TraceCall::stream_create ? nullptr : stream);
    e.device = device;
    if (call == TraceCall::stream_create)
        e.ptr = address(stream);
    r.record(e);
}

void check(TraceRecorder &r, const tidal_check *check, tidal_status status)
{
    TraceEvent e = event(TraceCall::check_run, status, nullptr);
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
    r.record(e);
}

void elastic(TraceRecorder &r, TraceCall call, const char *glob, const void *ptr, size_t size, uint32_t flags,
             void *stream, tidal_status status)
{
    TraceEvent e = event(call, status, stream);
    copy_text(e.tag, sizeof e.tag, glob);
    e.ptr = address(ptr);
    e.size = size;
    e.flags = flags;
    r.record(e);
}

void amount(TraceRecorder &r, TraceCall call, int32_t device, uint64_t bytes, tidal_status status)
{
    TraceEvent e = event(call, status, nullptr);
    e.device = device;
    e.size = bytes;
    e.aux = bytes;
    r.record(e);
}

} // namespace tidal::trace::api_events
