/* Makes one device current for the lifetime of a scope, and gives the caller's back after.
 *
 * tidal is embedded in applications (PyTorch among them) that keep their own notion of the
 * current device on each thread; an allocation for device 1 must not leave the thread on
 * device 1. cudaGetDevice only reads thread state, so the common case — the device is
 * already current — costs no cudaSetDevice at all. */
#ifndef TIDAL_RUNTIME_CUDA_CUDA_DEVICE_SCOPE_H
#define TIDAL_RUNTIME_CUDA_CUDA_DEVICE_SCOPE_H

#include <cuda_runtime_api.h>

namespace tidal::cuda {

class DeviceScope {
public:
    /* A negative device (the host) leaves the current device as it is. */
    explicit DeviceScope(int device) noexcept
    {
        if (device < 0)
            return;
        status_ = cudaGetDevice(&previous_);
        if (status_ == cudaSuccess && previous_ != device) {
            status_ = cudaSetDevice(device);
            switched_ = status_ == cudaSuccess;
        }
    }
    ~DeviceScope()
    {
        if (switched_)
            (void)cudaSetDevice(previous_);
    }
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;

    /* cudaSuccess when the device is current; otherwise why it could not be made so. */
    cudaError_t status() const noexcept { return status_; }

private:
    int previous_ = 0;
    bool switched_ = false;
    cudaError_t status_ = cudaSuccess;
};

} // namespace tidal::cuda

#endif /* TIDAL_RUNTIME_CUDA_CUDA_DEVICE_SCOPE_H */
