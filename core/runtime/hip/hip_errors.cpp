#include "hip_entry_points.h"
#include "hip_errors.h"

namespace tidal::hip {

const char *rt_error_name(int native) noexcept
{
    const char *name = hipGetErrorName(static_cast<hipError_t>(native));
    return name != nullptr ? name : "hipErrorUnrecognized";
}

const char *rt_error_string(int native) noexcept
{
    const char *text = hipGetErrorString(static_cast<hipError_t>(native));
    return text != nullptr ? text : "unrecognized HIP error";
}

} // namespace tidal::hip
