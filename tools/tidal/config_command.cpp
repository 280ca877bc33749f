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
    size_t needed = 0;
    tidal_config_describe(ctx, nullptr, 0, &needed);
    std::string text(needed, '\0');
    tidal_status s = tidal_config_describe(ctx, text.data(), text.size(), nullptr);
    if (s != TIDAL_OK) {
        fmt::print(stderr, "tidal: {}: {}\n", tidal_status_name(s), tidal_last_error());
        tidal_context_destroy(ctx);
        return 1;
    }
    text.resize(needed ? needed - 1 : 0);
    fmt::print("# {}: valid\n{}", file, text);
    tidal_context_destroy(ctx);
    return 0;
}

} // namespace

void add_config_command(CLI::App &app)
{
    CLI::App *config = app.add_subcommand("config", "Work with configuration files");
    config->require_subcommand(1);
    CLI::App *check = config->add_subcommand(
        "check", "Validate FILE (keys, types, values, policy plugins and their options, the runtime) and print the "
                 "resolved settings and the policy chain. Exit status 1 on any error.");
    auto file = std::make_shared<std::string>();
    check->add_option("FILE", *file, "TOML configuration file")->required();
    check->callback([file] {
        int rc = run_check(*file);
        if (rc != 0)
            throw CLI::RuntimeError(rc);
    });
}

} // namespace tidal_tool
