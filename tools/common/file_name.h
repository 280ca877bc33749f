// A file name the tools write, with %r (the job-wide rank) and %p (the process id) expanded by
// the library (tidal_file_name_expand), so every rank of a job writes its own file. Shared by
// the tidal command and the benchmarks; public API only.
#pragma once

#include <tidal/tidal.h>

#include <string>

namespace tidal_tools {

// The expanded name in `path`; false (tidal_last_error() says why) for a bad name.
inline bool expand_file_name(const std::string &name, std::string &path)
{
    size_t needed = 0;
    path.assign(name.size() + 64, '\0');
    tidal_status s = tidal_file_name_expand(name.c_str(), path.data(), path.size(), &needed);
    if (s == TIDAL_ERROR_BUFFER_TOO_SMALL) {
        path.assign(needed, '\0');
        s = tidal_file_name_expand(name.c_str(), path.data(), path.size(), &needed);
    }
    if (s != TIDAL_OK)
        return false;
    path.resize(needed - 1);
    return true;
}

} // namespace tidal_tools
