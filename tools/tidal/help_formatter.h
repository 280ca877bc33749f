// How the `tidal` command's help reads. A command's description is its one-line summary, a
// newline, then the long text: `tidal --help` lists each command by its summary, `tidal COMMAND
// --help` shows all of it, wrapped. The man page is made from the same descriptions.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace tidal_tool {

class HelpFormatter : public CLI::Formatter {
public:
    HelpFormatter();
    std::string make_subcommand(const CLI::App *sub) const override;
    std::string make_description(const CLI::App *app) const override;
    std::string make_footer(const CLI::App *app) const override;
    std::string make_option_desc(const CLI::Option *opt) const override;
};

// The description's first line.
std::string summary_of(const std::string &description);
// What follows the first line ("" when there is nothing).
std::string details_of(const std::string &description);
// Whether the option takes an argument (a flag does not).
bool takes_value(const CLI::Option &opt);
// `text` with each paragraph ('\n'-separated) folded at word boundaries to `width` columns.
std::string wrap_text(const std::string &text, size_t width);

} // namespace tidal_tool
