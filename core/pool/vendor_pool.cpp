#include "pool/vendor_pool.h"

namespace tidal::pool {

void *VendorPool::allocate(size_t bytes, StreamHandle stream)
{
    void *p = runtime_.alloc_async(device_, bytes, stream.native);
    gauges_.add_reserved(bytes);
    gauges_.add_outstanding(bytes);
    return p;
}

int VendorPool::deallocate(void *p, size_t bytes, StreamHandle stream) noexcept
{
    const int rc = runtime_.free_async(device_, p, stream.native);
    if (rc == 0) {
        gauges_.sub_reserved(bytes);
        gauges_.sub_outstanding(bytes);
    }
    return rc;
}

PoolStats VendorPool::stats() const noexcept
{
    PoolStats s;
    s.reserved_bytes = gauges_.reserved();
    s.reserved_high_water = gauges_.reserved_high_water();
    s.in_use_bytes = gauges_.outstanding();
    s.in_use_high_water = gauges_.outstanding_high_water();
    // Every call is the runtime's: allocations and runtime allocations are one count.
    s.allocations = s.upstream_acquires = gauges_.upstream_acquires();
    s.frees = s.upstream_releases = gauges_.upstream_releases();
    return s;
}

} // namespace tidal::pool
