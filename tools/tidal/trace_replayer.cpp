#include "trace_replayer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace tidal_tool {
namespace {

constexpr size_t kFailureLinesShown = 5;

bool on_device(tidal_kind k);

} // namespace

tidal_check_kind check_kind_from_name(const std::string &name)
{
    static const char *const names[] = {"touch_read", "touch_write", "pattern_fill", "pattern_verify", "copy",
                                        "triad",      "atomic_add",  "runtime_copy", "spin"};
    for (int i = 0; i < 9; ++i)
        if (name == names[i])
            return static_cast<tidal_check_kind>(i + 1);
    return TIDAL_CHECK_FORCE_32BIT;
}

namespace {

bool on_device(tidal_kind k)
{
    return k == TIDAL_KIND_DEVICE || k == TIDAL_KIND_DEVICE_FINE || k == TIDAL_KIND_ELASTIC;
}

} // namespace

tidal_context *open_replay_context(const std::string &config, const Trace &trace, const std::string &profile,
                                   std::string *error)
{
    // The environment overrides the file: the replay runs on the simulated device whatever
    // the configuration names, with enough devices for the trace, and records no trace (it
    // would overwrite the one being read when TIDAL_TRACE names it).
    setenv("TIDAL_RUNTIME", "sim", 1);
    unsetenv("TIDAL_TRACE");
    const char *devices = std::getenv("TIDAL_SIM_DEVICES");
    if (!devices || std::atoi(devices) < trace.devices)
        setenv("TIDAL_SIM_DEVICES", std::to_string(std::max(trace.devices, 1)).c_str(), 1);
    if (!profile.empty())
        setenv("TIDAL_SIM_PROFILE", profile.c_str(), 1);
    tidal_context *ctx = nullptr;
    const tidal_status s = config.empty() ? tidal_context_create_from_string("", &ctx)
                                          : tidal_context_create_from_file(config.c_str(), &ctx);
    if (s != TIDAL_OK) {
        *error = fmt::format("{}: {}", tidal_status_name(s), tidal_last_error());
        return nullptr;
    }
    return ctx;
}

tidal_kind kind_from_name(const std::string &name)
{
    for (int k = TIDAL_KIND_AUTO; k < TIDAL_KIND_COUNT; ++k)
        if (name == tidal_kind_name(static_cast<tidal_kind>(k)))
            return static_cast<tidal_kind>(k);
    return static_cast<tidal_kind>(TIDAL_KIND_COUNT);
}

TraceReplayer::~TraceReplayer()
{
    for (auto &[recorded, b] : blocks_)
        tidal_free(ctx_, b.ptr);
    for (void *s : created_streams_)
        tidal_stream_destroy(ctx_, s);
}

const ReplayedBlock *TraceReplayer::owner(uint64_t recorded) const
{
    auto it = blocks_.upper_bound(recorded);
    if (it == blocks_.begin())
        return nullptr;
    --it;
    return recorded - it->first < std::max<uint64_t>(it->second.size, 1) ? &it->second : nullptr;
}

void *TraceReplayer::map(uint64_t recorded, uint64_t extent)
{
    if (recorded == 0)
        return nullptr;
    if (const ReplayedBlock *b = owner(recorded))
        return static_cast<char *>(b->ptr) + (recorded - b->recorded);
    // Host memory of the program's own: one stand-in per first address seen, grown to the
    // largest extent asked from it.
    auto it = host_.upper_bound(recorded);
    if (it != host_.begin()) {
        --it;
        const uint64_t offset = recorded - it->first;
        if (offset < it->second.size() || offset == 0) {
            if (offset + extent > it->second.size())
                it->second.resize(offset + extent);
            return it->second.data() + offset;
        }
    }
    std::vector<char> &block = host_[recorded];
    block.resize(std::max<uint64_t>(extent, 1));
    return block.data();
}

void *TraceReplayer::stream(uint64_t recorded, int32_t device)
{
    if (recorded == 0)
        return nullptr;
    auto it = streams_.find(recorded);
    if (it != streams_.end())
        return it->second;
    // A stream the program made itself (not through tidal): one of the replay's stands in.
    void *s = nullptr;
    if (tidal_stream_create(ctx_, device, &s) != TIDAL_OK)
        return nullptr;
    created_streams_.push_back(s);
    return streams_[recorded] = s;
}

