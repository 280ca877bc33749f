// Prefetch, advice and range queries on managed memory for the HIP module.
#include <hip/hip_runtime_api.h>

#include "hip_device_scope.h"
#include "hip_entry_points.h"
#include "hip_errors.h"

namespace tidal::hip {

namespace {

// TIDAL_RT_LOCATION_HOST and hipCpuDeviceId are both -1 today; mapped explicitly so a change
// on either side is a compile-time question, not a silent migration to the wrong place.
int hip_location(int32_t location) noexcept
{
    return location == TIDAL_RT_LOCATION_HOST ? hipCpuDeviceId : location;
}

// The contract's advice numbers mirror hipMemoryAdvise, but each is mapped by name.
bool hip_advice(int32_t advice, hipMemoryAdvise &out) noexcept
{
    switch (advice) {
    case TIDAL_RT_ADVISE_SET_READ_MOSTLY: out = hipMemAdviseSetReadMostly; return true;
    case TIDAL_RT_ADVISE_UNSET_READ_MOSTLY: out = hipMemAdviseUnsetReadMostly; return true;
    case TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION: out = hipMemAdviseSetPreferredLocation; return true;
    case TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION: out = hipMemAdviseUnsetPreferredLocation; return true;
    case TIDAL_RT_ADVISE_SET_ACCESSED_BY: out = hipMemAdviseSetAccessedBy; return true;
    case TIDAL_RT_ADVISE_UNSET_ACCESSED_BY: out = hipMemAdviseUnsetAccessedBy; return true;
    case TIDAL_RT_ADVISE_SET_COARSE_GRAIN: out = hipMemAdviseSetCoarseGrain; return true;
    case TIDAL_RT_ADVISE_UNSET_COARSE_GRAIN: out = hipMemAdviseUnsetCoarseGrain; return true;
    default: return false;
    }
}

bool hip_range_attribute(int32_t attr, hipMemRangeAttribute &out) noexcept
{
    switch (attr) {
    case TIDAL_RT_ATTR_LAST_PREFETCH_LOCATION: out = hipMemRangeAttributeLastPrefetchLocation; return true;
    case TIDAL_RT_ATTR_PREFERRED_LOCATION: out = hipMemRangeAttributePreferredLocation; return true;
    case TIDAL_RT_ATTR_READ_MOSTLY: out = hipMemRangeAttributeReadMostly; return true;
    case TIDAL_RT_ATTR_COHERENCY_MODE: out = hipMemRangeAttributeCoherencyMode; return true;
    default: return false;
    }
}

} // namespace

int rt_prefetch(void *, const void *ptr, size_t size, int32_t location, void *stream) noexcept
{
    return guarded([&] {
        const auto s = static_cast<hipStream_t>(stream);
        if (stream == nullptr && location >= 0) {
            // The NULL stream is per device: order the prefetch on the target's own.
            const DeviceScope scope(location);
            if (scope.status() != hipSuccess)
                return scope.status();
            return hipMemPrefetchAsync(ptr, size, location, s);
        }
        // With pageable access off, a pointer HIP does not know fails hipErrorNotSupported;
        // the core maps that, it is not retried here.
        return hipMemPrefetchAsync(ptr, size, hip_location(location), s);
    });
}

int rt_advise(void *, const void *ptr, size_t size, int32_t advice, int32_t location) noexcept
{
    return guarded([&] {
        hipMemoryAdvise a{};
        if (!hip_advice(advice, a))
            return hipErrorInvalidValue;
        return hipMemAdvise(ptr, size, a, hip_location(location));
    });
}

int rt_query_range(void *, const void *ptr, size_t size, int32_t attr, int32_t *value) noexcept
{
    return guarded([&] {
        hipMemRangeAttribute a{};
        if (!hip_range_attribute(attr, a))
            return hipErrorInvalidValue;
        // Every attribute asked for is one 32-bit value; locations come back as a device
        // index, hipCpuDeviceId (-1 = host) or hipInvalidDeviceId (-2 = unknown / none),
        // which are the contract's numbers already.
        int32_t v = 0;
        const hipError_t rc = hipMemRangeGetAttribute(&v, sizeof v, a, ptr, size);
        if (rc == hipSuccess)
            *value = v;
        return rc;
    });
}

} // namespace tidal::hip
