#include "output_file.h"

#include <tidal/tidal.h>

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

namespace tidal_tool {

bool write_output(const std::string &name, const std::string &text, const char *command, const char *what)
{
    if (name == "-") {
        fmt::print("{}", text);
        std::fflush(stdout);
        return true;
    }
    size_t needed = 0;
    std::string path(name.size() + 64, '\0');
    tidal_status s = tidal_file_name_expand(name.c_str(), path.data(), path.size(), &needed);
    if (s == TIDAL_ERROR_BUFFER_TOO_SMALL) {
        path.resize(needed);
        s = tidal_file_name_expand(name.c_str(), path.data(), path.size(), &needed);
    }
    if (s != TIDAL_OK) {
        fmt::print(stderr, "{}: the {} file name: {}\n", command, what, tidal_last_error());
        return false;
    }
    path.resize(needed - 1);
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) {
        fmt::print(stderr, "{}: cannot write the {} to '{}'\n", command, what, path);
        return false;
    }
    return true;
}

} // namespace tidal_tool
