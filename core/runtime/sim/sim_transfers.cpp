// SimRuntime's copies and fills, charged at the profile's rates for each pair of endpoints.
#include "runtime/sim/sim_runtime.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/sim/sim_errors.h"

namespace tidal::sim {

// A managed range counts as device memory when most of its bytes are resident on one device
// (bandwidth by the majority, rather than splitting one copy into per-page pieces).
int SimRuntime::classify_copy_end(const void *ptr, uint64_t size, CopyEnd *out) const
{
    const SimAllocation *a = find(ptr);
    if (a == nullptr && find_reservation(ptr) != nullptr) {
        // Elastic memory, copied by the device that owns the chunk, must be resident.
        int32_t owner = -1;
        if (!vmm_resident(ptr, size, -1, &owner))
            return kIllegalAddress;
        *out = {Endpoint::device, owner};
        return kSuccess;
    }
    if (a == nullptr) {
        *out = {registered(ptr, size) ? Endpoint::pinned : Endpoint::pageable, -1};
        return kSuccess;
    }
    if (size > a->end() - reinterpret_cast<uintptr_t>(ptr))
        return kInvalidValue; // runs off the end of a simulated allocation
    if (a->device_kind()) {
        *out = {Endpoint::device, a->device};
    } else if (a->managed()) {
        const PageResidency &pages = *a->pages;
        const uint64_t offset = reinterpret_cast<uintptr_t>(ptr) - a->base();
        const auto range = pages.pages_covering(offset, size);
        std::vector<uint64_t> on_device(static_cast<std::size_t>(devices_), 0);
        for (std::size_t page = range.first; page < range.last; ++page) {
            const PageMask mask = pages.mask(page);
            for (int32_t d = 0; d < devices_; ++d)
                if (mask.on_device(d))
                    on_device[static_cast<std::size_t>(d)] += pages.overlap(page, offset, size);
        }
        const auto best = std::max_element(on_device.begin(), on_device.end());
        if (*best * 2 > size)
            *out = {Endpoint::device, static_cast<int32_t>(best - on_device.begin())};
        else
            *out = {Endpoint::pageable, -1};
    } else if (a->kind == TIDAL_KIND_PINNED || registered(ptr, size)) {
        *out = {Endpoint::pinned, -1};
    } else {
        *out = {Endpoint::pageable, -1};
    }
    return kSuccess;
}

// A copy that touches a non-resident part of elastic memory faults as a kernel would: it is
// logged and counted against the device whose reservation it is.
int SimRuntime::copy_failed(int error, Operation op, const void *ptr)
{
    if (error != kIllegalAddress)
        return error;
    const SimReservation *r = find_reservation(ptr);
    const int32_t device = r != nullptr ? r->device_at(reinterpret_cast<uintptr_t>(ptr)) : 0;
    ++counters_[static_cast<std::size_t>(device)].fatal_faults;
    FaultRecord record;
    record.type = FaultRecord::Type::illegal_address;
    record.time = clock_.now();
    record.device = device;
    record.address = reinterpret_cast<uintptr_t>(ptr);
    record.operation = FaultInjector::name(op);
    record.native_error = kIllegalAddress;
    log_fault(std::move(record));
    return kIllegalAddress;
}

void SimRuntime::count_copy(const CopyEnd &src, const CopyEnd &dst, uint64_t bytes)
{
    const bool src_device = src.endpoint == Endpoint::device;
    const bool dst_device = dst.endpoint == Endpoint::device;
    if (dst_device && !src_device)
        counters_[static_cast<std::size_t>(dst.device)].copy_bytes_h2d += bytes;
    if (src_device && !dst_device)
        counters_[static_cast<std::size_t>(src.device)].copy_bytes_d2h += bytes;
}

int SimRuntime::memcpy(void *dst, const void *src, size_t size, void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::memcpy))
        return e;
    if (dst == nullptr || src == nullptr)
        return kInvalidValue;
    SimStream *s = nullptr;
    if (int e = lookup_stream(stream, &s))
        return e;
    return copy_between(dst, src, size, s, Operation::memcpy);
}

bool SimRuntime::peer_enabled(int32_t a, int32_t b) const
{
    const auto n = static_cast<std::size_t>(devices_);
    return peer_enabled_[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] != 0 ||
           peer_enabled_[static_cast<std::size_t>(b) * n + static_cast<std::size_t>(a)] != 0;
}

