#include "migration/migration_scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <utility>

#include "log/logger.h"
#include "migration/unit_split.h"
#include "runtime/profiler_range.h"
#include "status/error.h"

namespace tidal {

// An event a worker records after a group of runtime calls. Until the worker has run that job
// the event is unrecorded, and an unrecorded event reads as complete: `seq` guards that.
struct MigrationScheduler::Batch {
    EventPool &pool;
    int32_t device;
    void *event;
    MigrationWorker *worker = nullptr;
    uint64_t seq = 0; // the job that records it; 0 until submitted
    bool done = false;

    Batch(EventPool &p, int32_t d, void *e) : pool(p), device(d), event(e) {}
    ~Batch() { pool.release(device, event); }
    Batch(const Batch &) = delete;
    Batch &operator=(const Batch &) = delete;

    bool complete()
    {
        if (!done)
            done = worker && seq && worker->done(seq) && pool.pollable() && pool.complete(event);
        return done;
    }
};

namespace {

std::string where(int32_t device)
{
    return device == TIDAL_DEVICE_HOST ? std::string("the host") : fmt::format("device {}", device);
}

MigrationWorker::Range span(const void *ptr, size_t size)
{
    const uintptr_t lo = reinterpret_cast<uintptr_t>(ptr);
    return {lo, lo + size};
}

} // namespace

MigrationScheduler::MigrationScheduler(Runtime &runtime, EventPool &events, const PolicyChain &chain,
                                       const tidal_policy_system *system, const MigrationSettings &settings,
                                       bool threaded)
    : runtime_(runtime), events_(events), settings_(settings), threaded_(threaded),
      planner_(chain, system, settings_.chunk_size)
{
    devices_.resize(static_cast<size_t>(std::max(runtime.device_count(), 0)));
    resident_now_ = std::make_unique<std::atomic<uint64_t>[]>(devices_.size());
    for (DeviceState &d : devices_) {
        d.budget = settings_.budget;
        d.stats.struct_size = sizeof(d.stats);
    }
}

MigrationScheduler::~MigrationScheduler()
{
    try {
        submit_steps(); // every device's, queued by a declaration that threw: still issue them
    } catch (...) {
        // A worker reports an earlier failure: teardown goes on.
    }
    for (DeviceState &d : devices_) {
        d.evictor.reset();
        d.worker.reset(); // runs what is queued, then joins
    }
    unsubmitted_.clear();
    for (auto &[stream, phases] : phases_)
        for (Closing &c : phases.closing)
            events_.release(c.device, c.event);
    phases_.clear();
    index_.clear();
    units_.clear(); // gives the batches' events back
    for (DeviceState &d : devices_) {
        if (d.chunk_out)
            d.streams.push_back(d.chunk_out);
        for (void *s : d.streams) {
            runtime_.stream_synchronize_noexcept(s);
            runtime_.stream_destroy_noexcept(s);
        }
    }
}

MigrationScheduler::DeviceState &MigrationScheduler::device(int32_t d)
{
    // One state per runtime device (the constructor): an index inside is one, and the runtime's
    // check (out of line, ~23 instructions, twice a declared range) is only asked for its error.
    if (static_cast<size_t>(d) >= devices_.size()) [[unlikely]]
        runtime_.require_device(d);
    return devices_[static_cast<size_t>(d)];
}

void *MigrationScheduler::migration_stream(int32_t d)
{
    DeviceState &ds = device(d);
    if (ds.streams.size() < settings_.streams) {
        void *s = runtime_.stream_create(d, [&] { return fmt::format("creating a migration stream on device {}", d); });
        ds.streams.push_back(s);
        if (!ds.worker)
            ds.worker = std::make_unique<MigrationWorker>(threaded_, std::chrono::microseconds{settings_.worker_spin_us});
        if (!ds.evictor && settings_.parallel_eviction)
            ds.evictor = std::make_unique<MigrationWorker>(threaded_);
        return s;
    }
    void *s = ds.streams[ds.next_stream % ds.streams.size()];
    ++ds.next_stream;
    return s;
}

MigrationScheduler::Unit *MigrationScheduler::find(const UnitRef &ref)
{
    Unit *u = unit_at(ref.start);
    return u && u->id == ref.id ? u : nullptr;
}

void MigrationScheduler::unprotect(const std::vector<UnitRef> &refs) noexcept
{
    for (const UnitRef &r : refs)
        if (Unit *u = find(r); u && u->protect > 0)
            --u->protect;
}

void MigrationScheduler::reap_closing(bool wait_oldest)
{
    for (auto &[stream, phases] : phases_) {
        while (!phases.closing.empty()) {
            Closing &c = phases.closing.front();
            if (!(events_.pollable() && events_.complete(c.event))) {
                if (!wait_oldest)
                    break;
                runtime_.event_synchronize(c.event, "waiting for a stream's declared work to finish");
                wait_oldest = false; // one phase at a time: the caller re-checks the budget
            }
            unprotect(c.units);
            events_.release(c.device, c.event);
            phases.closing.pop_front();
        }
    }
}

void MigrationScheduler::close_phase(void *stream, StreamPhases &phases, int32_t device)
{
    phases.ending = std::move(phases.current);
    phases.current.clear();
    phases.ending_device = device;
    close_ending(stream, phases); // on a failure the units are current again, and nothing moved
    phases.current = std::move(phases.lookahead);
    phases.lookahead.clear();
}

void MigrationScheduler::close_ending(void *stream, StreamPhases &phases)
{
    if (phases.ending.empty())
        return;
    const int32_t device = phases.ending_device;
    void *event = nullptr;
    try {
        event = events_.acquire(device);
        runtime_.event_record(event, stream, "recording the end of a stream's phase");
    } catch (...) {
        if (event)
            events_.release(device, event);
        phases.current.insert(phases.current.end(), phases.ending.begin(), phases.ending.end());
        phases.ending.clear();
        throw;
    }
    phases.closing.push_back(Closing{event, device, std::move(phases.ending)});
    phases.ending.clear();
}

bool MigrationScheduler::holds_all(const std::vector<UnitRef> &held, const std::vector<UnitRef> &ended)
{
    auto before = [](const UnitRef &a, const UnitRef &b) { return a.start != b.start ? a.start < b.start : a.id < b.id; };
    std::vector<UnitRef> h(held), e;
    e.reserve(ended.size());
    for (const UnitRef &r : ended)
        if (find(r)) // a unit gone since (its allocation freed) needs nothing
            e.push_back(r);
    std::sort(h.begin(), h.end(), before);
    std::sort(e.begin(), e.end(), before);
    return std::includes(h.begin(), h.end(), e.begin(), e.end(), before);
}

MigrationPlanner::Residency MigrationScheduler::residency() const
{
    return [this](uintptr_t start, int32_t d) {
        const Unit *u = unit_at(start);
        return u && u->device == d;
    };
}

MigrationPlanner::Tiling MigrationScheduler::tiling()
{
    return [this](uintptr_t start, size_t size, std::vector<UnitSpan> &tiles) {
        // A tracked window is tiled from its start; one unit of its size is all of it (units do
        // not overlap). Anything else (cut, or untracked) walks the tree.
        // Each tile carries its unit, which queue then reads without a search (units are not
        // erased while a declaration holds the lock, and a map's nodes do not move).
        if (Unit *u = unit_at(start); u && u->size == size) {
            tiles.push_back(UnitSpan{start, size, u});
            return;
        }
        for (auto it = units_.lower_bound(start); it != units_.end() && it->first < start + size; ++it)
            tiles.push_back(UnitSpan{it->first, it->second.size, &it->second});
    };
}

MigrationScheduler::Unit &MigrationScheduler::make_unit(uintptr_t start, size_t size, const RangeOwner &owner)
{
    if (Unit *known = unit_at(start))
        return *known;
    auto [it, inserted] = units_.try_emplace(start);
    Unit &u = it->second;
    if (inserted)
        init_unit(start, u, size, owner);
    return u;
}

void MigrationScheduler::init_unit(uintptr_t start, Unit &u, size_t size, const RangeOwner &owner)
{
    index_.try_emplace(start, &u);
    u.id = next_id_++;
    u.size = size;
    u.hints = owner.hints;
    u.advice = owner.advice;
    u.alloc_device = owner.runtime_device;
    if (splitting_ && splitting_->base == owner.base)
        u.tag = splitting_->tag;
    else if (tag_source_)
        u.tag = tag_source_(owner.base); // once per unit: a declaration of known units reads no tag
    tracked_.store(units_.size(), std::memory_order_relaxed);
}

void MigrationScheduler::split_unit(std::map<uintptr_t, Unit>::iterator it, uintptr_t at)
{
    Unit &left = it->second;
    Unit right = left;
    right.id = next_id_++;
    right.size = it->first + left.size - at;
    left.size = at - it->first;
    const UnitRef was{it->first, left.id}, now{at, right.id};
    auto rename = [&](std::vector<UnitRef> &refs) {
        for (size_t i = 0, n = refs.size(); i < n; ++i)
            if (refs[i].start == was.start && refs[i].id == was.id)
                refs.push_back(now);
    };
    for (auto &[stream, phases] : phases_) {
        rename(phases.current);
        rename(phases.lookahead);
        for (Closing &c : phases.closing)
            rename(c.units);
        rename(phases.ending);
    }
    auto made = units_.emplace(at, std::move(right)).first;
    index_.try_emplace(at, &made->second);
    tracked_.store(units_.size(), std::memory_order_relaxed);
}

void MigrationScheduler::split(const AllocationRecord &owner, const std::vector<tidal_policy_part> &parts)
{
    std::vector<DeclaredRange> ranges;
    for (const tidal_policy_part &p : parts)
        ranges.push_back(DeclaredRange{owner, static_cast<const char *>(owner.base) + p.offset, p.size, p.device});
    std::lock_guard lock(mutex_);
    struct Splitting {
        const AllocationRecord *&at;
        ~Splitting() { at = nullptr; }
    } splitting{splitting_ = &owner};
    cut_units(ranges, true);
}

uint64_t MigrationScheduler::resident_now(int32_t d) const noexcept
{
    return d >= 0 && static_cast<size_t>(d) < devices_.size()
               ? resident_now_[static_cast<size_t>(d)].load(std::memory_order_relaxed)
               : 0;
}

void MigrationScheduler::publish_resident() noexcept
{
    for (size_t d = 0; d < devices_.size(); ++d)
        resident_now_[d].store(devices_[d].resident, std::memory_order_relaxed);
}

bool MigrationScheduler::whole_windows_for_one_device(const std::vector<DeclaredRange> &ranges)
{
    const uint64_t chunk = planner_.chunk_size();
    int32_t named = -1;
    for (const DeclaredRange &r : ranges) {
        if (r.device < 0 || r.size == 0)
            continue;
        if (named < 0) {
            device(r.device); // validates the index, as the walk of every window does
            named = r.device;
        } else if (r.device != named) {
            return false;
        }
        // Windows are chunk_size steps from the allocation's start, the last one cut at its end.
        const uint64_t lo = reinterpret_cast<uintptr_t>(r.ptr) - reinterpret_cast<uintptr_t>(r.owner.base);
        const uint64_t hi = lo + r.size;
        if (lo % chunk != 0 || (hi % chunk != 0 && hi != r.owner.size))
            return false;
    }
    return true;
}

void MigrationScheduler::cut_units(const std::vector<DeclaredRange> &ranges, bool homes)
{
    // The common call: every range names whole windows, all for one device. Then every claim
    // of every window is whole and for that device, the case the walk below skips window by
    // window; one pass over the ranges answers it without listing and sorting their windows
    // (~250 instructions a range).
    if (!homes && whole_windows_for_one_device(ranges))
        return;
    // Every range's windows, flat and sorted by window (stable: a window's claims keep the
    // order the call names them, and its first range stays first). A map of windows, each with
    // a vector of claims, was three heap blocks per range, a third of this step's instructions;
    // the vectors are the scheduler's, kept from call to call.
    std::vector<CutClaim> &claimed = cut_claimed_;
    claimed.clear();
    claimed.reserve(ranges.size());
    for (const DeclaredRange &r : ranges) {
        if (r.device < 0 || r.size == 0)
            continue;
        device(r.device); // validates the index before anything is cut
        const uintptr_t lo = reinterpret_cast<uintptr_t>(r.ptr), hi = lo + r.size;
        planner_.units(r, {}, plan_.spans); // whole windows: no tiling asked
        for (const UnitSpan &w : plan_.spans)
            claimed.push_back(CutClaim{w.start, w.size, &r,
                                       UnitClaim{std::max(lo, w.start), std::min(hi, w.start + w.size), r.device}});
    }
    auto by_window = [](const CutClaim &x, const CutClaim &y) { return x.start < y.start; };
    if (!std::is_sorted(claimed.begin(), claimed.end(), by_window))
        std::stable_sort(claimed.begin(), claimed.end(), by_window);
    std::vector<UnitClaim> &claims = cut_claims_, &existing = cut_existing_; // one window's
    auto unit = units_.end(); // where the last window's walk ended: the next window's units start there or later
    for (size_t i = 0, j = 0; i < claimed.size(); i = j) {
        const uintptr_t start = claimed[i].start;
        const size_t size = claimed[i].size;
        const DeclaredRange &first = *claimed[i].range;
        claims.clear();
        bool whole = false; // one claim names every byte of the window
        for (j = i; j < claimed.size() && claimed[j].start == start; ++j) {
            claims.push_back(claimed[j].claim);
            whole = whole || (claimed[j].claim.lo == start && claimed[j].claim.hi == start + size);
        }
        // Every byte claimed, all for one device: nothing to cut, whatever the units are, so
        // they are not read (the common case: whole allocations declared, one unit each).
        if (whole && !homes &&
            std::all_of(claims.begin(), claims.end(), [&](const UnitClaim &c) { return c.device == claims.front().device; })) {
            unit = units_.end();
            continue;
        }
        // Windows come in increasing order: the walk goes on from where the last one ended
        // (ranges declared in address order: the next unit is the window's), else searches.
        int steps = 0;
        if (unit != units_.end() && (unit == units_.begin() || std::prev(unit)->first < start))
            while (unit != units_.end() && unit->first < start && ++steps <= 4)
                ++unit;
        if (unit == units_.end() || steps > 4 || (unit != units_.begin() && std::prev(unit)->first >= start))
            unit = units_.lower_bound(start);
        existing.clear();
        bool mixed = false;
        for (; unit != units_.end() && unit->first < start + size; ++unit) {
            existing.push_back(UnitClaim{unit->first, unit->first + unit->second.size, unit->second.device});
            mixed = mixed || (unit->second.device >= 0 && unit->second.device != claims.front().device);
        }
        for (const UnitClaim &c : claims)
            mixed = mixed || c.device != claims.front().device;
        if (!mixed && !homes)
            continue; // the common case: one device for the whole window
        const std::vector<uintptr_t> cuts = unit_cuts(start, start + size, claims, existing);
        unit = units_.end(); // units are made or split below: search again for the next window
        if (cuts.empty() && !homes)
            continue;
        if (existing.empty()) {
            uintptr_t at = start;
            for (uintptr_t c : cuts) {
                make_unit(at, c - at, first.owner);
                at = c;
            }
            make_unit(at, start + size - at, first.owner);
        } else {
            for (uintptr_t c : cuts) {
                auto it = std::prev(units_.upper_bound(c));
                if (it->first != c)
                    split_unit(it, c);
            }
        }
        if (homes)
            for (auto it = units_.lower_bound(start); it != units_.end() && it->first < start + size; ++it)
                for (const UnitClaim &c : claims)
                    if (c.lo <= it->first && it->first < c.hi) {
                        it->second.alloc_device = c.device;
                        break;
                    }
    }
}

std::vector<ResidentUnit> MigrationScheduler::resident_units(int32_t d) const
{
    std::vector<ResidentUnit> resident;
    // The rule evict_unit drops the device copy by.
    const bool can_drop = runtime_.supports(RuntimeOp::advise);
    for (const auto &[start, u] : units_)
        if (u.device == d)
            resident.push_back(ResidentUnit{start, u.size, u.protect > 0, u.last_use, u.uses, u.mode, u.hints,
                                            u.advice, u.tag.c_str(),
                                            can_drop && !(u.mode & TIDAL_ACCESS_WRITE) &&
                                                (u.advice & TIDAL_ADVICE_READ_MOSTLY)});
    if (chunks_)
        for (const ResidencyChunk &c : chunks_->resident(d)) {
            ResidentUnit r;
            r.start = c.start;
            r.size = c.size;
            r.clean = c.clean;
            // A chunk never declared (resident since its allocation) is the oldest of all.
            if (const Unit *found = unit_at(c.start); found && found->elastic) {
                const Unit &u = *found;
                r.held = u.protect > 0;
                r.last_use = u.last_use;
                r.uses = u.uses;
                r.mode = u.mode;
                r.hints = u.hints;
                r.advice = u.advice;
                r.tag = u.tag.c_str();
            }
            resident.push_back(r);
        }
    return resident;
}

DeclarationPlan &MigrationScheduler::plan(const std::vector<DeclaredRange> &ranges, bool lookahead)
{
    DeclarationPlan &plan = plan_;
    plan.reset();
    const MigrationPlanner::Residency resident = residency();
    const MigrationPlanner::Tiling tiles = tiling();
    for (size_t i = 0; i < ranges.size(); ++i) {
        const DeclaredRange &r = ranges[i];
        // The tiling's probe of a range some steps ahead is started now: at 10^4 ranges the
        // table and the units are beyond the L2, and a step's own work hides one miss at most.
        if (i + kLookAhead < ranges.size())
            index_.prefetch(window_of(ranges[i + kLookAhead]));
        if (r.device == TIDAL_DEVICE_HOST)
            continue;
        ++device(r.device).stats.declared_ranges; // validates the index
        if (r.owner.kind == TIDAL_KIND_ELASTIC)
            plan_chunks(plan, r);
        else
            planner_.add(plan, r, lookahead, resident, tiles);
    }
    return plan;
}

void MigrationScheduler::make_room(const DevicePlan &plan)
{
    const int32_t d = plan.device;
    DeviceState &ds = device(d);
    if (ds.budget == 0)
        return; // no budget: everything fits (and the elastic space's lock is not taken to count)
    std::vector<uintptr_t> keep; // made once room has to be made
    for (;;) {
        const uint64_t resident = resident_total(d);
        if (MigrationPlanner::excess(ds.budget, resident, plan.incoming) == 0)
            return;
        if (keep.empty())
            keep = plan.keep();
        const std::vector<ResidentUnit> candidates = resident_units(d);
        const EvictionPlan room = planner_.make_room(d, ds.budget, resident, plan.incoming, keep, candidates, clock_);
        if (room.short_of_candidates()) {
            bool any_closing = false;
            for (auto &[stream, phases] : phases_) {
                close_ending(stream, phases); // the phase this declaration ends: its work may be done
                any_closing = any_closing || !phases.closing.empty();
            }
            if (any_closing) {
                reap_closing(true); // wait for finished work to unprotect its ranges, then retry
                continue;
            }
            ++ds.stats.budget_refusals;
            throw Error(TIDAL_ERROR_BUDGET_EXCEEDED,
                        fmt::format("device {} cannot take {} more bytes under its budget of {}: {} bytes are resident, "
                                    "{} of them protected by work in flight or lookahead, and only {} can be evicted",
                                    d, plan.incoming, ds.budget, resident, room.held, room.available),
                        "raise the budget ([migration] budget or tidal_budget_set), declare less per phase, or end "
                        "phases (tidal_declare with count 0) once their work is queued");
        }
        for (uintptr_t start : room.victims) {
            Unit *u = unit_at(start);
            if (u && !u->elastic) {
                evict_unit(start, *u);
                continue;
            }
            // An elastic chunk: queue_chunks moves it, its physical chunk mapped at what comes in.
            const auto c = std::find_if(candidates.begin(), candidates.end(),
                                        [&](const ResidentUnit &u) { return u.start == start; });
            ds.chunk_victims.push_back(UnitSpan{start, c->size});
            (c->clean ? ds.stats.dropped_bytes : ds.stats.evicted_bytes) += c->size;
            ++ds.stats.evictions;
            if (u)
                u->mode = 0; // what it is used for once it is back starts afresh
        }
        MigrationPlanner::require_covered(room, d);
        return;
    }
}

void MigrationScheduler::queue_prefetch(std::vector<Step> &steps, const void *ptr, size_t size, int32_t location,
                                        void *ms, int32_t d, const char *what)
{
    steps.push_back({span(ptr, size), [this, ptr, size, location, ms, d, what] {
        // On the thread that issues it (a worker's, on a GPU): where a profiler shows the call.
        const ProfilerRange range(runtime_, location == TIDAL_RT_LOCATION_HOST ? "tidal: evict" : "tidal: migrate");
        runtime_.prefetch(ptr, size, location, ms, [&] { return fmt::format(fmt::runtime(what), size, ptr, d); });
    }, true});
}

void MigrationScheduler::leave_device(Unit &u) noexcept
{
    devices_[static_cast<size_t>(u.device)].resident -= u.size;
    u.device = -1;
    u.ready.reset();
}

void MigrationScheduler::evict_unit(uintptr_t start, Unit &u, bool freed)
{
    const int32_t d = u.device;
    DeviceState &ds = device(d);
    const void *ptr = reinterpret_cast<const void *>(start);
    const size_t size = u.size;
    // Read-only data with read-mostly advice has a valid host copy: collapsing the duplicates
    // onto the host (preferred location host, then unset read-mostly) drops the device copy
    // with no copy back. Written data must travel back (~10 GB/s on the H200).
    // Freed memory has no advice left to play with (forget unset it): it always travels.
    const bool clean = !freed && !(u.mode & TIDAL_ACCESS_WRITE) && (u.advice & TIDAL_ADVICE_READ_MOSTLY) &&
                       runtime_.supports(RuntimeOp::advise);
    void *ms = migration_stream(d);
    std::vector<Step> &steps = ds.evictor ? ds.evict_steps : ds.steps;
    if (clean) {
        const uint32_t advice = u.advice;
        const int32_t home = u.alloc_device;
        steps.push_back({span(ptr, size), [this, ptr, size, d, advice, home] {
            const ProfilerRange range(runtime_, "tidal: evict (drop)");
            runtime_.advise(ptr, size, TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION, TIDAL_RT_LOCATION_HOST);
            runtime_.advise(ptr, size, TIDAL_RT_ADVISE_UNSET_READ_MOSTLY, d);
            runtime_.advise(ptr, size, TIDAL_RT_ADVISE_SET_READ_MOSTLY, d);
            if (advice & TIDAL_ADVICE_PREFERRED_DEVICE)
                runtime_.advise(ptr, size, TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION, home);
            else if (!(advice & TIDAL_ADVICE_PREFERRED_HOST))
                runtime_.advise(ptr, size, TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION, d);
        }});
        ds.stats.dropped_bytes += size;
    } else {
        queue_prefetch(steps, ptr, size, TIDAL_RT_LOCATION_HOST, ms, d, "evicting {} bytes at {} from device {}");
        ds.stats.evicted_bytes += size;
    }
    ++ds.stats.evictions;
    leave_device(u);
    u.mode = 0;
}

MigrationScheduler::Unit &MigrationScheduler::adopt(uintptr_t start, size_t size, const DeclaredRange &range)
{
    Unit &u = make_unit(start, size, range.owner);
    if (u.device != range.device) {
        if (u.device >= 0)
            devices_[static_cast<size_t>(u.device)].resident -= u.size;
        u.device = range.device;
        DeviceState &ds = device(range.device);
        ds.resident += u.size;
        ds.stats.resident_high_water = std::max(ds.stats.resident_high_water, ds.resident);
        u.mode = 0;
    }
    return u;
}

void MigrationScheduler::apply_advice(Unit &u, uintptr_t start, uint32_t bits)
{
    bits &= ~u.advice;
    if (!bits || u.device < 0)
        return;
    const void *ptr = reinterpret_cast<const void *>(start);
    const size_t size = u.size;
    const int32_t home = u.alloc_device;
    device(u.device).steps.push_back({span(ptr, size), [this, ptr, size, home, bits] {
        runtime_.advise_bits(ptr, size, bits, AdviceAction::set, home);
    }});
    u.advice |= bits;
    u.applied |= bits;
}

std::shared_ptr<MigrationScheduler::Batch> MigrationScheduler::record_batch(int32_t d, void *ms)
{
    auto batch = std::make_shared<Batch>(events_, d, events_.acquire(d));
    device(d).steps.push_back({{}, [this, batch, ms] {
        runtime_.event_record(batch->event, ms, "recording the end of a migration");
    }});
    unsubmitted_.push_back(batch);
    return batch;
}

void MigrationScheduler::submit_steps(std::chrono::microseconds hold)
{
    auto submit = [](MigrationWorker &w, std::vector<Step> &steps, std::chrono::microseconds hold) {
        std::vector<MigrationWorker::Range> touched;
        for (const Step &step : steps)
            if (step.touches.lo < step.touches.hi)
                touched.push_back(step.touches);
        const uint64_t seq = w.submit([steps = std::move(steps)] {
            for (const Step &step : steps)
                step.run();
        }, std::move(touched), hold);
        steps.clear();
        return seq;
    };
    for (size_t d = 0; d < devices_.size(); ++d) {
        DeviceState &ds = devices_[d];
        if (!ds.evict_steps.empty())
            submit(*ds.evictor, ds.evict_steps, std::chrono::microseconds{0});
        if (ds.steps.empty())
            continue;
        MigrationWorker &w = *ds.worker;
        // Elastic chunk moves are short calls (map, access, an asynchronous copy: 0.2-0.4 ms for
        // 64 MiB on the H200) and, held, started later in the caller's lock-step loop: 1.16x.
        const bool long_call = std::any_of(ds.steps.begin(), ds.steps.end(), [](const Step &st) { return st.long_call; });
        const uint64_t seq = submit(w, ds.steps, long_call ? hold : std::chrono::microseconds{0});
        for (auto &b : unsubmitted_)
            if (b->device == static_cast<int32_t>(d)) {
                b->worker = &w;
                b->seq = seq;
            }
    }
    unsubmitted_.clear();
}

void MigrationScheduler::wait_for_jobs_on(MigrationWorker::Range range)
{
    // Every worker is waited for even after one reports an error (the first is rethrown), so
    // no job on the range is still queued when this returns.
    std::exception_ptr first;
    for (DeviceState &ds : devices_)
        for (MigrationWorker *w : {ds.evictor.get(), ds.worker.get()})
            if (w) {
                try {
                    w->wait_overlapping(range.lo, range.hi);
                } catch (...) {
                    if (!first)
                        first = std::current_exception();
                }
            }
    if (first)
        std::rethrow_exception(first);
}

void MigrationScheduler::wait_for(const std::shared_ptr<Batch> &batch)
{
    if (batch->worker && !batch->worker->done(batch->seq))
        batch->worker->wait(batch->seq);
}

bool MigrationScheduler::join_open_prefetch(DevicePlan &plan)
{
    DeviceState &ds = device(plan.device);
    const std::vector<Need> &needs = plan.needs;
    // Only moves that need nothing else issued first (no advice, no eviction queued), of one
    // allocation, adjacent, right after the open range, with the worker still holding it.
    if (!ds.open || !ds.open_batch || !ds.steps.empty() || !ds.evict_steps.empty() || needs.empty() ||
        ds.open_batch->seq == 0 || ds.open_batch->seq != ds.worker->last_submitted())
        return false;
    uint64_t bytes = 0;
    for (size_t k = 0; k < needs.size(); ++k) {
        const Need &n = needs[k];
        if (!n.move || n.range->owner.base != reinterpret_cast<void *>(ds.open_base) || n.call_limit != ds.open_limit ||
            (n.advice_set & ~n.range->owner.advice) != 0 || (k > 0 && n.start != needs[k - 1].start + needs[k - 1].size))
            return false;
        bytes += n.size;
    }
    std::lock_guard lock(ds.open->mutex);
    if (ds.open->issued || ds.open->start + ds.open->size != needs.front().start ||
        (ds.open_limit != 0 && ds.open->size + bytes > ds.open_limit))
        return false;
    if (!ds.worker->extend(ds.open_batch->seq, span(reinterpret_cast<const void *>(needs.front().start), bytes)))
        return false;
    ds.open->size += bytes;
    for (const Need &n : needs)
        adopt(n.start, n.size, *n.range).ready = ds.open_batch;
    ds.stats.migrated_bytes += bytes;
    return true;
}

std::vector<std::shared_ptr<MigrationScheduler::Batch>> MigrationScheduler::queue(DevicePlan &plan, bool lookahead,
                                                                                   Protection &protect)
{
    const int32_t d = plan.device;
    DeviceState &ds = device(d);
    std::vector<Need> &needs = plan.needs;
    // Address order is for the runs of adjacent units that move together: needs that move none
    // (every unit resident, the steady state of a loop) are taken in the order they were named.
    // A sort of 10^4 needs not declared in address order was 13 % of such a declaration's time.
    // Ranges declared in address order need no sort either (a sort of sorted needs still passes
    // over them ~log n times).
    auto by_start = [](const Need &a, const Need &b) { return a.start < b.start; };
    const bool moves = std::any_of(needs.begin(), needs.end(), [](const Need &n) { return n.move; }) ||
                       !ds.chunk_victims.empty();
    if (moves && !std::is_sorted(needs.begin(), needs.end(), by_start))
        std::sort(needs.begin(), needs.end(), by_start);
    queue_chunks(plan);
    if (lookahead && join_open_prefetch(plan)) {
        for (const Need &n : needs)
            use(*unit_at(n.start), n, protect);
        return {}; // lookahead: nothing waits
    }
    ds.open.reset();
    const bool one_run = lookahead && threaded_; // an in-order runtime issues at once: nothing stays open
    // Runs of adjacent units of one allocation become one runtime call each (up to the plan's
    // call limit): fewer, larger prefetches run closer to the bus rate.
    std::vector<std::pair<void *, std::vector<Unit *>>> per_stream; // units moved per migration stream
    auto units_on = [&](void *ms) -> std::vector<Unit *> & {
        for (auto &p : per_stream)
            if (p.first == ms)
                return p.second;
        per_stream.emplace_back(ms, std::vector<Unit *>{});
        return per_stream.back().second;
    };
    for (size_t i = 0; i < needs.size();) {
        if (!needs[i].move || is_chunk(needs[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        uint64_t bytes = 0;
        const uint64_t limit = needs[i].call_limit;
        while (j < needs.size() && needs[j].move && needs[j].range->owner.base == needs[i].range->owner.base &&
               (j == i || needs[j].start == needs[j - 1].start + needs[j - 1].size) &&
               (limit == 0 || j == i || bytes + needs[j].size <= limit)) {
            bytes += needs[j].size;
            ++j;
        }
        void *ms = migration_stream(d);
        std::vector<Unit *> &moved = units_on(ms);
        for (size_t k = i; k < j; ++k) {
            Unit &u = adopt(needs[k].start, needs[k].size, *needs[k].range);
            apply_advice(u, needs[k].start, needs[k].advice_set);
            moved.push_back(&u);
        }
        if (one_run && i == 0 && j == needs.size()) {
            auto open = std::make_shared<OpenPrefetch>();
            open->start = needs[i].start;
            open->size = bytes;
            ds.open = open;
            ds.open_base = reinterpret_cast<uintptr_t>(needs[i].range->owner.base);
            ds.open_limit = limit;
            ds.steps.push_back({span(reinterpret_cast<const void *>(open->start), bytes), [this, open, d, ms] {
                uintptr_t start;
                size_t size;
                {
                    std::lock_guard lock(open->mutex);
                    open->issued = true;
                    start = open->start;
                    size = open->size;
                }
                const void *ptr = reinterpret_cast<const void *>(start);
                runtime_.prefetch(ptr, size, d, ms, [&] {
                    return fmt::format("migrating {} bytes at {} to device {}", size, ptr, d);
                });
            }, true});
        } else {
            queue_prefetch(ds.steps, reinterpret_cast<const void *>(needs[i].start), bytes, d, ms, d,
                           "migrating {} bytes at {} to device {}");
        }
        ++ds.stats.migration_calls;
        ds.stats.migrated_bytes += bytes;
        i = j;
    }
    for (auto &[ms, moved] : per_stream) {
        std::shared_ptr<Batch> batch = record_batch(d, ms);
        for (Unit *u : moved)
            u->ready = batch;
        if (ds.open)
            ds.open_batch = batch; // one run: one stream
    }

    std::vector<std::shared_ptr<Batch>> waits;
    for (size_t k = 0; k < needs.size(); ++k) {
        const Need &n = needs[k];
        if (k + kLookAhead < needs.size()) // read again since the plan: gone from the cache at 10^4 units
            __builtin_prefetch(needs[k + kLookAhead].tracked);
        Unit &u = n.tracked ? *static_cast<Unit *>(n.tracked) : *unit_at(n.start);
        if (!n.move) {
            ds.stats.resident_hits += n.size;
            apply_advice(u, n.start, n.advice_set);
        }
        use(u, n, protect);
        if (u.ready && !u.ready->complete() && std::find(waits.begin(), waits.end(), u.ready) == waits.end())
            waits.push_back(u.ready);
    }
    return waits;
}

// In the pass over the needs that updates their units anyway: a second pass to protect them
// read every unit again, from beyond the cache once a call names thousands.
void MigrationScheduler::use(Unit &u, const Need &n, Protection &protect)
{
    u.last_use = clock_;
    ++u.uses;
    u.mode |= n.range->mode;
    ++u.protect;
    protect.held.push_back(UnitRef{n.start, u.id});
    protect.units.push_back(&u);
}

// Work on the host: what tidal put on a device goes back first.
std::vector<std::shared_ptr<MigrationScheduler::Batch>>
MigrationScheduler::bring_home(const std::vector<DeclaredRange> &ranges)
{
    std::vector<std::shared_ptr<Batch>> waits;
    for (const DeclaredRange &r : ranges) {
        if (r.device != TIDAL_DEVICE_HOST)
            continue;
        const uintptr_t lo = reinterpret_cast<uintptr_t>(r.ptr), hi = lo + r.size;
        for (auto it = units_.lower_bound(lo >= settings_.chunk_size ? lo - settings_.chunk_size + 1 : 0);
             it != units_.end() && it->first < hi; ++it) {
            Unit &u = it->second;
            if (it->first + u.size <= lo || u.device < 0)
                continue;
            const int32_t from = u.device;
            void *ms = migration_stream(from);
            queue_prefetch(devices_[static_cast<size_t>(from)].steps, reinterpret_cast<const void *>(it->first), u.size,
                           TIDAL_RT_LOCATION_HOST, ms, from, "moving a range declared for the host back from its device");
            leave_device(u);
            waits.push_back(record_batch(from, ms));
        }
    }
    return waits;
}

void MigrationScheduler::release_held() noexcept
{
    for (DeviceState &ds : devices_)
        if (ds.worker)
            ds.worker->release();
}

void MigrationScheduler::publish(void *stream, const std::vector<std::shared_ptr<Batch>> &waits, bool lookahead)
{
    // A lookahead's prefetches wait for the application's next call (see MigrationWorker).
    submit_steps(lookahead && threaded_ ? std::chrono::microseconds{settings_.lookahead_hold_us}
                                        : std::chrono::microseconds{0});
    if (lookahead)
        return; // the stream's next plain declaration waits for these
    // The caller's stream waits for the moves its work needs. The worker must have issued
    // them (and recorded their events) first: waiting on an unrecorded event waits for nothing.
    for (const auto &b : waits) {
        wait_for(b);
        runtime_.stream_wait_event(stream, b->event, "ordering the caller's stream after tidal's migrations");
    }
}

// Shared by declarations and explicit prefetches: one at a time, each a tick of the clock that
// first releases the phases whose work has finished. Whatever is queued when it ends --
// normally or by an error after evictions were booked -- goes to the workers, so the
// bookkeeping and the device never disagree.
struct MigrationScheduler::Call {
    std::lock_guard<std::mutex> lock;
    struct Submit {
        MigrationScheduler &s;
        int unwinding = std::uncaught_exceptions();
        // submit_steps() rethrows a worker's earlier failure. A destructor is noexcept unless
        // it says otherwise, and a throw from one would end the process: the failure goes to
        // the caller as a status, except while another exception is already on its way out
        // (that one is the status; the steps are still submitted).
        ~Submit() noexcept(false)
        {
            s.publish_resident();
            if (std::uncaught_exceptions() > unwinding) {
                try {
                    s.submit_steps();
                } catch (...) {
                }
                return;
            }
            s.submit_steps();
        }
    } submit_on_exit;

    explicit Call(MigrationScheduler &s) : lock(s.mutex_), submit_on_exit{s}
    {
        for (DeviceState &ds : s.devices_)
            ds.chunk_victims.clear(); // chosen by a call that then failed: they never left
        ++s.clock_;
        s.reap_closing(false);
    }
};

void MigrationScheduler::declare(void *stream, const std::vector<DeclaredRange> &ranges, bool lookahead)
{
    Call call(*this);
    StreamPhases &phases = phases_[stream];
    if (!lookahead) {
        release_held(); // the application is back: the launches a held lookahead waited for are in
        // The current phase ends here. Its event is recorded just before publishing (nothing
        // reaches the caller's stream before that, so it marks the same point of the stream),
        // or not at all when the new phase holds every unit of the old one (below).
        phases.ending_device = 0;
        for (const DeclaredRange &r : ranges)
            if (r.device >= 0) {
                phases.ending_device = r.device;
                break;
            }
        // Swapped, not moved: the new current phase reuses the buffer of the one ended before
        // (moved, it would start empty and grow ~log n times, every call).
        phases.ending.clear();
        phases.ending.swap(phases.current);
        // The first calls of a stream have one buffer grown: the other is sized once, here, not
        // grown ~log n times (the first declarations after a move are what `scaling` times).
        phases.current.reserve(phases.ending.size() + phases.lookahead.size());
        phases.current.insert(phases.current.end(), phases.lookahead.begin(), phases.lookahead.end());
        phases.lookahead.clear();
    }
    std::vector<std::shared_ptr<Batch>> waits;
    std::vector<Unit *> &protected_now = protected_now_; // the units this call protected, in the order of `held`
    protected_now.clear();
    try {
        waits = bring_home(ranges);
        cut_units(ranges);
        DeclarationPlan &planned = plan(ranges, lookahead);
        // Every device's budget holds for all of it before anything moves.
        for (const DevicePlan &p : planned.devices)
            make_room(p);
        std::vector<UnitRef> &held = lookahead ? phases.lookahead : phases.current;
        for (DevicePlan &p : planned.devices) {
            Protection protect{held, protected_now};
            for (auto &b : queue(p, lookahead, protect))
                if (std::find(waits.begin(), waits.end(), b) == waits.end())
                    waits.push_back(b);
        }
    } catch (...) {
        try {
            close_ending(stream, phases);
        } catch (...) { // the declaration's own error is the one to report; the units stay current
        }
        throw;
    }
    // The same buffers declared step after step: the new phase protects them until its own end,
    // later in the stream, so the old phase needs no event (two runtime calls per declaration,
    // the record now and a query at a later one: microseconds each on a GPU runtime).
    if (!phases.ending.empty()) {
        auto same = [](const UnitRef &a, const UnitRef &b) { return a.start == b.start && a.id == b.id; };
        if (phases.current.size() == protected_now.size() &&
            std::equal(phases.ending.begin(), phases.ending.end(), phases.current.begin(), phases.current.end(), same)) {
            for (Unit *u : protected_now) // the units this call protected, in order: no map search for them
                --u->protect;
            phases.ending.clear();
        } else if (holds_all(phases.current, phases.ending)) {
            unprotect(phases.ending);
            phases.ending.clear();
        }
    }
    close_ending(stream, phases);
    publish(stream, waits, lookahead);
}

void MigrationScheduler::end_phase(void *stream)
{
    std::lock_guard lock(mutex_);
    reap_closing(false);
    close_current(stream);
}

void MigrationScheduler::close_current(void *stream)
{
    auto it = phases_.find(stream);
    if (it == phases_.end())
        return;
    int32_t device = 0;
    if (!it->second.current.empty())
        if (Unit *u = find(it->second.current.front()); u && u->device >= 0)
            device = u->device;
    close_phase(stream, it->second, device);
}

void MigrationScheduler::end_stream(void *stream)
{
    std::lock_guard lock(mutex_);
    reap_closing(false);
    close_current(stream); // the current phase, and the lookahead that then becomes current
    close_current(stream);
    // The closing events outlive the handle (a stream made later with the same handle only
    // queues behind them); an entry with nothing left to reap goes now.
    if (auto it = phases_.find(stream); it != phases_.end() && it->second.closing.empty())
        phases_.erase(it);
}

// Queued moves of the range (lookahead) go first; jobs on other ranges go on: every job
// touches whole units, so one on a unit this call updates touches the range.
void MigrationScheduler::order_after_moves_of(const DeclaredRange &r)
{
    wait_for_jobs_on(span(r.ptr, r.size));
    // Issued is not done: those moves run on migration streams, which do not order with the
    // default stream an explicit prefetch uses, so it also waits on the events recorded after
    // them (one wait per batch; a completed one costs the runtime nothing, and the simulated
    // device, whose queries always say complete, needs the wait to start the call after the move).
    std::vector<std::shared_ptr<Batch>> moves;
    for (const UnitSpan &s : planner_.units(r, tiling()))
        if (auto it = units_.find(s.start); it != units_.end() && it->second.ready &&
                                            std::find(moves.begin(), moves.end(), it->second.ready) == moves.end())
            moves.push_back(it->second.ready);
    for (const auto &b : moves) {
        wait_for(b);
        runtime_.stream_wait_event(nullptr, b->event, "ordering an explicit prefetch after tidal's migrations of the range");
    }
}

// Evictions booked for an explicit prefetch run before it: the budget holds at every moment.
void MigrationScheduler::flush_evictions(DeviceState &ds)
{
    if (ds.steps.empty() && ds.evict_steps.empty())
        return;
    submit_steps();
    if (ds.evictor)
        ds.evictor->drain();
    ds.worker->drain();
    for (void *s : ds.streams)
        runtime_.stream_synchronize(s, "waiting for evictions");
}

// One call for exactly the range, issued here and waited for, as a hand-written program would.
void MigrationScheduler::prefetch(const DeclaredRange &r)
{
    Call call(*this);
    release_held();
    order_after_moves_of(r);
    auto issue = [&] {
        const int32_t location = r.device == TIDAL_DEVICE_HOST ? TIDAL_RT_LOCATION_HOST : r.device;
        auto what = [&] { return fmt::format("prefetching {} bytes at {} to {}", r.size, r.ptr, where(r.device)); };
        const ProfilerRange range(runtime_, r.device == TIDAL_DEVICE_HOST ? "tidal: prefetch to host" : "tidal: prefetch");
        runtime_.prefetch(r.ptr, r.size, location, nullptr, what);
        runtime_.stream_synchronize(nullptr, what);
    };
    if (r.device == TIDAL_DEVICE_HOST) {
        issue();
        for (const UnitSpan &s : planner_.units(r, tiling()))
            if (auto it = units_.find(s.start); it != units_.end() && it->second.device >= 0)
                leave_device(it->second);
        return;
    }
    DeviceState &ds = device(r.device);
    cut_units({r});
    const DevicePlan planned = planner_.plan_prefetch(r, residency(), tiling());
    make_room(planned);
    if (!ds.chunk_victims.empty()) {
        DevicePlan victims_only;
        victims_only.device = r.device;
        queue_chunks(victims_only);
    }
    flush_evictions(ds);
    issue();
    ++ds.stats.migration_calls;
    ds.stats.migrated_bytes += planned.incoming;
    ds.stats.resident_hits += r.size > planned.incoming ? r.size - planned.incoming : 0;
    for (const Need &n : planned.needs) {
        Unit &u = adopt(n.start, n.size, r);
        u.last_use = clock_;
        ++u.uses;
        u.mode |= r.mode;
        u.ready.reset();
    }
}

void MigrationScheduler::forget(const AllocationRecord &owner) noexcept
{
    if (!tracking())
        return;
    std::lock_guard lock(mutex_);
    const uintptr_t base = reinterpret_cast<uintptr_t>(owner.base);
    const auto first = units_.lower_bound(base);
    if (first == units_.end() || first->first >= base + owner.size)
        return; // nothing of it was ever moved: no queued work can touch it
    // A queued move of this memory must not run after it is freed (or handed to a new owner).
    try {
        wait_for_jobs_on(span(owner.base, owner.size));
    } catch (const std::exception &e) {
        log_error(fmt::format("a queued migration failed: {}", e.what()));
    }
    bool queued = false;
    for (auto it = first; it != units_.end() && it->first < base + owner.size;) {
        Unit &u = it->second;
        // Pooled blocks go to a new owner: they must not carry this one's advice. Coarse grain
        // must go even from memory the runtime frees (it survives hipFree on AMD).
        const uint32_t unset = owner.pooled ? u.applied : (u.applied & TIDAL_ADVICE_COARSE_GRAIN);
        runtime_.advise_bits_noexcept(reinterpret_cast<const void *>(it->first), u.size, unset, AdviceAction::unset,
                                      u.alloc_device);
        if (u.device >= 0) {
            DeviceState &ds = devices_[static_cast<size_t>(u.device)];
            // A pooled block keeps its pages where they are when it goes back to the pool. On a
            // device with a budget they must leave it, or the device would hold more than
            // tidal counts: the budget's promise covers memory tidal moved, freed or not.
            bool evicted = false;
            if (owner.pooled && ds.budget != 0) {
                try {
                    evict_unit(it->first, u, true);
                    evicted = queued = true;
                } catch (const std::exception &e) {
                    log_error(fmt::format("evicting freed managed memory at {:#x} failed: {}", it->first, e.what()));
                }
            }
            if (!evicted)
                ds.resident -= u.size;
        }
        index_.erase(it->first);
        it = units_.erase(it);
    }
    tracked_.store(units_.size(), std::memory_order_relaxed);
    publish_resident();
    if (queued) {
        try {
            submit_steps();
        } catch (const std::exception &e) {
            log_error(fmt::format("queueing the eviction of freed managed memory failed: {}", e.what()));
        }
    }
}

void MigrationScheduler::set_budget(int32_t d, uint64_t bytes)
{
    std::lock_guard lock(mutex_);
    device(d).budget = bytes;
}

void MigrationScheduler::count_noop(int32_t d) noexcept
{
    std::lock_guard lock(mutex_);
    if (d >= 0 && static_cast<size_t>(d) < devices_.size())
        ++devices_[static_cast<size_t>(d)].stats.noops;
}

tidal_migration_stats MigrationScheduler::stats(int32_t d) const
{
    std::lock_guard lock(mutex_);
    runtime_.require_device(d);
    const DeviceState &ds = devices_[static_cast<size_t>(d)];
    tidal_migration_stats s = ds.stats;
    s.budget = ds.budget;
    s.resident_bytes = resident_total(d);
    s.protected_bytes = 0;
    for (const auto &[start, u] : units_)
        if ((u.device == d || (u.elastic && u.alloc_device == d)) && u.protect > 0)
            s.protected_bytes += u.size;
    return s;
}

} // namespace tidal

namespace tidal {

uint64_t MigrationScheduler::resident_total(int32_t d) const
{
    return devices_[static_cast<size_t>(d)].resident + (chunks_ ? chunks_->resident_bytes(d) : 0);
}

void MigrationScheduler::set_chunk_residency(ChunkResidency *chunks)
{
    std::lock_guard lock(mutex_);
    if (!chunks) {
        try {
            wait_for_jobs_on({0, UINTPTR_MAX}); // no queued move may outlive its owner
        } catch (const std::exception &e) {
            log_error(fmt::format("a queued move of elastic memory failed: {}", e.what()));
        }
    }
    chunks_ = chunks;
}

// Elastic memory is mapped only on the device it was allocated for.
void MigrationScheduler::plan_chunks(DeclarationPlan &plan, const DeclaredRange &r)
{
    if (!chunks_)
        throw Error(TIDAL_ERROR_NOT_SUPPORTED, "this context cannot move elastic memory any more (it is being destroyed)",
                    "declare elastic memory while its context lives");
    if (r.device != r.owner.runtime_device)
        throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                    fmt::format("{} is elastic memory of device {}; it was declared for device {}", r.ptr,
                                r.owner.runtime_device, r.device),
                    "declare elastic memory for the device it was allocated on (or copy it with tidal_copy)");
    const size_t index = plan.device_index(r.device);
    DevicePlan &dp = plan.devices[index];
    for (const ResidencyChunk &c : chunks_->chunks(r.owner.base, r.ptr, r.size)) {
        dp.chunk_modes[c.start] |= r.mode; // a chunk named for reading and for writing is written
        if (plan.named(c.start))
            continue;
        plan.name(c.start, index, dp.needs.size());
        dp.needs.push_back(Need{c.start, c.size, &r, 0, 0, !c.resident});
        if (!c.resident)
            dp.incoming += c.size;
    }
}

void MigrationScheduler::queue_chunks(DevicePlan &plan)
{
    const int32_t d = plan.device;
    DeviceState &ds = device(d);
    if (plan.chunk_modes.empty() && ds.chunk_victims.empty())
        return; // no elastic chunk named (plan_chunks gives each a mode) or leaving: no need is read
    std::vector<UnitSpan> victims = std::move(ds.chunk_victims);
    ds.chunk_victims.clear();
    std::vector<ChunkNeed> needs;
    std::vector<Unit *> moved;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (const Need &n : plan.needs) {
        if (!is_chunk(n))
            continue;
        auto [it, inserted] = units_.try_emplace(n.start);
        Unit &u = it->second;
        if (inserted) {
            init_unit(n.start, u, n.size, n.range->owner);
            u.elastic = true;
        }
        const auto mode = plan.chunk_modes.find(n.start);
        needs.push_back(ChunkNeed{n.start, mode != plan.chunk_modes.end() ? mode->second : n.range->mode});
        lo = std::min(lo, n.start);
        hi = std::max(hi, n.start + n.size);
        if (n.move) {
            moved.push_back(&u);
            ds.stats.migrated_bytes += n.size;
        }
    }
    if (!chunks_ || (needs.empty() && victims.empty()))
        return;
    std::vector<uintptr_t> starts;
    for (const UnitSpan &v : victims) {
        starts.push_back(v.start);
        lo = std::min(lo, v.start);
        hi = std::max(hi, v.start + v.size);
    }
    // One stream for elastic copies: asynchronous DMA runs back to back on it, and a second
    // would split the bus between two chunks, delaying the one the next kernel needs. (Several
    // streams serve managed prefetches, whose calls block the worker for the whole move.)
    if (device(d).streams.empty())
        migration_stream(d); // makes the device's first stream and its worker
    void *in = device(d).streams.front();
    if (!victims.empty() && !ds.chunk_out)
        ds.chunk_out = runtime_.stream_create(
            d, [&] { return fmt::format("creating a stream for elastic memory's copies home on device {}", d); });
    std::function<void()> run = chunks_->move(d, starts, needs, in, ds.chunk_out);
    if (run)
        ds.steps.push_back({{lo, hi}, std::move(run)});
    if (!moved.empty()) {
        ++ds.stats.migration_calls;
        std::shared_ptr<Batch> batch = record_batch(d, in);
        for (Unit *u : moved)
            u->ready = batch;
    }
    ds.stats.resident_high_water = std::max(ds.stats.resident_high_water, resident_total(d));
}

void MigrationScheduler::settle(uintptr_t lo, uintptr_t hi, void *stream)
{
    if (!tracking())
        return;
    std::lock_guard lock(mutex_);
    wait_for_jobs_on({lo, hi});
    auto it = units_.lower_bound(lo);
    if (it != units_.begin() && (it == units_.end() || it->first > lo))
        --it;
    std::vector<std::shared_ptr<Batch>> moves;
    for (; it != units_.end() && it->first < hi; ++it) {
        const Unit &u = it->second;
        if (u.elastic && it->first + u.size > lo && u.ready && !u.ready->complete() &&
            std::find(moves.begin(), moves.end(), u.ready) == moves.end())
            moves.push_back(u.ready);
    }
    for (const auto &b : moves) {
        wait_for(b);
        runtime_.stream_wait_event(stream, b->event, "ordering work on elastic memory after tidal's moves of it");
    }
}

} // namespace tidal
