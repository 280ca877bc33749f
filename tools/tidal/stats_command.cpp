// `tidal stats FILE`: a statistics snapshot (TIDAL_STATS=FILE, tidal_stats_json) as tables.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "command_options.h"
#include "tool_commands.h"

namespace tidal_tool {
namespace {

using nlohmann::json;

// The 1-based line of byte `offset` in `text`.
size_t line_of(const std::string &text, size_t offset)
{
    offset = std::min(offset, text.size());
    return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

uint64_t number(const json &row, const char *key)
{
    const auto it = row.find(key);
    return it != row.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

std::string device_name(const json &row)
{
    const auto it = row.find("device");
    if (it == row.end() || !it->is_number_integer())
        return "?";
    const int64_t d = it->get<int64_t>();
    return d >= 0 ? std::to_string(d) : std::string("host");
}

void print_usage_table(const json &rows, const char *title, const char *first)
{
    fmt::print("\n{}\n{:<32} {:>14} {:>8} {:>14} {:>8}\n", title, first, "bytes", "count", "peak bytes", "peak");
    for (const json &r : rows) {
        const std::string name = r.contains("tag") ? r.value("tag", std::string()) :
                                                      fmt::format("{} on {}", r.value("kind", std::string("?")), device_name(r));
        fmt::print("{:<32} {:>14} {:>8} {:>14} {:>8}\n", name.empty() ? "(untagged)" : name, number(r, "bytes"),
                   number(r, "count"), number(r, "peak_bytes"), number(r, "peak_count"));
    }
}

// Demand paging per device and per tag group holding managed memory; "faults" is null where
// the runtime counts none (a GPU), which is said rather than shown as zeros.
void print_faults(const json &s)
{
    const char *format = "{:<32} {:>8} {:>14} {:>14} {:>14} {:>14}\n";
    fmt::print("\npage faults\n");
    fmt::print(fmt::runtime(format), "device / tag", "faults", "faulted in", "over the link", "prefetched in",
               "moved out");
    bool counted = false;
    const auto row = [&](const std::string &name, const json &f) {
        counted = true;
        fmt::print(fmt::runtime(format), name, number(f, "count"), number(f, "bytes"), number(f, "link_page_bytes"),
                   number(f, "prefetched_to_device_bytes"), number(f, "prefetched_to_host_bytes"));
    };
    for (const json &d : s.at("devices"))
        if (const auto f = d.find("faults"); f != d.end() && f->is_object())
            row("device " + device_name(d), *f);
    for (const json &t : s.at("by_tag"))
        if (const auto f = t.find("faults"); f != t.end() && f->is_object() && number(*f, "largest_allocation_bytes"))
            row(t.value("tag", std::string()).empty() ? "(untagged)" : t.value("tag", std::string()), *f);
    if (!counted)
        fmt::print("  not counted by the {} runtime\n", s.value("runtime", std::string("?")));
}

void print_snapshot(const json &s)
{
    fmt::print("runtime {}, tag_depth {}\n", s.value("runtime", std::string("?")), number(s, "tag_depth"));
    const json &live = s.at("live");
    fmt::print("live: {} bytes in {} allocation(s); peak seen {} bytes, {} allocation(s)\n", number(live, "bytes"),
               number(live, "count"), number(live, "peak_bytes"), number(live, "peak_count"));
    print_usage_table(s.at("by_kind"), "by kind", "kind on device");
    print_usage_table(s.at("by_tag"), "by tag", "tag");
    fmt::print("\npools\n{:<20} {:>14} {:>14} {:>14} {:>10} {:>10} {:>10}\n", "kind on device", "reserved", "in use",
               "in use peak", "allocs", "frees", "cache hits");
    for (const json &p : s.at("pools"))
        fmt::print("{:<20} {:>14} {:>14} {:>14} {:>10} {:>10} {:>10}\n",
                   fmt::format("{} on {}", p.value("kind", std::string("?")), device_name(p)), number(p, "reserved_bytes"),
                   number(p, "in_use_bytes"), number(p, "in_use_peak_bytes"), number(p, "allocations"),
                   number(p, "frees"), number(p, "cache_hits"));
    fmt::print("\ndevices\n{:<7} {:>14} {:>8} {:>14} {:>8} {:>10} {:>14} {:>14}\n", "device", "to device", "calls",
               "to host", "calls", "evictions", "dropped", "resident peak");
    for (const json &d : s.at("devices")) {
        const json &m = d.at("migrations");
        fmt::print("{:<7} {:>14} {:>8} {:>14} {:>8} {:>10} {:>14} {:>14}\n", device_name(d),
                   number(m.at("host_to_device"), "bytes"), number(m.at("host_to_device"), "calls"),
                   number(m.at("device_to_host"), "bytes"), number(m.at("device_to_host"), "calls"),
                   number(d.at("evictions"), "count"), number(d.at("drops"), "bytes"), number(d, "resident_peak_bytes"));
    }
    print_faults(s);
    fmt::print("\nerrors\n");
    if (s.at("errors").empty())
        fmt::print("  none\n");
    for (const auto &[name, count] : s.at("errors").items())
        fmt::print("  {:<32} {}\n", name, count.get<uint64_t>());
    if (s.contains("leaks")) {
        fmt::print("\nleaks: {}\n", s.at("leaks").size());
        for (const json &l : s.at("leaks")) {
            fmt::print("  {} bytes of {} memory on {} at {} tag '{}'\n", number(l, "size"), l.value("kind", std::string("?")),
                       device_name(l), l.value("address", std::string("?")), l.value("tag", std::string()));
            for (const json &frame : l.value("call_site", json::array()))
                fmt::print("      at {}\n", frame.get<std::string>());
        }
    }
}

} // namespace

int run_stats(const std::string &file)
{
    std::ifstream in(file);
    if (!in) {
        fmt::print(stderr, "tidal: {}: cannot be read\n", file);
        return 1;
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    json s;
    try {
        s = json::parse(text);
    } catch (const json::parse_error &e) {
        fmt::print(stderr, "tidal: {}: line {}: not valid JSON ({})\n", file, line_of(text, e.byte), e.what());
        return 1;
    }
    if (!s.is_object() || s.value("schema", std::string()) != "tidal-stats/1") {
        fmt::print(stderr, "tidal: {}: not a tidal statistics snapshot (no \"schema\": \"tidal-stats/1\")\n", file);
        return 1;
    }
    try {
        print_snapshot(s);
    } catch (const json::exception &e) {
        fmt::print(stderr, "tidal: {}: a snapshot with a missing or mistyped field: {}\n", file, e.what());
        return 1;
    }
    return 0;
}

} // namespace tidal_tool
