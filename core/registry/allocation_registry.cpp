#include "registry/allocation_registry.h"

#include <mutex>

#include "status/error.h"

namespace tidal {
namespace {
uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }
} // namespace

void AllocationRegistry::insert(const AllocationRecord &record)
{
    std::unique_lock lock(mutex_);
    const uintptr_t base = addr(record.base);
    auto next = live_.lower_bound(base);
    bool overlaps = next != live_.end() && next->first < base + record.size;
    if (!overlaps && next != live_.begin()) {
        auto prev = std::prev(next);
        overlaps = prev->first + prev->second.size > base;
    }
    if (overlaps)
        throw Error(TIDAL_ERROR_INTERNAL, "the runtime returned memory overlapping a live allocation",
                    "this is a bug in tidal or the device runtime; please report it");
    live_.emplace(base, record);
    // The address is live again: a later free of it is no longer a double free.
    if (auto it = freed_.find(base); it != freed_.end())
        freed_.erase(it);
}

std::optional<AllocationRecord> AllocationRegistry::find(const void *p) const
{
    std::shared_lock lock(mutex_);
    auto it = live_.upper_bound(addr(p));
    if (it == live_.begin())
        return std::nullopt;
    --it;
    if (!it->second.contains(p))
        return std::nullopt;
    return it->second;
}

AllocationRegistry::Removal AllocationRegistry::remove(const void *p, AllocationRecord *out)
{
    std::unique_lock lock(mutex_);
    const uintptr_t a = addr(p);
    if (auto it = live_.find(a); it != live_.end()) {
        if (out)
            *out = it->second;
        live_.erase(it);
        remember_freed(a);
        return Removal::removed;
    }
    auto it = live_.upper_bound(a);
    if (it != live_.begin()) {
        --it;
        if (it->second.contains(p)) {
            if (out)
                *out = it->second;
            return Removal::interior;
        }
    }
    return freed_.count(a) ? Removal::already_freed : Removal::unknown;
}

std::vector<AllocationRecord> AllocationRegistry::drain()
{
    std::unique_lock lock(mutex_);
    std::vector<AllocationRecord> all;
    all.reserve(live_.size());
    for (auto &[base, record] : live_)
        all.push_back(record);
    live_.clear();
    return all;
}

size_t AllocationRegistry::live_count() const
{
    std::shared_lock lock(mutex_);
    return live_.size();
}

void AllocationRegistry::remember_freed(uintptr_t base)
{
    freed_order_.push_back(base);
    freed_.insert(base);
    if (freed_order_.size() > kFreedMemory) {
        if (auto it = freed_.find(freed_order_.front()); it != freed_.end())
            freed_.erase(it);
        freed_order_.pop_front();
    }
}

} // namespace tidal
