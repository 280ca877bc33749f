#include "byte_sizes.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace tidal_tool {

std::optional<uint64_t> parse_byte_size(const std::string &text, std::string *why)
{
    static const std::array<std::pair<const char *, double>, 14> units = {{
        {"", 1.0}, {"B", 1.0},
        {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
        {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
        {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    }};
    const char *begin = text.c_str();
    char *end = nullptr;
    const double number = std::strtod(begin, &end);
    if (end == begin || text.empty() || text[0] == '-' || text[0] == '+' || !std::isfinite(number)) {
        *why = fmt::format("'{}' is not a size: write a byte count or a number with a unit such as 64KiB", text);
        return std::nullopt;
    }
    std::string unit(end);
    if (!unit.empty() && unit.front() == ' ')
        unit.erase(0, 1);
    for (const auto &[name, factor] : units)
        if (unit == name) {
            const double bytes = number * factor;
            if (bytes < 1 || bytes > 1.8e19 || bytes != std::floor(bytes)) {
                *why = fmt::format("'{}' is not a whole number of bytes from 1 up", text);
                return std::nullopt;
            }
            return static_cast<uint64_t>(bytes);
        }
    *why = fmt::format("'{}': unknown unit '{}' (use B, KiB, MiB, GiB, TiB, K, M, G or T)", text, unit);
    return std::nullopt;
}

std::optional<std::vector<uint64_t>> parse_byte_sizes(const std::string &text, std::string *why)
{
    std::vector<uint64_t> sizes;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos)
            comma = text.size();
        auto size = parse_byte_size(text.substr(start, comma - start), why);
        if (!size)
            return std::nullopt;
        sizes.push_back(*size);
        start = comma + 1;
    }
    return sizes;
}

std::string format_bytes(uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    if (v == std::floor(v))
        return fmt::format("{} {}", static_cast<uint64_t>(v), units[u]);
    return fmt::format("{:.1f} {}", v, units[u]);
}

} // namespace tidal_tool
