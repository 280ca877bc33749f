// Process-wide log sink: "tidal: LEVEL: message" lines on stderr. The level is the one the
// newest context was configured with (TIDAL_LOG_LEVEL overrides the configuration).
#pragma once

#include <string_view>

#include "log/log_level.h"

namespace tidal {

class Logger {
public:
    static void set_level(LogLevel level) noexcept;
    static LogLevel level() noexcept;
    static bool enabled(LogLevel level) noexcept { return level <= Logger::level(); }
    static void write(LogLevel level, std::string_view message) noexcept;
};

inline void log_error(std::string_view m) noexcept { Logger::write(LogLevel::error, m); }
inline void log_warn(std::string_view m) noexcept { Logger::write(LogLevel::warn, m); }
inline void log_info(std::string_view m) noexcept { Logger::write(LogLevel::info, m); }
inline void log_debug(std::string_view m) noexcept { Logger::write(LogLevel::debug, m); }

} // namespace tidal
