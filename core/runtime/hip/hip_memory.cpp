// Allocation, registration and pointer classification for the HIP module.
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include <cerrno>
#include <cstdlib>

#include "hip_device_scope.h"
#include "hip_entry_points.h"
#include "hip_errors.h"
#include "tidal/tidal.h"

namespace tidal::hip {

namespace {


hipError_t alloc_pageable(size_t size, void **out) noexcept
{
    void *p = nullptr;
    const int rc = posix_memalign(&p, TIDAL_RT_HOST_ALIGNMENT, size);
    if (rc == ENOMEM)
        return hipErrorOutOfMemory;
    if (rc != 0)
        return hipErrorInvalidValue;
    *out = p;
    return hipSuccess;
}

// hipMallocManaged, then coarse-grain advice for `device`: MI200's hardware FP atomics only
// work on coarse-grained memory, and coarse grain lets the GPU cache the pages.
hipError_t alloc_managed_coarse(int device, size_t size, void **out) noexcept
{
    void *p = nullptr;
    if (const hipError_t rc = hipMallocManaged(&p, size, hipMemAttachGlobal); rc != hipSuccess)
        return rc;
    if (const hipError_t rc = hipMemAdvise(p, size, hipMemAdviseSetCoarseGrain, device);
        rc != hipSuccess) {
        (void)hipFree(p); // postcondition: nothing allocated on failure
        return rc;
    }
    *out = p;
    return hipSuccess;
}

int current_device() noexcept
{
    int device = 0;
    if (hipGetDevice(&device) != hipSuccess)
        device = 0;
    return device;
}

hipError_t alloc_kind(int32_t kind, int32_t device, size_t size, void **out) noexcept
{
    void *p = nullptr;
    hipError_t rc = hipSuccess;
    switch (kind) {
    case TIDAL_KIND_PAGEABLE:
        return alloc_pageable(size, out);
    case TIDAL_KIND_PINNED:
        // Default flags: mapped into every GPU's address space, fine-grained (coherent).
        rc = hipHostMalloc(&p, size, hipHostMallocDefault);
        break;
    case TIDAL_KIND_DEVICE:
        rc = hipMalloc(&p, size);
        break;
    case TIDAL_KIND_DEVICE_FINE:
        rc = hipExtMallocWithFlags(&p, size, hipDeviceMallocFinegrained);
        break;
    case TIDAL_KIND_MANAGED:
        rc = hipMallocManaged(&p, size, hipMemAttachGlobal);
        break;
    case TIDAL_KIND_MANAGED_COARSE:
        return alloc_managed_coarse(device >= 0 ? device : current_device(), size, out);
    default:
        return hipErrorInvalidValue;
    }
    if (rc == hipSuccess)
        *out = p;
    return rc;
}

bool is_device_bound(int32_t kind) noexcept
{
    return !TIDAL_KIND_IS_HOST(kind);
}

// Managed memory HIP reports; refined to MANAGED_COARSE when the range carries coarse-grain
// advice, so a pointer tidal did not allocate is still described as precisely as HIP can.
int32_t managed_kind(const void *ptr) noexcept
{
    int32_t mode = -1;
    if (hipMemRangeGetAttribute(&mode, sizeof mode, hipMemRangeAttributeCoherencyMode, ptr, 1) !=
        hipSuccess) {
        (void)hipGetLastError();
        return TIDAL_KIND_MANAGED;
    }
    return mode == hipMemRangeCoherencyModeCoarseGrain ? TIDAL_KIND_MANAGED_COARSE
                                                       : TIDAL_KIND_MANAGED;
}

} // namespace

int rt_alloc(void *, int32_t kind, int32_t device, size_t size, void **out) noexcept
{
    return guarded([&] {
        // Device-bound kinds are created on `device`; host kinds ignore it (runtime_contract.h).
        if (is_device_bound(kind) && device >= 0) {
            const DeviceScope scope(device);
            if (scope.status() != hipSuccess)
                return scope.status();
            return alloc_kind(kind, device, size, out);
        }
        return alloc_kind(kind, device, size, out);
    });
}

int rt_free(void *, int32_t kind, int32_t device, void *ptr, size_t size) noexcept
{
    return guarded([&] {
        switch (kind) {
        case TIDAL_KIND_PAGEABLE:
            std::free(ptr);
            return hipSuccess;
        case TIDAL_KIND_PINNED:
            return hipHostFree(ptr);
        case TIDAL_KIND_MANAGED_COARSE: {
            // hipFree does not undo coarse-grain advice (Kokkos unsets it for the same
            // reason), and the pages would come back coarse-grained to the next managed
            // allocation. The block is freed whatever the advice call says, so the core must
            // not free it again; the first failure is what the caller hears about.
            const hipError_t unset = hipMemAdvise(ptr, size, hipMemAdviseUnsetCoarseGrain,
                                                  device >= 0 ? device : current_device());
            const hipError_t freed = hipFree(ptr);
            return unset != hipSuccess ? unset : freed;
        }
        case TIDAL_KIND_DEVICE:
        case TIDAL_KIND_DEVICE_FINE:
        case TIDAL_KIND_MANAGED:
            return hipFree(ptr);
        default:
            return hipErrorInvalidValue;
        }
    });
}

// The device's current memory pool with the attributes the application gave it: tidal does
// not change process-wide pool state behind the application.
int rt_alloc_async(void *, int32_t device, size_t size, void *stream, void **out) noexcept
{
    return guarded([&] {
        const DeviceScope scope(device);
        if (scope.status() != hipSuccess)
            return scope.status();
        void *p = nullptr;
        const hipError_t rc = hipMallocAsync(&p, size, static_cast<hipStream_t>(stream));
        if (rc == hipSuccess)
            *out = p;
        return rc;
    });
}

int rt_free_async(void *, int32_t device, void *ptr, void *stream) noexcept
{
    return guarded([&] {
        // The NULL stream is the current device's: the block's own device.
        const DeviceScope scope(device);
        if (scope.status() != hipSuccess)
            return scope.status();
        return hipFreeAsync(ptr, static_cast<hipStream_t>(stream));
    });
}

int rt_pool_trim(void *, int32_t device, uint64_t keep) noexcept
{
    return guarded([&] {
        hipMemPool_t pool = nullptr;
        if (const hipError_t rc = hipDeviceGetMemPool(&pool, device); rc != hipSuccess)
            return rc;
        return hipMemPoolTrimTo(pool, static_cast<size_t>(keep));
    });
}

int rt_pool_usage(void *, int32_t device, uint64_t *reserved, uint64_t *used) noexcept
{
    return guarded([&] {
        hipMemPool_t pool = nullptr;
        if (const hipError_t rc = hipDeviceGetMemPool(&pool, device); rc != hipSuccess)
            return rc;
        uint64_t r = 0, u = 0;
        if (const hipError_t rc = hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, &r); rc != hipSuccess)
            return rc;
        if (const hipError_t rc = hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &u); rc != hipSuccess)
            return rc;
        *reserved = r;
        *used = u;
        return hipSuccess;
    });
}

