/* Native error handling shared by every entry point of the CUDA module: clearing the
 * runtime's last-error slot on failure, turning the driver's CUresult into the module's one
 * native numbering (cudaError_t), and the names the core prints next to its status. */
#ifndef TIDAL_RUNTIME_CUDA_CUDA_ERRORS_H
#define TIDAL_RUNTIME_CUDA_CUDA_ERRORS_H

#include <cuda.h> /* CUresult only: the module never links libcuda */
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

/* The cudaError_t that means what a driver CUresult means (CUDA_ERROR_OUT_OF_MEMORY is
 * cudaErrorMemoryAllocation, ...): the core translates one numbering per runtime.
 * A code with no counterpart is cudaErrorUnknown. */
cudaError_t from_driver(CUresult result) noexcept;

} // namespace tidal::cuda

#endif /* TIDAL_RUNTIME_CUDA_CUDA_ERRORS_H */
