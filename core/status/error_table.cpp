#include "status/error_table.h"

#include <array>

namespace tidal {
namespace {

struct Entry {
    tidal_rt_family family;
    int native;
    tidal_status status;
    const char *hint;
};

constexpr tidal_rt_family HIP = TIDAL_RT_FAMILY_HIP;
constexpr tidal_rt_family CUDA = TIDAL_RT_FAMILY_CUDA;

constexpr const char *kNoCodeObjectHint =
    "no code object for this GPU: build kernels for both xnack+ and xnack- targets";

// Numbers from hip_runtime_api.h (HIP 5.2.3) and driver_types.h (CUDA 13).
constexpr std::array kEntries{
    Entry{HIP, 1, TIDAL_ERROR_INVALID_ARGUMENT, "the runtime rejected an argument; check sizes and pointers"},
    Entry{HIP, 2, TIDAL_ERROR_OUT_OF_MEMORY, "free memory, lower the request, set a device budget or let a policy fall back to another kind"},
    Entry{HIP, 3, TIDAL_ERROR_RUNTIME, "the HIP runtime is not initialised; check the ROCm installation"},
    Entry{HIP, 17, TIDAL_ERROR_INVALID_ARGUMENT, "the pointer is not device memory of this runtime"},
    Entry{HIP, 35, TIDAL_ERROR_NO_DEVICE, "the GPU driver is missing or older than the runtime"},
    // hipErrorInvalidDeviceFunction: what a launch returns when the build has no code object
    // for the GPU's target (an xnack+ GPU with only xnack- objects, or the reverse).
    Entry{HIP, 98, TIDAL_ERROR_NOT_SUPPORTED, kNoCodeObjectHint},
    Entry{HIP, 100, TIDAL_ERROR_NO_DEVICE, "no AMD GPU is visible: check /dev/kfd permissions and HIP_VISIBLE_DEVICES, or use runtime = \"sim\""},
    Entry{HIP, 101, TIDAL_ERROR_NOT_FOUND, "the device index is out of range"},
    Entry{HIP, 209, TIDAL_ERROR_NOT_SUPPORTED, kNoCodeObjectHint},
    Entry{HIP, 217, TIDAL_ERROR_NOT_SUPPORTED, "these GPUs cannot access each other's memory"},
    Entry{HIP, 700, TIDAL_ERROR_ILLEGAL_ACCESS, "the device touched memory it cannot reach; with XNACK off, pageable memory must never reach a kernel"},
    Entry{HIP, 712, TIDAL_ERROR_INVALID_ARGUMENT, "the host range is registered already"},
    Entry{HIP, 801, TIDAL_ERROR_NOT_SUPPORTED, "the device or runtime lacks this capability; `tidal probe` shows what it has"},
    Entry{HIP, 999, TIDAL_ERROR_RUNTIME, "the runtime reported an unknown error; check the driver log"},
    Entry{CUDA, 1, TIDAL_ERROR_INVALID_ARGUMENT, "the runtime rejected an argument; check sizes and pointers"},
    Entry{CUDA, 2, TIDAL_ERROR_OUT_OF_MEMORY, "free memory, lower the request, set a device budget or let a policy fall back to another kind"},
    Entry{CUDA, 3, TIDAL_ERROR_RUNTIME, "the CUDA runtime failed to initialise; check the driver"},
    Entry{CUDA, 34, TIDAL_ERROR_NO_DEVICE, "only the CUDA stub library was found: no NVIDIA driver is installed"},
    Entry{CUDA, 35, TIDAL_ERROR_NO_DEVICE, "the NVIDIA driver is missing or older than the CUDA runtime; use runtime = \"sim\" on machines without a GPU"},
    Entry{CUDA, 100, TIDAL_ERROR_NO_DEVICE, "no NVIDIA GPU is visible: check CUDA_VISIBLE_DEVICES, or use runtime = \"sim\""},
    Entry{CUDA, 101, TIDAL_ERROR_NOT_FOUND, "the device index is out of range"},
    Entry{CUDA, 209, TIDAL_ERROR_NOT_SUPPORTED, "no kernel image for this GPU: rebuild with -Dnvcc_arch matching the card"},
    Entry{CUDA, 217, TIDAL_ERROR_NOT_SUPPORTED, "these GPUs cannot access each other's memory"},
    Entry{CUDA, 700, TIDAL_ERROR_ILLEGAL_ACCESS, "a kernel touched memory it cannot reach; the context is now unusable"},
    Entry{CUDA, 712, TIDAL_ERROR_INVALID_ARGUMENT, "the host range is registered already"},
    Entry{CUDA, 801, TIDAL_ERROR_NOT_SUPPORTED, "the device or runtime lacks this capability; `tidal probe` shows what it has"},
    Entry{CUDA, 999, TIDAL_ERROR_RUNTIME, "the runtime reported an unknown error; check the driver log"},
};

const Entry *find(tidal_rt_family family, int native) noexcept
{
    for (const Entry &e : kEntries)
        if (e.family == family && e.native == native)
            return &e;
    return nullptr;
}

} // namespace

tidal_status ErrorTable::status_of(tidal_rt_family family, int native) noexcept
{
    if (native == 0)
        return TIDAL_OK;
    const Entry *e = find(family, native);
    return e ? e->status : TIDAL_ERROR_RUNTIME;
}

const char *ErrorTable::hint_of(tidal_rt_family family, int native) noexcept
{
    const Entry *e = find(family, native);
    return e ? e->hint : "an unexpected runtime error; `tidal probe` and the driver log may tell more";
}

Error ErrorTable::translate(tidal_rt_family family, int native, const char *native_name,
                           const std::string &what)
{
    return Error(status_of(family, native), what, hint_of(family, native),
                 NativeError{native, native_name ? native_name : "unknown"});
}

} // namespace tidal
