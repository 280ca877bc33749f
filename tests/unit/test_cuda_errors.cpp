// The CUDA module's error handling, without a GPU: the one table that turns the driver's
// CUresult into the module's native cudaError_t, and the name that explains a
// cudaErrorNotSupported coming from a driver without the virtual-memory API. Built only with
// the CUDA module (cudart's error names need no driver).
#include <doctest/doctest.h>

#include <string>

#include "runtime/cuda/cuda_entry_points.h"

using namespace tidal::cuda;

TEST_CASE("driver results become the cudaError_t the core translates")
{
    CHECK(from_driver(CUDA_SUCCESS) == cudaSuccess);
    CHECK(from_driver(CUDA_ERROR_OUT_OF_MEMORY) == cudaErrorMemoryAllocation);
    CHECK(from_driver(CUDA_ERROR_NOT_SUPPORTED) == cudaErrorNotSupported);
    CHECK(from_driver(CUDA_ERROR_INVALID_VALUE) == cudaErrorInvalidValue);
    CHECK(from_driver(CUDA_ERROR_INVALID_DEVICE) == cudaErrorInvalidDevice);
    CHECK(from_driver(CUDA_ERROR_INVALID_CONTEXT) == cudaErrorDeviceUninitialized);
    CHECK(from_driver(CUDA_ERROR_ILLEGAL_ADDRESS) == cudaErrorIllegalAddress);
    CHECK(from_driver(CUDA_ERROR_INVALID_HANDLE) == cudaErrorInvalidResourceHandle);
    // A code the table does not know is unknown, never success or a guess.
    CHECK(from_driver(static_cast<CUresult>(12345)) == cudaErrorUnknown);
    CHECK(from_driver(CUDA_ERROR_UNKNOWN) == cudaErrorUnknown);
}

TEST_CASE("a not-supported code keeps its plain name: no reason travels to a later error")
{
    // The core says why elastic memory is missing (Runtime::vmm_granularity); the module's
    // names are stateless, so an unrelated later error is never explained with an old reason.
    CHECK(std::string(rt_error_name(cudaErrorNotSupported)) == "cudaErrorNotSupported");
    CHECK(std::string(rt_error_name(cudaErrorMemoryAllocation)) == "cudaErrorMemoryAllocation");
}
