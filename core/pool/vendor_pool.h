// Device memory of one device from the runtime's own stream-ordered pool (cudaMallocAsync /
// hipMallocAsync), for [pool] backend = "vendor": every allocation and free is one runtime
// call ordered on a stream -- the caller's for tidal_alloc_async / tidal_free_async, the
// default stream otherwise. It exists so that applications and `tidal bench` can put the
// vendor's pool and tidal's behind the same API and compare them. The vendor keeps its own
// reserve (as its pool attributes say); tidal_pool_trim trims it to [pool] release_threshold
// where the runtime can (pool_trim), which also trims memory other users of the device's pool
// left there: what a caller asking for memory back wants. Statistics count tidal's calls; the
// reserved and cached bytes are the device pool's own figures where the runtime gives them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pool/pool_gauges.h"
#include "pool/pool_stats.h"
#include "pool/stream_handle.h"
#include "runtime/runtime.h"

namespace tidal::pool {

class VendorPool {
public:
    // `runtime` must have a stream-ordered pool and outlive this object.
    VendorPool(Runtime &runtime, int32_t device) noexcept : runtime_(runtime), device_(device) {}
    VendorPool(const VendorPool &) = delete;
    VendorPool &operator=(const VendorPool &) = delete;

    // Throws the runtime's translated error (OUT_OF_MEMORY when the device is full).
    void *allocate(size_t bytes, StreamHandle stream);
    // Returns the runtime's native code; a block the runtime did not take back stays counted.
    int deallocate(void *p, size_t bytes, StreamHandle stream) noexcept;
    PoolStats stats() const noexcept;
    // Trims the runtime's pool to `keep` spare bytes; returns the bytes it gave back (0 where
    // the runtime cannot trim). Throws the runtime's translated error.
    uint64_t trim(uint64_t keep);

private:
    Runtime &runtime_;
    int32_t device_;
    PoolGauges gauges_;
};

} // namespace tidal::pool