tidal_status TraceReplayer::alloc(const TraceRecord &r)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    const tidal_kind kind = kind_from_name(r.kind);
    desc.kind = kind == TIDAL_KIND_COUNT ? TIDAL_KIND_AUTO : kind;
    desc.device = r.device;
    desc.alignment = r.alignment;
    desc.tag = r.tag.empty() ? nullptr : r.tag.c_str();
    desc.hints = r.hints;
    void *p = nullptr;
    const tidal_status s = r.call == "alloc_async" ? tidal_alloc_async(ctx_, r.size, &desc, stream(r.stream), &p)
                                                   : tidal_alloc(ctx_, r.size, &desc, &p);
    ReplayAllocation a{r.line, r.tag, r.size, "", 0, ""};
    if (s == TIDAL_OK) {
        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        tidal_pointer_query(ctx_, p, &info);
        a.kind = tidal_kind_name(info.kind);
        a.device = info.device;
        a.policy = info.placed_by;
        if (r.ok())
            blocks_[r.ptr] = ReplayedBlock{r.ptr, p, r.size, r.tag, info.kind, info.device};
        else
            tidal_free(ctx_, p); // the program went on without it
    }
    figures_->allocations.push_back(std::move(a));
    return s;
}

tidal_status TraceReplayer::check(const TraceRecord &r)
{
    tidal_check c = TIDAL_CHECK_INIT;
    c.kind = check_kind_from_name(r.kind);
    c.device = r.device;
    c.target = map(r.ptr, r.size);
    c.source = map(r.src, r.size);
    c.size = r.size;
    c.seed = r.seed;
    c.stream = stream(r.stream, r.device);
    const tidal_status s = tidal_check_run(ctx_, &c);
    last_check_seconds_ = s == TIDAL_OK ? c.elapsed_ms / 1e3 : 0;
    return s;
}

tidal_status TraceReplayer::replay(const TraceRecord &r)
{
    const std::string &c = r.call;
    if (c == "alloc" || c == "alloc_async")
        return alloc(r);
    if (c == "free" || c == "free_async") {
        auto it = blocks_.find(r.ptr);
        if (r.ptr == 0 || it == blocks_.end())
            return r.ptr == 0 ? TIDAL_OK : TIDAL_ERROR_NOT_FOUND; // its allocation failed here: skipped
        void *p = it->second.ptr;
        blocks_.erase(it);
        return c == "free" ? tidal_free(ctx_, p) : tidal_free_async(ctx_, p, stream(r.stream));
    }
    if (c == "prefetch")
        return tidal_prefetch(ctx_, map(r.ptr, r.size), r.size, r.device);
    if (c == "advise")
        return tidal_advise(ctx_, map(r.ptr, r.size), r.size, r.set, r.unset);
    if (c == "declare") {
        std::vector<tidal_access> accesses;
        for (const TraceItem &i : r.items) {
            tidal_access a = TIDAL_ACCESS_INIT;
            a.ptr = map(i.ptr, i.size);
            a.size = i.size;
            a.device = i.device;
            a.mode = i.mode;
            accesses.push_back(a);
        }
        return tidal_declare(ctx_, stream(r.stream), accesses.data(), accesses.size(), r.flags);
    }
    if (c == "budget_set")
        return tidal_budget_set(ctx_, r.device, r.size);
    if (c == "copy" || c == "copy_async" || c == "copy_batch") {
        std::vector<tidal_copy_item> items;
        for (const TraceItem &i : r.items) {
            tidal_copy_item item = TIDAL_COPY_ITEM_INIT;
            item.dst = map(i.ptr, i.size);
            item.src = map(i.src, i.size);
            item.size = i.size;
            items.push_back(item);
        }
        if (c == "copy_batch")
            return tidal_copy_batch(ctx_, items.data(), items.size(), stream(r.stream));
        if (items.empty())
            return TIDAL_ERROR_INVALID_ARGUMENT;
        return c == "copy" ? tidal_copy(ctx_, items[0].dst, items[0].src, items[0].size)
                           : tidal_copy_async(ctx_, items[0].dst, items[0].src, items[0].size, stream(r.stream));
    }
    if (c == "stream_create") {
        void *s = nullptr;
        const tidal_status st = tidal_stream_create(ctx_, r.device, &s);
        if (st == TIDAL_OK && r.ok())
            streams_[r.new_stream] = s;
        return st;
    }
    if (c == "stream_destroy") {
        auto it = streams_.find(r.stream);
        if (it == streams_.end())
            return TIDAL_OK;
        void *s = it->second;
        streams_.erase(it);
        std::erase(created_streams_, s);
        return tidal_stream_destroy(ctx_, s);
    }
    if (c == "stream_synchronize")
        return tidal_stream_synchronize(ctx_, stream(r.stream));
    if (c == "check_run")
        return check(r);
    tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
    if (c == "offload")
        return tidal_offload(ctx_, r.tag.c_str(), r.flags, stream(r.stream), &out);
    if (c == "restore")
        return tidal_restore(ctx_, r.tag.c_str(), r.flags, stream(r.stream), &out);
    if (c == "offload_range")
        return tidal_offload_range(ctx_, map(r.ptr, r.size), r.size, r.flags, stream(r.stream), &out);
    if (c == "restore_range")
        return tidal_restore_range(ctx_, map(r.ptr, r.size), r.size, r.flags, stream(r.stream), &out);
    if (c == "pool_trim")
        return tidal_pool_trim(ctx_, nullptr);
    return TIDAL_ERROR_INVALID_ARGUMENT; // read_trace knows no other call
}

