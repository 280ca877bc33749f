#include "bench_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "bench_report.h"
#include "byte_sizes.h"

namespace tidal_tool {
namespace {

constexpr double kWidth = 980;
constexpr double kChartHeight = 470;
constexpr double kLeft = 80, kRight = 250, kTop = 60, kBottom = 70; // margins of each plot area

std::string escape(const std::string &s)
{
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

// A logarithmic axis over whole decades (or, for sizes, powers of two) covering the values.
struct LogAxis {
    double lo = 0, hi = 1; // log10 of the ends
    double at(double v, double from, double to) const { return from + (std::log10(v) - lo) / (hi - lo) * (to - from); }
};

LogAxis decades(double smallest, double largest)
{
    LogAxis a{std::floor(std::log10(smallest)), std::ceil(std::log10(largest))};
    if (a.hi <= a.lo)
        a.hi = a.lo + 1;
    return a;
}

std::string text(double x, double y, const std::string &s, const char *anchor = "middle", int size = 12,
                 const std::string &extra = "")
{
    return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"{}\"{}>{}</text>\n", x, y, size, anchor,
                       extra, escape(s));
}

std::string line(double x1, double y1, double x2, double y2, const char *stroke, double width = 1,
                 const std::string &extra = "")
{
    return fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
                       x1, y1, x2, y2, stroke, width, extra);
}

std::string gb_label(double v) { return v >= 1 ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v); }

// "1 ns", "10 µs", "100 ms": a power of ten of seconds.
std::string decade_label(double seconds)
{
    static const char *const units[] = {"ns", "µs", "ms", "s"};
    int unit = 0;
    double v = seconds * 1e9;
    while (v >= 999.5 && unit < 3) {
        v /= 1000;
        ++unit;
    }
    return fmt::format("{:g} {}", std::round(v * 1000) / 1000, units[unit]);
}

const char *series_colour(const BandwidthPoint &p)
{
    static const std::map<std::string, const char *> colours = {
        {"h2d pinned", "#1f77b4"}, {"h2d pageable", "#ff7f0e"}, {"d2h pinned", "#2ca02c"},
        {"d2h pageable", "#d62728"}, {"d2d device", "#9467bd"}};
    auto it = colours.find(p.direction + " " + p.memory);
    return it == colours.end() ? "#444444" : it->second;
}

const char *backend_colour(const std::string &backend)
{
    return backend == "runtime" ? "#7f7f7f" : backend == "vendor" ? "#bcbd22" : "#17becf";
}

std::string bandwidth_chart(const BenchResults &r, double y0)
{
    std::string s;
    const double left = kLeft, right = kWidth - kRight, top = y0 + kTop, bottom = y0 + kChartHeight - kBottom;
    s += text(kWidth / 2, y0 + 25, fmt::format("Copy bandwidth against transfer size: {} ({})", r.device.name, r.runtime),
              "middle", 16, " font-weight=\"bold\"");
    std::vector<double> rates;
    for (const BandwidthPoint &p : r.bandwidth)
        if (auto g = p.gbs())
            rates.push_back(*g);
    if (rates.empty() || r.bandwidth_sizes.empty())
        return s + text(kWidth / 2, y0 + kChartHeight / 2, "no copy was measured");
    const double smallest = static_cast<double>(r.bandwidth_sizes.front()), largest = static_cast<double>(r.bandwidth_sizes.back());
    const LogAxis x{std::log10(smallest), std::log10(std::max(largest, smallest * 2))};
    const LogAxis y = decades(*std::min_element(rates.begin(), rates.end()), *std::max_element(rates.begin(), rates.end()));
    for (double d = y.lo; d <= y.hi + 1e-9; ++d) {
        const double py = y.at(std::pow(10.0, d), bottom, top);
        s += line(left, py, right, py, "#dddddd");
        s += text(left - 8, py + 4, gb_label(std::pow(10.0, d)), "end", 11);
    }
    for (uint64_t b : r.bandwidth_sizes) {
        const double px = x.at(static_cast<double>(b), left, right);
        s += line(px, top, px, bottom, "#eeeeee");
        s += text(px, bottom + 18, format_bytes(b), "middle", 11);
    }
    s += line(left, bottom, right, bottom, "#000000");
    s += line(left, top, left, bottom, "#000000");
    s += text((left + right) / 2, bottom + 42, "transfer size (log scale)", "middle", 12);
    s += text(20, (top + bottom) / 2, "GB/s (log scale)", "middle", 12,
              fmt::format(" transform=\"rotate(-90 20 {:.1f})\"", (top + bottom) / 2));

    std::vector<std::string> order;
    std::map<std::string, std::vector<const BandwidthPoint *>> by_series;
    for (const BandwidthPoint &p : r.bandwidth) {
        if (!by_series.count(p.series()))
            order.push_back(p.series());
        by_series[p.series()].push_back(&p);
    }
    double legend_y = top;
    for (const std::string &name : order) {
        const auto &points = by_series[name];
        const char *colour = series_colour(*points.front());
        const std::string dash = points.front()->path == "runtime" ? "" : " stroke-dasharray=\"6 3\"";
        std::string path;
        for (const BandwidthPoint *p : points) {
            auto g = p->gbs();
            if (!g) {
                path += " "; // a gap: the next point starts a new piece
                continue;
            }
            const double px = x.at(static_cast<double>(p->bytes), left, right), py = y.at(*g, bottom, top);
            path += fmt::format("{}{:.1f},{:.1f}", path.empty() || path.back() == ' ' ? "M" : " L", px, py);
            s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{} {}: {:.2f} GB/s</title></circle>\n",
                             px, py, colour, escape(name), format_bytes(p->bytes), *g);
        }
        if (path.find('M') != std::string::npos)
            s += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", path, colour, dash);
        s += line(right + 20, legend_y, right + 50, legend_y, colour, 2, dash);
        s += text(right + 56, legend_y + 4, name, "start", 11);
        legend_y += 18;
    }
    s += text(right + 20, legend_y + 10, "solid: the runtime's memcpy", "start", 10);
    s += text(right + 20, legend_y + 24, "dashed: tidal_copy", "start", 10);
    return s;
}

