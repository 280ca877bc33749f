// Strict, typed reading of parsed TOML for the configuration and hardware-profile loaders:
// every problem becomes Error(TIDAL_ERROR_CONFIG) whose message starts "FILE:LINE:COLUMN: ",
// and an unknown key comes with the nearest valid one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/toml_include.h"

namespace tidal {

class TomlReader {
public:
    // `label` names the text in messages: the file path as the user gave it, or "<string>".
    explicit TomlReader(std::string label) : label_(std::move(label)) {}

    const std::string &label() const noexcept { return label_; }

    // Parses `text`; a syntax error is a CONFIG error at toml++'s position, and so is text
    // beyond TomlLimits (size, nesting depth, array length).
    toml::table parse(std::string_view text) const;

    // "FILE:LINE:COLUMN: " (just "FILE: " where toml++ recorded no position).
    std::string where(const toml::source_region &region) const;
    // Refuses non-ASCII text outside strings and comments before the real parse (see the .cpp).
    void check_non_ascii(std::string_view text) const;

    [[noreturn]] void fail(const toml::source_region &region, const std::string &message,
                           const std::string &hint = {}) const;

    // Every key of `table` must be one of `allowed`; otherwise the earliest unknown key in the
    // file is an error at that key, with "did you mean" and the list of valid keys.
    void require_known_keys(const toml::table &table, std::string_view table_name,
                            std::span<const std::string_view> allowed) const;

    // Typed reads of one value; `name` is the dotted key used in messages ("sim.devices").
    std::string string(const toml::node &node, std::string_view name) const;
    std::string nonempty_string(const toml::node &node, std::string_view name) const;
    int64_t integer(const toml::node &node, std::string_view name, int64_t min, int64_t max) const;
    bool boolean(const toml::node &node, std::string_view name) const;
    double number(const toml::node &node, std::string_view name) const; // integer or float
    // An integer byte count or a size string such as "16GiB" (see parse_size).
    uint64_t size(const toml::node &node, std::string_view name) const;
    const toml::table &table(const toml::node &node, std::string_view name) const;
    const toml::array &array(const toml::node &node, std::string_view name) const;
    std::vector<std::string> string_array(const toml::node &node, std::string_view name) const;
    // A string that must be one of `options`.
    std::string choice(const toml::node &node, std::string_view name,
                       std::span<const std::string_view> options) const;

    // A required key of `table` (error at the table when missing).
    const toml::node &required(const toml::table &table, std::string_view table_name,
                               std::string_view key) const;

    static const char *type_name(toml::node_type type) noexcept;
    // "a, b, c": for hints that list what is valid.
    static std::string join(std::span<const std::string_view> names);

private:
    [[noreturn]] void wrong_type(const toml::node &node, std::string_view name,
                                 std::string_view expected) const;

    std::string label_;
};

} // namespace tidal
