// Makes `device` the calling thread's current HIP device for one entry point, and puts the
// caller's device back afterwards. HIP's current device is per-thread state the application
// owns (PyTorch, Kokkos and plain HIP code all rely on it), so an embedded library must not
// leave it changed. hipSetDevice is only called when the current device differs, which keeps
// the common single-GPU path to one cheap hipGetDevice.
#pragma once

#include <hip/hip_runtime_api.h>

namespace tidal::hip {

class DeviceScope {
public:
    explicit DeviceScope(int device) noexcept
    {
        if (hipGetDevice(&previous_) != hipSuccess)
            previous_ = -1; // nothing sensible to restore
        if (previous_ != device) {
            status_ = hipSetDevice(device);
            restore_ = status_ == hipSuccess && previous_ >= 0;
        }
    }
    ~DeviceScope()
    {
        if (restore_)
            (void)hipSetDevice(previous_);
    }
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;

    // hipSuccess, or why the device could not be selected (the entry point returns it).
    hipError_t status() const noexcept { return status_; }

private:
    int previous_ = -1;
    hipError_t status_ = hipSuccess;
    bool restore_ = false;
};

} // namespace tidal::hip
