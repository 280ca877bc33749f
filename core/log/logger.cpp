#include "log/logger.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace tidal {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::warn)};
std::mutex g_write_mutex; // keeps lines from different threads whole

const char *level_name(LogLevel level)
{
    switch (level) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warning";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
    }
    return "?";
}
} // namespace

void Logger::set_level(LogLevel level) noexcept { g_level.store(static_cast<int>(level)); }

LogLevel Logger::level() noexcept { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

void Logger::write(LogLevel level, std::string_view message) noexcept
{
    if (!enabled(level))
        return;
    std::lock_guard lock(g_write_mutex);
    std::fprintf(stderr, "tidal: %s: %.*s\n", level_name(level), static_cast<int>(message.size()),
                 message.data());
}

} // namespace tidal