std::string latency_chart(const BenchResults &r, double y0)
{
    std::string s;
    const double left = kLeft, right = kWidth - kRight, top = y0 + kTop, bottom = y0 + kChartHeight - kBottom;
    s += text(kWidth / 2, y0 + 25, "alloc+free pair latency per kind and size (log scale)", "middle", 16,
              " font-weight=\"bold\"");
    std::vector<double> times;
    for (const LatencyPoint &p : r.latency)
        if (p.seconds && *p.seconds > 0)
            times.push_back(*p.seconds);
    if (r.latency.empty() || times.empty())
        return s + text(kWidth / 2, y0 + kChartHeight / 2, "no latency was measured");
    const LogAxis y = decades(*std::min_element(times.begin(), times.end()), *std::max_element(times.begin(), times.end()));
    for (double d = y.lo; d <= y.hi + 1e-9; ++d) {
        const double py = y.at(std::pow(10.0, d), bottom, top);
        s += line(left, py, right, py, "#dddddd");
        s += text(left - 8, py + 4, decade_label(std::pow(10.0, d)), "end", 11);
    }
    s += line(left, bottom, right, bottom, "#000000");
    s += line(left, top, left, bottom, "#000000");
    s += text(20, (top + bottom) / 2, "time per pair (log scale)", "middle", 12,
              fmt::format(" transform=\"rotate(-90 20 {:.1f})\"", (top + bottom) / 2));

    // Groups of three bars (runtime, vendor, tidal) per kind and size, in measured order.
    const size_t groups = (r.latency.size() + 2) / 3;
    const double group_width = (right - left) / static_cast<double>(groups);
    const double bar = std::max(2.0, group_width * 0.8 / 3);
    std::string kind_shown;
    double kind_start = left;
    for (size_t g = 0; g < groups; ++g) {
        const double gx = left + group_width * static_cast<double>(g);
        const LatencyPoint &first = r.latency[3 * g];
        for (size_t b = 0; b < 3 && 3 * g + b < r.latency.size(); ++b) {
            const LatencyPoint &p = r.latency[3 * g + b];
            const double bx = gx + group_width * 0.1 + bar * static_cast<double>(b);
            if (!p.seconds)
                continue;
            if (*p.seconds <= 0) {
                s += text(bx + bar / 2, bottom - 3, "0", "middle", 9);
                continue;
            }
            const double py = y.at(*p.seconds, bottom, top);
            s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{} {} {}: {}</title></rect>\n",
                             bx, py, bar, bottom - py, backend_colour(p.backend), escape(p.kind), format_bytes(p.bytes),
                             p.backend, escape(format_seconds(*p.seconds)));
        }
        s += text(gx + group_width / 2, bottom + 14, format_bytes(first.bytes), "middle", 9);
        if (first.kind != kind_shown) {
            if (!kind_shown.empty())
                s += line(gx, bottom, gx, bottom + 40, "#999999");
            kind_shown = first.kind;
            kind_start = gx;
        }
        const bool last_of_kind = g + 1 == groups || r.latency[3 * (g + 1)].kind != first.kind;
        if (last_of_kind)
            s += text((kind_start + gx + group_width) / 2, bottom + 32, first.kind, "middle", 12);
    }
    double legend_y = top;
    for (const char *backend : {"runtime", "vendor", "tidal"}) {
        s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", right + 20,
                         legend_y - 8, backend_colour(backend));
        s += text(right + 40, legend_y + 1, backend, "start", 11);
        legend_y += 18;
    }
    s += text(right + 20, legend_y + 10, "runtime: pools off", "start", 10);
    s += text(right + 20, legend_y + 24, "vendor: stream-ordered pool", "start", 10);
    s += text(right + 20, legend_y + 38, "tidal: tidal's pools", "start", 10);
    s += text(right + 20, legend_y + 52, "no bar: not measured", "start", 10);
    if (r.simulated)
        s += text(right + 20, legend_y + 66, "0: no simulated time", "start", 10);
    return s;
}

