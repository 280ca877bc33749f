// The per-thread detailed message behind tidal_last_error(): set by the C boundary whenever a
// call fails, kept until the next failure on the same thread.
#pragma once

#include <string_view>

namespace tidal {

class LastError {
public:
    static void set(std::string_view message) noexcept;
    static const char *get() noexcept;
};

} // namespace tidal
