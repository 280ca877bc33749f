#include "elastic/elastic_residency.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "log/logger.h"
#include "status/error.h"

namespace tidal::elastic {

struct ElasticResidency::MovePlan {
    struct Leaving {
        ElasticAllocation *a;
        size_t index;
        void *physical;
        bool dirty;
        bool unmapped = false;
        bool taken = false; // its physical chunk is mapped at an incoming chunk
    };
    struct Coming {
        ElasticAllocation *a;
        size_t index;
        ChunkState was;
        bool was_dirty;
        void *physical = nullptr; // NULL: made by the worker
        bool pooled = false;
        int victim = -1; // index into `leaving` whose physical chunk it takes
        bool mapped = false, filled = false;
    };
    std::vector<Leaving> leaving;
    std::vector<Coming> coming;
    // A worker that kept an earlier error drops the jobs submitted after it: a move that never
    // ran is undone here, so the table says what the device holds.
    ElasticSpace *space = nullptr;
    int32_t device = 0;
    bool ran = false;
    MovePlan() = default;
    MovePlan(const MovePlan &) = delete;
    MovePlan &operator=(const MovePlan &) = delete;
    ~MovePlan()
    {
        if (ran || !space)
            return;
        std::lock_guard lock(space->mutex_);
        repair(*space, *this, device);
    }
};

namespace {

char *at(const ElasticAllocation &a, size_t index) { return a.base + a.chunks[index].offset; }

} // namespace

std::vector<ResidencyChunk> ElasticResidency::chunks(const void *base, const void *ptr, size_t size) const
{
    std::lock_guard lock(space_.mutex_);
    const ElasticAllocation &a = space_.owner(base);
    std::vector<ResidencyChunk> out;
    if (size == 0)
        return out;
    size_t first = 0, last = 0;
    a.chunks.span(static_cast<size_t>(static_cast<const char *>(ptr) - a.base), size, &first, &last);
    for (size_t i = first; i < last; ++i) {
        const Chunk &c = a.chunks[i];
        const bool resident = c.state == ChunkState::resident;
        out.push_back({reinterpret_cast<uintptr_t>(a.base + c.offset), c.size, resident, resident && !c.dirty});
    }
    return out;
}

std::vector<ResidencyChunk> ElasticResidency::resident(int32_t device) const
{
    std::lock_guard lock(space_.mutex_);
    std::vector<ResidencyChunk> out;
    for (const auto &[base, a] : space_.allocations_) {
        if (a->device != device)
            continue;
        for (size_t i = 0; i < a->chunks.count(); ++i)
            if (const Chunk &c = a->chunks[i]; c.state == ChunkState::resident)
                out.push_back({reinterpret_cast<uintptr_t>(a->base + c.offset), c.size, true, !c.dirty});
    }
    return out;
}

uint64_t ElasticResidency::resident_bytes(int32_t device) const
{
    std::lock_guard lock(space_.mutex_);
    uint64_t bytes = 0;
    for (const auto &[base, a] : space_.allocations_)
        if (a->device == device)
            bytes += a->chunks.bytes(0, a->chunks.count()).resident;
    return bytes;
}

std::function<void()> ElasticResidency::move(int32_t device, const std::vector<uintptr_t> &victims,
                                             const std::vector<ChunkNeed> &needs, void *in_stream, void *out_stream)
{
    ElasticSpace &s = space_;
    std::lock_guard lock(s.mutex_);
    auto locate = [&](uintptr_t start, size_t *index) -> ElasticAllocation * {
        ElasticAllocation *a = s.containing(reinterpret_cast<const void *>(start));
        if (!a || a->device != device)
            return nullptr;
        *index = a->chunks.index_of(start - reinterpret_cast<uintptr_t>(a->base));
        return reinterpret_cast<uintptr_t>(at(*a, *index)) == start ? a : nullptr;
    };
    auto plan = std::make_shared<MovePlan>();
    // Homes first: one that cannot be made (OUT_OF_MEMORY) leaves everything as it was.
    for (uintptr_t v : victims) {
        size_t i = 0;
        ElasticAllocation *a = locate(v, &i);
        if (!a || a->chunks[i].state != ChunkState::resident)
            continue; // offloaded since it was chosen: it has left already
        const Chunk &c = a->chunks[i];
        if (c.dirty) {
            tidal_elastic_result ignored{};
            s.ensure_home(*a, ignored);
        }
        plan->leaving.push_back({a, i, c.physical, c.dirty});
    }
    for (const auto &l : plan->leaving) {
        Chunk &c = l.a->chunks[l.index];
        c.state = ChunkState::offloaded;
        c.physical = nullptr;
        c.dirty = false;
    }
    for (const ChunkNeed &n : needs) {
        size_t i = 0;
        ElasticAllocation *a = locate(n.start, &i);
        if (!a)
            continue;
        Chunk &c = a->chunks[i];
        if (c.state == ChunkState::resident) {
            if (n.mode & TIDAL_ACCESS_WRITE)
                c.dirty = true;
            continue;
        }
        MovePlan::Coming m{a, i, c.state, c.dirty};
        // The physical chunk a victim frees is mapped here directly; else a kept one, else a new one.
        for (size_t v = 0; v < plan->leaving.size(); ++v) {
            auto &l = plan->leaving[v];
            if (!l.taken && l.a->chunks[l.index].size == c.size) {
                l.taken = true;
                m.physical = l.physical;
                m.victim = static_cast<int>(v);
                break;
            }
        }
        if (!m.physical && (m.physical = s.pool_.take(device, c.size)))
            m.pooled = true;
        // A discarded chunk's home never held its contents: it is dirty whatever the mode.
        c.dirty = c.state == ChunkState::discarded || (n.mode & TIDAL_ACCESS_WRITE);
        c.state = ChunkState::resident;
        c.physical = m.physical;
        plan->coming.push_back(m);
    }
    if (plan->leaving.empty() && plan->coming.empty())
        return {};
    plan->space = &s;
    plan->device = device;
    return [&s, plan, device, in_stream, out_stream] { carry_out(s, *plan, device, in_stream, out_stream); };
}

void ElasticResidency::carry_out(ElasticSpace &s, MovePlan &p, int32_t device, void *in_stream, void *out_stream)
{
    Runtime &rt = s.runtime_;
    p.ran = true;
    // A chunk's offset, size and home are fixed while the scheduler may move it: read unlocked.
    try {
        bool copied = false;
        for (const auto &l : p.leaving)
            if (l.dirty) {
                const Chunk &c = l.a->chunks[l.index];
                rt.memcpy(l.a->home->data() + c.offset, at(*l.a, l.index), c.size, out_stream, [&] {
                    return fmt::format("evicting {} bytes of elastic memory at {} to its host home", c.size,
                                       static_cast<void *>(at(*l.a, l.index)));
                });
                copied = true;
            }
        // Unmapped only once its home is current; the copies in need not wait for this.
        if (copied)
            rt.stream_synchronize(out_stream, "waiting for elastic memory's copies home before unmapping it");
        // Chunks come in by groups of 1, 2, 4 ... adjacent chunks, each group made, mapped, given
        // access and its copies queued before the next group's driver calls: the first copy
        // starts after one chunk's calls (unmap, map and access of 64 MiB took 0.3 ms on the
        // H200, a quarter of its copy), and the later calls run while it copies. A victim's
        // physical chunk is mapped at the incoming place while still mapped at the victim's
        // (one memory under two addresses, as the virtual-memory API allows), and the victim
        // is unmapped after the group's copies are queued: its unmap (0.02-0.11 ms on the H200,
        // not waiting for the copy into the same memory: sync-probe) is off the path to the
        // copy. A runtime that refuses the second mapping gets the unmap first.
        // Access stays one call per group (chunk by chunk it cost 25 us each on the H200).
        auto unmap = [&](MovePlan::Leaving &l) {
            if (!l.unmapped) {
                rt.vmm_unmap(at(*l.a, l.index), l.a->chunks[l.index].size);
                l.unmapped = true;
            }
        };
        for (size_t i = 0, group = 1; i < p.coming.size(); group *= 2) {
            size_t j = i + 1;
            while (j < p.coming.size() && j - i < group && p.coming[j].a == p.coming[i].a &&
                   p.coming[j].index == p.coming[j - 1].index + 1)
                ++j;
            for (size_t k = i; k < j; ++k) {
                MovePlan::Coming &m = p.coming[k];
                if (!m.physical)
                    m.physical = rt.vmm_create(device, m.a->chunks[m.index].size);
                MovePlan::Leaving *victim = m.victim >= 0 ? &p.leaving[static_cast<size_t>(m.victim)] : nullptr;
                try {
                    rt.vmm_map(at(*m.a, m.index), m.a->chunks[m.index].size, m.physical);
                } catch (const Error &) {
                    if (!victim || victim->unmapped)
                        throw;
                    unmap(*victim);
                    rt.vmm_map(at(*m.a, m.index), m.a->chunks[m.index].size, m.physical);
                }
                m.mapped = true;
            }
            const Chunk &hi = p.coming[j - 1].a->chunks[p.coming[j - 1].index];
            char *lo = at(*p.coming[i].a, p.coming[i].index);
            rt.vmm_set_access(device, lo, static_cast<size_t>(p.coming[i].a->base + hi.offset + hi.size - lo));
            for (size_t k = i; k < j; ++k) {
                MovePlan::Coming &m = p.coming[k];
                const Chunk &c = m.a->chunks[m.index];
                if (m.was == ChunkState::offloaded)
                    rt.memcpy(at(*m.a, m.index), m.a->home->data() + c.offset, c.size, in_stream, [&] {
                        return fmt::format("copying {} bytes of elastic memory at {} in from its host home", c.size,
                                           static_cast<void *>(at(*m.a, m.index)));
                    });
                m.filled = true;
            }
            for (size_t k = i; k < j; ++k)
                if (p.coming[k].victim >= 0)
                    unmap(p.leaving[static_cast<size_t>(p.coming[k].victim)]);
            i = j;
        }
        for (auto &l : p.leaving) // those whose physical chunk no incoming chunk took
            unmap(l);
    } catch (...) {
        if (out_stream)
            rt.stream_synchronize_noexcept(out_stream); // no copy home still running
        std::lock_guard lock(s.mutex_);
        repair(s, p, device);
        throw;
    }
    std::lock_guard lock(s.mutex_);
    ElasticSpace::Counters &counters = s.counters_.at(static_cast<size_t>(device));
    tidal_elastic_result ignored{};
    for (const auto &l : p.leaving) {
        ++counters.offloads;
        if (l.dirty)
            counters.copied_out += l.a->chunks[l.index].size;
        if (!l.taken) // more left than came in: back to the runtime, under the budget's promise
            s.let_go(device, l.a->chunks[l.index].size, l.physical, false, ignored);
    }
    for (const auto &m : p.coming) {
        ++counters.restores;
        if (m.was == ChunkState::offloaded)
            counters.copied_in += m.a->chunks[m.index].size;
        m.a->chunks[m.index].physical = m.physical;
    }
}

void ElasticResidency::repair(ElasticSpace &s, MovePlan &p, int32_t device) noexcept
{
    tidal_elastic_result ignored{};
    // A victim whose physical chunk an incoming chunk was mapped at and copied into has lost
    // its device contents (its home is current: written victims went home first): it leaves.
    for (size_t v = 0; v < p.leaving.size(); ++v) {
        auto &l = p.leaving[v];
        const bool overwritten = std::any_of(p.coming.begin(), p.coming.end(), [&](const MovePlan::Coming &m) {
            return m.victim == static_cast<int>(v) && m.mapped && m.filled;
        });
        if (l.unmapped || !overwritten)
            continue;
        try {
            s.runtime_.vmm_unmap(at(*l.a, l.index), l.a->chunks[l.index].size);
        } catch (const std::exception &e) {
            log_error(fmt::format("undoing a move of elastic memory: unmapping {} bytes at {} failed: {}; it stays "
                                  "mapped, and its chunk cannot come back there",
                                  l.a->chunks[l.index].size, static_cast<void *>(at(*l.a, l.index)), e.what()));
        }
        l.unmapped = true;
    }
    // A victim still mapped keeps its place and its physical chunk, as dirty as it was.
    for (const auto &l : p.leaving)
        if (!l.unmapped) {
            Chunk &c = l.a->chunks[l.index];
            c.state = ChunkState::resident;
            c.physical = l.physical;
            c.dirty = l.dirty;
        }
    for (const auto &m : p.coming) {
        Chunk &c = m.a->chunks[m.index];
        if (m.mapped && m.filled) {
            c.physical = m.physical; // in place: its copy in is queued
            continue;
        }
        if (m.mapped) {
            try {
                s.runtime_.vmm_unmap(at(*m.a, m.index), c.size);
            } catch (const std::exception &e) {
                log_error(fmt::format("undoing a move of elastic memory: unmapping {} bytes at {} failed: {}; its "
                                      "contents are undefined",
                                      c.size, static_cast<void *>(at(*m.a, m.index)), e.what()));
                c.physical = m.physical;
                c.dirty = true;
                continue;
            }
        }
        c.state = m.was;
        c.dirty = m.was_dirty;
        c.physical = nullptr;
        if (!m.physical)
            continue;
        if (m.victim >= 0) {
            auto &l = p.leaving[static_cast<size_t>(m.victim)];
            if (!l.unmapped)
                continue; // the victim still holds it
            s.let_go(device, c.size, m.physical, false, ignored);
        } else {
            s.let_go(device, c.size, m.physical, m.pooled, ignored);
        }
    }
    for (const auto &l : p.leaving)
        if (l.unmapped && !l.taken)
            s.let_go(device, l.a->chunks[l.index].size, l.physical, false, ignored);
}

} // namespace tidal::elastic
