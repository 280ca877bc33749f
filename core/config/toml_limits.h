// Bounds on configuration text, checked before and after toml++ sees it. toml++ builds nested
// tables by recursion, so a dotted key or a table header a few hundred thousand levels deep
// overflows the stack inside the parser; nothing after the parse can catch that. The text is
// therefore scanned first for its size and nesting depth, and the parsed tree for array
// lengths. Configurations and hardware profiles nest a handful of levels and hold short
// arrays, so the limits are far above any real file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/toml_include.h"

namespace tidal {

class TomlLimits {
public:
    static constexpr size_t kMaxBytes = size_t{1} << 20; // 1 MiB of text
    // Levels of tables: a header's parts, a dotted key's parts, inline tables and arrays, added
    // along the path to the deepest value.
    static constexpr int kMaxDepth = 64;
    static constexpr size_t kMaxArrayLength = 65536; // elements in one array

    struct Violation {
        uint32_t line = 0;   // 1-based
        uint32_t column = 0; // 1-based
        std::string message;
        std::string hint;
    };

    // Size and depth of `text`, without parsing it: the first limit crossed, or nullopt. The
    // scan follows TOML's lexical rules (strings, comments, keys against values) only as far
    // as counting needs; a file it miscounts is one toml++ rejects anyway.
    static std::optional<Violation> scan_text(std::string_view text);

    // Array lengths of a parsed document (iterative: no recursion on the document's depth).
    static std::optional<Violation> check_tree(const toml::table &root);
};

} // namespace tidal
