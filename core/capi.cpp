// The C boundary: argument checks, C++ exceptions turned into statuses, the thread's last
// error message. Nothing thrown below may escape a function in this file.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "abi/growable_struct.h"
#include "config/config_loader.h"
#include "context.h"
#include "status/error.h"
#include "status/last_error.h"
#include "tidal/tidal.h"
#include "trace/api_events.h"
#include "trace/trace_recorder.h"

struct tidal_context {
    tidal::Context impl; // first: at offset 0 every call reaches it without an add
    // Tested by every traced call (one compare); opened once the context is up, so that a
    // context that fails to start leaves no trace file behind. Destroyed first: its last
    // events are written while the context is still whole.
    std::unique_ptr<tidal::trace::TraceRecorder> trace;
    explicit tidal_context(tidal::Settings s) : impl(std::move(s))
    {
        const tidal::TraceSettings &t = impl.settings().trace;
        if (t.file.empty())
            return;
        // %r and %p in the name: every rank of a job records its own trace.
        trace = std::make_unique<tidal::trace::TraceRecorder>(impl.job().expand(t.file.string()), t.where);
        trace->write_header(impl.runtime().name(), impl.runtime().device_count());
    }
};

namespace {

using tidal::trace::TraceCall;
namespace api_events = tidal::trace::api_events;

// The context's trace recorder, or nullptr: callers test it with [[unlikely]].
inline tidal::trace::TraceRecorder *tracer(tidal_context *ctx) noexcept { return ctx ? ctx->trace.get() : nullptr; }

tidal_status fail(tidal_status status, const std::string &message) noexcept
{
    tidal::LastError::set(message);
    return status;
}

// Runs `body`, turning whatever it throws into a status and the thread's message.
template <typename Body> tidal_status guarded(const char *function, Body &&body) noexcept
{
    try {
        body();
        return TIDAL_OK;
    } catch (const tidal::Error &e) {
        return fail(e.status(), fmt::format("{}: {}", function, e.what()));
    } catch (const std::bad_alloc &) {
        return fail(TIDAL_ERROR_OUT_OF_MEMORY, fmt::format("{}: host memory exhausted inside tidal", function));
    } catch (const std::length_error &e) {
        // A container asked to hold more than it ever can: only a count or size from the
        // caller gets that large, so it is the caller's argument, not tidal's fault.
        return fail(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("{}: a count or size is too large to handle ({}); check the arguments", function, e.what()));
    } catch (const std::exception &e) {
        return fail(TIDAL_ERROR_INTERNAL, fmt::format("{}: internal error: {}; please report it", function, e.what()));
    } catch (...) {
        return fail(TIDAL_ERROR_INTERNAL, fmt::format("{}: unknown internal error; please report it", function));
    }
}

[[gnu::cold, gnu::noinline]] tidal_status counted(tidal_context *ctx, tidal_status status) noexcept
{
    ctx->impl.count_error(status);
    return status;
}

// The same for a call on `ctx`: a status other than TIDAL_OK counts in its statistics
// (tidal_stats_json's "errors"). Not for tidal_alloc and tidal_free, whose errors Context counts
// on its own slow paths: callgrind, pooled alloc+free pair, this test after the call cost 8
// instructions (611.3 -> 619.3), and counting inside the catch blocks 33 (the compiler stopped
// inlining the allocation's guarded body).
template <typename Body> tidal_status guarded(tidal_context *ctx, const char *function, Body &&body) noexcept
{
    const tidal_status status = guarded(function, std::forward<Body>(body));
    return status == TIDAL_OK ? status : counted(ctx, status);
}

tidal_status null_argument(const char *function, const char *name) noexcept
{
    return fail(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("{}: {} is NULL", function, name));
}

// The struct-size rule of core/abi/growable_struct.h, as a status: INVALID_ARGUMENT below the
// oldest size this library reads.
template <typename T> tidal_status check_struct_size(const char *function, const char *name, size_t given) noexcept
{
    if (tidal::abi::size_accepted<T>(given))
        return TIDAL_OK;
    return fail(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("{}: {}", function, tidal::abi::size_refused<T>(name, given)));
}

tidal_status create(const char *function, tidal_context **out, tidal::Settings (*load)(const char *), const char *arg)
{
    if (!out)
        return null_argument(function, "out");
    *out = nullptr;
    return guarded(function, [&] { *out = new tidal_context(load(arg)); });
}

tidal_status allocate_older(const char *fn, tidal_context *ctx, size_t size, const tidal_alloc_desc *desc,
                            const tidal::pool::StreamHandle *stream, void **out) noexcept;
tidal_status traced_alloc(const char *fn, tidal_context *ctx, size_t size, const tidal_alloc_desc *desc,
                          const tidal::pool::StreamHandle *stream, void **out) noexcept;

// tidal_alloc and tidal_alloc_async: one argument check, then the context. A context with a
// trace goes to traced_alloc once the context is known to exist (one compare), which comes
// back with Traced = true.
// With Traced, `routed` (when given) gets the cached decision that placed a pooled block.
template <bool Traced = false>
tidal_status allocate(const char *fn, tidal_context *ctx, size_t size, const tidal_alloc_desc *desc,
                      const tidal::pool::StreamHandle *stream, void **out,
                      const tidal::Decision **routed = nullptr) noexcept
{
    if (out)
        *out = nullptr;
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!out)
        return null_argument(fn, "out");
    if constexpr (!Traced)
        if (ctx->trace) [[unlikely]]
            return traced_alloc(fn, ctx, size, desc, stream, out);
    static const tidal_alloc_desc defaults = TIDAL_ALLOC_DESC_INIT;
    const tidal_alloc_desc *d = &defaults;
    if (desc) {
        // The allocation fast path: a desc at least as large as this library's is read in place,
        // at the cost of this one compare. An older caller's takes the cold path.
        if (desc->struct_size < sizeof(tidal_alloc_desc)) [[unlikely]]
            return allocate_older(fn, ctx, size, desc, stream, out);
        // A kind outside the enum is the caller's error; reading it as tidal_kind would be UB.
        int32_t kind = 0;
        std::memcpy(&kind, &desc->kind, sizeof kind);
        if (kind < TIDAL_KIND_AUTO || kind >= TIDAL_KIND_COUNT)
            return fail(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("{}: kind {} is not a tidal_kind", fn, kind));
        d = desc;
    }
    if constexpr (Traced)
        if (routed)
            return guarded(fn, [&] { *out = ctx->impl.allocate_traced(size, *d, stream, *routed); });
    // The pooled pair's path: Context counts its own errors (on its slow paths only).
    return guarded(fn, [&] { *out = ctx->impl.allocate(size, *d, stream); });
}

