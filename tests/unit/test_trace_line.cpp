#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tidal/tidal.h"
#include "trace/trace_line.h"

using tidal::trace::TraceCall;
using tidal::trace::TraceEvent;

namespace {

// One event of each call, with large, negative and escaped values where the format has them.
std::vector<TraceEvent> every_call()
{
    std::vector<TraceEvent> events;
    for (int c = 0; c <= static_cast<int>(TraceCall::pool_trim); ++c) {
        TraceEvent e;
        e.call = static_cast<TraceCall>(c);
        e.ptr = 140133843730432ull + static_cast<uint64_t>(c);
        e.ptr2 = 18446744073709551615ull;
        e.size = 67108864ull * static_cast<uint64_t>(c + 1);
        e.stream = c % 2 ? 94823749823ull : 0;
        e.aux = 4096;
        e.status = c % 3 == 2 ? TIDAL_ERROR_OUT_OF_MEMORY : TIDAL_OK;
        e.device = c % 4 == 1 ? -1 : c % 4 == 3 ? -2 : 3;
        e.kind = c % 9;
        e.hints = 1u << (c % 32);
        e.flags = static_cast<uint32_t>(c * 3);
        e.index = static_cast<uint32_t>(c % 5);
        e.count = 5;
        e.seconds = c == static_cast<int>(TraceCall::check_run) ? 0.0123456789 : 0;
        e.placed_kind = c % 3 == 1 ? 2 : 99;
        e.placed_device = c % 2;
        e.placed_by = c % 2 ? "rules" : "core";
        const char *tag = c % 3 == 0 ? "weights.\"layer\"\\0\n\x01" : c % 3 == 1 ? "" : "scratch.attention";
        e.tag_length = static_cast<uint16_t>(std::strlen(tag));
        std::memcpy(e.tag, tag, e.tag_length);
        events.push_back(e);
    }
    TraceEvent failed; // an allocation refused: a kind outside the enum, no decision, a full tag
    failed.call = TraceCall::alloc;
    failed.status = TIDAL_ERROR_INVALID_ARGUMENT;
    failed.kind = -5;
    failed.size = 1;
    failed.tag_length = 63;
    std::memset(failed.tag, 'x', 63);
    events.push_back(failed);
    return events;
}

} // namespace

