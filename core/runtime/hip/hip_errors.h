// Native error handling shared by every entry point of the HIP module: the exception barrier
// the C table needs. (The names the core prints, rt_error_name/rt_error_string, are entry
// points: hip_entry_points.h.)
#pragma once

#include <hip/hip_runtime_api.h>

#include <new>

namespace tidal::hip {

// Runs one entry point's body and returns its hipError_t as int. Two duties:
//  - no C++ exception crosses the C table (the module's own code may allocate strings);
//  - a failure is taken off HIP's per-thread "last error": the core already has the code,
//    and a stale hipErrorOutOfMemory that tidal recovered from (by evicting and retrying)
//    must not surface in the application's next hipGetLastError() after its own launch.
template <typename Body>
int guarded(Body &&body) noexcept
{
    int rc;
    try {
        rc = static_cast<int>(body());
    } catch (const std::bad_alloc &) {
        rc = hipErrorOutOfMemory;
    } catch (...) {
        rc = hipErrorUnknown;
    }
    if (rc != hipSuccess)
        (void)hipGetLastError();
    return rc;
}

} // namespace tidal::hip