// A desc from a caller built against an older tidal.h: copied over the defaults, then allocated
// from as any other. Kept out of line so that the fast path above keeps its registers.
[[gnu::noinline, gnu::cold]] tidal_status allocate_older(const char *fn, tidal_context *ctx, size_t size,
                                                         const tidal_alloc_desc *desc,
                                                         const tidal::pool::StreamHandle *stream, void **out) noexcept
{
    tidal_alloc_desc scratch;
    const tidal_alloc_desc *d = tidal::abi::read_in(desc, desc->struct_size, scratch);
    if (!d)
        return check_struct_size<tidal_alloc_desc>(fn, "desc", desc->struct_size);
    return allocate<true>(fn, ctx, size, d, stream, out); // a trace, if any, was taken before
}

// tidal_alloc and tidal_alloc_async with a trace: the call, then its event with the placement
// the chain decided (the cached decision on the pooled route, else read back from the
// registry). Taken before the call (not after it) so that the untraced path stays a tail call:
// after it, the arguments would have to be kept. Not cold: with a trace it is the pair's path,
// and size-optimised code kept the ring's few instructions out of line.
[[gnu::noinline]] tidal_status traced_alloc(const char *fn, tidal_context *ctx, size_t size,
                                            const tidal_alloc_desc *desc, const tidal::pool::StreamHandle *stream,
                                            void **out) noexcept
{
    const tidal::Decision *routed = nullptr;
    const tidal_status status = allocate<true>(fn, ctx, size, desc, stream, out, &routed);
    const TraceCall call = stream ? TraceCall::alloc_async : TraceCall::alloc;
    tidal::trace::Placement placed;
    if (status == TIDAL_OK && routed) { // the pooled route: its decision, no lookup
        placed = {routed->placement.kind, routed->placement.device, routed->placed_by};
    } else if (status == TIDAL_OK) {
        try {
            const tidal::AllocationRecord record = ctx->impl.query(*out);
            placed = {record.kind, record.device, record.placed_by};
        } catch (...) { // freed by another thread already: the event keeps no decision
        }
    }
    api_events::alloc(*ctx->trace, call, size, desc, stream ? stream->native : nullptr, *out, status, placed);
    return status;
}

// tidal_free and tidal_free_async with a trace (of a context known to exist); as traced_alloc.
[[gnu::noinline]] tidal_status traced_release(TraceCall call, tidal_context *ctx, void *ptr, void *stream) noexcept
{
    const uint64_t began = tidal::trace::TraceClock::ticks();
    const tidal::pool::StreamHandle handle{stream};
    const bool async = call == TraceCall::free_async;
    const tidal_status status =
        ptr ? guarded(async ? "tidal_free_async" : "tidal_free", [&] { ctx->impl.release(ptr, async ? &handle : nullptr); })
            : TIDAL_OK;
    api_events::pointer(*ctx->trace, call, ptr, stream, status, began);
    return status;
}

// tidal_offload* and tidal_restore*: the result is written, as far as its struct_size, also
// when the call fails part of the way (it says what was done).
template <typename Body>
tidal_status elastic_call(const char *fn, tidal_context *ctx, tidal_elastic_result *out, Body &&body) noexcept
{
    if (!ctx)
        return null_argument(fn, "ctx");
    const size_t given = out ? out->struct_size : 0;
    if (out)
        if (tidal_status s = check_struct_size<tidal_elastic_result>(fn, "out", given); s != TIDAL_OK)
            return s;
    tidal_elastic_result result = TIDAL_ELASTIC_RESULT_INIT;
    const tidal_status status = guarded(ctx, fn, [&] { body(result); });
    if (out)
        tidal::abi::write_out(out, given, result);
    return status;
}

