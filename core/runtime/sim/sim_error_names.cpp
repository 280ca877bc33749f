// The simulated device speaks HIP's numbering; names come from the one shared table so the
// simulated device, fault injection and the HIP module never disagree on a name.
#include "runtime/sim/sim_error_names.h"

#include "config/hip_error_names.h"

namespace tidal::sim {

const char *sim_error_name(int native) noexcept
{
    const char *name = hip_error_name(native);
    return name ? name : "hipErrorUnknown"; // what hipGetErrorName answers for numbers it lacks
}

const char *sim_error_string(int native) noexcept
{
    const char *text = hip_error_description(native);
    return text ? text : "unknown error";
}

} // namespace tidal::sim
