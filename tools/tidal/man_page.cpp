#include "man_page.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <sstream>

#include <tidal/tidal.h>

#include "help_formatter.h"

namespace tidal_tool {
namespace {

// Text as roff reads it literally: backslashes escaped, no line taken for a request, the
// em dash named.
std::string roff_text(const std::string &text)
{
    std::string out;
    bool line_start = true;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (line_start && (c == '.' || c == '\''))
            out += "\\&";
        line_start = c == '\n';
        if (c == '\\')
            out += "\\e";
        else if (text.compare(i, 3, "\u2014") == 0) {
            out += "\\(em";
            i += 2;
        } else
            out += c;
    }
    return out;
}

// Option and command names: their hyphens are minus signs, so they can be copied and searched.
std::string roff_name(const std::string &name)
{
    std::string out;
    for (char c : name)
        out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
}

// Paragraphs of `text` (one per line), each a roff paragraph.
void paragraphs(std::ostringstream &out, const std::string &text)
{
    std::istringstream lines(text);
    std::string line;
    bool first = true;
    while (std::getline(lines, line)) {
        if (line.empty())
            continue;
        if (!first)
            out << ".PP\n";
        out << roff_text(line) << "\n";
        first = false;
    }
}

void options(std::ostringstream &out, const CLI::App &app)
{
    for (const CLI::Option *opt : app.get_options()) {
        const std::string names = opt->get_name(false, true);
        if (opt->get_group().empty() || names.empty())
            continue; // hidden
        std::string label = fmt::format("\\fB{}\\fR", roff_name(names));
        if (takes_value(*opt))
            label += fmt::format(" \\fI{}\\fR", roff_name(opt->get_type_name()));
        out << ".TP\n" << label << "\n" << roff_text(opt->get_description()) << "\n";
    }
}

void command(std::ostringstream &out, const CLI::App &cmd, const std::string &path)
{
    const auto subs = cmd.get_subcommands({});
    std::string synopsis = path;
    for (const CLI::Option *opt : cmd.get_options())
        if (opt->get_positional())
            synopsis += " " + opt->get_name(true);
    if (!subs.empty())
        synopsis += " COMMAND";
    out << fmt::format(".SS \"{} [OPTIONS]\"\n", roff_name(synopsis));
    paragraphs(out, cmd.get_description());
    options(out, cmd);
    for (const CLI::App *sub : subs)
        command(out, *sub, path + " " + sub->get_name());
}

} // namespace

std::string man_page(const CLI::App &app, const std::string &tagline)
{
    std::ostringstream out;
    out << fmt::format(".TH TIDAL 1 \"\" \"tidal {}\" \"User Commands\"\n", tidal_version_string());
    out << ".SH NAME\ntidal \\- " << roff_text(tagline) << "\n";
    out << ".SH SYNOPSIS\n.B tidal\n[\\fB\\-V\\fR] [\\fB\\-h\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n";
    out << ".SH DESCRIPTION\n";
    paragraphs(out, details_of(app.get_description()));
    out << ".PP\nCommands:\n";
    for (const CLI::App *sub : app.get_subcommands({}))
        out << ".TP\n\\fB" << roff_name(sub->get_name()) << "\\fR\n" << roff_text(summary_of(sub->get_description())) << "\n";
    out << ".SH OPTIONS\n";
    options(out, app);
    out << ".SH COMMANDS\n";
    for (const CLI::App *sub : app.get_subcommands({}))
        command(out, *sub, "tidal " + sub->get_name());
    out << ".SH ENVIRONMENT\n";
    paragraphs(out, app.get_footer());
    out << ".SH EXIT STATUS\n0 on success, 1 when the command fails (a check fails, a file is bad), 2 on a usage "
           "error.\n";
    return out.str();
}

} // namespace tidal_tool
