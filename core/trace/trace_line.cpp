#include "trace/trace_line.h"

#include <cstring>
#include <algorithm>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "tidal/tidal.h"

namespace tidal::trace {
namespace {

char *put_string(char *to, const char *s, size_t max)
{
    *to++ = '"';
    for (size_t i = 0; i < max && s[i]; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            *to++ = '\\';
            *to++ = static_cast<char>(c);
        } else if (c < 0x20) {
            to = fmt::format_to(to, FMT_COMPILE("\\u{:04x}"), c);
        } else {
            *to++ = static_cast<char>(c);
        }
    }
    *to++ = '"';
    return to;
}

void append_string(std::string &out, const char *s, size_t max)
{
    char text[6 * 64 + 2];
    out.append(text, put_string(text, s, std::min<size_t>(max, 64)));
}

const char *kind_name(int32_t kind)
{
    if (kind < TIDAL_KIND_AUTO || kind >= TIDAL_KIND_COUNT)
        return "unknown";
    return tidal_kind_name(static_cast<tidal_kind>(kind));
}

const char *check_name(int32_t kind)
{
    static const char *const names[] = {"?",       "touch_read", "touch_write", "pattern_fill", "pattern_verify",
                                        "copy",    "triad",      "atomic_add",  "runtime_copy", "spin"};
    return kind >= 1 && kind <= 9 ? names[kind] : "unknown";
}

} // namespace

const char *call_name(TraceCall call) noexcept
{
    switch (call) {
    case TraceCall::alloc: return "alloc";
    case TraceCall::alloc_async: return "alloc_async";
    case TraceCall::free: return "free";
    case TraceCall::free_async: return "free_async";
    case TraceCall::prefetch: return "prefetch";
    case TraceCall::advise: return "advise";
    case TraceCall::declare: return "declare";
    case TraceCall::budget_set: return "budget_set";
    case TraceCall::copy: return "copy";
    case TraceCall::copy_async: return "copy_async";
    case TraceCall::copy_batch: return "copy_batch";
    case TraceCall::stream_create: return "stream_create";
    case TraceCall::stream_destroy: return "stream_destroy";
    case TraceCall::stream_synchronize: return "stream_synchronize";
    case TraceCall::check_run: return "check_run";
    case TraceCall::offload: return "offload";
    case TraceCall::offload_range: return "offload_range";
    case TraceCall::restore: return "restore";
    case TraceCall::restore_range: return "restore_range";
    case TraceCall::pool_trim: return "pool_trim";
    }
    return "unknown";
}

std::string header_line(const char *runtime, int32_t devices, const char *library_version)
{
    std::string out = fmt::format("{{\"tidal_trace\":{},\"library\":", kTraceFormat);
    append_string(out, library_version, 64);
    out += ",\"runtime\":";
    append_string(out, runtime, 64);
    return out + fmt::format(",\"devices\":{}}}\n", devices);
}

std::string end_line(uint64_t events, uint64_t ring_full_waits)
{
    if (ring_full_waits == 0)
        return fmt::format("{{\"end\":true,\"events\":{}}}\n", events);
    return fmt::format("{{\"end\":true,\"events\":{},\"ring_full_waits\":{}}}\n", events, ring_full_waits);
}

