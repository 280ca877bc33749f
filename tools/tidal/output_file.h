// Where the tidal command writes what it was asked to (--json, --csv, --svg, --emit-profile):
// "-" is standard output; any other name takes %r (the job-wide rank) and %p (the process id),
// expanded by the library (tidal_file_name_expand), so every rank of a job writes its own file.
#pragma once

#include <string>

namespace tidal_tool {

// Writes `text` to `name`; on failure prints "<command>: cannot write the <what> to '<file>'"
// (or the library's message for a bad name) and returns false.
bool write_output(const std::string &name, const std::string &text, const char *command, const char *what);

} // namespace tidal_tool