// Every field of this library's tidal_pointer_info but struct_size, from one allocation and
// its elastic byte counts (read before any write, so a failed query writes nothing).
void fill_pointer_info(tidal_pointer_info &out, const tidal::AllocationRecord &r, const tidal::elastic::ChunkBytes &b)
{
    out.base = r.base;
    out.size = r.size;
    out.kind = r.kind;
    out.device = r.device;
    out.hints = r.hints;
    out.advice = r.advice;
    out.alignment = r.alignment;
    std::memcpy(out.tag, r.tag, sizeof out.tag);
    std::memcpy(out.placed_by, r.placed_by, sizeof out.placed_by); // kPlacedByBytes, NUL-padded at the source
    out.placed_by[sizeof out.placed_by - 1] = '\0';
    out.resident_bytes = b.resident;
    out.offloaded_bytes = b.offloaded;
    out.discarded_bytes = b.discarded;
}

// What tidal_allocations_list says of one allocation.
tidal_pointer_info pointer_info(tidal_context *ctx, const tidal::AllocationRecord &r)
{
    tidal_pointer_info out = TIDAL_POINTER_INFO_INIT;
    fill_pointer_info(out, r, ctx->impl.elastic_bytes(r));
    return out;
}

// A text result (tidal_config_describe, tidal_stats_json, tidal_file_name_expand): at most
// `capacity` bytes with the NUL, *needed the full length + 1, BUFFER_TOO_SMALL when it did not fit.
tidal_status write_text(const char *fn, const std::string &text, char *buf, size_t capacity, size_t *needed)
{
    if (needed)
        *needed = text.size() + 1;
    if (capacity > 0) {
        const size_t n = std::min(capacity - 1, text.size());
        std::memcpy(buf, text.data(), n);
        buf[n] = '\0';
    }
    if (capacity < text.size() + 1)
        return fail(TIDAL_ERROR_BUFFER_TOO_SMALL,
                    fmt::format("{}: the text needs {} bytes, the buffer has {}", fn, text.size() + 1, capacity));
    return TIDAL_OK;
}

// The same for a text made from a context, with the context's checks and error counting.
template <typename Make>
tidal_status text_out(tidal_context *ctx, const char *fn, char *buf, size_t capacity, size_t *needed, Make &&make) noexcept
{
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!buf && capacity > 0)
        return null_argument(fn, "buf");
    std::string text;
    if (tidal_status s = guarded(ctx, fn, [&] { text = make(ctx); }); s != TIDAL_OK)
        return s;
    return write_text(fn, text, buf, capacity, needed);
}

} // namespace

