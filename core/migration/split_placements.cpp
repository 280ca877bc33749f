#include "migration/split_placements.h"

#include <algorithm>

namespace tidal {

namespace {

const void *part_ptr(const AllocationRecord &r, const tidal_policy_part &p)
{
    return static_cast<const char *>(r.base) + p.offset;
}

} // namespace

void SplitPlacements::add(const AllocationRecord &r, std::vector<tidal_policy_part> parts)
{
    size_t applied = 0;
    bool cut = false;
    try {
        for (const tidal_policy_part &p : parts) {
            runtime_.advise_bits(part_ptr(r, p), p.size, kPartAdvice, AdviceAction::set, p.device);
            ++applied;
        }
        scheduler_.split(r, parts);
        cut = true;
        std::lock_guard lock(mutex_);
        splits_[r.base] = parts;
        count_.store(splits_.size(), std::memory_order_relaxed);
    } catch (...) {
        if (cut)
            scheduler_.forget(r); // its units must not outlive it: the block may be reused at once
        unset(r, std::vector<tidal_policy_part>(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(applied)));
        throw;
    }
}

void SplitPlacements::unset(const AllocationRecord &r, const std::vector<tidal_policy_part> &parts) noexcept
{
    for (const tidal_policy_part &p : parts)
        runtime_.advise_bits_noexcept(part_ptr(r, p), p.size, kPartAdvice, AdviceAction::unset, p.device);
}

void SplitPlacements::remove(const AllocationRecord &r) noexcept
{
    std::vector<tidal_policy_part> parts;
    {
        std::lock_guard lock(mutex_);
        auto it = splits_.find(r.base);
        if (it == splits_.end())
            return;
        parts = std::move(it->second);
        splits_.erase(it);
        count_.store(splits_.size(), std::memory_order_relaxed);
    }
    if (r.pooled)
        unset(r, parts);
}

uint32_t SplitPlacements::advise(const AllocationRecord &r, const void *ptr, size_t size, uint32_t set, uint32_t unset)
{
    const std::vector<tidal_policy_part> parts = parts_of(r.base);
    if (parts.empty())
        return 0;
    const uintptr_t lo = reinterpret_cast<uintptr_t>(ptr), hi = lo + size;
    for (const tidal_policy_part &p : parts) {
        const uintptr_t plo = reinterpret_cast<uintptr_t>(part_ptr(r, p)), phi = plo + p.size;
        if (phi <= lo || plo >= hi)
            continue;
        const void *at = reinterpret_cast<const void *>(std::max(lo, plo));
        const size_t bytes = std::min(hi, phi) - std::max(lo, plo);
        runtime_.advise_bits(at, bytes, unset & kPartAdvice, AdviceAction::unset, p.device);
        runtime_.advise_bits(at, bytes, set & kPartAdvice, AdviceAction::set, p.device);
    }
    return (set | unset) & kPartAdvice;
}

std::vector<tidal_policy_part> SplitPlacements::parts_of(const void *base) const
{
    std::lock_guard lock(mutex_);
    auto it = splits_.find(base);
    return it == splits_.end() ? std::vector<tidal_policy_part>{} : it->second;
}

} // namespace tidal
