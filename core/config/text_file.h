// Reads a configuration or hardware-profile file without trusting what the path names: at
// most TomlLimits::kMaxBytes + 1 bytes are read (enough for the size check to report where
// the limit falls), and only a regular file is read at all. A FIFO would block the caller
// until some other process writes, and /dev/zero would never end.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace tidal {

// The file's first bytes, up to one past the limit. `what` names the file in messages
// ("configuration file", "hardware profile"); `hint` is the hint when it cannot be opened.
// Throws Error(TIDAL_ERROR_CONFIG) naming the path.
std::string read_text_file(const std::filesystem::path &path, std::string_view what,
                           const std::string &hint);

} // namespace tidal
