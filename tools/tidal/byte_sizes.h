// Byte counts as people write them on the command line and read them in tables: "64KiB",
// "1.5GB", "4096" in; "64 KiB" out. KiB/MiB/GiB/TiB are powers of 1024, K/M/G/T (with or
// without B) powers of 1000, as in tidal's configuration files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tidal_tool {

// The size `text` names, or nothing with `*why` set.
std::optional<uint64_t> parse_byte_size(const std::string &text, std::string *why);
// A comma-separated list of sizes ("256,64KiB,4MiB"); nothing with `*why` set on any error.
std::optional<std::vector<uint64_t>> parse_byte_sizes(const std::string &text, std::string *why);
// "256 B", "64 KiB", "1.5 MiB".
std::string format_bytes(uint64_t bytes);

} // namespace tidal_tool
