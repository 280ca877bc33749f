#include "bench_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "byte_sizes.h"

namespace tidal_tool {
namespace {

const char *const kBackends[] = {"runtime", "vendor", "tidal"};
const char *const kManagedModes[] = {"demand_paging", "prefetch_h2d", "prefetch_then_touch", "prefetch_d2h"};

const ElasticPoint *elastic_point(const BenchResults &r, const char *mode)
{
    auto it = std::find_if(r.elastic.begin(), r.elastic.end(), [&](const ElasticPoint &p) { return p.mode == mode; });
    return it == r.elastic.end() ? nullptr : &*it;
}

// A rate over another, e.g. offload over the runtime's copy; "-" when either is missing.
std::string ratio(const ElasticPoint *a, const ElasticPoint *b)
{
    if (!a || !b || !a->gbs() || !b->gbs())
        return "-";
    return fmt::format("{:.2f}x", *a->gbs() / *b->gbs());
}

template <class Point> nlohmann::json optional_number(const std::optional<Point> &v)
{
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string rate(const std::optional<double> &gbs) { return gbs ? fmt::format("{:.2f}", *gbs) : "-"; }

// The series of the bandwidth table, in the order they were measured.
std::vector<const BandwidthPoint *> first_of_each_series(const BenchResults &r)
{
    std::vector<const BandwidthPoint *> out;
    std::set<std::string> seen;
    for (const BandwidthPoint &p : r.bandwidth)
        if (seen.insert(p.series()).second)
            out.push_back(&p);
    return out;
}

template <typename... Args> void append(std::string &t, fmt::format_string<Args...> format, Args &&...args)
{
    t += fmt::format(format, std::forward<Args>(args)...);
}

// Quotes a CSV field when it needs it (RFC 4180).
std::string csv_field(const std::string &s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

} // namespace

std::string format_seconds(double s)
{
    if (s <= 0)
        return "0 ns";
    if (s < 1e-6)
        return fmt::format("{:.0f} ns", s * 1e9);
    if (s < 1e-3)
        return fmt::format("{:.2f} µs", s * 1e6);
    if (s < 1)
        return fmt::format("{:.2f} ms", s * 1e3);
    return fmt::format("{:.2f} s", s);
}

std::string bench_table(const BenchResults &r)
{
    std::string t;
    append(t, "tidal bench: runtime {} ({}), device {}: {}{}\n", r.runtime, r.runtime_detail, r.device.index, r.device.name,
        r.simulated ? "  [SIMULATED DEVICE: times are the profile's predictions]" : "");
    append(t, "{}, {}\n", r.date, r.quick ? "quick run (--quick: small sizes, few repetitions)" : "medians of repeated runs");

    append(t, "\nalloc+free pair latency (runtime: pools off, one runtime call each; vendor: the runtime's stream-ordered "
        "pool; tidal: tidal's pools, warmed)\n");
    append(t, "{:<16}{:>10}{:>14}{:>14}{:>14}\n", "kind", "size", "runtime", "vendor", "tidal");
    std::vector<std::string> skipped;
    for (size_t i = 0; i < r.latency.size(); i += 3) {
        const LatencyPoint &first = r.latency[i];
        append(t, "{:<16}{:>10}", first.kind, format_bytes(first.bytes));
        for (size_t b = 0; b < 3 && i + b < r.latency.size(); ++b) {
            const LatencyPoint &p = r.latency[i + b];
            append(t, "{:>14}", p.seconds ? format_seconds(*p.seconds) : "-");
            if (!p.seconds && p.note != "device memory only" && p.backend != "vendor")
                skipped.push_back(fmt::format("{} {} {}: {}", p.kind, format_bytes(p.bytes), p.backend, p.note));
        }
        append(t, "\n");
    }

    const auto series = first_of_each_series(r);
    append(t, "\ncopy bandwidth, GB/s (runtime and tidal_copy: both timed on the wall clock (tidal_clock) around one "
              "synchronous call, same buffers, median (runtime goes through tidal_check_run, whose event records cost "
              "a few us more than a plain memcpy); rt_events, an extra: the runtime's memcpy of the same calls timed "
              "between events, without the call and the synchronisation)\n");
    for (std::string BandwidthPoint::*field : {&BandwidthPoint::direction, &BandwidthPoint::memory, &BandwidthPoint::path}) {
        append(t, "{:<10}", field == &BandwidthPoint::path ? "size" : "");
        for (const BandwidthPoint *s : series)
            append(t, "{:>11}", s->*field);
        append(t, "\n");
    }
    for (uint64_t bytes : r.bandwidth_sizes) {
        append(t, "{:<10}", format_bytes(bytes));
        for (const BandwidthPoint *s : series) {
            auto it = std::find_if(r.bandwidth.begin(), r.bandwidth.end(),
                                   [&](const BandwidthPoint &p) { return p.bytes == bytes && p.series() == s->series(); });
            append(t, "{:>11}", it == r.bandwidth.end() ? "-" : rate(it->gbs()));
            if (it != r.bandwidth.end() && !it->seconds)
                skipped.push_back(fmt::format("copy {} {}: {}", it->series(), format_bytes(bytes), it->note));
        }
        append(t, "\n");
    }

    append(t, "\nmanaged memory, GB/s (demand paging: a kernel touches host-resident pages; prefetch: tidal_prefetch)\n");
    append(t, "{:<10}{:>16}{:>16}{:>22}{:>16}\n", "size", "demand paging", "prefetch h2d", "prefetch then touch", "prefetch d2h");
    for (uint64_t bytes : r.managed_sizes) {
        append(t, "{:<10}", format_bytes(bytes));
        for (const char *mode : kManagedModes) {
            auto it = std::find_if(r.managed.begin(), r.managed.end(),
                                   [&](const ManagedPoint &p) { return p.bytes == bytes && p.mode == mode; });
            const int width = std::string(mode) == "prefetch_then_touch" ? 22 : 16;
            append(t, "{:>{}}", it == r.managed.end() ? "-" : rate(it->gbs()), width);
        }
        append(t, "\n");
    }

    if (!r.elastic.empty()) {
        append(t, "\nelastic memory, GB/s (every column timed with tidal_clock around the call: offload = "
                  "tidal_offload_range, restore = tidal_restore_range, runtime = its memcpy device<->pinned)\n");
        append(t, "{:<10}{:>10}{:>14}{:>10}{:>14}{:>16}{:>16}{:>14}\n", "size", "offload", "runtime d2h", "restore",
               "runtime h2d", "offload/d2h", "restore/h2d", "home (once)");
        const ElasticPoint *out = elastic_point(r, "offload"), *d2h = elastic_point(r, "runtime_d2h");
        const ElasticPoint *in = elastic_point(r, "restore"), *h2d = elastic_point(r, "runtime_h2d");
        const ElasticPoint *home = elastic_point(r, "home");
        auto gbs = [](const ElasticPoint *p) { return p ? rate(p->gbs()) : "-"; };
        append(t, "{:<10}{:>10}{:>14}{:>10}{:>14}{:>16}{:>16}{:>14}\n", format_bytes(r.elastic_size), gbs(out), gbs(d2h),
               gbs(in), gbs(h2d), ratio(out, d2h), ratio(in, h2d),
               home && home->seconds ? format_seconds(*home->seconds) : "-");
        for (const ElasticPoint &p : r.elastic)
            if (!p.seconds && p.mode != "home")
                skipped.push_back(fmt::format("elastic {} {}: {}", p.mode, format_bytes(p.bytes), p.note));
    }

    append(t, "\n");
    for (const ScalarPoint &s : r.scalars) {
        const std::string value = !s.value ? "-" : s.unit == "s" ? format_seconds(*s.value) : fmt::format("{:.2f} GB/s", *s.value);
        append(t, "{:<14}{:>12}  {}\n", s.name, value, s.detail);
    }

    std::set<std::string> shown;
    append(t, "\nnotes:\n");
    for (const std::string &n : r.notes)
        if (shown.insert(n).second)
            append(t, "  * {}\n", n);
    if (!skipped.empty()) {
        append(t, "not measured:\n");
        for (const std::string &s : skipped)
            if (shown.insert(s).second)
                append(t, "  * {}\n", s);
    }
    return t;
}

nlohmann::json bench_json(const BenchResults &r)
{
    const tidal_device_info &d = r.device;
    nlohmann::json j;
    j["tidal_version"] = tidal_version_string();
    j["date"] = r.date;
    j["runtime"] = r.runtime;
    j["runtime_detail"] = r.runtime_detail;
    j["clock"] = r.simulated ? "simulated" : "host";
    j["device"] = {{"index", d.index},
                   {"name", d.name},
                   {"arch", d.arch},
                   {"simulated", r.simulated},
                   {"total_memory", d.total_memory},
                   {"page_size", d.page_size},
                   {"l2_size", d.l2_size},
                   {"migrates_on_fault", (d.flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT) != 0},
                   {"pageable_access", (d.flags & TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS) != 0},
                   {"fine_grained_kinds", (d.flags & TIDAL_DEVICE_FLAG_FINE_GRAINED) != 0}};
    j["settings"] = {{"quick", r.quick},
                     {"host_threads", r.host_threads},
                     {"latency_sizes", r.latency_sizes},
                     {"bandwidth_sizes", r.bandwidth_sizes},
                     {"managed_sizes", r.managed_sizes},
                     {"elastic_size", r.elastic_size}};
    j["latency"] = nlohmann::json::array();
    for (const LatencyPoint &p : r.latency)
        j["latency"].push_back({{"kind", p.kind},
                                {"bytes", p.bytes},
                                {"backend", p.backend},
                                {"seconds", optional_number(p.seconds)},
                                {"reps", p.reps},
                                {"pairs_per_rep", p.pairs_per_rep},
                                {"note", p.note}});
    j["bandwidth"] = nlohmann::json::array();
    for (const BandwidthPoint &p : r.bandwidth)
        j["bandwidth"].push_back({{"direction", p.direction},
                                  {"memory", p.memory},
                                  {"path", p.path},
                                  {"bytes", p.bytes},
                                  {"seconds", optional_number(p.seconds)},
                                  {"gbs", optional_number(p.gbs())},
                                  {"reps", p.reps},
                                  {"note", p.note}});
    // Managed and elastic points share one shape (ElasticPoint is a ManagedPoint).
    for (const auto &[section, points] : {std::pair{"managed", &r.managed}, std::pair{"elastic", &r.elastic}}) {
        j[section] = nlohmann::json::array();
        for (const ManagedPoint &p : *points)
            j[section].push_back({{"mode", p.mode},
                                  {"bytes", p.bytes},
                                  {"seconds", optional_number(p.seconds)},
                                  {"gbs", optional_number(p.gbs())},
                                  {"reps", p.reps},
                                  {"note", p.note}});
    }
    j["other"] = nlohmann::json::object();
    for (const ScalarPoint &s : r.scalars)
        j["other"][s.name] = {{"value", optional_number(s.value)}, {"unit", s.unit}, {"bytes", s.bytes}, {"detail", s.detail}};
    j["notes"] = r.notes;
    return j;
}

std::string bench_csv(const BenchResults &r)
{
    std::string t = "section,name,variant,bytes,value,unit,note\n";
    auto row = [&t](const std::string &section, const std::string &name, const std::string &variant, uint64_t bytes,
                    const std::optional<double> &value, const std::string &unit, const std::string &note) {
        t += fmt::format("{},{},{},{},{},{},{}\n", section, csv_field(name), csv_field(variant), bytes,
                         value ? fmt::format("{:.6g}", *value) : "", unit, csv_field(note));
    };
    for (const LatencyPoint &p : r.latency)
        row("latency", p.kind, p.backend, p.bytes, p.seconds ? std::optional(*p.seconds * 1e6) : std::nullopt, "us", p.note);
    for (const BandwidthPoint &p : r.bandwidth)
        row("bandwidth", p.direction + " " + p.memory, p.path, p.bytes, p.gbs(), "GB/s", p.note);
    for (const ManagedPoint &p : r.managed)
        row("managed", p.mode, "", p.bytes, p.gbs(), "GB/s", p.note);
    for (const ElasticPoint &p : r.elastic)
        if (p.mode == "home") // a cost paid once, not a rate
            row("elastic", p.mode, "", p.bytes, p.seconds ? std::optional(*p.seconds * 1e6) : std::nullopt, "us", p.note);
        else
            row("elastic", p.mode, "", p.bytes, p.gbs(), "GB/s", p.note);
    for (const ScalarPoint &s : r.scalars)
        row("other", s.name, "", s.bytes, s.unit == "s" && s.value ? std::optional(*s.value * 1e6) : s.value,
            s.unit == "s" ? "us" : s.unit, s.detail);
    return t;
}

} // namespace tidal_tool