extern "C" {

TIDAL_API unsigned tidal_version_number(void) { return TIDAL_VERSION_NUMBER; }
TIDAL_API const char *tidal_version_string(void) { return TIDAL_VERSION_STRING; }

TIDAL_API const char *tidal_status_name(tidal_status status)
{
    switch (status) {
    case TIDAL_OK: return "TIDAL_OK";
    case TIDAL_ERROR_INVALID_ARGUMENT: return "TIDAL_ERROR_INVALID_ARGUMENT";
    case TIDAL_ERROR_OUT_OF_MEMORY: return "TIDAL_ERROR_OUT_OF_MEMORY";
    case TIDAL_ERROR_NOT_SUPPORTED: return "TIDAL_ERROR_NOT_SUPPORTED";
    case TIDAL_ERROR_NO_DEVICE: return "TIDAL_ERROR_NO_DEVICE";
    case TIDAL_ERROR_UNKNOWN_POINTER: return "TIDAL_ERROR_UNKNOWN_POINTER";
    case TIDAL_ERROR_CONFIG: return "TIDAL_ERROR_CONFIG";
    case TIDAL_ERROR_PLUGIN: return "TIDAL_ERROR_PLUGIN";
    case TIDAL_ERROR_RUNTIME: return "TIDAL_ERROR_RUNTIME";
    case TIDAL_ERROR_BUDGET_EXCEEDED: return "TIDAL_ERROR_BUDGET_EXCEEDED";
    case TIDAL_ERROR_ILLEGAL_ACCESS: return "TIDAL_ERROR_ILLEGAL_ACCESS";
    case TIDAL_ERROR_INTERNAL: return "TIDAL_ERROR_INTERNAL";
    case TIDAL_ERROR_NOT_FOUND: return "TIDAL_ERROR_NOT_FOUND";
    case TIDAL_ERROR_BUFFER_TOO_SMALL: return "TIDAL_ERROR_BUFFER_TOO_SMALL";
    case TIDAL_STATUS_FORCE_32BIT: break; // the enum's width, never a status
    }
    return "TIDAL_STATUS_UNKNOWN";
}

TIDAL_API const char *tidal_status_string(tidal_status status)
{
    switch (status) {
    case TIDAL_OK: return "success";
    case TIDAL_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case TIDAL_ERROR_OUT_OF_MEMORY: return "out of memory";
    case TIDAL_ERROR_NOT_SUPPORTED: return "not supported by the runtime or device";
    case TIDAL_ERROR_NO_DEVICE: return "no usable device";
    case TIDAL_ERROR_UNKNOWN_POINTER: return "pointer unknown to tidal";
    case TIDAL_ERROR_CONFIG: return "configuration error";
    case TIDAL_ERROR_PLUGIN: return "policy plugin error";
    case TIDAL_ERROR_RUNTIME: return "device runtime error";
    case TIDAL_ERROR_BUDGET_EXCEEDED: return "device budget exceeded";
    case TIDAL_ERROR_ILLEGAL_ACCESS: return "illegal memory access";
    case TIDAL_ERROR_INTERNAL: return "internal error in tidal";
    case TIDAL_ERROR_NOT_FOUND: return "not found";
    case TIDAL_ERROR_BUFFER_TOO_SMALL: return "output buffer too small";
    case TIDAL_STATUS_FORCE_32BIT: break;
    }
    return "unknown status";
}

TIDAL_API const char *tidal_last_error(void) { return tidal::LastError::get(); }

TIDAL_API const char *tidal_kind_name(tidal_kind kind)
{
    switch (kind) {
    case TIDAL_KIND_AUTO: return "auto";
    case TIDAL_KIND_DEVICE: return "device";
    case TIDAL_KIND_MANAGED: return "managed";
    case TIDAL_KIND_PINNED: return "pinned";
    case TIDAL_KIND_PAGEABLE: return "pageable";
    case TIDAL_KIND_DEVICE_FINE: return "device-fine";
    case TIDAL_KIND_MANAGED_COARSE: return "managed-coarse";
    case TIDAL_KIND_ELASTIC: return "elastic";
    case TIDAL_KIND_FORCE_32BIT: break; // the enum's width, never a kind
    }
    return "unknown";
}

TIDAL_API tidal_status tidal_context_create(tidal_context **out)
{
    return create("tidal_context_create", out, [](const char *) {
        const char *file = std::getenv("TIDAL_CONFIG");
        return file && *file ? tidal::ConfigLoader::from_file(file) : tidal::ConfigLoader::defaults();
    }, nullptr);
}

TIDAL_API tidal_status tidal_context_create_from_file(const char *path, tidal_context **out)
{
    if (out)
        *out = nullptr;
    if (!path)
        return null_argument("tidal_context_create_from_file", "path");
    return create("tidal_context_create_from_file", out,
                  [](const char *p) { return tidal::ConfigLoader::from_file(p); }, path);
}

TIDAL_API tidal_status tidal_context_create_from_string(const char *toml, tidal_context **out)
{
    if (out)
        *out = nullptr;
    if (!toml)
        return null_argument("tidal_context_create_from_string", "toml");
    return create("tidal_context_create_from_string", out,
                  [](const char *t) { return tidal::ConfigLoader::from_string(t); }, toml);
}

TIDAL_API tidal_status tidal_context_destroy(tidal_context *ctx)
{
    return guarded("tidal_context_destroy", [&] { delete ctx; });
}

TIDAL_API tidal_status tidal_alloc(tidal_context *ctx, size_t size, const tidal_alloc_desc *desc, void **out)
{
    return allocate("tidal_alloc", ctx, size, desc, nullptr, out);
}

TIDAL_API tidal_status tidal_free(tidal_context *ctx, void *ptr)
{
    if (!ctx)
        return null_argument("tidal_free", "ctx");
    if (ctx->trace) [[unlikely]]
        return traced_release(TraceCall::free, ctx, ptr, nullptr);
    if (!ptr)
        return TIDAL_OK;
    return guarded("tidal_free", [&] { ctx->impl.release(ptr); }); // Context counts its errors
}

TIDAL_API tidal_status tidal_pointer_query(tidal_context *ctx, const void *ptr, tidal_pointer_info *info)
{
    static const char *fn = "tidal_pointer_query";
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!info)
        return null_argument(fn, "info");
    const size_t given = info->struct_size;
    if (tidal_status s = check_struct_size<tidal_pointer_info>(fn, "info", given); s != TIDAL_OK)
        return s;
    return guarded(ctx, fn, [&] {
        // Storage the lookup fills, not a record built from its defaults first: at 10^6
        // live allocations a query waits on cache misses, and the fewer stores and instructions it
        // queues behind them, the sooner the next query's misses start (H200: results/
        // 2026-12-02-h200-session11). An array of bytes holds a record as soon as one is
        // written into it (C++20: implicit-lifetime types).
        alignas(tidal::AllocationRecord) unsigned char storage[sizeof(tidal::AllocationRecord)];
        tidal::AllocationRecord &found = *std::launder(reinterpret_cast<tidal::AllocationRecord *>(storage));
        ctx->impl.describe(ptr, found); // all but raw and raw_size, which the info has not
        const tidal::AllocationRecord &r = found;
        const tidal::elastic::ChunkBytes b = ctx->impl.elastic_bytes(r); // before any write: a failed query writes none
        if (given >= sizeof *info) [[likely]] { // straight into the caller's struct: no copy through a local
            fill_pointer_info(*info, r, b);
            return;
        }
        tidal_pointer_info out = TIDAL_POINTER_INFO_INIT; // an older, smaller struct
        fill_pointer_info(out, r, b);
        tidal::abi::write_out(info, given, out);
    });
}

