// A bash completion script for `tidal`, from the same command tree as the help: commands,
// options, the values of options that take one of a few words, files for FILE arguments.
// The build writes it with the hidden `tidal --bash-completion`.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace tidal_tool {

std::string bash_completion(const CLI::App &app);

} // namespace tidal_tool
