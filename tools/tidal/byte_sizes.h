// Byte counts as people write them on the command line and read them in tables: "64KiB",
// "1.5GB", "4096" in; "64 KiB" out. KiB/MiB/GiB/TiB are powers of 1024, K/M/G/T (with or
// without B) powers of 1000, as in tidal's configuration files (case does not matter there
// either). Every size option of the tool takes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class Validator;
}

namespace tidal_tool {

// The size `text` names, or nothing with `*why` set.
std::optional<uint64_t> parse_byte_size(const std::string &text, std::string *why);
// A comma-separated list of sizes ("256,64KiB,4MiB"); nothing with `*why` set on any error.
std::optional<std::vector<uint64_t>> parse_byte_sizes(const std::string &text, std::string *why);
// "256 B", "64 KiB", "1.5 MiB".
std::string format_bytes(uint64_t bytes);

// For an integer option: reads SIZE with units, refuses it outside [min, max] saying why, and
// hands CLI11 the byte count.
CLI::Validator byte_size_option(uint64_t min, uint64_t max);
// For a string option kept as written: checks one SIZE, or a SIZE,... list.
CLI::Validator byte_sizes_check(bool list);

} // namespace tidal_tool
