// SimRuntime's managed-memory migration: prefetch, advice and range attributes.
#include "runtime/sim/sim_runtime.h"

#include <algorithm>

#include "runtime/sim/sim_errors.h"

namespace tidal::sim {

int SimRuntime::prefetch(const void *ptr, size_t size, int32_t location, void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::prefetch))
        return e;
    SimAllocation *a = find_range(ptr, size);
    if (a == nullptr || !a->managed() || size == 0)
        return kInvalidValue;
    if (!valid_location(location))
        return location >= 0 ? kInvalidDevice : kInvalidValue;
    SimStream *s = nullptr;
    if (int e = lookup_stream(stream, &s))
        return e;

    PageResidency &pages = *a->pages;
    const auto range = pages.pages_covering(reinterpret_cast<uintptr_t>(ptr) - a->base(), size);
    uint64_t h2d = 0, d2h = 0, peer = 0;
    int32_t d2h_from = 0;
    uint64_t duplicated = 0;
    if (location >= 0) {
        uint64_t needed = 0;
        for (std::size_t page = range.first; page < range.last; ++page)
            if (!pages.mask(page).on_device(location))
                needed += pages.page_bytes(page);
        if (!fits(location, needed))
            return kOutOfMemory; // nothing moved: the caller may evict and retry
        auto &counters = counters_[static_cast<std::size_t>(location)];
        for (std::size_t page = range.first; page < range.last; ++page) {
            const PageMask mask = pages.mask(page);
            if (mask.on_device(location))
                continue;
            const uint64_t bytes = pages.page_bytes(page);
            counters.paging.moved_to_device_bytes += bytes;
            ++a->counts(page).moves_to_device;
            if (mask.on_host()) {
                h2d += bytes;
                if (a->advice.read_mostly)
                    duplicated += bytes;
                counters.bytes_migrated_h2d += bytes;
            } else {
                peer += bytes;
                counters.bytes_migrated_peer += bytes;
            }
            // Read-mostly pages are duplicated, not moved.
            set_page(*a, page, a->advice.read_mostly ? mask.with(location) : PageMask::at(location));
        }
    } else {
        for (std::size_t page = range.first; page < range.last; ++page) {
            const PageMask mask = pages.mask(page);
            if (mask.on_host())
                continue; // read-mostly duplicates keep their device copy: it frees nothing
            const uint64_t bytes = pages.page_bytes(page);
            d2h += bytes;
            d2h_from = mask.first_device();
            counters_[static_cast<std::size_t>(mask.first_device())].bytes_migrated_d2h += bytes;
            counters_[static_cast<std::size_t>(mask.first_device())].paging.moved_to_host_bytes += bytes;
            ++a->counts(page).moves_to_host;
            set_page(*a, page,
                     a->advice.read_mostly ? mask.with(TIDAL_RT_LOCATION_HOST)
                                           : PageMask::at(TIDAL_RT_LOCATION_HOST));
        }
    }
    std::vector<int32_t> &last = a->advice.last_prefetch;
    if (last.empty())
        last.assign(pages.page_count(), kNoLocation);
    std::fill(last.begin() + static_cast<std::ptrdiff_t>(range.first), last.begin() + static_cast<std::ptrdiff_t>(range.last),
              location);
    const double duration = cost_.prefetch(h2d, d2h, peer, duplicated);
    if (h2d > 0 && location >= 0)
        clock_.run_on_link(s, duration, &link_h2d_[static_cast<std::size_t>(location)]);
    else if (d2h > 0)
        clock_.run_on_link(s, duration, &link_d2h_[static_cast<std::size_t>(d2h_from)]);
    else
        clock_.run(s, duration);
    return kSuccess;
}

int SimRuntime::advise(const void *ptr, size_t size, int32_t advice, int32_t location)
{
    Lock lock(*this);
    if (int e = injected(Operation::advise))
        return e;
    SimAllocation *a = find_range(ptr, size);
    if (a == nullptr || !a->managed() || size == 0)
        return kInvalidValue;
    ManagedAdvice &m = a->advice;
    switch (advice) {
    case TIDAL_RT_ADVISE_SET_READ_MOSTLY:
        m.read_mostly = true;
        return kSuccess;
    case TIDAL_RT_ADVISE_UNSET_READ_MOSTLY: {
        m.read_mostly = false;
        // Duplicates collapse onto the preferred location (the host when there is none):
        // the one way, measured on the H200, to get read-mostly pages off a device cheaply.
        PageResidency &pages = *a->pages;
        const auto range = pages.pages_covering(reinterpret_cast<uintptr_t>(ptr) - a->base(), size);
        uint64_t collapsed = 0;
        int32_t device = location >= 0 && valid_location(location) ? location : -1;
        for (std::size_t page = range.first; page < range.last; ++page) {
            const PageMask mask = pages.mask(page);
            if (mask.copies() > 1) {
                if (device < 0)
                    device = mask.first_device();
                set_page(*a, page, collapse(mask, m.at(page).preferred));
                collapsed += pages.page_bytes(page);
            }
        }
        // The call returns once the driver has unmapped the dropped copies, and the driver does
        // that in turn with the device's migrations (evicting on a second thread was no faster
        // on the H200): host time that also holds the device's host->device link.
        if (collapsed > 0 && device >= 0)
            clock_.run_on_link(nullptr, cost_.collapse(collapsed), &link_h2d_[static_cast<std::size_t>(device)]);
        return kSuccess;
    }
    case TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION:
    case TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION:
    case TIDAL_RT_ADVISE_SET_ACCESSED_BY:
    case TIDAL_RT_ADVISE_UNSET_ACCESSED_BY: {
        const bool needs_location = advice != TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION;
        if (needs_location && !valid_location(location))
            return kInvalidValue;
        const auto range = a->pages->pages_covering(reinterpret_cast<uintptr_t>(ptr) - a->base(), size);
        if (m.pages.empty())
            m.pages.resize(a->pages->page_count());
        for (std::size_t page = range.first; page < range.last; ++page) {
            ManagedAdvice::PageAdvice &p = m.pages[page];
            switch (advice) {
            case TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION: p.preferred = location; break;
            case TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION: p.preferred = kNoLocation; break;
            case TIDAL_RT_ADVISE_SET_ACCESSED_BY: p.accessed_by = p.accessed_by.with(location); break;
            default: p.accessed_by = p.accessed_by.without(location); break;
            }
        }
        return kSuccess;
    }
    case TIDAL_RT_ADVISE_SET_COARSE_GRAIN:
    case TIDAL_RT_ADVISE_UNSET_COARSE_GRAIN:
        if (!amd_)
            return kNotSupported;
        m.coarse = advice == TIDAL_RT_ADVISE_SET_COARSE_GRAIN;
        return kSuccess;
    default:
        return kInvalidValue;
    }
}

