#include "status/last_error.h"

#include <string>

namespace tidal {
namespace {
thread_local std::string t_last_error;
}

void LastError::set(std::string_view message) noexcept
{
    try {
        t_last_error.assign(message);
    } catch (...) {
        // Out of memory while recording an error: keep the old text rather than throw.
    }
}

const char *LastError::get() noexcept { return t_last_error.c_str(); }

} // namespace tidal
