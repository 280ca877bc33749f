// The `tidal` command's subcommands. Each uses the public C API only: the tool is the API's
// first customer.
#pragma once

#include <string>

#include <tidal/tidal.h>

namespace CLI {
class App;
}

namespace tidal_tool {

// Opens a context from --config FILE, else --runtime NAME, else TIDAL_CONFIG / defaults.
// On failure prints the status and message to stderr and returns NULL.
tidal_context *open_context(const std::string &config_file, const std::string &runtime);

void add_probe_command(CLI::App &app);
void add_config_command(CLI::App &app);
void add_validate_command(CLI::App &app);

} // namespace tidal_tool
