#include "runtime/sim/sim_page_residency.h"

#include <algorithm>

namespace tidal::sim {

PageResidency::PageResidency(uint64_t size, uint64_t page_size, int32_t device_count)
    : size_(size), page_size_(page_size),
      masks_(static_cast<std::size_t>((size + page_size - 1) / page_size),
             PageMask::at(PageMask::kHost)),
      device_bytes_(static_cast<std::size_t>(device_count), 0), host_bytes_(size)
{
}

uint64_t PageResidency::page_bytes(std::size_t page) const noexcept
{
    const uint64_t start = page * page_size_;
    return std::min(page_size_, size_ - start);
}

void PageResidency::set(std::size_t page, PageMask mask) noexcept
{
    const PageMask old = masks_[page];
    const uint64_t bytes = page_bytes(page);
    if (old.on_host() != mask.on_host()) {
        if (mask.on_host())
            host_bytes_ += bytes;
        else
            host_bytes_ -= bytes;
    }
    for (std::size_t d = 0; d < device_bytes_.size(); ++d) {
        const auto device = static_cast<int32_t>(d);
        if (old.on_device(device) == mask.on_device(device))
            continue;
        if (mask.on_device(device))
            device_bytes_[d] += bytes;
        else
            device_bytes_[d] -= bytes;
    }
    masks_[page] = mask;
}

PageResidency::PageRange PageResidency::pages_covering(uint64_t offset, uint64_t length) const noexcept
{
    return {static_cast<std::size_t>(offset / page_size_),
            static_cast<std::size_t>((offset + length + page_size_ - 1) / page_size_)};
}

uint64_t PageResidency::overlap(std::size_t page, uint64_t offset, uint64_t length) const noexcept
{
    const uint64_t page_start = page * page_size_;
    const uint64_t page_end = page_start + page_bytes(page);
    const uint64_t start = std::max(page_start, offset);
    const uint64_t end = std::min(page_end, offset + length);
    return end > start ? end - start : 0;
}

} // namespace tidal::sim
