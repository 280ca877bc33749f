#include "help_formatter.h"

#include <sstream>

namespace tidal_tool {

namespace {
constexpr size_t kWidth = 80;
}

std::string summary_of(const std::string &description) { return description.substr(0, description.find('\n')); }

std::string details_of(const std::string &description)
{
    const size_t newline = description.find('\n');
    return newline == std::string::npos ? std::string() : description.substr(newline + 1);
}

bool takes_value(const CLI::Option &opt) { return opt.get_items_expected_max() != 0; }

std::string wrap_text(const std::string &text, size_t width)
{
    std::string out;
    std::istringstream paragraphs(text);
    std::string paragraph;
    while (std::getline(paragraphs, paragraph)) {
        std::istringstream words(paragraph);
        std::string word;
        size_t column = 0;
        while (words >> word) {
            if (column > 0 && column + 1 + word.size() > width) {
                out += '\n';
                column = 0;
            } else if (column > 0) {
                out += ' ';
                ++column;
            }
            out += word;
            column += word.size();
        }
        out += '\n';
    }
    return out;
}

HelpFormatter::HelpFormatter() { column_width(34); }

std::string HelpFormatter::make_subcommand(const CLI::App *sub) const
{
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), summary_of(sub->get_description()), column_width_);
    return out.str();
}

std::string HelpFormatter::make_description(const CLI::App *app) const
{
    const std::string &d = app->get_description();
    return d.empty() ? std::string() : wrap_text(d, kWidth) + "\n";
}

std::string HelpFormatter::make_footer(const CLI::App *app) const
{
    const std::string footer = app->get_footer();
    return footer.empty() ? std::string() : wrap_text(footer, kWidth);
}

std::string HelpFormatter::make_option_desc(const CLI::Option *opt) const
{
    // CLI11 indents each line after a '\n' to the description column.
    std::string text = wrap_text(opt->get_description(), kWidth - column_width_);
    if (!text.empty())
        text.pop_back();
    return text;
}

} // namespace tidal_tool