const char *tag_colour(size_t i)
{
    static const char *const colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    return colours[i % std::size(colours)];
}

std::string memory_chart(const MemoryChart &c, double y0)
{
    std::string s;
    const double left = kLeft, right = kWidth - kRight, top = y0 + kTop, bottom = y0 + kChartHeight - kBottom;
    s += text(kWidth / 2, y0 + 25, c.title, "middle", 16, " font-weight=\"bold\"");
    const size_t n = c.seconds.size();
    std::vector<uint64_t> totals(n, 0);
    for (const auto &[name, values] : c.series)
        for (size_t i = 0; i < n && i < values.size(); ++i)
            totals[i] += values[i];
    const uint64_t peak = n ? *std::max_element(totals.begin(), totals.end()) : 0;
    if (n == 0 || peak == 0)
        return s + text(kWidth / 2, y0 + kChartHeight / 2, "no device memory was held");
    const double t_end = std::max(c.seconds.back(), 1e-12);
    auto px = [&](double t) { return left + t / t_end * (right - left); };
    auto py = [&](double bytes) { return bottom - bytes / static_cast<double>(peak) * (bottom - top); };
    for (int q = 0; q <= 4; ++q) {
        const double v = static_cast<double>(peak) * q / 4;
        s += line(left, py(v), right, py(v), "#dddddd");
        s += text(left - 8, py(v) + 4, format_bytes(static_cast<uint64_t>(v)), "end", 11);
        s += text(px(t_end * q / 4), bottom + 18, format_seconds(t_end * q / 4), "middle", 11);
    }
    s += line(left, bottom, right, bottom, "#000000");
    s += line(left, top, left, bottom, "#000000");
    s += text((left + right) / 2, bottom + 42, "simulated time", "middle", 12);
    // Each series is a band from the sum of the series before it to that sum plus its own,
    // drawn in steps: memory changes at a call and holds until the next.
    std::vector<uint64_t> below(n, 0);
    double legend_y = top;
    for (size_t k = 0; k < c.series.size(); ++k) {
        const auto &[name, values] = c.series[k];
        std::string upper, lower;
        for (size_t i = 0; i < n; ++i) {
            const double x0 = px(c.seconds[i]), x1 = px(i + 1 < n ? c.seconds[i + 1] : t_end);
            const double high = static_cast<double>(below[i] + (i < values.size() ? values[i] : 0));
            const double low = static_cast<double>(below[i]);
            upper += fmt::format("{}{:.1f},{:.1f} L{:.1f},{:.1f}", upper.empty() ? "M" : " L", x0, py(high), x1, py(high));
            lower = fmt::format(" L{:.1f},{:.1f} L{:.1f},{:.1f}", x1, py(low), x0, py(low)) + lower;
        }
        s += fmt::format("<path d=\"{}{} Z\" fill=\"{}\" fill-opacity=\"0.8\"><title>{}</title></path>\n", upper, lower,
                         tag_colour(k), escape(name));
        for (size_t i = 0; i < n && i < values.size(); ++i)
            below[i] += values[i];
        s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", right + 20,
                         legend_y - 8, tag_colour(k));
        s += text(right + 40, legend_y + 1, name, "start", 11);
        legend_y += 18;
    }
    return s + text(right + 20, legend_y + 10, fmt::format("peak {}", format_bytes(peak)), "start", 10);
}

// The <svg> element's opening, its title and a white background.
std::string document(double height, const std::string &title)
{
    std::string s = fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
                                "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\">\n",
                                kWidth, height);
    s += fmt::format("<title>{}</title>\n", escape(title));
    return s + fmt::format("<rect width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#ffffff\"/>\n", kWidth, height);
}

} // namespace

std::string bench_svg(const BenchResults &r)
{
    const double height = 2 * kChartHeight + 40;
    std::string s = document(height, fmt::format("tidal bench: {} ({}), {}", r.device.name, r.runtime, r.date));
    s += bandwidth_chart(r, 0);
    s += latency_chart(r, kChartHeight);
    s += text(kWidth / 2, height - 12,
              fmt::format("tidal {} bench, {}{}", tidal_version_string(), r.date,
                          r.simulated ? ", simulated device: the profile's predictions" : ""),
              "middle", 10, " fill=\"#666666\"");
    return s + "</svg>\n";
}

std::string memory_svg(const std::vector<MemoryChart> &charts, const std::string &caption)
{
    const double height = static_cast<double>(charts.size()) * kChartHeight + 40;
    std::string s = document(height, caption);
    for (size_t i = 0; i < charts.size(); ++i)
        s += memory_chart(charts[i], kChartHeight * static_cast<double>(i));
    s += text(kWidth / 2, height - 12, caption, "middle", 10, " fill=\"#666666\"");
    return s + "</svg>\n";
}

} // namespace tidal_tool