int SimRuntime::copy_between(void *dst, const void *src, size_t size, SimStream *s, Operation op)
{
    CopyEnd from, to;
    if (int e = classify_copy_end(src, size, &from))
        return copy_failed(e, op, src);
    if (int e = classify_copy_end(dst, size, &to))
        return copy_failed(e, op, dst);
    count_copy(from, to, size);
    do_work(s, [&] { std::memmove(dst, src, size); });
    const bool src_device = from.endpoint == Endpoint::device, dst_device = to.endpoint == Endpoint::device;
    if (src_device && dst_device && from.device != to.device) {
        // Between two devices: over the link once peer access is on, else through the host
        // (down the source's link, up the destination's), as the runtimes do without it.
        const SimProfile::Link *link = profile_.link(from.device, to.device);
        if (link != nullptr && link->peer && peer_enabled(from.device, to.device))
            clock_.run(s, link->latency + CostModel::transfer(size, link->bandwidth));
        else
            clock_.run(s, cost_.copy(Endpoint::device, Endpoint::pinned, size) +
                              cost_.copy(Endpoint::pinned, Endpoint::device, size));
        return kSuccess;
    }
    const double duration = cost_.copy(from.endpoint, to.endpoint, size);
    if (dst_device && !src_device)
        clock_.run_on_link(s, duration, &link_h2d_[static_cast<std::size_t>(to.device)]);
    else if (src_device && !dst_device)
        clock_.run_on_link(s, duration, &link_d2h_[static_cast<std::size_t>(from.device)]);
    else
        clock_.run(s, duration);
    return kSuccess;
}

int SimRuntime::peer_info(int32_t device, int32_t peer, tidal_rt_peer_info *info) const
{
    Lock lock(*this);
    if (int e = injected(Operation::peer_info))
        return e;
    if (info == nullptr || device == peer)
        return kInvalidValue;
    if (device < 0 || device >= devices_ || peer < 0 || peer >= devices_)
        return kInvalidDevice;
    tidal_rt_peer_info out{};
    out.struct_size = sizeof out;
    out.link_type = TIDAL_LINK_NONE;
    out.hops = -1;
    out.performance_rank = -1;
    if (const SimProfile::Link *link = profile_.link(device, peer)) {
        out.can_access = link->peer ? 1 : 0;
        out.link_type = link->type;
        out.hops = link->hops;
        out.performance_rank = link->hops - 1; // one hop is the best a pair can do
        out.bandwidth = link->bandwidth;
        out.latency = link->latency;
    }
    *info = out;
    return kSuccess;
}

int SimRuntime::peer_enable(int32_t device, int32_t peer)
{
    Lock lock(*this);
    if (int e = injected(Operation::peer_enable))
        return e;
    if (device == peer)
        return kInvalidDevice;
    if (device < 0 || device >= devices_ || peer < 0 || peer >= devices_)
        return kInvalidDevice;
    const SimProfile::Link *link = profile_.link(device, peer);
    if (link == nullptr || !link->peer)
        return kPeerAccessUnsupported;
    peer_enabled_[static_cast<std::size_t>(device) * static_cast<std::size_t>(devices_) +
                  static_cast<std::size_t>(peer)] = 1;
    return kSuccess;
}

int SimRuntime::memcpy_peer(void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size,
                            void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::memcpy_peer))
        return e;
    if (dst == nullptr || src == nullptr)
        return kInvalidValue;
    if (dst_device < 0 || dst_device >= devices_ || src_device < 0 || src_device >= devices_)
        return kInvalidDevice;
    SimStream *s = nullptr;
    if (int e = lookup_stream(stream, &s))
        return e;
    // The devices named must be where the memory is, as the runtimes require.
    CopyEnd from, to;
    if (classify_copy_end(src, size, &from) == kSuccess && classify_copy_end(dst, size, &to) == kSuccess &&
        ((from.endpoint == Endpoint::device && from.device != src_device) ||
         (to.endpoint == Endpoint::device && to.device != dst_device)))
        return kInvalidValue;
    return copy_between(dst, src, size, s, Operation::memcpy_peer);
}

int SimRuntime::memset(void *dst, int value, size_t size, void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::memset))
        return e;
    if (dst == nullptr)
        return kInvalidValue;
    SimStream *s = nullptr;
    if (int e = lookup_stream(stream, &s))
        return e;
    CopyEnd to;
    if (int e = classify_copy_end(dst, size, &to))
        return copy_failed(e, Operation::memset, dst);
    do_work(s, [&] { std::memset(dst, value, size); });
    clock_.run(s, cost_.fill(to.endpoint, size));
    return kSuccess;
}

int SimRuntime::host_copy(size_t size, uint32_t threads)
{
    Lock lock(*this);
    if (int e = injected(Operation::host_copy))
        return e;
    if (threads == 0)
        return kInvalidValue;
    clock_.run(nullptr, cost_.host_copy(size, threads));
    return kSuccess;
}

} // namespace tidal::sim