void TraceReplayer::sample(ReplayFigures &f, double start)
{
    MemorySample m;
    double now = start;
    tidal_clock(ctx_, &now);
    m.seconds = now - start;
    uint64_t total = 0;
    for (const auto &[recorded, b] : blocks_)
        if (on_device(b.kind)) {
            m.bytes_by_tag[b.tag.empty() ? "(untagged)" : b.tag] += b.size;
            total += b.size;
        }
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    tidal_system_info_get(ctx_, &sys);
    uint64_t managed = 0;
    for (int32_t d = 0; d < sys.device_count; ++d) {
        tidal_migration_stats ms = TIDAL_MIGRATION_STATS_INIT;
        if (tidal_migration_stats_get(ctx_, d, &ms) == TIDAL_OK)
            managed += ms.resident_bytes;
    }
    if (managed)
        m.bytes_by_tag["managed (resident)"] = managed;
    total += managed;
    f.peak_device_bytes = std::max(f.peak_device_bytes, total);
    f.timeline.push_back(std::move(m));
}

ReplayFigures TraceReplayer::run(ReplayObserver *observer)
{
    ReplayFigures f;
    figures_ = &f;
    double start = 0;
    tidal_clock(ctx_, &start);
    for (const TraceRecord &r : trace_.records) {
        if (observer)
            observer->before(r, *this);
        tidal_status s = replay(r);
        ++f.calls;
        if (!r.ok())
            ++f.recorded_failures;
        if (s == TIDAL_ERROR_NOT_FOUND && (r.call == "free" || r.call == "free_async")) {
            ++f.skipped;
            s = TIDAL_OK;
        } else if (s != TIDAL_OK) {
            ++f.failures;
            if (f.failure_lines.size() < kFailureLinesShown)
                f.failure_lines.push_back(
                    fmt::format("line {}: {}: {}: {}", r.line, r.call, tidal_status_name(s), tidal_last_error()));
        }
        if (observer)
            observer->after(r, s, *this);
        sample(f, start);
    }
    for (auto &[recorded, s] : streams_)
        tidal_stream_synchronize(ctx_, s);
    tidal_stream_synchronize(ctx_, nullptr);
    double end = start;
    tidal_clock(ctx_, &end);
    f.simulated_seconds = end - start;
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    tidal_system_info_get(ctx_, &sys);
    for (int32_t d = 0; d < sys.device_count; ++d) {
        tidal_migration_stats ms = TIDAL_MIGRATION_STATS_INIT;
        if (tidal_migration_stats_get(ctx_, d, &ms) != TIDAL_OK)
            continue;
        f.migrated_bytes += ms.migrated_bytes;
        f.evicted_bytes += ms.evicted_bytes;
        f.evictions += ms.evictions;
    }
    figures_ = nullptr;
    return f;
}

} // namespace tidal_tool
