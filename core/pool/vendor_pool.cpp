#include "pool/vendor_pool.h"

#include <algorithm>

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
    uint64_t reserved = 0, used = 0;
    if (runtime_.pool_usage(device_, &reserved, &used) == 0) {
        s.reserved_bytes = std::max<uint64_t>(reserved, s.in_use_bytes);
        s.cached_bytes = reserved > used ? reserved - used : 0;
    }
    return s;
}

uint64_t VendorPool::trim(uint64_t keep)
{
    if (!runtime_.supports(RuntimeOp::pool_trim))
        return 0;
    uint64_t before = 0, after = 0, used = 0;
    runtime_.check(runtime_.pool_usage(device_, &before, &used), "reading the stream-ordered pool's usage");
    // The runtime gives back only memory whose stream-ordered free has run (tidal's own frees
    // of vendor memory are queued on the default stream): wait for the device first. (CUDA's
    // default pool, release threshold 0, gives its spare memory back at that very wait.)
    if (runtime_.supports(RuntimeOp::device_synchronize))
        runtime_.device_synchronize(device_, "waiting for the device before trimming its pool");
    runtime_.pool_trim(device_, keep);
    runtime_.check(runtime_.pool_usage(device_, &after, &used), "reading the stream-ordered pool's usage");
    return before > after ? before - after : 0;
}

} // namespace tidal::pool