// The format strings are compiled (FMT_COMPILE): parsed at run time, they cost the writer
// ~5,500 instructions an event, most of its time.
char *format_event_line(const TraceEvent &e, uint64_t time_ns, uint32_t thread, char *to)
{
    to = fmt::format_to(to, FMT_COMPILE("{{\"time_ns\":{},\"thread\":{},\"call\":\"{}\",\"stream\":{},\"args\":{{"), time_ns, thread,
                   call_name(e.call), e.stream);
    switch (e.call) {
    case TraceCall::alloc:
    case TraceCall::alloc_async:
        to = fmt::format_to(to, FMT_COMPILE("\"size\":{},\"kind\":\"{}\",\"device\":{},\"alignment\":{},\"hints\":{},\"tag\":"), e.size,
                       kind_name(e.kind), e.device, e.aux, e.hints);
        to = put_string(to, e.tag, e.tag_length);
        break;
    case TraceCall::free:
    case TraceCall::free_async: to = fmt::format_to(to, FMT_COMPILE("\"ptr\":{}"), e.ptr); break; // first-line fields only
    case TraceCall::prefetch: to = fmt::format_to(to, FMT_COMPILE("\"ptr\":{},\"size\":{},\"device\":{}"), e.ptr, e.size, e.device); break;
    case TraceCall::advise:
        to = fmt::format_to(to, FMT_COMPILE("\"ptr\":{},\"size\":{},\"set\":{},\"unset\":{}"), e.ptr, e.size, e.hints, e.flags);
        break;
    case TraceCall::declare:
        to = fmt::format_to(to, FMT_COMPILE("\"ptr\":{},\"size\":{},\"device\":{},\"mode\":{},\"flags\":{},\"index\":{},\"count\":{}"), e.ptr,
                       e.size, e.device, e.hints, e.flags, e.index, e.count);
        break;
    case TraceCall::budget_set: to = fmt::format_to(to, FMT_COMPILE("\"device\":{},\"bytes\":{}"), e.device, e.size); break;
    case TraceCall::copy:
    case TraceCall::copy_async: to = fmt::format_to(to, FMT_COMPILE("\"dst\":{},\"src\":{},\"size\":{}"), e.ptr, e.ptr2, e.size); break;
    case TraceCall::copy_batch:
        to = fmt::format_to(to, FMT_COMPILE("\"dst\":{},\"src\":{},\"size\":{},\"index\":{},\"count\":{}"), e.ptr, e.ptr2, e.size, e.index,
                       e.count);
        break;
    case TraceCall::stream_create: to = fmt::format_to(to, FMT_COMPILE("\"device\":{}"), e.device); break;
    case TraceCall::stream_destroy:
    case TraceCall::stream_synchronize: break;
    case TraceCall::check_run:
        to = fmt::format_to(to, FMT_COMPILE("\"kind\":\"{}\",\"device\":{},\"target\":{},\"source\":{},\"size\":{},\"seed\":{}"),
                       check_name(e.kind), e.device, e.ptr, e.ptr2, e.size, e.aux);
        break;
    case TraceCall::offload:
    case TraceCall::restore:
        to = fmt::format_to(to, FMT_COMPILE("\"glob\":"));
        to = put_string(to, e.tag, e.tag_length);
        to = fmt::format_to(to, FMT_COMPILE(",\"flags\":{}"), e.flags);
        break;
    case TraceCall::offload_range:
    case TraceCall::restore_range:
        to = fmt::format_to(to, FMT_COMPILE("\"ptr\":{},\"size\":{},\"flags\":{}"), e.ptr, e.size, e.flags);
        break;
    case TraceCall::pool_trim: break;
    }
    to = fmt::format_to(to, FMT_COMPILE("}},\"result\":\"{}\""), tidal_status_name(static_cast<tidal_status>(e.status)));
    switch (e.call) {
    case TraceCall::alloc:
    case TraceCall::alloc_async:
        to = fmt::format_to(to, FMT_COMPILE(",\"ptr\":{}"), e.ptr);
        if (e.status == TIDAL_OK) {
            to = fmt::format_to(to, FMT_COMPILE(",\"decision\":{{\"kind\":\"{}\",\"device\":{},\"policy\":"), kind_name(e.placed_kind),
                           e.placed_device);
            to = put_string(to, e.placed_by, 31);
            *to++ = '}';
        }
        break;
    case TraceCall::stream_create: to = fmt::format_to(to, FMT_COMPILE(",\"new_stream\":{}"), e.ptr); break;
    case TraceCall::check_run: to = fmt::format_to(to, FMT_COMPILE(",\"elapsed_s\":{}"), e.seconds); break;
    case TraceCall::pool_trim: to = fmt::format_to(to, FMT_COMPILE(",\"released\":{}"), e.aux); break;
    default: break;
    }
    *to++ = '}';
    *to++ = '\n';
    return to;
}

void append_event_line(const TraceEvent &e, uint64_t time_ns, uint32_t thread, std::string &out)
{
    char line[kMaxEventLine];
    out.append(line, format_event_line(e, time_ns, thread, line));
}

} // namespace tidal::trace
