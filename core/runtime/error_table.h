// The one translation table from a runtime's native error code to a tidal_status and a hint
// of what to do. HIP copied CUDA's numbering for most codes, but not all, so entries are keyed
// by the numbering family.
#pragma once

#include <string>

#include "runtime/runtime_contract.h"
#include "status/error.h"

namespace tidal {

class ErrorTable {
public:
    // The status and hint for a native code; unknown codes map to TIDAL_ERROR_RUNTIME.
    static tidal_status status_of(tidal_rt_family family, int native) noexcept;
    static const char *hint_of(tidal_rt_family family, int native) noexcept;
    // An Error for "`what` failed with native (name)".
    static Error translate(tidal_rt_family family, int native, const char *native_name,
                           const std::string &what);
};

} // namespace tidal
