#include "pool/pool_set.h"

#include <algorithm>
#include <exception>

namespace tidal::pool {

PoolSet::PoolSet(Runtime &runtime, PoolSettings settings, EventPool *events, Backend backend)
    : runtime_(runtime), settings_(settings), events_(events)
{
    if (backend == Backend::vendor && settings_.enabled)
        for (int32_t d = 0; d < std::min(runtime_.device_count(), kMaxDevices); ++d)
            vendor_.push_back(std::make_unique<VendorPool>(runtime_, d));
}

PoolSet::~PoolSet()
{
    // Pools go in reverse order of creation, each before its source.
    while (!entries_.empty())
        entries_.pop_back();
}

DevicePool &PoolSet::create(tidal_kind kind, int32_t device)
{
    std::lock_guard lock(mutex_);
    if (DevicePool *p = slot(kind, device).load(std::memory_order_acquire))
        return *p;
    Entry e;
    e.source = std::make_unique<RuntimeBlockSource>(runtime_, kind, device);
    // Host pools record their events on device 0: the streams a host block is freed on belong
    // to some device, and a single-device process (the common case) has only that one.
    if (events_)
        e.oracle = std::make_unique<RuntimeEventOracle>(runtime_, *events_, device);
    e.pool = std::make_unique<DevicePool>(*e.source, settings_, e.oracle.get());
    DevicePool *p = e.pool.get();
    entries_.push_back(std::move(e));
    slot(kind, device).store(p, std::memory_order_release);
    return *p;
}

const DevicePool *PoolSet::find(tidal_kind kind, int32_t device) const noexcept
{
    if (kind <= TIDAL_KIND_AUTO || kind >= TIDAL_KIND_COUNT || device < 0 || device >= kMaxDevices)
        return nullptr;
    return slots_[static_cast<size_t>(kind) * kMaxDevices + static_cast<size_t>(device)].load(std::memory_order_acquire);
}

PoolStats PoolSet::stats(tidal_kind kind, int32_t device) const
{
    if (vendor_serves(kind) && device >= 0 && static_cast<size_t>(device) < vendor_.size())
        return vendor_[static_cast<size_t>(device)]->stats();
    const DevicePool *p = find(kind, device);
    return p ? p->stats() : PoolStats{};
}

void PoolSet::end_stream(void *stream)
{
    std::lock_guard lock(mutex_);
    std::exception_ptr first;
    for (Entry &e : entries_) {
        try {
            e.pool->end_stream(StreamHandle{stream});
        } catch (...) {
            if (!first)
                first = std::current_exception();
        }
    }
    if (first)
        std::rethrow_exception(first);
}

uint64_t PoolSet::trim(std::exception_ptr *failure)
{
    std::lock_guard lock(mutex_);
    uint64_t released = 0;
    const auto first = [&](std::exception_ptr e) {
        if (!*failure)
            *failure = std::move(e);
    };
    for (Entry &e : entries_) {
        try {
            released += e.pool->trim(failure);
        } catch (...) {
            first(std::current_exception()); // completed stream frees could not be taken back
        }
    }
    for (auto &v : vendor_) {
        try {
            released += v->trim(settings_.release_threshold);
        } catch (...) {
            first(std::current_exception());
        }
    }
    return released;
}

} // namespace tidal::pool
