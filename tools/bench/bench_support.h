// What the public-API benchmarks share: failing loudly with tidal's message, medians, sizes
// with units on the command line, JSON strings. Header-only; each tool is one source file.
#pragma once

#include <tidal/tidal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "../common/file_name.h"

namespace tidal_bench {

// Prints "<program>: <what>: <status>: <tidal_last_error>" and exits 1.
[[noreturn]] inline void die(const char *program, tidal_status s, const char *what)
{
    std::fprintf(stderr, "%s: %s: %s: %s\n", program, what, tidal_status_name(s), tidal_last_error());
    std::exit(1);
}

// fopen(name, "w") after %r (the job-wide rank) and %p (the process id) in `name` are expanded
// by the library, so that every rank of a job writes its own file; NULL (with a message) when
// the name is bad or the file cannot be made.
inline std::FILE *open_output(const char *program, const std::string &name)
{
    std::string path;
    if (!tidal_tools::expand_file_name(name, path)) {
        std::fprintf(stderr, "%s: output file name '%s': %s\n", program, name.c_str(), tidal_last_error());
        return nullptr;
    }
    std::FILE *f = std::fopen(path.c_str(), "w");
    if (!f)
        std::fprintf(stderr, "%s: cannot write %s\n", program, path.c_str());
    return f;
}

// Of an even count, the mean of the two middle values (it took the upper one until 2026-12-03);
// "nan" in a table when nothing was measured.
inline double median(std::vector<double> v)
{
    if (v.empty())
        return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// "4096", "4KiB", "1.5MiB", "1GiB"; 0 for an unknown unit.
inline size_t parse_size(const std::string &s)
{
    char *end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    const std::string unit(end);
    if (unit == "KiB") v *= 1024.0;
    else if (unit == "MiB") v *= 1048576.0;
    else if (unit == "GiB") v *= 1073741824.0;
    else if (!unit.empty()) v = 0;
    return static_cast<size_t>(v);
}

inline std::string json_escape(const std::string &s)
{
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

} // namespace tidal_bench
