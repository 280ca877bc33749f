#include "trace_file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

namespace tidal_tool {
namespace {

using nlohmann::json;

const std::set<std::string> kCalls = {"alloc",       "alloc_async",   "free",          "free_async",  "prefetch",
                                      "advise",      "declare",       "budget_set",    "copy",        "copy_async",
                                      "copy_batch",  "stream_create", "stream_destroy", "stream_synchronize",
                                      "check_run",   "offload",       "offload_range", "restore",     "restore_range",
                                      "pool_trim"};

class LineReader {
public:
    LineReader(const std::string &path, size_t line, const json &j) : path_(path), line_(line), j_(j) {}

    [[noreturn]] void fail(const std::string &why) const
    {
        throw TraceError(fmt::format("{}:{}: {}", path_, line_, why));
    }
    const json &field(const json &in, const char *key, const char *where) const
    {
        auto it = in.find(key);
        if (it == in.end())
            fail(fmt::format("\"{}\" lacks \"{}{}\"", call_, where, key));
        return *it;
    }
    template <typename T> T number(const json &in, const char *key, const char *where = "") const
    {
        const json &v = field(in, key, where);
        if (!v.is_number())
            fail(fmt::format("{}\"{}\" of \"{}\" is {} where a number belongs", where, key, call_, v.dump()));
        if constexpr (std::is_integral_v<T>) {
            if (!v.is_number_integer())
                fail(fmt::format("{}\"{}\" of \"{}\" is {} where a whole number belongs", where, key, call_, v.dump()));
            if constexpr (std::is_unsigned_v<T>) {
                if (v.is_number_unsigned())
                    return v.get<T>();
                if (v.get<int64_t>() < 0)
                    fail(fmt::format("{}\"{}\" of \"{}\" is {}, below 0", where, key, call_, v.dump()));
            }
        }
        return v.get<T>();
    }
    std::string text(const json &in, const char *key, const char *where = "") const
    {
        const json &v = field(in, key, where);
        if (!v.is_string())
            fail(fmt::format("{}\"{}\" of \"{}\" is {} where a string belongs", where, key, call_, v.dump()));
        return v.get<std::string>();
    }
    void set_call(std::string c) { call_ = std::move(c); }

private:
    const std::string &path_;
    size_t line_;
    const json &j_;
    std::string call_ = "the line";
};

TraceRecord read_event(const std::string &path, size_t line, const json &j)
{
    LineReader r(path, line, j);
    if (!j.contains("call"))
        r.fail("an event without \"call\" (each line after the header is one call)");
    TraceRecord e;
    e.line = line;
    e.call = r.text(j, "call");
    r.set_call(e.call);
    if (!kCalls.count(e.call))
        r.fail(fmt::format("unknown call \"{}\"", e.call));
    e.time_ns = r.number<uint64_t>(j, "time_ns");
    e.thread = r.number<uint32_t>(j, "thread");
    e.stream = r.number<uint64_t>(j, "stream");
    e.result = r.text(j, "result");
    const json &a = r.field(j, "args", "");
    if (!a.is_object())
        r.fail("\"args\" is not an object");
    const char *in = "args.";
    const std::string &c = e.call;
    if (c == "alloc" || c == "alloc_async") {
        e.size = r.number<uint64_t>(a, "size", in);
        e.kind = r.text(a, "kind", in);
        e.device = r.number<int32_t>(a, "device", in);
        e.alignment = r.number<uint64_t>(a, "alignment", in);
        e.hints = r.number<uint32_t>(a, "hints", in);
        e.tag = r.text(a, "tag", in);
        e.ptr = r.number<uint64_t>(j, "ptr");
        if (e.ok()) {
            const json &d = r.field(j, "decision", "");
            e.placed_kind = r.text(d, "kind", "decision.");
            e.placed_device = r.number<int32_t>(d, "device", "decision.");
            e.policy = r.text(d, "policy", "decision.");
        }
    } else if (c == "free" || c == "free_async") {
        e.ptr = r.number<uint64_t>(a, "ptr", in);
    } else if (c == "prefetch") {
        e.ptr = r.number<uint64_t>(a, "ptr", in);
        e.size = r.number<uint64_t>(a, "size", in);
        e.device = r.number<int32_t>(a, "device", in);
    } else if (c == "advise") {
        e.ptr = r.number<uint64_t>(a, "ptr", in);
        e.size = r.number<uint64_t>(a, "size", in);
        e.set = r.number<uint32_t>(a, "set", in);
        e.unset = r.number<uint32_t>(a, "unset", in);
    } else if (c == "declare") {
        e.flags = r.number<uint32_t>(a, "flags", in);
        TraceItem item;
        item.ptr = r.number<uint64_t>(a, "ptr", in);
        item.size = r.number<uint64_t>(a, "size", in);
        item.device = r.number<int32_t>(a, "device", in);
        item.mode = r.number<uint32_t>(a, "mode", in);
        e.items.push_back(item);
        e.seed = r.number<uint32_t>(a, "index", in); // held here until grouped
        e.alignment = r.number<uint32_t>(a, "count", in);
    } else if (c == "budget_set") {
        e.device = r.number<int32_t>(a, "device", in);
        e.size = r.number<uint64_t>(a, "bytes", in);
    } else if (c == "copy" || c == "copy_async" || c == "copy_batch") {
        TraceItem item;
        item.ptr = r.number<uint64_t>(a, "dst", in);
        item.src = r.number<uint64_t>(a, "src", in);
        item.size = r.number<uint64_t>(a, "size", in);
        e.items.push_back(item);
        if (c == "copy_batch") {
            e.seed = r.number<uint32_t>(a, "index", in);
            e.alignment = r.number<uint32_t>(a, "count", in);
        }
    } else if (c == "stream_create") {
        e.device = r.number<int32_t>(a, "device", in);
        e.new_stream = r.number<uint64_t>(j, "new_stream");
    } else if (c == "check_run") {
        e.kind = r.text(a, "kind", in);
        e.device = r.number<int32_t>(a, "device", in);
        e.ptr = r.number<uint64_t>(a, "target", in);
        e.src = r.number<uint64_t>(a, "source", in);
        e.size = r.number<uint64_t>(a, "size", in);
        e.seed = r.number<uint64_t>(a, "seed", in);
        e.elapsed_s = r.number<double>(j, "elapsed_s");
    } else if (c == "offload" || c == "restore") {
        e.tag = r.text(a, "glob", in);
        e.flags = r.number<uint32_t>(a, "flags", in);
    } else if (c == "offload_range" || c == "restore_range") {
        e.ptr = r.number<uint64_t>(a, "ptr", in);
        e.size = r.number<uint64_t>(a, "size", in);
        e.flags = r.number<uint32_t>(a, "flags", in);
    }
    return e;
}

} // namespace

Trace read_trace(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw TraceError(fmt::format("{}: cannot open the trace (check the name; TIDAL_TRACE=FILE records one)", path));
    Trace t;
    t.path = path;
    std::string text;
    size_t line = 0;
    bool header = false, ended = false;
    uint64_t end_events = 0, events = 0;
    // declare and copy_batch record one line per item; a call's lines are consecutive among
    // its thread's lines, so they are joined per thread.
    std::map<uint32_t, TraceRecord> open_groups;
    while (std::getline(in, text)) {
        ++line;
        if (in.eof())
            throw TraceError(fmt::format("{}:{}: the line is cut short (no end of line): the trace was truncated", path, line));
        if (ended)
            throw TraceError(fmt::format("{}:{}: a line after the end record", path, line));
        json j;
        try {
            j = json::parse(text);
        } catch (const json::parse_error &e) {
            throw TraceError(fmt::format("{}:{}: not a JSON object: {}", path, line, e.what()));
        }
        if (!j.is_object())
            throw TraceError(fmt::format("{}:{}: not a JSON object", path, line));
        LineReader r(path, line, j);
        if (!header) {
            if (!j.contains("tidal_trace"))
                r.fail("not a tidal trace: the first line must be its header {\"tidal_trace\":1,...}");
            r.set_call("the header");
            const int format = r.number<int>(j, "tidal_trace");
            if (format != 1)
                r.fail(fmt::format("trace format {}: this tidal reads format 1", format));
            t.runtime = r.text(j, "runtime");
            t.devices = r.number<int32_t>(j, "devices");
            header = true;
            continue;
        }
        if (j.contains("end")) {
            r.set_call("the end record");
            end_events = r.number<uint64_t>(j, "events");
            ended = true;
            continue;
        }
        TraceRecord e = read_event(path, line, j);
        ++events;
        const bool grouped = e.call == "declare" || e.call == "copy_batch";
        const uint64_t index = grouped ? e.seed : 0, count = grouped ? e.alignment : 0;
        if (grouped) {
            e.seed = e.alignment = 0;
            if (count > 1 && e.ok()) {
                auto it = open_groups.find(e.thread);
                if (index == 0) {
                    if (it != open_groups.end())
                        throw TraceError(fmt::format("{}:{}: \"{}\" starts before the {} at line {} has all its items",
                                                     path, line, e.call, it->second.call, it->second.line));
                    open_groups[e.thread] = std::move(e);
                    continue;
                }
                if (it == open_groups.end() || it->second.call != e.call || it->second.items.size() != index)
                    throw TraceError(fmt::format("{}:{}: item {} of a \"{}\" whose earlier items are missing", path,
                                                 line, index, e.call));
                it->second.items.push_back(e.items.front());
                if (it->second.items.size() == count) {
                    t.records.push_back(std::move(it->second));
                    open_groups.erase(it);
                }
                continue;
            }
            if (!e.ok())
                e.items.clear(); // a refused call's entries were not recorded
        }
        t.records.push_back(std::move(e));
    }
    if (!header)
        throw TraceError(fmt::format("{}: empty: not a tidal trace", path));
    if (!ended)
        throw TraceError(fmt::format("{}:{}: the trace ends without its end record: it was cut short (did the "
                                     "program stop before tidal_context_destroy?)",
                                     path, line));
    if (!open_groups.empty())
        throw TraceError(fmt::format("{}:{}: \"{}\" has {} of its items", path, open_groups.begin()->second.line,
                                     open_groups.begin()->second.call, open_groups.begin()->second.items.size()));
    if (end_events != events)
        throw TraceError(fmt::format("{}:{}: the end record counts {} events, the trace holds {}: lines are missing",
                                     path, line, end_events, events));
    std::stable_sort(t.records.begin(), t.records.end(),
                     [](const TraceRecord &a, const TraceRecord &b) { return a.time_ns < b.time_ns; });
    return t;
}

} // namespace tidal_tool
