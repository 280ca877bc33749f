#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bash_completion.h"
#include "command_suggester.h"
#include "help_formatter.h"
#include "man_page.h"
#include "tool_commands.h"
#include "version_report.h"

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

double clock_of(tidal_context *ctx)
{
    double s = 0;
    tidal_clock(ctx, &s);
    return s;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

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

namespace {

constexpr const char *kTagline = "where GPU memory lives and when it moves";

std::vector<std::string> command_names(const CLI::App &app)
{
    std::vector<std::string> names;
    for (const CLI::App *sub : app.get_subcommands({}))
        names.push_back(sub->get_name());
    return names;
}

std::string usage_line(const CLI::App &app)
{
    std::string commands;
    for (const auto &name : command_names(app))
        commands += (commands.empty() ? "" : "|") + name;
    return fmt::format("usage: tidal [-V] [-h] {{{}}} [OPTIONS]; 'tidal --help' lists the commands\n", commands);
}

// A word where a command name belongs that names none: which command it was looked up under
// ("tidal", "tidal config") and what it could have been. False when every command word is one.
bool report_unknown_command(const CLI::App &app, int argc, char **argv)
{
    const CLI::App *at = &app;
    std::string path = "tidal";
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word.starts_with("-"))
            continue;
        const std::vector<std::string> names = command_names(*at);
        if (names.empty())
            return false; // the rest are this command's arguments
        const auto subs = at->get_subcommands({});
        const auto next = std::find_if(subs.begin(), subs.end(), [&](const CLI::App *s) { return s->check_name(word); });
        if (next != subs.end()) {
            at = *next;
            path += " " + word;
            continue;
        }
        const std::string near = tidal_tool::suggest_command(word, names);
        std::string list;
        for (const auto &n : names)
            list += (list.empty() ? "" : ", ") + n;
        fmt::print(stderr, "{}: '{}' is not a command{}; the commands are {}\n", path, word,
                   near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near), list);
        return true;
    }
    return false;
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app{fmt::format("tidal {} \u2014 {}.\n'tidal COMMAND --help' describes a command and its options.",
                             TIDAL_VERSION_STRING, kTagline),
                 "tidal"};
    app.formatter(std::make_shared<tidal_tool::HelpFormatter>());
    app.footer("Environment: TIDAL_CONFIG (configuration file, default built-in settings), TIDAL_RUNTIME (auto, sim, "
               "hip or cuda), TIDAL_LOG_LEVEL (error, warn, info, debug), TIDAL_POLICY_PATH and TIDAL_RUNTIME_PATH "
               "(colon-separated folders searched first for policies and runtime modules); see the README.");
    app.require_subcommand(0, 1);
    std::string version = tidal_tool::version_report();
    version.pop_back(); // CLI11 ends the line itself
    app.set_version_flag("-V,--version", version,
                         "Print the version, what this build has and where it looks for modules and policies");
    bool man = false, completion = false;
    app.add_flag("--man", man, "Print the man page tidal(1) in roff")->group("");
    app.add_flag("--bash-completion", completion, "Print the bash completion script")->group("");
    tidal_tool::add_probe_command(app);
    tidal_tool::add_config_command(app);
    tidal_tool::add_validate_command(app);
    tidal_tool::add_bench_command(app);
    tidal_tool::add_stats_command(app);
    tidal_tool::add_replay_command(app);
    tidal_tool::add_doctor_command(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::RuntimeError &e) {
        return e.get_exit_code(); // a command failed and said why
    } catch (const CLI::ParseError &e) {
        if (e.get_exit_code() == 0)
            return app.exit(e); // --help, --version
        if (!report_unknown_command(app, argc, argv))
            fmt::print(stderr, "tidal: {}\nRun 'tidal --help' or 'tidal COMMAND --help' for the options.\n", e.what());
        return 2;
    }
    if (man)
        fmt::print("{}", tidal_tool::man_page(app, kTagline));
    else if (completion)
        fmt::print("{}", tidal_tool::bash_completion(app));
    else if (app.get_subcommands().empty()) {
        fmt::print(stderr, "{}", usage_line(app));
        return 2;
    }
    return 0;
}