int SimRuntime::query_range(const void *ptr, size_t size, int32_t attr, int32_t *value) const
{
    Lock lock(*this);
    if (int e = injected(Operation::query_range))
        return e;
    if (value == nullptr)
        return kInvalidValue;
    const SimAllocation *a = find_range(ptr, size);
    if (a == nullptr || size == 0)
        return kInvalidValue;
    if (attr == TIDAL_RT_ATTR_COHERENCY_MODE) {
        if (!amd_)
            return kNotSupported;
        switch (a->kind) {
        case TIDAL_KIND_DEVICE: *value = 1; return kSuccess; // hipMalloc memory is coarse
        case TIDAL_KIND_DEVICE_FINE:
        case TIDAL_KIND_PINNED: *value = 0; return kSuccess;
        case TIDAL_KIND_MANAGED:
        case TIDAL_KIND_MANAGED_COARSE: *value = a->advice.coarse ? 1 : 0; return kSuccess;
        default: return kInvalidValue;
        }
    }
    if (!a->managed())
        return kInvalidValue;
    switch (attr) {
    case TIDAL_RT_ATTR_LAST_PREFETCH_LOCATION: {
        // The one location the range's prefetched pages were last prefetched to, else none
        // (cudaMemRangeGetAttribute answers cudaInvalidDeviceId for a mixed range).
        *value = kNoLocation;
        const std::vector<int32_t> &last = a->advice.last_prefetch;
        if (last.empty())
            return kSuccess;
        const auto range = a->pages->pages_covering(reinterpret_cast<uintptr_t>(ptr) - a->base(), size);
        bool mixed = false;
        for (std::size_t page = range.first; page < range.last; ++page)
            if (last[page] != kNoLocation) {
                mixed = mixed || (*value != kNoLocation && last[page] != *value);
                *value = last[page];
            }
        if (mixed)
            *value = kNoLocation;
        return kSuccess;
    }
    case TIDAL_RT_ATTR_PREFERRED_LOCATION: {
        // One location when every page of the range prefers it, else none (as CUDA answers).
        const auto range = a->pages->pages_covering(reinterpret_cast<uintptr_t>(ptr) - a->base(), size);
        *value = a->advice.at(range.first).preferred;
        for (std::size_t page = range.first; page < range.last; ++page)
            if (a->advice.at(page).preferred != *value)
                *value = kNoLocation;
        return kSuccess;
    }
    case TIDAL_RT_ATTR_READ_MOSTLY: *value = a->advice.read_mostly ? 1 : 0; return kSuccess;
    default: return kInvalidValue;
    }
}

int SimRuntime::paging_stats(int32_t device, tidal_rt_paging_stats *out) const
{
    Lock lock(*this);
    if (int e = injected(Operation::paging_stats))
        return e;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    const size_t struct_size = out->struct_size;
    *out = counters_[static_cast<std::size_t>(device)].paging;
    out->struct_size = struct_size;
    return kSuccess;
}

int SimRuntime::range_paging(const void *ptr, size_t size, int32_t reset, tidal_rt_paging_stats *out)
{
    Lock lock(*this);
    if (int e = injected(Operation::range_paging))
        return e;
    SimAllocation *a = find_range(ptr, size);
    if (a == nullptr || !a->managed() || size == 0)
        return kInvalidValue;
    const size_t struct_size = out->struct_size;
    *out = {};
    out->struct_size = struct_size;
    if (a->page_counts.empty())
        return kSuccess;
    const PageResidency &pages = *a->pages;
    const auto range = pages.pages_covering(reinterpret_cast<uintptr_t>(ptr) - a->base(), size);
    for (std::size_t page = range.first; page < range.last; ++page) {
        PageCounts &c = a->page_counts[page];
        const uint64_t bytes = pages.page_bytes(page);
        out->faults_from_host += c.faults_from_host;
        out->fault_bytes_from_host += c.faults_from_host * bytes;
        out->faults_from_peer += c.faults_from_peer;
        out->fault_bytes_from_peer += c.faults_from_peer * bytes;
        out->link_bytes += c.link_bytes;
        out->link_page_bytes += c.link_accesses * bytes;
        out->moved_to_device_bytes += c.moves_to_device * bytes;
        out->moved_to_host_bytes += c.moves_to_host * bytes;
        if (reset)
            c = {};
    }
    return kSuccess;
}

} // namespace tidal::sim
