/* The names and texts of the module's native errors (cudaError_t). */
#include "cuda_entry_points.h"

namespace tidal::cuda {

const char *rt_error_name(int native) noexcept
{
    const char *name = cudaGetErrorName(static_cast<cudaError_t>(native));
    return name != nullptr ? name : "cudaErrorUnknown";
}

const char *rt_error_string(int native) noexcept
{
    const char *text = cudaGetErrorString(static_cast<cudaError_t>(native));
    return text != nullptr ? text : "unknown CUDA error";
}

} // namespace tidal::cuda