int rt_host_register(void *, void *ptr, size_t size) noexcept
{
    return guarded([&] { return hipHostRegister(ptr, size, hipHostRegisterDefault); });
}

int rt_host_unregister(void *, void *ptr) noexcept
{
    return guarded([&] { return hipHostUnregister(ptr); });
}

int rt_pointer_kind(void *, const void *ptr, int32_t *kind, int32_t *device) noexcept
{
    return guarded([&] {
        hipPointerAttribute_t a{};
        const hipError_t rc = hipPointerGetAttributes(&a, ptr);
        if (rc == hipErrorInvalidValue) {
            // HIP does not know the pointer: ordinary host memory (ROCm 5 answers this way).
            (void)hipGetLastError();
            *kind = TIDAL_KIND_PAGEABLE;
            *device = TIDAL_DEVICE_HOST;
            return hipSuccess;
        }
        if (rc != hipSuccess)
            return rc;

        int32_t k = TIDAL_KIND_PAGEABLE;
#if HIP_VERSION_MAJOR >= 6
        // ROCm 6 layout: `type` with Unregistered 0, Host 1, Device 2, Managed 3.
        switch (a.type) {
        case hipMemoryTypeUnregistered: k = TIDAL_KIND_PAGEABLE; break;
        case hipMemoryTypeHost: k = TIDAL_KIND_PINNED; break;
        case hipMemoryTypeManaged:
        case hipMemoryTypeUnified: k = managed_kind(ptr); break;
        default: k = TIDAL_KIND_DEVICE; break; // Device, Array
        }
#else
        // ROCm 5 layout: `memoryType` (Host 0, Device 1, Array 2, Unified 3) plus isManaged.
        if (a.isManaged)
            k = managed_kind(ptr);
        else if (a.memoryType == hipMemoryTypeHost)
            k = TIDAL_KIND_PINNED; // hipHostMalloc'd or hipHostRegister'ed
        else if (a.memoryType == hipMemoryTypeUnified)
            k = managed_kind(ptr);
        else
            k = TIDAL_KIND_DEVICE; // Device, Array
#endif
        // Fine-grained device memory reads as plain device memory here: HIP's attributes do
        // not tell the two apart; the core's registry knows what it allocated.
        *kind = k;
        *device = (k == TIDAL_KIND_PAGEABLE || k == TIDAL_KIND_PINNED) ? TIDAL_DEVICE_HOST
                                                                      : a.device;
        return hipSuccess;
    });
}

} // namespace tidal::hip
