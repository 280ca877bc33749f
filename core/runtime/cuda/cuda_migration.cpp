/* Managed-memory migration: prefetch, advice and range queries.
 *
 * CUDA 13 takes a cudaMemLocation {type, id} where CUDA 12 took a device ordinal with
 * cudaCpuDeviceId (-1) for the host; both spellings are kept so the module builds with either
 * toolkit. */
#include "cuda_device_scope.h"
#include "cuda_entry_points.h"

namespace tidal::cuda {
namespace {

#if CUDART_VERSION >= 13000
cudaMemLocation location_of(int32_t location)
{
    cudaMemLocation where{};
    if (location == TIDAL_RT_LOCATION_HOST) {
        where.type = cudaMemLocationTypeHost;
        where.id = 0; /* ignored for the host */
    } else {
        where.type = cudaMemLocationTypeDevice;
        where.id = location;
    }
    return where;
}
#else
int location_of(int32_t location)
{
    return location == TIDAL_RT_LOCATION_HOST ? cudaCpuDeviceId : location;
}
#endif

bool advice_of(int32_t advice, cudaMemoryAdvise *out)
{
    switch (advice) {
    case TIDAL_RT_ADVISE_SET_READ_MOSTLY: *out = cudaMemAdviseSetReadMostly; return true;
    case TIDAL_RT_ADVISE_UNSET_READ_MOSTLY: *out = cudaMemAdviseUnsetReadMostly; return true;
    case TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION: *out = cudaMemAdviseSetPreferredLocation; return true;
    case TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION: *out = cudaMemAdviseUnsetPreferredLocation; return true;
    case TIDAL_RT_ADVISE_SET_ACCESSED_BY: *out = cudaMemAdviseSetAccessedBy; return true;
    case TIDAL_RT_ADVISE_UNSET_ACCESSED_BY: *out = cudaMemAdviseUnsetAccessedBy; return true;
    default: return false;
    }
}

} // namespace

int rt_prefetch(void *, const void *ptr, size_t size, int32_t location, void *stream) noexcept
{
    /* The NULL stream is the current device's: make it the target's, so a prefetch to
     * device 1 queues behind device 1's work rather than whichever device is current. */
    const DeviceScope scope(location);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
#if CUDART_VERSION >= 13000
    return settle(cudaMemPrefetchAsync(ptr, size, location_of(location), 0, as_stream(stream)));
#else
    return settle(cudaMemPrefetchAsync(ptr, size, location_of(location), as_stream(stream)));
#endif
}

int rt_advise(void *, const void *ptr, size_t size, int32_t advice, int32_t location) noexcept
{
    if (advice == TIDAL_RT_ADVISE_SET_COARSE_GRAIN || advice == TIDAL_RT_ADVISE_UNSET_COARSE_GRAIN)
        return static_cast<int>(cudaErrorNotSupported); /* AMD coherence advice */
    cudaMemoryAdvise native{};
    if (!advice_of(advice, &native))
        return static_cast<int>(cudaErrorInvalidValue);
    /* Read-mostly ignores the location; CUDA still wants a well-formed one. */
    return settle(cudaMemAdvise(ptr, size, native, location_of(location)));
}

int rt_query_range(void *, const void *ptr, size_t size, int32_t attr, int32_t *value) noexcept
{
    /* The legacy attributes answer in the contract's own numbering: a device ordinal,
     * cudaCpuDeviceId (-1) for the host, cudaInvalidDeviceId (-2) for none / mixed. */
    cudaMemRangeAttribute native;
    switch (attr) {
    case TIDAL_RT_ATTR_LAST_PREFETCH_LOCATION: native = cudaMemRangeAttributeLastPrefetchLocation; break;
    case TIDAL_RT_ATTR_PREFERRED_LOCATION: native = cudaMemRangeAttributePreferredLocation; break;
    case TIDAL_RT_ATTR_READ_MOSTLY: native = cudaMemRangeAttributeReadMostly; break;
    case TIDAL_RT_ATTR_COHERENCY_MODE: return static_cast<int>(cudaErrorNotSupported);
    default: return static_cast<int>(cudaErrorInvalidValue);
    }
    int answer = 0;
    const cudaError_t status = cudaMemRangeGetAttribute(&answer, sizeof answer, native, ptr, size);
    if (status != cudaSuccess)
        return settle(status);
    *value = answer;
    return static_cast<int>(cudaSuccess);
}

} // namespace tidal::cuda
