// tidal(1), in roff, from the command tree the help comes from: the same descriptions, the same
// options, so the man page cannot drift from `tidal --help`. The build writes it with the
// hidden `tidal --man`.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace tidal_tool {

// `tagline` is the NAME section's "what it is" ("where GPU memory lives and when it moves").
std::string man_page(const CLI::App &app, const std::string &tagline);

} // namespace tidal_tool
