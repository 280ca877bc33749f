#include "output_file.h"

#include <tidal/tidal.h>

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "../common/file_name.h"

namespace tidal_tool {

bool write_output(const std::string &name, const std::string &text, const char *command, const char *what)
{
    if (name == "-") {
        fmt::print("{}", text);
        std::fflush(stdout);
        return true;
    }
    std::string path;
    if (!tidal_tools::expand_file_name(name, path)) {
        fmt::print(stderr, "{}: the {} file name: {}\n", command, what, tidal_last_error());
        return false;
    }
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
