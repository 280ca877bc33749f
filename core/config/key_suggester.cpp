#include "config/key_suggester.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

namespace tidal {
namespace {

char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance: Levenshtein plus adjacent transposition, since swapped
// letters ("polciy") are the most common typo in hand-written files.
size_t edit_distance(std::string_view a, std::string_view b)
{
    const size_t n = a.size(), m = b.size();
    std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
    for (size_t j = 0; j <= m; ++j)
        prev[j] = j;
    for (size_t i = 1; i <= n; ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= m; ++j) {
            const size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                fold(a[i - 2]) == fold(b[j - 1]))
                cur[j] = std::min(cur[j], prev2[j - 2] + 1);
        }
        std::swap(prev2, prev);
        std::swap(prev, cur);
    }
    return prev[m];
}

} // namespace

std::string nearest_key(std::string_view wrong, std::span<const std::string_view> valid)
{
    if (wrong.empty())
        return {};
    std::string_view best;
    size_t best_distance = std::numeric_limits<size_t>::max();
    for (std::string_view candidate : valid) {
        // Beyond a third of the shorter word the "typo" is really a different word; one- and
        // two-letter words only match when they differ in case.
        const size_t shorter = std::min(wrong.size(), candidate.size());
        const size_t allowed = shorter < 3 ? 0 : std::max<size_t>(1, shorter / 3);
        const size_t d = edit_distance(wrong, candidate);
        if (d <= allowed && d < best_distance) {
            best = candidate;
            best_distance = d;
        }
    }
    if (!best.empty())
        return std::string(best);
    // A word cut short or run on ("warning" for "warn", "page" for "page_size") is far in edits
    // but obvious to a person.
    // The longest such match wins: "policy_paths" is "policy_path", not "policy".
    size_t best_length = 3;
    for (std::string_view candidate : valid) {
        const size_t shorter = std::min(wrong.size(), candidate.size());
        if (shorter > best_length &&
            edit_distance(wrong.substr(0, shorter), candidate.substr(0, shorter)) == 0) {
            best = candidate;
            best_length = shorter;
        }
    }
    return std::string(best);
}

std::string nearest_key(std::string_view wrong, std::span<const std::string> valid)
{
    std::vector<std::string_view> views(valid.begin(), valid.end());
    return nearest_key(wrong, std::span<const std::string_view>(views));
}

std::string did_you_mean(std::string_view wrong, std::span<const std::string_view> valid)
{
    const std::string near = nearest_key(wrong, valid);
    return near.empty() ? std::string() : " did you mean '" + near + "'?";
}

} // namespace tidal
