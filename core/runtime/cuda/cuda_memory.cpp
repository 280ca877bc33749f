/* Allocation by kind, and what the CUDA runtime says a pointer is. */
#include <cstdlib>

#include "cuda_device_scope.h"
#include "cuda_entry_points.h"
#include "tidal/tidal.h"

namespace tidal::cuda {
namespace {

/* The contract's promise for host kinds; a cache line, so host buffers never share one. */

int allocate_on_device(int32_t device, size_t size, void **out, bool managed)
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    void *ptr = nullptr;
    /* Global attachment: any stream on any device may touch managed memory, as tidal's
     * callers expect; stream attachment would be an optimisation a policy asks for. */
    const cudaError_t status = managed ? cudaMallocManaged(&ptr, size, cudaMemAttachGlobal)
                                       : cudaMalloc(&ptr, size);
    if (status != cudaSuccess)
        return settle(status);
    *out = ptr;
    return static_cast<int>(cudaSuccess);
}

} // namespace

int rt_alloc(void *, int32_t kind, int32_t device, size_t size, void **out) noexcept
{
    switch (kind) {
    case TIDAL_KIND_DEVICE:
        return allocate_on_device(device, size, out, false);
    case TIDAL_KIND_MANAGED:
        return allocate_on_device(device, size, out, true);
    case TIDAL_KIND_PINNED: {
        /* Portable: usable from every device's context, not only the current one. */
        void *ptr = nullptr;
        const cudaError_t status = cudaHostAlloc(&ptr, size, cudaHostAllocPortable);
        if (status != cudaSuccess)
            return settle(status);
        *out = ptr;
        return static_cast<int>(cudaSuccess);
    }
    case TIDAL_KIND_PAGEABLE: {
        void *ptr = nullptr;
        if (posix_memalign(&ptr, TIDAL_RT_HOST_ALIGNMENT, size) != 0)
            return static_cast<int>(cudaErrorMemoryAllocation);
        *out = ptr;
        return static_cast<int>(cudaSuccess);
    }
    case TIDAL_KIND_DEVICE_FINE:
    case TIDAL_KIND_MANAGED_COARSE:
        return static_cast<int>(cudaErrorNotSupported); /* AMD coherence kinds */
    default:
        return static_cast<int>(cudaErrorInvalidValue);
    }
}

int rt_free(void *, int32_t kind, int32_t, void *ptr, size_t) noexcept
{
    switch (kind) {
    case TIDAL_KIND_DEVICE:
    case TIDAL_KIND_MANAGED:
        /* cudaFree finds the owning device from the pointer (unified addressing). */
        return settle(cudaFree(ptr));
    case TIDAL_KIND_PINNED:
        return settle(cudaFreeHost(ptr));
    case TIDAL_KIND_PAGEABLE:
        std::free(ptr);
        return static_cast<int>(cudaSuccess);
    case TIDAL_KIND_DEVICE_FINE:
    case TIDAL_KIND_MANAGED_COARSE:
        return static_cast<int>(cudaErrorNotSupported);
    default:
        return static_cast<int>(cudaErrorInvalidValue);
    }
}

/* The device's current memory pool, as the application configured it (CUDA's default pool
 * gives memory back to the driver at every synchronisation unless its release threshold was
 * raised): tidal does not change process-wide pool attributes behind the application. */
int rt_alloc_async(void *, int32_t device, size_t size, void *stream, void **out) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    void *ptr = nullptr;
    const cudaError_t status = cudaMallocAsync(&ptr, size, as_stream(stream));
    if (status != cudaSuccess)
        return settle(status);
    *out = ptr;
    return static_cast<int>(cudaSuccess);
}

int rt_free_async(void *, int32_t device, void *ptr, void *stream) noexcept
{
    /* The default stream is per device: free on the one the block was allocated for. */
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(cudaFreeAsync(ptr, as_stream(stream)));
}

int rt_pool_trim(void *, int32_t device, uint64_t keep) noexcept
{
    cudaMemPool_t pool = nullptr;
    if (const cudaError_t status = cudaDeviceGetMemPool(&pool, device); status != cudaSuccess)
        return settle(status);
    return settle(cudaMemPoolTrimTo(pool, static_cast<size_t>(keep)));
}

int rt_pool_usage(void *, int32_t device, uint64_t *reserved, uint64_t *used) noexcept
{
    cudaMemPool_t pool = nullptr;
    if (const cudaError_t status = cudaDeviceGetMemPool(&pool, device); status != cudaSuccess)
        return settle(status);
    unsigned long long r = 0, u = 0; // cuuint64_t, which lives in the driver API's header
    if (const cudaError_t status = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &r);
        status != cudaSuccess)
        return settle(status);
    if (const cudaError_t status = cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &u);
        status != cudaSuccess)
        return settle(status);
    *reserved = r;
    *used = u;
    return static_cast<int>(cudaSuccess);
}

int rt_host_register(void *, void *ptr, size_t size) noexcept
{
    /* Default flags: with unified addressing the range is both mapped and portable. */
    return settle(cudaHostRegister(ptr, size, cudaHostRegisterDefault));
}

int rt_host_unregister(void *, void *ptr) noexcept
{
    return settle(cudaHostUnregister(ptr));
}

int rt_pointer_kind(void *, const void *ptr, int32_t *kind, int32_t *device) noexcept
{
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
        /* Older drivers answer cudaErrorInvalidValue for memory CUDA never saw: that is
         * ordinary pageable host memory, not a failure. */
        (void)cudaGetLastError();
        *kind = TIDAL_KIND_PAGEABLE;
        *device = TIDAL_DEVICE_HOST;
        return static_cast<int>(cudaSuccess);
    }
    switch (attributes.type) {
    case cudaMemoryTypeHost: /* cudaHostAlloc and cudaHostRegister alike */
        *kind = TIDAL_KIND_PINNED;
        *device = TIDAL_DEVICE_HOST;
        break;
    case cudaMemoryTypeDevice:
        *kind = TIDAL_KIND_DEVICE;
        *device = attributes.device;
        break;
    case cudaMemoryTypeManaged:
        *kind = TIDAL_KIND_MANAGED;
        *device = attributes.device;
        break;
    case cudaMemoryTypeUnregistered:
    default:
        *kind = TIDAL_KIND_PAGEABLE;
        *device = TIDAL_DEVICE_HOST;
        break;
    }
    return static_cast<int>(cudaSuccess);
}

} // namespace tidal::cuda
