// Byte sizes written the way people write them: "512MiB", "8GiB", "1.5GB", "64 KiB", "4096".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tidal {

// Parses a non-negative byte count. Units: none or B (bytes); K, M, G, T with an optional B
// (powers of 1000); Ki, Mi, Gi, Ti with an optional B (powers of 1024). Unit letters are
// case-insensitive; blanks may surround the number and separate it from the unit. A decimal
// fraction is allowed when the result is a whole number of bytes ("1.5GiB" yes, "0.3KiB" no).
// Returns nullopt and, when `error` is not null, a reason (negative, overflow, junk, ...).
std::optional<uint64_t> parse_size(std::string_view text, std::string *error = nullptr);

// 17179869184 -> "16 GiB", 1500000000 -> "1.4 GiB", 512 -> "512 B": for people, not parsing.
std::string format_size(uint64_t bytes);

} // namespace tidal
