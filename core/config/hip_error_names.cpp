#include "config/hip_error_names.h"

#include <algorithm>

namespace tidal {
namespace {

// Checked against Debian's hip_runtime_api.h (HIP 5.2.3) and CUDA 13's driver_types.h: HIP took
// CUDA's numbers, so one number has one name per vendor. The codes never change upstream.
constexpr HipErrorName kNames[] = {
    {0, "hipSuccess", "cudaSuccess", "no error"},
    {1, "hipErrorInvalidValue", "cudaErrorInvalidValue", "invalid argument"},
    {2, "hipErrorOutOfMemory", "cudaErrorMemoryAllocation", "out of memory"},
    {3, "hipErrorNotInitialized", "cudaErrorInitializationError", "initialization error"},
    {4, "hipErrorDeinitialized", "cudaErrorCudartUnloading", "driver shutting down"},
    {17, "hipErrorInvalidDevicePointer", "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {21, "hipErrorInvalidMemcpyDirection", "cudaErrorInvalidMemcpyDirection", "invalid copy direction"},
    {35, "hipErrorInsufficientDriver", "cudaErrorInsufficientDriver", "driver version is insufficient for runtime version"},
    {98, "hipErrorInvalidDeviceFunction", "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {100, "hipErrorNoDevice", "cudaErrorNoDevice", "no GPU device detected"},
    {101, "hipErrorInvalidDevice", "cudaErrorInvalidDevice", "invalid device ordinal"},
    {209, "hipErrorNoBinaryForGpu", "cudaErrorNoKernelImageForDevice", "no kernel image is available for this device"},
    {217, "hipErrorPeerAccessUnsupported", "cudaErrorPeerAccessUnsupported", "peer access is not supported between these devices"},
    {400, "hipErrorInvalidHandle", "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {500, "hipErrorNotFound", "cudaErrorSymbolNotFound", "named symbol not found"},
    {600, "hipErrorNotReady", "cudaErrorNotReady", "device not ready"},
    {700, "hipErrorIllegalAddress", "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {701, "hipErrorLaunchOutOfResources", "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {704, "hipErrorPeerAccessAlreadyEnabled", "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled"},
    {705, "hipErrorPeerAccessNotEnabled", "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled"},
    {712, "hipErrorHostMemoryAlreadyRegistered", "cudaErrorHostMemoryAlreadyRegistered", "host memory already registered"},
    {713, "hipErrorHostMemoryNotRegistered", "cudaErrorHostMemoryNotRegistered", "host memory is not registered"},
    {719, "hipErrorLaunchFailure", "cudaErrorLaunchFailure", "unspecified launch failure"},
    {801, "hipErrorNotSupported", "cudaErrorNotSupported", "operation not supported"},
    {999, "hipErrorUnknown", "cudaErrorUnknown", "unknown error"},
};

struct Alias {
    const char *name;
    int code;
};

// Older or alternative spellings HIP's header defines with the same number.
constexpr Alias kAliases[] = {
    {"hipErrorMemoryAllocation", 2},
    {"hipErrorInitializationError", 3},
    {"hipErrorInvalidResourceHandle", 400},
};

const HipErrorName *find_code(int code) noexcept
{
    auto it = std::lower_bound(std::begin(kNames), std::end(kNames), code,
                               [](const HipErrorName &e, int c) { return e.code < c; });
    return (it != std::end(kNames) && it->code == code) ? it : nullptr;
}

} // namespace

std::span<const HipErrorName> hip_error_names() noexcept { return kNames; }

std::optional<int> hip_error_from_name(std::string_view name) noexcept
{
    for (const auto &e : kNames)
        if (name == e.name)
            return e.code;
    for (const auto &a : kAliases)
        if (name == a.name)
            return a.code;
    return std::nullopt;
}

const char *hip_error_name(int code) noexcept
{
    const HipErrorName *e = find_code(code);
    return e ? e->name : nullptr;
}

const char *cuda_error_name(int code) noexcept
{
    const HipErrorName *e = find_code(code);
    return e ? e->cuda_name : nullptr;
}

const char *hip_error_description(int code) noexcept
{
    const HipErrorName *e = find_code(code);
    return e ? e->description : nullptr;
}

} // namespace tidal
