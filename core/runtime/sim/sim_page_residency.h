// Page-by-page residency of one managed allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/sim/sim_page_mask.h"

namespace tidal::sim {

// Pages are counted from the allocation's base (not from address zero), so an allocation of
// N bytes has ceil(N / page_size) pages and its last page may be partial; a partial page
// accounts only for the bytes it covers, which keeps "resident bytes" equal to the allocation
// size after a full prefetch. Bytes per location are kept incrementally so that freeing an
// allocation or reading a device's total never rescans the pages.
class PageResidency {
public:
    struct PageRange {
        std::size_t first = 0; // first page touched
        std::size_t last = 0;  // one past the last page touched
    };

    // Every page starts valid on the host: the simulated device models "first touch on the
    // host", the common case for data a program initialises before any kernel runs.
    PageResidency(uint64_t size, uint64_t page_size, int32_t device_count);

    uint64_t page_size() const noexcept { return page_size_; }
    std::size_t page_count() const noexcept { return masks_.size(); }
    uint64_t page_bytes(std::size_t page) const noexcept;
    PageMask mask(std::size_t page) const noexcept { return masks_[page]; }
    void set(std::size_t page, PageMask mask) noexcept;

    // Pages overlapping [offset, offset + length) of the allocation (length > 0).
    PageRange pages_covering(uint64_t offset, uint64_t length) const noexcept;
    // Bytes of [offset, offset + length) that fall in `page`.
    uint64_t overlap(std::size_t page, uint64_t offset, uint64_t length) const noexcept;

    uint64_t device_bytes(int32_t device) const noexcept { return device_bytes_[device]; }
    uint64_t host_bytes() const noexcept { return host_bytes_; }

private:
    uint64_t size_;
    uint64_t page_size_;
    std::vector<PageMask> masks_;
    std::vector<uint64_t> device_bytes_;
    uint64_t host_bytes_ = 0;
};

} // namespace tidal::sim