TIDAL_API tidal_status tidal_system_info_get(tidal_context *ctx, tidal_system_info *info)
{
    static const char *fn = "tidal_system_info_get";
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!info)
        return null_argument(fn, "info");
    const size_t given = info->struct_size;
    if (tidal_status s = check_struct_size<tidal_system_info>(fn, "info", given); s != TIDAL_OK)
        return s;
    return guarded(ctx, fn, [&] {
        const tidal::Runtime &rt = ctx->impl.runtime();
        tidal_system_info out = TIDAL_SYSTEM_INFO_INIT;
        std::snprintf(out.runtime, sizeof out.runtime, "%s", rt.name());
        std::snprintf(out.runtime_detail, sizeof out.runtime_detail, "%s", rt.detail().c_str());
        out.device_count = rt.device_count();
        out.default_device = ctx->impl.default_device();
        const tidal::JobEnvironment &job = ctx->impl.job();
        out.local_rank = job.local_rank() ? job.local_rank()->value : -1;
        out.rank = job.rank() ? job.rank()->value : -1;
        tidal::abi::write_out(info, given, out);
    });
}

TIDAL_API tidal_status tidal_device_info_get(tidal_context *ctx, int32_t device, tidal_device_info *info)
{
    static const char *fn = "tidal_device_info_get";
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!info)
        return null_argument(fn, "info");
    const size_t given = info->struct_size;
    if (tidal_status s = check_struct_size<tidal_device_info>(fn, "info", given); s != TIDAL_OK)
        return s;
    return guarded(ctx, fn, [&] { tidal::abi::write_out(info, given, ctx->impl.device_info(device)); });
}

TIDAL_API tidal_status tidal_peer_info_get(tidal_context *ctx, int32_t device, int32_t peer, tidal_peer_info *info)
{
    static const char *fn = "tidal_peer_info_get";
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!info)
        return null_argument(fn, "info");
    const size_t given = info->struct_size;
    if (tidal_status s = check_struct_size<tidal_peer_info>(fn, "info", given); s != TIDAL_OK)
        return s;
    return guarded(fn, [&] { tidal::abi::write_out(info, given, ctx->impl.peer_info(device, peer)); });
}

TIDAL_API tidal_status tidal_config_describe(tidal_context *ctx, char *buf, size_t capacity, size_t *needed)
{
    return text_out(ctx, "tidal_config_describe", buf, capacity, needed, [](tidal_context *c) { return c->impl.describe(); });
}

// ---- telemetry: statistics and listings ----------------------------------------------------

TIDAL_API tidal_status tidal_stats_json(tidal_context *ctx, char *buf, size_t capacity, size_t *needed)
{
    return text_out(ctx, "tidal_stats_json", buf, capacity, needed,
                    [](tidal_context *c) { return c->impl.stats().to_json(); });
}

TIDAL_API tidal_status tidal_allocations_list(tidal_context *ctx, tidal_pointer_info *infos, size_t capacity,
                                              size_t *count)
{
    static const char *fn = "tidal_allocations_list";
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!count)
        return null_argument(fn, "count");
    if (!infos && capacity > 0)
        return null_argument(fn, "infos");
    // The array is stepped by the first entry's struct_size, as every array of the C API.
    const size_t given = capacity > 0 ? infos->struct_size : sizeof(tidal_pointer_info);
    if (tidal_status s = check_struct_size<tidal_pointer_info>(fn, "infos[0]", given); s != TIDAL_OK)
        return s;
    std::vector<tidal::AllocationRecord> live;
    if (tidal_status s = guarded(ctx, fn, [&] {
            live = ctx->impl.live_allocations();
            for (size_t i = 0; i < live.size() && i < capacity; ++i)
                tidal::abi::write_out(reinterpret_cast<tidal_pointer_info *>(reinterpret_cast<char *>(infos) + i * given),
                                      given, pointer_info(ctx, live[i]));
        });
        s != TIDAL_OK)
        return s;
    *count = live.size();
    if (capacity < live.size())
        return fail(TIDAL_ERROR_BUFFER_TOO_SMALL, fmt::format("{}: {} allocations are live, the array holds {}; the "
                                                              "first {} were written",
                                                              fn, live.size(), capacity, capacity));
    return TIDAL_OK;
}

TIDAL_API tidal_status tidal_file_name_expand(const char *pattern, char *buf, size_t capacity, size_t *needed)
{
    static const char *fn = "tidal_file_name_expand";
    if (!pattern)
        return null_argument(fn, "pattern");
    if (!buf && capacity > 0)
        return null_argument(fn, "buf");
    std::string text;
    tidal_status s = guarded(fn, [&] { text = tidal::JobEnvironment::read().expand(pattern); });
    if (s != TIDAL_OK)
        return s;
    return write_text(fn, text, buf, capacity, needed);
}

