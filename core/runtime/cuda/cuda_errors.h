/* Native error handling shared by every entry point of the CUDA module: clearing the
 * runtime's last-error slot on failure, and the names the core prints next to its status. */
#ifndef TIDAL_RUNTIME_CUDA_CUDA_ERRORS_H
#define TIDAL_RUNTIME_CUDA_CUDA_ERRORS_H

#include <cuda_runtime_api.h>

namespace tidal::cuda {

/* Returns `status` as the native code, and when it is a failure clears the runtime's
 * last-error slot: otherwise a failed allocation lingers there and the next kernel launch,
 * which checks cudaGetLastError(), would report it as its own. Sticky errors (a faulted
 * context) survive the clear, as they must. */
inline int settle(cudaError_t status) noexcept
{
    if (status != cudaSuccess)
        (void)cudaGetLastError();
    return static_cast<int>(status);
}

} // namespace tidal::cuda

#endif /* TIDAL_RUNTIME_CUDA_CUDA_ERRORS_H */
