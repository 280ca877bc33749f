// "did you mean ...?" for misspelt configuration keys and values.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace tidal {

// The entry of `valid` closest to `wrong` by edit distance (insertions, deletions,
// substitutions and swaps of neighbours, ignoring case), or "" when none is close enough to be
// a plausible typo: one edit for words of 3 to 5 letters, up to a third of the length for
// longer ones, none for shorter ones; failing that, an entry that begins the same as `wrong`
// over 4 letters or more ("warning" -> "warn", "page" -> "page_size"). Ties go to the earlier
// entry.
std::string nearest_key(std::string_view wrong, std::span<const std::string_view> valid);

// Convenience for callers holding std::string names (policy chains, profile names).
std::string nearest_key(std::string_view wrong, std::span<const std::string> valid);

// " did you mean 'X'?" when there is a near key, "" otherwise: appended to error messages.
std::string did_you_mean(std::string_view wrong, std::span<const std::string_view> valid);

} // namespace tidal
