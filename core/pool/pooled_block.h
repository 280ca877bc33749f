// A block as a DevicePool routes it: which half owns it and how big it really is. Computed the
// same way from (size, alignment) on allocate and on deallocate, so no per-block record is
// kept anywhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tidal::pool {

struct PooledBlock {
    void *p = nullptr;
    size_t bytes = 0;         // after rounding: the size class, or a multiple of 256
    uint32_t size_class = 0;  // valid when small
    bool small = false;       // SizeClassPool (true) or CoalescingPool (false)

    // Whether `other` can stand in for this block: same half, same rounded size.
    bool same_shape(const PooledBlock &other) const noexcept
    {
        return small == other.small && bytes == other.bytes;
    }
};

} // namespace tidal::pool
