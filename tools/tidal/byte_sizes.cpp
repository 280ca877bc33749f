#include "byte_sizes.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace tidal_tool {

std::optional<uint64_t> parse_byte_size(const std::string &text, std::string *why)
{
    // The configuration's units (core/config/size_parser), case-insensitive like there.
    static const std::array<std::pair<const char *, double>, 18> units = {{
        {"", 1.0}, {"b", 1.0},
        {"ki", 1024.0}, {"mi", 1048576.0}, {"gi", 1073741824.0}, {"ti", 1099511627776.0},
        {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
        {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12},
        {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
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
    std::string key = unit;
    for (char &c : key)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto &[name, factor] : units)
        if (key == name) {
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

CLI::Validator byte_size_option(uint64_t min, uint64_t max)
{
    return CLI::Validator(
        [min, max](std::string &text) {
            std::string why;
            const auto bytes = parse_byte_size(text, &why);
            if (!bytes)
                return why;
            if (*bytes < min || *bytes > max)
                return fmt::format("'{}' is {} bytes; give {} to {}", text, *bytes, format_bytes(min), format_bytes(max));
            text = std::to_string(*bytes); // what the option's integer is read from
            return std::string();
        },
        "");
}

CLI::Validator byte_sizes_check(bool list)
{
    return CLI::Validator(
        [list](std::string &text) {
            std::string why;
            const bool ok = list ? parse_byte_sizes(text, &why).has_value() : parse_byte_size(text, &why).has_value();
            return ok ? std::string() : why;
        },
        "");
}

} // namespace tidal_tool
