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
    const uintptr_t end = base + record.size;
    Shard &s = shards_[shard_of(base)];
    std::lock_guard lock(s.mutex);
    // The block freed last at this base, coming back (what a pool does): nothing dead can lie
    // inside its range unless the next node does, and nothing live before it may reach in.
    if (const auto hint = s.index[Shard::index_of(base)];
        hint != s.slots.end() && hint->first == base && !hint->second.live) {
        const auto next = std::next(hint);
        const bool after = next == s.slots.end() || next->first >= end;
        bool before = true;
        if (hint != s.slots.begin()) {
            const auto prev = std::prev(hint);
            before = !(prev->second.live && prev->first + prev->second.record.size > base);
        }
        if (after && before) {
            hint->second.record = record;
            hint->second.live = true;
            --s.dead;
            ++s.live;
            return;
        }
    }
    auto it = s.slots.lower_bound(base);
    bool overlaps = false;
    if (it != s.slots.begin()) {
        const auto prev = std::prev(it);
        overlaps = prev->second.live && prev->first + prev->second.record.size > base;
    }
    auto revived = s.slots.end();
    while (!overlaps && it != s.slots.end() && it->first < end) {
        if (it->second.live) {
            overlaps = true;
        } else if (it->first == base) {
            revived = it++;
        } else { // a dead node inside the new range would hide it from interior lookups
            it = s.erase(it);
            --s.dead;
        }
    }
    if (overlaps)
        throw Error(TIDAL_ERROR_INTERNAL, "the runtime returned memory overlapping a live allocation",
                    "this is a bug in tidal or the device runtime; please report it");
    if (revived != s.slots.end()) {
        revived->second.record = record;
        revived->second.live = true;
        --s.dead;
    } else {
        revived = s.slots.emplace_hint(it, base, Slot{record, true});
    }
    s.remember(revived);
    ++s.live;
}

std::optional<AllocationRecord> AllocationRegistry::find_interior(uintptr_t a, Vacancy *vacancy) const
{
    Vacancy around{0, UINTPTR_MAX};
    for (const Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        auto it = s.slots.upper_bound(a);
        // The vacancy ends at the next live allocation: copies refuse a range that runs into
        // one, so a dead node (a freed base kept for revival) must not end it.
        auto next = it;
        while (next != s.slots.end() && !next->second.live)
            ++next;
        if (next != s.slots.end())
            around.end = std::min(around.end, next->first);
        if (it == s.slots.begin())
            continue;
        --it;
        if (!it->second.live) { // nothing live of this shard reaches past a dead node's base
            around.begin = std::max(around.begin, it->first);
            continue;
        }
        if (it->second.record.contains(reinterpret_cast<const void *>(a)))
            return it->second.record;
        around.begin = std::max(around.begin, it->first + it->second.record.size);
    }
    if (vacancy)
        *vacancy = around;
    return std::nullopt;
}

std::optional<AllocationRecord> AllocationRegistry::find(const void *p, Vacancy *vacancy) const
{
    const uintptr_t a = addr(p);
    {
        Shard &s = const_cast<Shard &>(shards_[shard_of(a)]); // exact() reads the index only
        std::lock_guard lock(s.mutex);
        if (auto it = s.exact(a); it != s.slots.end() && it->second.live)
            return it->second.record; // the common case: a base pointer
    }
    return find_interior(a, vacancy);
}

bool AllocationRegistry::set_advice(const void *base, uint32_t advice)
{
    const uintptr_t a = addr(base);
    Shard &s = shards_[shard_of(a)];
    std::lock_guard lock(s.mutex);
    auto it = s.exact(a);
    if (it == s.slots.end() || !it->second.live)
        return false;
    it->second.record.advice = advice;
    return true;
}

AllocationRegistry::Removal AllocationRegistry::remove(const void *p, AllocationRecord *out)
{
    const uintptr_t a = addr(p);
    Shard &s = shards_[shard_of(a)];
    {
        std::lock_guard lock(s.mutex);
        if (auto it = s.exact(a); it != s.slots.end() && it->second.live) {
            if (out)
                *out = it->second.record;
            it->second.live = false;
            --s.live;
            ++s.dead;
            s.freed[s.freed_next++ % kFreedMemory] = a;
            if (s.dead > kDeadSlack && s.dead > s.live) [[unlikely]]
                s.purge_dead();
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
        for (auto &[base, slot] : s.slots)
            if (slot.live)
                all.push_back(slot.record);
        s.slots.clear();
        s.index.fill(s.slots.end());
        s.live = s.dead = 0;
    }
    return all;
}

size_t AllocationRegistry::live_count() const
{
    size_t n = 0;
    for (const Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        n += s.live;
    }
    return n;
}

void AllocationRegistry::Shard::purge_dead() noexcept
{
    std::erase_if(slots, [](const auto &node) { return !node.second.live; });
    index.fill(slots.end());
    dead = 0;
}

bool AllocationRegistry::Shard::was_freed(uintptr_t base) const noexcept
{
    for (uintptr_t f : freed)
        if (f == base && base != 0)
            return true;
    return false;
}

} // namespace tidal
