#include "registry/allocation_registry.h"

#include <algorithm>

#include "status/error.h"

namespace tidal {
namespace {
uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }
} // namespace

static_assert(sizeof(uintptr_t) == 8, "the shard hash assumes 64-bit addresses");

void AllocationRegistry::insert(const AllocationRecord &record)
{
    const uintptr_t base = addr(record.base);
    Shard &s = shards_[shard_of(base)];
    std::lock_guard lock(s.mutex);
    auto next = s.live.lower_bound(base);
    bool overlaps = next != s.live.end() && next->first < base + record.size;
    if (!overlaps && next != s.live.begin()) {
        auto prev = std::prev(next);
        overlaps = prev->first + prev->second.size > base;
    }
    if (overlaps)
        throw Error(TIDAL_ERROR_INTERNAL, "the runtime returned memory overlapping a live allocation",
                    "this is a bug in tidal or the device runtime; please report it");
    s.live.emplace(base, record);
}

std::optional<AllocationRecord> AllocationRegistry::find_interior(uintptr_t a, Vacancy *vacancy) const
{
    Vacancy around{0, UINTPTR_MAX};
    for (const Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        auto it = s.live.upper_bound(a);
        if (it != s.live.end())
            around.end = std::min(around.end, it->first);
        if (it == s.live.begin())
            continue;
        --it;
        if (it->second.contains(reinterpret_cast<const void *>(a)))
            return it->second;
        around.begin = std::max(around.begin, it->first + it->second.size);
    }
    if (vacancy)
        *vacancy = around;
    return std::nullopt;
}

std::optional<AllocationRecord> AllocationRegistry::find(const void *p, Vacancy *vacancy) const
{
    const uintptr_t a = addr(p);
    {
        const Shard &s = shards_[shard_of(a)];
        std::lock_guard lock(s.mutex);
        if (auto it = s.live.find(a); it != s.live.end())
            return it->second; // the common case: a base pointer
    }
    return find_interior(a, vacancy);
}

bool AllocationRegistry::set_advice(const void *base, uint32_t advice)
{
    const uintptr_t a = addr(base);
    Shard &s = shards_[shard_of(a)];
    std::lock_guard lock(s.mutex);
    auto it = s.live.find(a);
    if (it == s.live.end())
        return false;
    it->second.advice = advice;
    return true;
}

AllocationRegistry::Removal AllocationRegistry::remove(const void *p, AllocationRecord *out)
{
    const uintptr_t a = addr(p);
    Shard &s = shards_[shard_of(a)];
    {
        std::lock_guard lock(s.mutex);
        if (auto it = s.live.find(a); it != s.live.end()) {
            if (out)
                *out = it->second;
            s.live.erase(it);
            s.freed[s.freed_next++ % kFreedMemory] = a;
            return Removal::removed;
        }
    }
    if (auto r = find_interior(a)) {
        if (out)
            *out = *r;
        return Removal::interior;
    }
    std::lock_guard lock(s.mutex);
    return s.was_freed(a) ? Removal::already_freed : Removal::unknown;
}

std::vector<AllocationRecord> AllocationRegistry::drain()
{
    std::vector<AllocationRecord> all;
    for (Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        for (auto &[base, record] : s.live)
            all.push_back(record);
        s.live.clear();
    }
    return all;
}

size_t AllocationRegistry::live_count() const
{
    size_t n = 0;
    for (const Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        n += s.live.size();
    }
    return n;
}

bool AllocationRegistry::Shard::was_freed(uintptr_t base) const noexcept
{
    for (uintptr_t f : freed)
        if (f == base && base != 0)
            return true;
    return false;
}

} // namespace tidal