TIDAL_API tidal_status tidal_prefetch(tidal_context *ctx, const void *ptr, size_t size, int32_t device)
{
    if (!ctx)
        return null_argument("tidal_prefetch", "ctx");
    if (!ptr)
        return null_argument("tidal_prefetch", "ptr");
    const tidal_status s = guarded(ctx, "tidal_prefetch", [&] { ctx->impl.prefetch(ptr, size, device); });
    if (ctx->trace) [[unlikely]]
        api_events::range(*ctx->trace, TraceCall::prefetch, ptr, size, device, 0, nullptr, s);
    return s;
}

TIDAL_API tidal_status tidal_range_query(tidal_context *ctx, const void *ptr, size_t size, tidal_range_info *info)
{
    static const char *fn = "tidal_range_query";
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!ptr)
        return null_argument(fn, "ptr");
    if (!info)
        return null_argument(fn, "info");
    const size_t given = info->struct_size;
    if (tidal_status s = check_struct_size<tidal_range_info>(fn, "info", given); s != TIDAL_OK)
        return s;
    return guarded(ctx, fn, [&] { tidal::abi::write_out(info, given, ctx->impl.range_query(ptr, size)); });
}

TIDAL_API tidal_status tidal_check_run(tidal_context *ctx, tidal_check *check)
{
    static const char *fn = "tidal_check_run";
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!check)
        return null_argument(fn, "check");
    const size_t given = check->struct_size;
    if (tidal_status s = check_struct_size<tidal_check>(fn, "check", given); s != TIDAL_OK)
        return s;
    tidal_check full;
    full = *tidal::abi::read_in(check, given, full); // accepted: read_in does not return nullptr
    // Read the kind as an integer: a value outside the enum is the caller's error, not UB here.
    int32_t kind = 0;
    std::memcpy(&kind, &full.kind, sizeof kind);
    if (kind < TIDAL_CHECK_TOUCH_READ || kind > TIDAL_CHECK_ATOMIC_SET_SHARED)
        return fail(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("{}: check kind {} is not a tidal_check_kind", fn, kind));
    const tidal_status s = guarded(ctx, fn, [&] {
        tidal_check run = full;
        ctx->impl.run_check(run);
        // Only the out-fields change: the caller's inputs go back exactly as they came.
        full.result = run.result;
        full.elapsed_ms = run.elapsed_ms;
        tidal::abi::write_out(check, given, full);
    });
    if (ctx->trace) [[unlikely]]
        api_events::check(*ctx->trace, &full, s);
    return s;
}

TIDAL_API tidal_status tidal_stream_create(tidal_context *ctx, int32_t device, void **stream)
{
    if (stream)
        *stream = nullptr;
    if (!ctx)
        return null_argument("tidal_stream_create", "ctx");
    if (!stream)
        return null_argument("tidal_stream_create", "stream");
    const tidal_status s = guarded(ctx, "tidal_stream_create", [&] { *stream = ctx->impl.stream_create(device); });
    if (ctx->trace) [[unlikely]]
        api_events::stream(*ctx->trace, TraceCall::stream_create, device, *stream, s);
    return s;
}

TIDAL_API tidal_status tidal_stream_destroy(tidal_context *ctx, void *stream)
{
    if (!ctx)
        return null_argument("tidal_stream_destroy", "ctx");
    if (!stream)
        return TIDAL_OK;
    const tidal_status s = guarded(ctx, "tidal_stream_destroy", [&] { ctx->impl.stream_destroy(stream); });
    if (ctx->trace) [[unlikely]]
        api_events::stream(*ctx->trace, TraceCall::stream_destroy, 0, stream, s);
    return s;
}

TIDAL_API tidal_status tidal_stream_forget(tidal_context *ctx, void *stream)
{
    if (!ctx)
        return null_argument("tidal_stream_forget", "ctx");
    if (!stream)
        return TIDAL_OK;
    return guarded(ctx, "tidal_stream_forget", [&] { ctx->impl.stream_forget(stream); });
}

TIDAL_API tidal_status tidal_stream_synchronize(tidal_context *ctx, void *stream)
{
    if (!ctx)
        return null_argument("tidal_stream_synchronize", "ctx");
    const tidal_status s = guarded(ctx, "tidal_stream_synchronize", [&] { ctx->impl.stream_synchronize(stream); });
    if (ctx->trace) [[unlikely]]
        api_events::stream(*ctx->trace, TraceCall::stream_synchronize, 0, stream, s);
    return s;
}

static tidal_status copy_call(const char *fn, TraceCall call, tidal_context *ctx, void *dst, const void *src,
                              size_t size, void *stream)
{
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!dst)
        return null_argument(fn, "dst");
    if (!src)
        return null_argument(fn, "src");
    const tidal_status s = guarded(ctx, fn, [&] { ctx->impl.copy(dst, src, size, stream); });
    if (ctx->trace) [[unlikely]]
        api_events::copy(*ctx->trace, call, dst, src, size, stream, s);
    return s;
}

