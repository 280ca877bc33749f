#include "profile_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "byte_sizes.h"

namespace tidal_tool {
namespace {

// A profile value and the comment that says where it came from.
struct Figure {
    double value = 0;
    std::string source;
};

// One measured transfer: its size, the bytes it moved (twice the size for d2d, read and
// write), and its median time.
struct Sample {
    uint64_t size;
    double traffic;
    double seconds;
};
using Samples = std::vector<Sample>; // smallest first

// The transfer rate at large sizes, in GB/s: from the two largest sizes, Δbytes / Δtime, so a
// fixed cost per call (the copy latency) is not mistaken for a slower link; the rate at the
// largest size when only one size was measured, or when the difference is not usable.
std::optional<Figure> large_rate(const Samples &s, const std::string &what)
{
    if (s.empty())
        return std::nullopt;
    const Sample &b = s.back();
    if (s.size() >= 2) {
        const Sample &a = s[s.size() - 2];
        if (b.seconds > a.seconds && b.traffic > a.traffic)
            return Figure{(b.traffic - a.traffic) / (b.seconds - a.seconds) / 1e9,
                          fmt::format("{}: (bytes at {} - at {}) / (time at {} - at {})", what, format_bytes(b.size),
                                      format_bytes(a.size), format_bytes(b.size), format_bytes(a.size))};
    }
    if (b.seconds <= 0)
        return std::nullopt;
    return Figure{b.traffic / b.seconds / 1e9, fmt::format("{}, {}", what, format_bytes(b.size))};
}

Samples copy_samples(const BenchResults &r, const std::string &series)
{
    Samples s;
    for (const BandwidthPoint &p : r.bandwidth)
        if (p.series() == series && p.seconds && *p.seconds > 0)
            s.push_back({p.bytes, p.traffic(), *p.seconds});
    return s;
}

Samples managed_samples(const BenchResults &r, const std::string &mode)
{
    Samples s;
    for (const ManagedPoint &p : r.managed)
        if (p.mode == mode && p.seconds && *p.seconds > 0)
            s.push_back({p.bytes, static_cast<double>(p.bytes), *p.seconds});
    return s;
}

std::optional<Figure> copy_rate(const BenchResults &r, const std::string &series, const std::string &what)
{
    return large_rate(copy_samples(r, series), what);
}

// The time of the smallest copy of a series, in microseconds: what one tiny copy costs.
std::optional<Figure> smallest_copy_us(const BenchResults &r, const std::string &series)
{
    const Samples s = copy_samples(r, series);
    if (s.empty())
        return std::nullopt;
    return Figure{s.front().seconds * 1e6,
                  fmt::format("the runtime's memcpy ({}) of {}, timed on the wall clock around the call: the fixed cost of one copy", series,
                              format_bytes(s.front().size))};
}

std::optional<Figure> pair_us(const BenchResults &r, const std::string &kind)
{
    for (const LatencyPoint &p : r.latency)
        if (p.kind == kind && p.backend == "runtime" && p.seconds && *p.seconds > 0)
            return Figure{*p.seconds * 1e6,
                          fmt::format("alloc+free pair of {} {} memory with pools off, median (tidal's own work "
                                      "included: well under a microsecond)",
                                      format_bytes(p.bytes), kind)};
    return std::nullopt;
}

std::optional<Figure> scalar(const BenchResults &r, const std::string &name, double scale)
{
    const ScalarPoint *s = r.scalar(name);
    if (!s || !s->value || *s->value <= 0)
        return std::nullopt;
    return Figure{*s->value * scale, s->detail};
}

// `measured` if there is one, else the first fallback that exists, labelled as such.
using Fallbacks = std::initializer_list<std::pair<const char *, std::optional<Figure>>>;
std::optional<Figure> choose(const std::optional<Figure> &measured, const char *why_not, Fallbacks fallbacks)
{
    if (measured)
        return measured;
    for (const auto &[key, f] : fallbacks)
        if (f)
            return Figure{f->value, fmt::format("NOT MEASURED ({}); fallback: the {} figure", why_not, key)};
    return std::nullopt;
}

std::string slug(const std::string &name)
{
    std::string out;
    for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        else if (!out.empty() && out.back() != '-')
            out += '-';
    }
    while (!out.empty() && out.back() == '-')
        out.pop_back();
    return out.empty() ? "measured" : out;
}

std::string toml_string(const std::string &s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (static_cast<unsigned char>(c) >= 0x20)
            out += c;
    }
    return out + "\"";
}

