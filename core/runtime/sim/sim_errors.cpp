// The simulated device speaks HIP's numbering (which is CUDA's); names come from the one shared
// table so the simulated device, fault injection and the HIP module never disagree on a name.
#include "runtime/sim/sim_errors.h"

#include "config/hip_error_names.h"

namespace tidal::sim {

ErrorNaming error_naming_of(std::string_view vendor) noexcept
{
    return vendor == "nvidia" ? ErrorNaming::cuda : ErrorNaming::hip;
}

const char *sim_error_name(int native, ErrorNaming naming) noexcept
{
    if (naming == ErrorNaming::cuda) {
        const char *name = cuda_error_name(native);
        return name ? name : "cudaErrorUnknown"; // what cudaGetErrorName answers for numbers it lacks
    }
    const char *name = hip_error_name(native);
    return name ? name : "hipErrorUnknown"; // what hipGetErrorName answers for numbers it lacks
}

const char *sim_error_string(int native) noexcept
{
    const char *text = hip_error_description(native);
    return text ? text : "unknown error";
}

} // namespace tidal::sim