TIDAL_API tidal_status tidal_copy(tidal_context *ctx, void *dst, const void *src, size_t size)
{
    return copy_call("tidal_copy", TraceCall::copy, ctx, dst, src, size, nullptr);
}

TIDAL_API tidal_status tidal_copy_async(tidal_context *ctx, void *dst, const void *src, size_t size, void *stream)
{
    return copy_call("tidal_copy_async", TraceCall::copy_async, ctx, dst, src, size, stream);
}

TIDAL_API tidal_status tidal_copy_batch(tidal_context *ctx, const tidal_copy_item *items, size_t count, void *stream)
{
    if (!ctx)
        return null_argument("tidal_copy_batch", "ctx");
    const tidal_status s = guarded(ctx, "tidal_copy_batch", [&] { ctx->impl.copy_batch(items, count, stream); });
    if (ctx->trace) [[unlikely]]
        api_events::copy_batch(*ctx->trace, items, count, stream, s);
    return s;
}

TIDAL_API tidal_status tidal_register(tidal_context *ctx, void *ptr, size_t size)
{
    if (!ctx)
        return null_argument("tidal_register", "ctx");
    if (!ptr)
        return null_argument("tidal_register", "ptr");
    return guarded(ctx, "tidal_register", [&] { ctx->impl.copies().register_host(ptr, size); });
}

TIDAL_API tidal_status tidal_unregister(tidal_context *ctx, void *ptr)
{
    if (!ctx)
        return null_argument("tidal_unregister", "ctx");
    if (!ptr)
        return null_argument("tidal_unregister", "ptr");
    return guarded(ctx, "tidal_unregister", [&] { ctx->impl.copies().unregister_host(ptr); });
}

TIDAL_API tidal_status tidal_pool_stats_get(tidal_context *ctx, tidal_kind kind, int32_t device, tidal_pool_stats *stats)
{
    static const char *fn = "tidal_pool_stats_get";
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!stats)
        return null_argument(fn, "stats");
    const size_t given = stats->struct_size;
    if (tidal_status s = check_struct_size<tidal_pool_stats>(fn, "stats", given); s != TIDAL_OK)
        return s;
    int32_t k = 0;
    std::memcpy(&k, &kind, sizeof k);
    if (k <= TIDAL_KIND_AUTO || k >= TIDAL_KIND_COUNT || k == TIDAL_KIND_PAGEABLE || k == TIDAL_KIND_ELASTIC)
        return fail(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("{}: kind {} has no pool", fn, k));
    return guarded(ctx, fn, [&] {
        const bool host = kind == TIDAL_KIND_PINNED && device == TIDAL_DEVICE_HOST;
        if (!host)
            ctx->impl.runtime().require_device(device);
        const tidal::pool::PoolStats ps = ctx->impl.pools().stats(kind, host ? 0 : device);
        tidal_pool_stats out = TIDAL_POOL_STATS_INIT;
        out.reserved_bytes = ps.reserved_bytes;
        out.reserved_high_water = ps.reserved_high_water;
        out.in_use_bytes = ps.in_use_bytes;
        out.in_use_high_water = ps.in_use_high_water;
        out.allocations = ps.allocations;
        out.frees = ps.frees;
        out.cache_hits = ps.cache_hits;
        out.runtime_allocations = ps.upstream_acquires;
        out.runtime_frees = ps.upstream_releases;
        out.fragmentation = ps.fragmentation;
        tidal::abi::write_out(stats, given, out);
    });
}

TIDAL_API tidal_status tidal_pool_trim(tidal_context *ctx, uint64_t *released)
{
    if (!ctx)
        return null_argument("tidal_pool_trim", "ctx");
    uint64_t bytes = 0;
    const tidal_status s = guarded(ctx, "tidal_pool_trim", [&] {
        std::exception_ptr failure;
        bytes = ctx->impl.pools().trim(&failure);
        bytes += ctx->impl.trim_elastic(&failure);
        if (released)
            *released = bytes;
        if (failure)
            std::rethrow_exception(failure);
    });
    if (ctx->trace) [[unlikely]]
        api_events::amount(*ctx->trace, TraceCall::pool_trim, 0, bytes, s);
    return s;
}

TIDAL_API tidal_status tidal_alloc_async(tidal_context *ctx, size_t size, const tidal_alloc_desc *desc, void *stream,
                                         void **out)
{
    const tidal::pool::StreamHandle handle{stream};
    return allocate("tidal_alloc_async", ctx, size, desc, &handle, out);
}

TIDAL_API tidal_status tidal_free_async(tidal_context *ctx, void *ptr, void *stream)
{
    if (!ctx)
        return null_argument("tidal_free_async", "ctx");
    if (ctx->trace) [[unlikely]]
        return traced_release(TraceCall::free_async, ctx, ptr, stream);
    if (!ptr)
        return TIDAL_OK;
    const tidal::pool::StreamHandle s{stream};
    return guarded(ctx, "tidal_free_async", [&] { ctx->impl.release(ptr, &s); });
}

