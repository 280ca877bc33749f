// What `tidal --version` says: the version, what this build has (runtime modules, validation
// kernels, Fortran, hwloc) and the folders libtidal looks in for runtime modules and policies.
#pragma once

#include <string>

namespace tidal_tool {

std::string version_report();

} // namespace tidal_tool
