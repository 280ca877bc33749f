#include "config/toml_reader.h"

#include <algorithm>
#include <limits>

#include "config/key_suggester.h"
#include "config/size_parser.h"
#include "config/toml_limits.h"
#include "status/error.h"

namespace tidal {

void detail::toml_check_failed(const char *expression)
{
    const std::string what = std::string("the text breaks the parser's own check (") + expression + ")";
    throw toml::parse_error(what.c_str(), toml::source_position{}); // copies the text
}

toml::table TomlReader::parse(std::string_view text) const
{
    auto refuse = [&](const TomlLimits::Violation &v) {
        toml::source_region at;
        at.begin = {v.line, v.column};
        fail(at, v.message, v.hint);
    };
    // Before toml++: its recursion on deep keys cannot be caught once it has started.
    if (auto v = TomlLimits::scan_text(text))
        refuse(*v);
    if (std::any_of(text.begin(), text.end(), [](char ch) { return static_cast<unsigned char>(ch) >= 0x80; }))
        check_non_ascii(text);
    toml::table doc;
    try {
        doc = toml::parse(text, label_);
    } catch (const toml::parse_error &e) {
        fail(e.source(), "TOML syntax error: " + std::string(e.description()),
             "fix the file's TOML syntax (https://toml.io)");
    }
    if (auto v = TomlLimits::check_tree(doc))
        refuse(*v);
    return doc;
}

// toml++ 3.3 reaches __builtin_unreachable (undefined behaviour; found by fuzzing) on some
// non-ASCII code points where it expects blanks. Valid TOML has non-ASCII text only in strings
// and comments, so the text is parsed first with every non-ASCII byte replaced by '~', which
// strings and comments take and nothing else does: the real text reaches toml++ only when all
// its non-ASCII bytes lie where toml++ reads them as string or comment content. (A lexer of our
// own cannot promise that: it would have to agree with toml++ on every malformed input.)
void TomlReader::check_non_ascii(std::string_view text) const
{
    std::string masked(text);
    for (char &ch : masked)
        if (static_cast<unsigned char>(ch) >= 0x80)
            ch = '~';
    try {
        (void)toml::parse(masked, label_);
    } catch (const toml::parse_error &e) {
        // Columns of the masked text count bytes; find the byte the error points at.
        const toml::source_position at = e.source().begin;
        size_t offset = 0;
        for (uint32_t line = 1; line < at.line && offset < text.size(); ++offset)
            if (text[offset] == '\n')
                ++line;
        offset += at.column > 0 ? at.column - 1 : 0;
        if (offset < text.size() && static_cast<unsigned char>(text[offset]) >= 0x80)
            fail(e.source(), "TOML syntax error: a non-ASCII character outside a string or comment (column in bytes)",
                 "quote the key or value, or remove the character");
        fail(e.source(), "TOML syntax error: " + std::string(e.description()) + " (column in bytes)",
             "fix the file's TOML syntax (https://toml.io)");
    }
}

std::string TomlReader::where(const toml::source_region &region) const
{
    if (region.begin.line == 0)
        return label_ + ": ";
    return label_ + ":" + std::to_string(region.begin.line) + ":" +
           std::to_string(region.begin.column) + ": ";
}

void TomlReader::fail(const toml::source_region &region, const std::string &message,
                      const std::string &hint) const
{
    throw Error(TIDAL_ERROR_CONFIG, where(region) + message, hint);
}

void TomlReader::require_known_keys(const toml::table &table, std::string_view table_name,
                                    std::span<const std::string_view> allowed) const
{
    // toml::table keeps keys sorted, so look for the unknown key that comes first in the file:
    // that is the one a person reading top to bottom expects to be told about.
    const toml::key *first = nullptr;
    for (auto &&[key, value] : table) {
        (void)value;
        bool known = false;
        for (std::string_view a : allowed)
            known = known || key.str() == a;
        if (known)
            continue;
        const auto &pos = key.source().begin;
        if (!first || pos.line < first->source().begin.line ||
            (pos.line == first->source().begin.line &&
             pos.column < first->source().begin.column))
            first = &key;
    }
    if (!first)
        return;
    std::string message = "unknown key '" + std::string(first->str()) + "'";
    message += table_name.empty() ? std::string(" at the top level")
                                  : " in [" + std::string(table_name) + "]";
    if (allowed.empty())
        fail(first->source(), message + ", which takes no keys", "remove the key");
    message += ";" + did_you_mean(first->str(), allowed);
    if (message.back() == ';')
        message.pop_back();
    fail(first->source(), message, "valid keys here: " + join(allowed));
}

std::string TomlReader::string(const toml::node &node, std::string_view name) const
{
    if (const auto *v = node.as_string())
        return v->get();
    wrong_type(node, name, "a string");
}

std::string TomlReader::nonempty_string(const toml::node &node, std::string_view name) const
{
    std::string s = string(node, name);
    if (s.empty())
        fail(node.source(), std::string(name) + " must not be empty");
    return s;
}

int64_t TomlReader::integer(const toml::node &node, std::string_view name, int64_t min,
                            int64_t max) const
{
    const auto *v = node.as_integer();
    if (!v)
        wrong_type(node, name, "an integer");
    const int64_t x = v->get();
    if (x < min || x > max) {
        std::string range = "at least " + std::to_string(min);
        if (max != std::numeric_limits<int64_t>::max())
            range = "from " + std::to_string(min) + " to " + std::to_string(max);
        fail(node.source(), std::string(name) + " = " + std::to_string(x) +
                                " is out of range; it must be " + range);
    }
    return x;
}

bool TomlReader::boolean(const toml::node &node, std::string_view name) const
{
    if (const auto *v = node.as_boolean())
        return v->get();
    wrong_type(node, name, "true or false");
}

double TomlReader::number(const toml::node &node, std::string_view name) const
{
    if (const auto *v = node.as_floating_point())
        return v->get();
    if (const auto *v = node.as_integer())
        return static_cast<double>(v->get());
    wrong_type(node, name, "a number");
}

uint64_t TomlReader::size(const toml::node &node, std::string_view name) const
{
    if (const auto *v = node.as_integer()) {
        if (v->get() < 0)
            fail(node.source(), std::string(name) + " = " + std::to_string(v->get()) +
                                    " is negative; a size is a byte count of zero or more");
        return static_cast<uint64_t>(v->get());
    }
    if (const auto *v = node.as_string()) {
        std::string why;
        if (auto bytes = parse_size(v->get(), &why))
            return *bytes;
        fail(node.source(), "bad size for " + std::string(name) + ": " + why,
             "write a byte count (4096) or a size such as \"512MiB\", \"16GiB\", \"1.5GB\"");
    }
    wrong_type(node, name, "a byte count or a size string such as \"16GiB\"");
}

const toml::table &TomlReader::table(const toml::node &node, std::string_view name) const
{
    if (const auto *t = node.as_table())
        return *t;
    wrong_type(node, name, "a table");
}

const toml::array &TomlReader::array(const toml::node &node, std::string_view name) const
{
    if (const auto *a = node.as_array())
        return *a;
    wrong_type(node, name, "an array");
}

std::vector<std::string> TomlReader::string_array(const toml::node &node,
                                                  std::string_view name) const
{
    const toml::array &a = array(node, name);
    std::vector<std::string> out;
    out.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i)
        out.push_back(nonempty_string(a[i], std::string(name) + "[" + std::to_string(i) + "]"));
    return out;
}