TIDAL_API tidal_status tidal_advise(tidal_context *ctx, const void *ptr, size_t size, uint32_t set, uint32_t unset)
{
    if (!ctx)
        return null_argument("tidal_advise", "ctx");
    if (!ptr)
        return null_argument("tidal_advise", "ptr");
    const tidal_status s = guarded(ctx, "tidal_advise", [&] { ctx->impl.advise(ptr, size, set, unset); });
    if (ctx->trace) [[unlikely]]
        api_events::advise(*ctx->trace, ptr, size, set, unset, s);
    return s;
}

TIDAL_API tidal_status tidal_declare(tidal_context *ctx, void *stream, const tidal_access *accesses, size_t count,
                                     uint32_t flags)
{
    if (!ctx)
        return null_argument("tidal_declare", "ctx");
    const tidal_status s = guarded(ctx, "tidal_declare", [&] { ctx->impl.declare(stream, accesses, count, flags); });
    if (ctx->trace) [[unlikely]]
        api_events::declare(*ctx->trace, stream, accesses, count, flags, s);
    return s;
}

TIDAL_API tidal_status tidal_budget_set(tidal_context *ctx, int32_t device, uint64_t bytes)
{
    if (!ctx)
        return null_argument("tidal_budget_set", "ctx");
    const tidal_status s = guarded(ctx, "tidal_budget_set", [&] { ctx->impl.budget_set(device, bytes); });
    if (ctx->trace) [[unlikely]]
        api_events::amount(*ctx->trace, TraceCall::budget_set, device, bytes, s);
    return s;
}

TIDAL_API tidal_status tidal_migration_stats_get(tidal_context *ctx, int32_t device, tidal_migration_stats *stats)
{
    static const char *fn = "tidal_migration_stats_get";
    if (!ctx)
        return null_argument(fn, "ctx");
    if (!stats)
        return null_argument(fn, "stats");
    const size_t given = stats->struct_size;
    if (tidal_status s = check_struct_size<tidal_migration_stats>(fn, "stats", given); s != TIDAL_OK)
        return s;
    return guarded(ctx, fn, [&] { tidal::abi::write_out(stats, given, ctx->impl.migration_stats(device)); });
}

TIDAL_API tidal_status tidal_offload(tidal_context *ctx, const char *tag_glob, uint32_t flags, void *stream,
                                     tidal_elastic_result *out)
{
    if (ctx && !tag_glob)
        return null_argument("tidal_offload", "tag_glob");
    const tidal_status s = elastic_call("tidal_offload", ctx, out,
                        [&](tidal_elastic_result &r) { ctx->impl.offload(tag_glob, flags, stream, r); });
    if (tracer(ctx)) [[unlikely]]
        api_events::elastic(*ctx->trace, TraceCall::offload, tag_glob, nullptr, 0, flags, stream, s);
    return s;
}

TIDAL_API tidal_status tidal_offload_range(tidal_context *ctx, void *ptr, size_t size, uint32_t flags, void *stream,
                                           tidal_elastic_result *out)
{
    if (ctx && !ptr)
        return null_argument("tidal_offload_range", "ptr");
    const tidal_status s = elastic_call("tidal_offload_range", ctx, out,
                        [&](tidal_elastic_result &r) { ctx->impl.offload_range(ptr, size, flags, stream, r); });
    if (tracer(ctx)) [[unlikely]]
        api_events::elastic(*ctx->trace, TraceCall::offload_range, nullptr, ptr, size, flags, stream, s);
    return s;
}

TIDAL_API tidal_status tidal_restore(tidal_context *ctx, const char *tag_glob, uint32_t flags, void *stream,
                                     tidal_elastic_result *out)
{
    if (ctx && !tag_glob)
        return null_argument("tidal_restore", "tag_glob");
    const tidal_status s = elastic_call("tidal_restore", ctx, out,
                        [&](tidal_elastic_result &r) { ctx->impl.restore(tag_glob, flags, stream, r); });
    if (tracer(ctx)) [[unlikely]]
        api_events::elastic(*ctx->trace, TraceCall::restore, tag_glob, nullptr, 0, flags, stream, s);
    return s;
}

TIDAL_API tidal_status tidal_restore_range(tidal_context *ctx, void *ptr, size_t size, uint32_t flags, void *stream,
                                           tidal_elastic_result *out)
{
    if (ctx && !ptr)
        return null_argument("tidal_restore_range", "ptr");
    const tidal_status s = elastic_call("tidal_restore_range", ctx, out,
                        [&](tidal_elastic_result &r) { ctx->impl.restore_range(ptr, size, flags, stream, r); });
    if (tracer(ctx)) [[unlikely]]
        api_events::elastic(*ctx->trace, TraceCall::restore_range, nullptr, ptr, size, flags, stream, s);
    return s;
}

TIDAL_API tidal_status tidal_clock(tidal_context *ctx, double *seconds)
{
    if (!ctx)
        return null_argument("tidal_clock", "ctx");
    if (!seconds)
        return null_argument("tidal_clock", "seconds");
    return guarded(ctx, "tidal_clock", [&] { *seconds = ctx->impl.clock(); });
}

} // extern "C"
