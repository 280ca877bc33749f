#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <string>

#include "tool_commands.h"

namespace tidal_tool {
namespace {

int run_check(const std::string &file)
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

} // namespace

void add_config_command(CLI::App &app)
{
    CLI::App *config = app.add_subcommand("config", "Work with configuration files\n"
                                                     "'tidal config check FILE' validates a configuration file.");
    config->require_subcommand(1);
    CLI::App *check = config->add_subcommand(
        "check", "Validate a configuration file and print the resolved settings\n"
                 "Checks FILE's keys, types and values, loads its policy plugins with their options and starts its "
                 "runtime, then prints the resolved settings and the policy chain. An error names the file, line and "
                 "column, with a suggestion for a misspelt key. Exit status 1 on any error.");
    auto file = std::make_shared<std::string>();
    check->add_option("FILE", *file, "TOML configuration file")->required();
    check->callback([file] {
        int rc = run_check(*file);
        if (rc != 0)
            throw CLI::RuntimeError(rc);
    });
}

} // namespace tidal_tool