std::string TomlReader::choice(const toml::node &node, std::string_view name,
                               std::span<const std::string_view> options) const
{
    std::string s = string(node, name);
    for (std::string_view o : options)
        if (s == o)
            return s;
    std::string message =
        std::string(name) + " = \"" + s + "\" is not valid;" + did_you_mean(s, options);
    if (message.back() == ';')
        message.pop_back();
    fail(node.source(), message, "use one of: " + join(options));
}

const toml::node &TomlReader::required(const toml::table &table, std::string_view table_name,
                                       std::string_view key) const
{
    if (const toml::node *n = table.get(key))
        return *n;
    fail(table.source(), "[" + std::string(table_name) + "] is missing the required key '" +
                             std::string(key) + "'");
}

const char *TomlReader::type_name(toml::node_type type) noexcept
{
    switch (type) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
    }
    return "nothing";
}

std::string TomlReader::join(std::span<const std::string_view> names)
{
    std::string out;
    for (std::string_view n : names) {
        if (!out.empty())
            out += ", ";
        out += n;
    }
    return out;
}

void TomlReader::wrong_type(const toml::node &node, std::string_view name,
                            std::string_view expected) const
{
    fail(node.source(), "wrong type for " + std::string(name) + ": expected " +
                            std::string(expected) + ", got " + type_name(node.type()));
}

} // namespace tidal
