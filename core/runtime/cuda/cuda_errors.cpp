/* The module's native errors (cudaError_t): their names and texts, and the one table that
 * turns the driver's CUresult into them. */

#include "cuda_entry_points.h"

namespace tidal::cuda {
namespace {

struct DriverCode {
    CUresult driver;
    cudaError_t runtime;
};

/* The codes the virtual-memory calls document, and the ones any driver call can answer. */
constexpr DriverCode kDriverCodes[] = {
    {CUDA_SUCCESS, cudaSuccess},
    {CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidValue},
    {CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation},
    {CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError},
    {CUDA_ERROR_DEINITIALIZED, cudaErrorCudartUnloading},
    {CUDA_ERROR_STUB_LIBRARY, cudaErrorStubLibrary},
    {CUDA_ERROR_NO_DEVICE, cudaErrorNoDevice},
    {CUDA_ERROR_INVALID_DEVICE, cudaErrorInvalidDevice},
    {CUDA_ERROR_INVALID_CONTEXT, cudaErrorDeviceUninitialized},
    {CUDA_ERROR_ALREADY_MAPPED, cudaErrorAlreadyMapped},
    {CUDA_ERROR_NOT_MAPPED, cudaErrorNotMapped},
    {CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle},
    {CUDA_ERROR_ILLEGAL_ADDRESS, cudaErrorIllegalAddress},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, cudaErrorContextIsDestroyed},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, cudaErrorInvalidAddressSpace},
    {CUDA_ERROR_LAUNCH_FAILED, cudaErrorLaunchFailure},
    {CUDA_ERROR_NOT_PERMITTED, cudaErrorNotPermitted},
    {CUDA_ERROR_NOT_SUPPORTED, cudaErrorNotSupported},
    {CUDA_ERROR_SYSTEM_NOT_READY, cudaErrorSystemNotReady},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, cudaErrorSystemDriverMismatch},
    {CUDA_ERROR_UNKNOWN, cudaErrorUnknown},
};

} // namespace

cudaError_t from_driver(CUresult result) noexcept
{
    for (const DriverCode &code : kDriverCodes)
        if (code.driver == result)
            return code.runtime;
    return cudaErrorUnknown;
}

const char *rt_error_name(int native) noexcept
{
    const char *name = cudaGetErrorName(static_cast<cudaError_t>(native));
    if (name == nullptr)
        name = "cudaErrorUnknown";
    return name;
}

const char *rt_error_string(int native) noexcept
{
    const char *text = cudaGetErrorString(static_cast<cudaError_t>(native));
    return text != nullptr ? text : "unknown CUDA error";
}

} // namespace tidal::cuda
