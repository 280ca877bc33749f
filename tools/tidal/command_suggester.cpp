#include "command_suggester.h"

#include <algorithm>
#include <numeric>

namespace tidal_tool {
namespace {

// Levenshtein distance, one row at a time.
size_t distance(const std::string &a, const std::string &b)
{
    std::vector<size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), size_t{0});
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

} // namespace

std::string suggest_command(const std::string &typed, const std::vector<std::string> &commands)
{
    std::string best;
    size_t best_distance = std::min<size_t>(3, (typed.size() + 1) / 2);
    for (const auto &name : commands) {
        if (typed.size() >= 2 && name.starts_with(typed))
            return name; // "val" for "validate"
        if (const size_t d = distance(typed, name); d < best_distance) {
            best = name;
            best_distance = d;
        }
    }
    return best;
}

} // namespace tidal_tool
