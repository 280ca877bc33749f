// `tidal config check FILE`: a configuration file checked the way a context would load it.
#include <fmt/format.h>

#include <string>

#include "command_options.h"
#include "tool_commands.h"

namespace tidal_tool {

int run_config_check(const std::string &file)
{
    tidal_context *ctx = open_context(file, "");
    if (!ctx)
        return 1;
    const std::string text = describe_configuration(ctx);
    if (text.empty()) {
        fmt::print(stderr, "tidal: {}\n", tidal_last_error());
        tidal_context_destroy(ctx);
        return 1;
    }
    fmt::print("# {}: valid\n{}", file, text);
    tidal_context_destroy(ctx);
    return 0;
}

} // namespace tidal_tool
