#include "config/size_parser.h"

#include <cctype>
#include <cstdio>
#include <limits>

namespace tidal {
namespace {

// GCC and Clang extension; 128 bits hold every intermediate of the exact decimal arithmetic.
__extension__ typedef unsigned __int128 u128;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char &c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::optional<uint64_t> unit_multiplier(std::string_view unit)
{
    struct Unit {
        const char *name;
        uint64_t multiplier;
    };
    static constexpr Unit kUnits[] = {
        {"", 1ull},
        {"b", 1ull},
        {"k", 1000ull},
        {"kb", 1000ull},
        {"m", 1000ull * 1000},
        {"mb", 1000ull * 1000},
        {"g", 1000ull * 1000 * 1000},
        {"gb", 1000ull * 1000 * 1000},
        {"t", 1000ull * 1000 * 1000 * 1000},
        {"tb", 1000ull * 1000 * 1000 * 1000},
        {"ki", 1ull << 10},
        {"kib", 1ull << 10},
        {"mi", 1ull << 20},
        {"mib", 1ull << 20},
        {"gi", 1ull << 30},
        {"gib", 1ull << 30},
        {"ti", 1ull << 40},
        {"tib", 1ull << 40},
    };
    const std::string key = lower(unit);
    for (const auto &u : kUnits)
        if (key == u.name)
            return u.multiplier;
    return std::nullopt;
}

std::nullopt_t fail(std::string *error, std::string reason)
{
    if (error)
        *error = std::move(reason);
    return std::nullopt;
}

} // namespace

std::optional<uint64_t> parse_size(std::string_view text, std::string *error)
{
    const std::string quoted = "'" + std::string(text) + "'";
    size_t i = 0, end = text.size();
    while (i < end && is_blank(text[i]))
        ++i;
    while (end > i && is_blank(text[end - 1]))
        --end;
    if (i == end)
        return fail(error, "empty size");
    if (text[i] == '-')
        return fail(error, quoted + " is negative; sizes are byte counts of zero or more");
    if (text[i] == '+')
        ++i;

    // Exact decimal arithmetic so "1.5GB" is 1500000000 and not 1499999999.
    u128 whole = 0;
    size_t whole_digits = 0;
    while (i < end && std::isdigit(static_cast<unsigned char>(text[i]))) {
        whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
        if (whole > std::numeric_limits<uint64_t>::max())
            return fail(error, quoted + " is too large (more than 2^64-1 bytes)");
        ++i, ++whole_digits;
    }
    u128 fraction = 0, scale = 1;
    size_t fraction_digits = 0;
    if (i < end && text[i] == '.') {
        ++i;
        while (i < end && std::isdigit(static_cast<unsigned char>(text[i]))) {
            if (fraction_digits == 18)
                return fail(error, quoted + " has too many decimal places");
            fraction = fraction * 10 + static_cast<unsigned>(text[i] - '0');
            scale *= 10;
            ++i, ++fraction_digits;
        }
        if (fraction_digits == 0)
            return fail(error, quoted + " has a decimal point with no digits after it");
    }
    if (whole_digits == 0 && fraction_digits == 0)
        return fail(error, quoted + " does not start with a number");
    while (i < end && is_blank(text[i]))
        ++i;

    const std::string_view unit = text.substr(i, end - i);
    const std::optional<uint64_t> multiplier = unit_multiplier(unit);
    if (!multiplier)
        return fail(error, quoted + " has an unknown unit '" + std::string(unit) +
                               "' (use B, KB, MB, GB, TB for powers of 1000 or KiB, MiB, GiB, "
                               "TiB for powers of 1024)");

    const u128 max = std::numeric_limits<uint64_t>::max();
    if (whole * *multiplier > max)
        return fail(error, quoted + " is too large (more than 2^64-1 bytes)");
    // whole <= 2^64 / multiplier here, so (whole * scale + fraction) * multiplier < 2^124.
    const u128 scaled = (whole * scale + fraction) * *multiplier;
    if (scaled % scale != 0)
        return fail(error, quoted + " is not a whole number of bytes");
    const u128 bytes = scaled / scale;
    if (bytes > max)
        return fail(error, quoted + " is too large (more than 2^64-1 bytes)");
    return static_cast<uint64_t>(bytes);
}

std::string format_size(uint64_t bytes)
{
    static constexpr const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " B";
    int unit = 0;
    uint64_t v = bytes;
    while (v >= 1024 && v % 1024 == 0 && unit < 6)
        v /= 1024, ++unit;
    if (v < 1024)
        return std::to_string(v) + " " + kUnits[unit];
    double d = static_cast<double>(bytes);
    unit = 0;
    while (d >= 1024 && unit < 6)
        d /= 1024, ++unit;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", d, kUnits[unit]);
    return buf;
}

} // namespace tidal