void entry(std::string &t, const char *key, const Figure &f, int decimals)
{
    t += fmt::format("# {}\n{} = {:.{}f}\n", f.source, key, f.value, decimals);
}

} // namespace

std::optional<std::string> hardware_profile(const BenchResults &r, std::string *error)
{
    const tidal_device_info &d = r.device;
    const bool migrates = d.flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT;

    const auto h2d_pinned = copy_rate(r, "h2d pinned runtime", "the runtime's memcpy from pinned memory");
    const auto h2d_pageable = copy_rate(r, "h2d pageable runtime", "the runtime's memcpy from malloc memory");
    const auto d2h_pinned = copy_rate(r, "d2h pinned runtime", "the runtime's memcpy into pinned memory");
    const auto d2h_pageable = copy_rate(r, "d2h pageable runtime", "the runtime's memcpy into malloc memory");
    const auto d2d_measured = copy_rate(r, "d2d device runtime", "the runtime's device-to-device memcpy, read and write traffic counted");
    const auto zero_copy_measured = scalar(r, "zero_copy", 1.0);
    const auto fault_measured =
        migrates ? large_rate(managed_samples(r, "demand_paging"),
                              "touch kernel (a word of every 4 KiB) on host-resident managed memory, demand paging")
                 : std::nullopt;
    const auto prefetch_h2d_measured = large_rate(managed_samples(r, "prefetch_h2d"), "tidal_prefetch of managed memory to the device");
    const auto prefetch_d2h_measured = large_rate(managed_samples(r, "prefetch_d2h"), "tidal_prefetch of managed memory back to the host");
    const auto host_memcpy_measured = scalar(r, "host_memcpy", 1.0);

    const auto bw_h2d_pinned = choose(h2d_pinned, "no pinned copy", {{"h2d_pageable", h2d_pageable}, {"d2h_pinned", d2h_pinned}});
    const auto bw_h2d_pageable = choose(h2d_pageable, "no pageable copy", {{"h2d_pinned", h2d_pinned}});
    const auto bw_d2h_pinned = choose(d2h_pinned, "no pinned copy", {{"h2d_pinned", bw_h2d_pinned}});
    const auto bw_d2h_pageable = choose(d2h_pageable, "no pageable copy", {{"d2h_pinned", bw_d2h_pinned}});
    if (!bw_h2d_pinned || !bw_h2d_pageable || !bw_d2h_pinned || !bw_d2h_pageable) {
        *error = "no host<->device copy was measured: there is nothing to calibrate a profile with";
        return std::nullopt;
    }
    const auto bw_d2d = choose(d2d_measured, "no device-to-device copy", {{"h2d_pinned", bw_h2d_pinned}});
    const auto bw_zero_copy = choose(zero_copy_measured, "no copy kernel", {{"h2d_pageable", bw_h2d_pageable}});
    const auto bw_fault = choose(fault_measured,
                                 migrates ? "no touch kernel or no managed memory" : "managed pages do not migrate on a fault here",
                                 {{"zero_copy", bw_zero_copy}});
    const auto bw_prefetch_h2d = choose(prefetch_h2d_measured, "no managed memory", {{"h2d_pinned", bw_h2d_pinned}});
    const auto bw_prefetch_d2h = choose(prefetch_d2h_measured, "no managed memory", {{"d2h_pinned", bw_d2h_pinned}});
    const auto bw_host_memcpy = choose(host_memcpy_measured, "no host buffers", {{"h2d_pinned", bw_h2d_pinned}});

    const auto lat_copy = choose(smallest_copy_us(r, "h2d pinned runtime"), "no pinned copy",
                                 {{"smallest d2h pinned copy", smallest_copy_us(r, "d2h pinned runtime")},
                                  {"smallest h2d pageable copy", smallest_copy_us(r, "h2d pageable runtime")}});
    const auto lat_kernel = choose(scalar(r, "kernel_launch", 1e6), "no kernels in this build", {{"copy latency", lat_copy}});
    const auto lat_device = choose(pair_us(r, "device"), "no unpooled context", {{"kernel_launch latency", lat_kernel}});
    const auto lat_pinned = choose(pair_us(r, "pinned"), "no unpooled pinned allocation", {{"alloc_device", lat_device}});
    const auto lat_managed = choose(pair_us(r, "managed"), "no unpooled managed allocation", {{"alloc_device", lat_device}});

    const std::string arch = d.arch;
    const bool amd = arch.rfind("gfx", 0) == 0;
    std::string t;
    t += fmt::format("# Hardware profile of {} (device {}), measured by `tidal bench` (tidal {}) on {}.\n", d.name, d.index,
                     tidal_version_string(), r.date);
    t += fmt::format("# Runtime: {} ({}).{}\n", r.runtime, r.runtime_detail,
                     r.simulated ? " The device measured was itself SIMULATED: these figures are its profile's, read back."
                                 : "");
    t += "# Bandwidths are the rate at large sizes (from the two largest sizes measured, so the fixed\n"
         "# cost of a call is not counted as a slower link); latencies come from the smallest sizes.\n"
         "# Each figure says where it came from; one marked NOT MEASURED took the fallback named there\n"
         "# (README: `tidal bench`, --emit-profile). Use it with [sim] profile = \"path/to/this.toml\".\n";
    t += "#\n# Layout as core/runtime/sim/profiles/h200.toml: [device] identity and sizes,\n"
         "# [bandwidth] GB/s = 10^9 bytes per second, [latency] microseconds.\n\n";
    t += fmt::format("name = {}\n\n[device]\n", toml_string(slug(d.name)));
    t += fmt::format("# as the runtime reports it\nname = {}\n", toml_string(d.name));
    t += fmt::format("# from the architecture name: gfx* is AMD, anything else NVIDIA\nvendor = \"{}\"\n", amd ? "amd" : "nvidia");
    t += fmt::format("arch = {}\n", toml_string(arch));
    t += fmt::format("# total memory as the runtime reports it ({})\ncapacity = {}\n", format_bytes(d.total_memory), d.total_memory);
    t += fmt::format("# migration granularity of managed memory, as the runtime reports it ({})\npage_size = {}\n",
                     format_bytes(d.page_size), d.page_size);
    t += fmt::format("# {}\nl2_size = {}\n", d.l2_size ? "as the runtime reports it" : "unknown to the runtime", d.l2_size);
    t += fmt::format("# do managed pages migrate on a device fault (TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT)?\nxnack = {}\n",
                     migrates ? "true" : "false");
    t += fmt::format("# as the runtime reports it (TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS)\nhost_native_atomics = {}\n",
                     (d.flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS) ? "true" : "false");

    t += "\n[bandwidth]\n";
    entry(t, "h2d_pageable", *bw_h2d_pageable, 2);
    entry(t, "h2d_pinned", *bw_h2d_pinned, 2);
    entry(t, "d2h_pageable", *bw_d2h_pageable, 2);
    entry(t, "d2h_pinned", *bw_d2h_pinned, 2);
    entry(t, "d2d", *bw_d2d, 1);
    entry(t, "prefetch_h2d", *bw_prefetch_h2d, 2);
    t += "# prefetch_h2d_duplicate (read-mostly pages copied by a prefetch) is not measured: without\n"
         "# the key the simulated device uses prefetch_h2d for them.\n";
    entry(t, "prefetch_d2h", *bw_prefetch_d2h, 2);
    entry(t, "fault", *bw_fault, 2);
    entry(t, "zero_copy", *bw_zero_copy, 2);
    entry(t, "host_memcpy", *bw_host_memcpy, 2);

    t += "\n[latency]\n";
    entry(t, "copy", *lat_copy, 3);
    entry(t, "kernel_launch", *lat_kernel, 3);
    entry(t, "fault", Figure{0.0, "fixed cost per fault: 0, as the fault bandwidth above is end to end (fault handling "
                                  "plus migration); it cannot be measured apart"},
          1);
    entry(t, "alloc_device", *lat_device, 3);
    entry(t, "alloc_pinned", *lat_pinned, 3);
    entry(t, "alloc_managed", *lat_managed, 3);
    return t;
}

} // namespace tidal_tool