// The lines `tidal replay`, `tidal doctor` and `tidal stats --svg` read, byte for byte as the
// format-string formatter of trace format 1 wrote them (the expected text is its output).
TEST_CASE("trace lines: every call formats exactly as trace format 1")
{
    static const char *const expected = R"TRACE({"time_ns":20792290,"thread":0,"call":"alloc","stream":0,"args":{"size":67108864,"kind":"auto","device":3,"alignment":4096,"hints":1,"tag":"weights.\"layer\"\\0\u000a\u0001"},"result":"TIDAL_OK","ptr":140133843730432,"decision":{"kind":"unknown","device":0,"policy":"core"}}
{"time_ns":20792291,"thread":1,"call":"alloc_async","stream":94823749823,"args":{"size":134217728,"kind":"device","device":-1,"alignment":4096,"hints":2,"tag":""},"result":"TIDAL_OK","ptr":140133843730433,"decision":{"kind":"managed","device":1,"policy":"rules"}}
{"time_ns":20792292,"thread":2,"call":"free","stream":0,"args":{"ptr":140133843730434},"result":"TIDAL_ERROR_OUT_OF_MEMORY"}
{"time_ns":20792293,"thread":0,"call":"free_async","stream":94823749823,"args":{"ptr":140133843730435},"result":"TIDAL_OK"}
{"time_ns":20792294,"thread":1,"call":"prefetch","stream":0,"args":{"ptr":140133843730436,"size":335544320,"device":3},"result":"TIDAL_OK"}
{"time_ns":20792295,"thread":2,"call":"advise","stream":94823749823,"args":{"ptr":140133843730437,"size":402653184,"set":32,"unset":15},"result":"TIDAL_ERROR_OUT_OF_MEMORY"}
{"time_ns":20792296,"thread":0,"call":"declare","stream":0,"args":{"ptr":140133843730438,"size":469762048,"device":3,"mode":64,"flags":18,"index":1,"count":5},"result":"TIDAL_OK"}
{"time_ns":20792297,"thread":1,"call":"budget_set","stream":94823749823,"args":{"device":-2,"bytes":536870912},"result":"TIDAL_OK"}
{"time_ns":20792298,"thread":2,"call":"copy","stream":0,"args":{"dst":140133843730440,"src":18446744073709551615,"size":603979776},"result":"TIDAL_ERROR_OUT_OF_MEMORY"}
{"time_ns":20792299,"thread":0,"call":"copy_async","stream":94823749823,"args":{"dst":140133843730441,"src":18446744073709551615,"size":671088640},"result":"TIDAL_OK"}
{"time_ns":20792300,"thread":1,"call":"copy_batch","stream":0,"args":{"dst":140133843730442,"src":18446744073709551615,"size":738197504,"index":0,"count":5},"result":"TIDAL_OK"}
{"time_ns":20792301,"thread":2,"call":"stream_create","stream":94823749823,"args":{"device":-2},"result":"TIDAL_ERROR_OUT_OF_MEMORY","new_stream":140133843730443}
{"time_ns":20792302,"thread":0,"call":"stream_destroy","stream":0,"args":{},"result":"TIDAL_OK"}
{"time_ns":20792303,"thread":1,"call":"stream_synchronize","stream":94823749823,"args":{},"result":"TIDAL_OK"}
{"time_ns":20792304,"thread":2,"call":"check_run","stream":0,"args":{"kind":"copy","device":3,"target":140133843730446,"source":18446744073709551615,"size":1006632960,"seed":4096},"result":"TIDAL_ERROR_OUT_OF_MEMORY","elapsed_s":0.0123456789}
{"time_ns":20792305,"thread":0,"call":"offload","stream":94823749823,"args":{"glob":"weights.\"layer\"\\0\u000a\u0001","flags":45},"result":"TIDAL_OK"}
{"time_ns":20792306,"thread":1,"call":"offload_range","stream":0,"args":{"ptr":140133843730448,"size":1140850688,"flags":48},"result":"TIDAL_OK"}
{"time_ns":20792307,"thread":2,"call":"restore","stream":94823749823,"args":{"glob":"scratch.attention","flags":51},"result":"TIDAL_ERROR_OUT_OF_MEMORY"}
{"time_ns":20792308,"thread":0,"call":"restore_range","stream":0,"args":{"ptr":140133843730450,"size":1275068416,"flags":54},"result":"TIDAL_OK"}
{"time_ns":20792309,"thread":1,"call":"pool_trim","stream":94823749823,"args":{},"result":"TIDAL_OK","released":4096}
{"time_ns":20792310,"thread":2,"call":"alloc","stream":0,"args":{"size":1,"kind":"unknown","device":0,"alignment":0,"hints":0,"tag":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},"result":"TIDAL_ERROR_INVALID_ARGUMENT","ptr":0}
)TRACE";
    std::string got;
    const auto events = every_call();
    for (size_t i = 0; i < events.size(); ++i)
        tidal::trace::append_event_line(events[i], 20792290 + i, static_cast<uint32_t>(i % 3), got);
    // Line by line, so that a difference names its call.
    size_t at = 0, line = 0;
    const std::string want = expected;
    while (at < want.size() || at < got.size()) {
        const size_t w = want.find('\n', at), g = got.find('\n', at);
        CHECK_MESSAGE(got.substr(at, g == std::string::npos ? g : g - at + 1) ==
                          want.substr(at, w == std::string::npos ? w : w - at + 1),
                      "line ", line + 1);
        if (w == std::string::npos || g == std::string::npos || w != g)
            break;
        at = w + 1;
        ++line;
    }
    CHECK(got == want);
}

TEST_CASE("trace lines: the end record says how many events waited, only when some did")
{
    CHECK(tidal::trace::end_line(0) == "{\"end\":true,\"events\":0}\n");
    CHECK(tidal::trace::end_line(202000, 0) == "{\"end\":true,\"events\":202000}\n");
    CHECK(tidal::trace::end_line(202000, 62) == "{\"end\":true,\"events\":202000,\"ring_full_waits\":62}\n");
}

TEST_CASE("trace lines: the longest line of every call fits kMaxEventLine")
{
    static const char name[] = "\x01\x02\x03\x04\x05\x06\x07\x08\x01\x02\x03\x04\x05\x06\x07\x08"
                               "\x01\x02\x03\x04\x05\x06\x07\x08\x01\x02\x03\x04\x05\x06\x07\x08";
    size_t longest = 0;
    for (int c = 0; c <= static_cast<int>(TraceCall::pool_trim); ++c) {
        TraceEvent e;
        e.call = static_cast<TraceCall>(c);
        e.ptr = e.ptr2 = e.size = e.stream = e.aux = ~uint64_t{0};
        e.device = e.placed_device = INT32_MIN;
        e.kind = e.placed_kind = TIDAL_KIND_MANAGED_COARSE;
        e.hints = e.flags = e.index = e.count = ~uint32_t{0};
        e.seconds = -1.2345678901234567e-300;
        e.status = TIDAL_ERROR_OUT_OF_MEMORY;
        e.placed_by = name; // cut to 31 bytes, each escaped to 6
        e.tag_length = 63;
        std::memset(e.tag, '\x1f', 63); // each escaped to 6
        e.status = c == 0 ? TIDAL_OK : e.status;
        std::string line;
        tidal::trace::append_event_line(e, ~uint64_t{0}, ~uint32_t{0}, line);
        longest = std::max(longest, line.size());
    }
    CHECK(longest < tidal::trace::kMaxEventLine);
    MESSAGE("longest trace line: ", longest, " bytes");
}
