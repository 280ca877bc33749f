// "did you mean" for a mistyped command name. The core has its own suggester for configuration
// keys; the tool may use only the public API, and command names are few and short, so a plain
// edit distance does.
#pragma once

#include <string>
#include <vector>

namespace tidal_tool {

// The name in `commands` that `typed` is most plausibly a typo of (at most two edits, and
// fewer than half its letters; or a prefix of it), or "" when none is.
std::string suggest_command(const std::string &typed, const std::vector<std::string> &commands);

} // namespace tidal_tool
