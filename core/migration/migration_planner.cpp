#include "migration/migration_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "status/error.h"

namespace tidal {

std::vector<uintptr_t> DevicePlan::keep() const
{
    std::vector<uintptr_t> starts;
    starts.reserve(needs.size());
    for (const Need &n : needs)
        starts.push_back(n.start);
    std::sort(starts.begin(), starts.end());
    return starts;
}

size_t DeclarationPlan::device_index(int32_t device)
{
    for (size_t i = 0; i < devices.size(); ++i)
        if (devices[i].device == device)
            return i;
    devices.push_back(DevicePlan{device, {}, 0, {}});
    if (!spare.empty()) {
        devices.back().needs = std::move(spare.back());
        spare.pop_back();
    }
    return devices.size() - 1;
}

void DeclarationPlan::reset()
{
    for (DevicePlan &d : devices) {
        d.needs.clear();
        spare.push_back(std::move(d.needs));
    }
    devices.clear();
    seen_.clear();
    runs_.clear();
    current_ = 0;
    last_ = ceiling_ = 0;
    hashed_ = false;
}

void DeclarationPlan::fill_seen()
{
    hashed_ = true;
    ceiling_ = 0;
    for (size_t d = 0; d < devices.size(); ++d)
        for (size_t n = 0; n < devices[d].needs.size(); ++n)
            seen_.try_emplace(devices[d].needs[n].start, std::pair{d, n});
}

size_t DeclarationPlan::slot_among_runs(uintptr_t start) const noexcept
{
    const auto above = std::upper_bound(runs_.begin(), runs_.end(), start, [](uintptr_t s, const Run &r) { return s < r.lo; });
    if (above != runs_.begin() && std::prev(above)->hi >= start)
        return kInside;
    return static_cast<size_t>(above - runs_.begin());
}

const std::pair<size_t, size_t> *DeclarationPlan::named_elsewhere(uintptr_t start)
{
    if (!hashed_) {
        if (slot_among_runs(start) != kInside)
            return nullptr;
        fill_seen();
    }
    return seen_.find(start);
}

void DeclarationPlan::name_elsewhere(uintptr_t start, size_t device, size_t need)
{
    if (!hashed_) {
        const size_t i = slot_among_runs(start);
        if (i != kInside) {
            // Between runs i - 1 and i. Just above a rising current run was name()'s inline
            // case. Just below the current run, when the last start was its bottom, the run
            // grows down to it (a run keeps its direction: blocks rising within slabs that fall
            // must not join the slab above); otherwise a run starts.
            if (i < runs_.size() && i == current_ && runs_[i].lo == last_) {
                runs_[i].lo = last_ = start;
                ceiling_ = 0; // falling: the next start down takes this path again
                return;
            }
            if (runs_.size() < kMaxRuns) {
                runs_.insert(runs_.begin() + static_cast<std::ptrdiff_t>(i), Run{start, start});
                last_ = start;
                rise_from(i);
                return;
            }
        }
        fill_seen();
    }
    seen_.try_emplace(start, std::pair{device, need});
}

std::vector<UnitSpan> MigrationPlanner::units(const DeclaredRange &r, const Tiling &tiling) const
{
    std::vector<UnitSpan> spans;
    units(r, tiling, spans);
    return spans;
}

void MigrationPlanner::units(const DeclaredRange &r, const Tiling &tiling, std::vector<UnitSpan> &spans) const
{
    spans.clear();
    if (r.size == 0)
        return;
    const uintptr_t base = reinterpret_cast<uintptr_t>(r.owner.base);
    const uint64_t lo = reinterpret_cast<uintptr_t>(r.ptr) - base, hi = lo + r.size;
    for (uint64_t i = lo / chunk_; i * chunk_ < hi; ++i) {
        const UnitSpan window{base + i * chunk_, static_cast<size_t>(std::min<uint64_t>(chunk_, r.owner.size - i * chunk_))};
        const size_t first = spans.size();
        if (tiling)
            tiling(window.start, window.size, spans);
        if (spans.size() == first) {
            spans.push_back(window);
            continue;
        }
        // Only the tiles the range touches stay.
        const auto outside = [&](const UnitSpan &t) { return t.start >= base + hi || t.start + t.size <= base + lo; };
        spans.erase(std::remove_if(spans.begin() + static_cast<std::ptrdiff_t>(first), spans.end(), outside), spans.end());
    }
}

tidal_prefetch_request MigrationPlanner::request(const DeclaredRange &r, bool lookahead) const
{
    tidal_prefetch_request req{};
    req.struct_size = sizeof(req);
    req.ptr = r.ptr;
    req.size = r.size;
    req.device = r.device;
    req.mode = r.mode;
    req.lookahead = lookahead ? 1 : 0;
    req.kind = r.owner.kind;
    req.alloc_device = r.owner.device;
    req.hints = r.owner.hints;
    req.advice = r.owner.advice;
    req.chunk_size = chunk_;
    req.system = system_;
    return req;
}

void MigrationPlanner::add(DeclarationPlan &plan, const DeclaredRange &r, bool lookahead, const Residency &resident,
                           const Tiling &tiling) const
{
    // With no policy planning prefetches (the default chain) the plan is the core's, and the
    // request, built per range, is not needed.
    const PrefetchDecision decision = chain_.plans_prefetch() ? chain_.plan_prefetch(request(r, lookahead))
                                                              : PolicyChain::core_prefetch();
    if (decision.action == TIDAL_PREFETCH_SKIP)
        return;
    units(r, tiling, plan.spans);
    for (const UnitSpan &u : plan.spans) {
        if (const auto *s = plan.named(u.start)) {
            plan.devices[s->first].needs[s->second].advice_set |= decision.advice_set;
            continue;
        }
        const size_t index = plan.device_index(r.device);
        DevicePlan *d = &plan.devices[index];
        const bool move = !resident(u.start, r.device);
        plan.name(u.start, index, d->needs.size());
        d->needs.push_back(Need{u.start, u.size, &r, decision.chunk_size, decision.advice_set, move, u.tracked});
        d->incoming += move ? u.size : 0;
    }
}

DevicePlan MigrationPlanner::plan_prefetch(const DeclaredRange &r, const Residency &resident, const Tiling &tiling) const
{
    DevicePlan plan{r.device, {}, 0, {}};
    for (const UnitSpan &u : units(r, tiling)) {
        const bool move = !resident(u.start, r.device);
        plan.needs.push_back(Need{u.start, u.size, &r, 0, 0, move});
        plan.incoming += move ? u.size : 0;
    }
    return plan;
}

EvictionPlan MigrationPlanner::make_room(int32_t device, uint64_t budget, uint64_t resident, uint64_t incoming,
                                         const std::vector<uintptr_t> &keep, const std::vector<ResidentUnit> &units,
                                         uint64_t now) const
{
    EvictionPlan plan;
    plan.need = excess(budget, resident, incoming);
    if (plan.need == 0)
        return plan;
    std::vector<uintptr_t> starts;
    std::vector<size_t> sizes;
    std::vector<tidal_resident_range> candidates;
    std::vector<uint32_t> flags;
    for (const ResidentUnit &u : units) {
        if (u.held || std::binary_search(keep.begin(), keep.end(), u.start)) {
            plan.held += u.size;
            continue;
        }
        tidal_resident_range c{};
        c.struct_size = sizeof(c);
        c.ptr = reinterpret_cast<const void *>(u.start);
        c.size = u.size;
        c.last_use = u.last_use;
        c.uses = u.uses;
        c.mode = u.mode;
        c.hints = u.hints;
        c.advice = u.advice;
        c.tag = u.tag;
        candidates.push_back(c);
        flags.push_back(u.clean ? TIDAL_RESIDENT_CLEAN : 0u);
        starts.push_back(u.start);
        sizes.push_back(u.size);
        plan.available += u.size;
    }
    if (plan.short_of_candidates())
        return plan;
    tidal_evict_request req{};
    req.struct_size = sizeof(req);
    req.device = device;
    req.budget = budget;
    req.resident = resident;
    req.need = plan.need;
    req.now = now;
    req.candidates = candidates.data();
    req.candidate_count = candidates.size();
    req.system = system_;
    req.candidate_flags = flags.data();
    const std::vector<size_t> order = chain_.evict(req, &plan.chosen_by);
    for (size_t i = 0; i < order.size() && plan.freed < plan.need; ++i) {
        plan.victims.push_back(starts[order[i]]);
        plan.freed += sizes[order[i]];
    }
    return plan;
}

void MigrationPlanner::require_covered(const EvictionPlan &plan, int32_t device)
{
    if (plan.freed < plan.need)
        throw Error(TIDAL_ERROR_PLUGIN,
                    fmt::format("policy '{}' chose ranges of {} bytes to evict on device {}, {} were needed",
                                plan.chosen_by, plan.freed, device, plan.need),
                    "an eviction plan must name candidates until `need` bytes are covered");
}

} // namespace tidal
