#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tool_commands.h"

namespace tidal_tool {

tidal_context *open_context(const std::string &config_file, const std::string &runtime)
{
    tidal_context *ctx = nullptr;
    tidal_status s;
    if (!config_file.empty())
        s = tidal_context_create_from_file(config_file.c_str(), &ctx);
    else if (!runtime.empty())
        s = tidal_context_create_from_string(fmt::format("runtime = \"{}\"\n", runtime).c_str(), &ctx);
    else
        s = tidal_context_create(&ctx);
    if (s != TIDAL_OK) {
        fmt::print(stderr, "tidal: {}: {}\n", tidal_status_name(s), tidal_last_error());
        return nullptr;
    }
    return ctx;
}

std::string describe_configuration(tidal_context *ctx)
{
    size_t needed = 0;
    tidal_config_describe(ctx, nullptr, 0, &needed);
    std::string text(needed, '\0');
    if (tidal_config_describe(ctx, text.data(), text.size(), nullptr) != TIDAL_OK)
        return {};
    text.resize(needed ? needed - 1 : 0);
    return text;
}

std::string failure_text(tidal_status s) { return fmt::format("{}: {}", tidal_status_name(s), tidal_last_error()); }

tidal_status run_check(tidal_context *ctx, tidal_check_kind kind, int32_t device, void *target, size_t size, uint64_t seed,
                       uint64_t *result, const void *source, uint32_t repeat, double *elapsed_ms)
{
    tidal_check c = TIDAL_CHECK_INIT;
    c.kind = kind;
    c.device = device;
    c.target = target;
    c.source = source;
    c.size = size;
    c.seed = seed;
    c.repeat = repeat;
    const tidal_status s = tidal_check_run(ctx, &c);
    if (result)
        *result = c.result;
    if (elapsed_ms)
        *elapsed_ms = c.elapsed_ms;
    return s;
}

} // namespace tidal_tool

int main(int argc, char **argv)
{
    CLI::App app{fmt::format("tidal {} — where GPU memory lives and when it moves.\n"
                             "Environment: TIDAL_CONFIG (configuration file), TIDAL_RUNTIME, TIDAL_LOG_LEVEL, "
                             "TIDAL_POLICY_PATH, TIDAL_RUNTIME_PATH (see README).",
                             tidal_version_string()),
                 "tidal"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(tidal_version_string()));
    tidal_tool::add_probe_command(app);
    tidal_tool::add_config_command(app);
    tidal_tool::add_validate_command(app);
    tidal_tool::add_bench_command(app);
    CLI11_PARSE(app, argc, argv);
    return 0;
}
