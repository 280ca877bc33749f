#include "trace_doctor.h"

#include <fmt/format.h>

#include <algorithm>

#include "bench_report.h"
#include "byte_sizes.h"

namespace tidal_tool {
namespace {

// A kernel whose device time is more than this share above the same kernel's on device memory
// spent it on page faults or on reads over the link.
constexpr double kSlowShare = 0.5;
constexpr int kThrashRemigrations = 2; // evicted and brought back this often
constexpr int kAlternations = 3;       // host <-> device moves

bool managed(tidal_kind k) { return k == TIDAL_KIND_MANAGED || k == TIDAL_KIND_MANAGED_COARSE; }

std::string percent(double part, double whole) { return fmt::format("{:.0f} %", whole > 0 ? 100 * part / whole : 0); }

std::string declaration(const std::string &tag, uint64_t size, int32_t device, const char *flags, const std::string &why)
{
    return fmt::format("/* {} */\n"
                       "tidal_access a = TIDAL_ACCESS_INIT;\n"
                       "a.ptr = {};  /* the buffer tagged \"{}\" */\n"
                       "a.size = {};\n"
                       "a.device = {};\n"
                       "a.mode = TIDAL_ACCESS_READ_WRITE;\n"
                       "tidal_declare(ctx, stream, &a, 1, {});",
                       why, tag.empty() ? "ptr" : tag, tag, size, device, flags);
}

std::string rule(const std::string &tag, const std::string &body)
{
    return fmt::format("[[policy.rules.rule]]   # with policies = [\"rules\", ...]\ntag = \"{}\"\n{}", tag, body);
}

} // namespace

std::string name_of(const std::string &tag) { return tag.empty() ? "(untagged)" : tag; }

std::string fix_declare_first(const std::string &tag, uint64_t size, int32_t device, const std::string &why)
{
    return declaration(tag, size, device, "0", why);
}

std::string fix_preferred_location(const std::string &tag)
{
    return rule(tag, "kind = \"managed\"\nadvice = [\"preferred-device\", \"accessed-by-device\"]");
}

std::string fix_thrashing(const std::string &tag, uint64_t budget, uint64_t cycle_bytes)
{
    return fmt::format("/* the batch size: declare at most {} per phase (split the work on \"{}\" into pieces that "
                       "fit), or the access pattern: finish with \"{}\" before the next buffer is declared; or, where "
                       "the device has room for them all: */\n"
                       "[migration]\nbudget = {}  # {}",
                       format_bytes(budget ? budget : cycle_bytes), tag, tag, cycle_bytes, format_bytes(cycle_bytes));
}

std::string fix_alternation(const std::string &tag, uint64_t size, int32_t device)
{
    return declaration(tag, size, device, "TIDAL_DECLARE_LOOKAHEAD",
                       "while the host still works on it: the move back overlaps the host's work") +
           "\n/* or keep it in pinned host memory, which the device reads in place: */\n" + rule(tag, "kind = \"pinned\"");
}

TraceDoctor::Watch *TraceDoctor::watch(uint64_t recorded, const TraceReplayer &replayer)
{
    const ReplayedBlock *b = replayer.owner(recorded);
    if (!b)
        return nullptr;
    auto it = live_.find(b->recorded);
    return it == live_.end() ? nullptr : &watches_[it->second];
}

void TraceDoctor::use(Watch &w, bool device, size_t line)
{
    const int side = device ? 2 : 1;
    if (w.side != 0 && w.side != side && ++w.switches == 1)
        w.switch_line = line;
    w.side = side;
}

int32_t TraceDoctor::last_prefetch(TraceReplayer &replayer, uint64_t recorded, uint64_t size)
{
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    if (tidal_range_query(replayer.context(), replayer.map(recorded, size), size, &info) != TIDAL_OK)
        return TIDAL_LOCATION_NONE;
    return info.last_prefetch_location;
}

// The same kernel on device memory of the same size: what it costs without faults.
double TraceDoctor::baseline(const TraceRecord &r, TraceReplayer &replayer)
{
    const std::string key = fmt::format("{}/{}/{}/{}", r.kind, r.size, r.device, r.src != 0);
    if (auto it = baselines_.find(key); it != baselines_.end())
        return it->second;
    tidal_context *ctx = replayer.context();
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = r.device;
    desc.tag = "tidal-doctor-baseline";
    void *target = nullptr, *source = nullptr;
    double seconds = -1; // unknown: no kernel is judged against it
    if (tidal_alloc(ctx, std::max<uint64_t>(r.size, 8), &desc, &target) == TIDAL_OK &&
        (r.src == 0 || tidal_alloc(ctx, std::max<uint64_t>(r.size, 8), &desc, &source) == TIDAL_OK)) {
        tidal_check c = TIDAL_CHECK_INIT;
        c.kind = check_kind_from_name(r.kind);
        c.device = r.device;
        c.target = target;
        c.source = source;
        c.source2 = source;
        c.size = r.size;
        c.seed = r.seed;
        if (tidal_check_run(ctx, &c) == TIDAL_OK)
            seconds = c.elapsed_ms / 1e3;
    }
    tidal_free(ctx, target);
    tidal_free(ctx, source);
    return baselines_[key] = seconds;
}

void TraceDoctor::before(const TraceRecord &r, TraceReplayer &replayer)
{
    if (r.call != "declare")
        return;
    before_declare_.clear();
    for (const TraceItem &i : r.items) {
        const Watch *w = watch(i.ptr, replayer);
        before_declare_.push_back(w && w->managed ? last_prefetch(replayer, i.ptr, i.size) : TIDAL_LOCATION_NONE);
    }
}

void TraceDoctor::after(const TraceRecord &r, tidal_status status, TraceReplayer &replayer)
{
    if (status != TIDAL_OK)
        return;
    const std::string &c = r.call;
    if (c == "alloc" || c == "alloc_async") {
        const ReplayedBlock *b = replayer.owner(r.ptr);
        if (!b || b->recorded != r.ptr)
            return;
        Watch w;
        w.tag = r.tag;
        w.size = r.size;
        w.line = r.line;
        w.managed = managed(b->kind);
        live_[r.ptr] = watches_.size();
        watches_.push_back(w);
    } else if (c == "free" || c == "free_async") {
        live_.erase(r.ptr);
    } else if (c == "declare") {
        for (size_t k = 0; k < r.items.size(); ++k) {
            const TraceItem &i = r.items[k];
            Watch *w = watch(i.ptr, replayer);
            if (!w || !w->managed)
                continue;
            if (i.device < 0) {
                use(*w, false, r.line);
                w->host_since = true;
                continue;
            }
            if (w->resident_on == i.device && k < before_declare_.size() && before_declare_[k] != i.device &&
                !w->host_since && ++w->remigrations == 1)
                w->remigration_line = r.line;
            if (last_prefetch(replayer, i.ptr, i.size) == i.device) {
                w->resident_on = i.device;
                w->host_since = false;
            }
            if (w->kernels == 0)
                w->prepared = true;
            use(*w, true, r.line);
            tidal_migration_stats ms = TIDAL_MIGRATION_STATS_INIT;
            if (tidal_migration_stats_get(replayer.context(), i.device, &ms) == TIDAL_OK && ms.budget)
                budget_ = ms.budget;
        }
    } else if (c == "prefetch") {
        Watch *w = watch(r.ptr, replayer);
        if (!w || !w->managed)
            return;
        const bool device = r.device >= 0;
        use(*w, device, r.line);
        if (device) {
            w->prepared = w->prepared || w->kernels == 0;
            w->resident_on = r.device;
            w->host_since = false;
        } else {
            w->host_since = true;
            w->resident_on = TIDAL_LOCATION_NONE;
        }
    } else if (c == "copy" || c == "copy_async" || c == "copy_batch") {
        for (const TraceItem &i : r.items) {
            const ReplayedBlock *dst = replayer.owner(i.ptr), *src = replayer.owner(i.src);
            for (auto [end, other] : {std::pair{dst, src}, std::pair{src, dst}}) {
                Watch *w = end ? watch(end->recorded, replayer) : nullptr;
                if (!w || !w->managed)
                    continue;
                const bool device_end = other && (other->kind == TIDAL_KIND_DEVICE || other->kind == TIDAL_KIND_DEVICE_FINE ||
                                                  other->kind == TIDAL_KIND_ELASTIC);
                use(*w, device_end, r.line);
                if (!device_end)
                    w->host_since = true;
            }
        }
    } else if (c == "check_run") {
        const double elapsed = replayer.last_check_seconds();
        const double base = baseline(r, replayer);
        const double overhead = base < 0 ? 0 : std::max(0.0, elapsed - base);
        const bool slow = base >= 0 && overhead > kSlowShare * elapsed;
        std::vector<Watch *> touched;
        for (uint64_t p : {r.ptr, r.src})
            if (Watch *w = p ? watch(p, replayer) : nullptr; w && w->managed &&
                                                           std::find(touched.begin(), touched.end(), w) == touched.end())
                touched.push_back(w);
        for (Watch *w : touched) {
            if (w->kernels == 0) {
                w->first_slow = slow && !w->prepared;
                w->first_overhead = overhead;
                w->first_elapsed = elapsed;
                w->first_line = r.line;
                w->resident_on = r.device;
            } else if (!w->host_since) { // after a move to the host, the fault is the alternation's
                w->later_slow += slow ? 1 : 0;
                w->later_overhead += overhead;
                w->later_elapsed += elapsed;
            }
            ++w->kernels;
            w->host_since = false;
            use(*w, true, r.line);
        }
    }
}

std::vector<Finding> TraceDoctor::findings() const
{
    std::vector<Finding> out;
    // The buffers that thrash together: what the budget would have to hold.
    uint64_t cycle_bytes = 0;
    std::string cycle_tags;
    for (const Watch &w : watches_)
        if (w.managed && w.remigrations >= kThrashRemigrations) {
            cycle_bytes += w.size;
            cycle_tags += (cycle_tags.empty() ? "" : ", ") + name_of(w.tag);
        }
    for (const Watch &w : watches_) {
        if (!w.managed)
            continue;
        const std::string tag = name_of(w.tag);
        const int later = w.kernels - 1;
        if (later >= 2 && w.later_slow * 2 > later) {
            out.push_back({"fault-bound", tag, w.size, w.first_line,
                           fmt::format("{} of {} kernels after the first spent {} of their device time ({} of {}) on "
                                       "page faults or reading it over the link: the device waits on memory",
                                       w.later_slow, later, percent(w.later_overhead, w.later_elapsed),
                                       format_seconds(w.later_overhead), format_seconds(w.later_elapsed)),
                           fix_preferred_location(w.tag)});
        } else if (w.first_slow) {
            out.push_back({"first-access-latency", tag, w.size, w.first_line,
                           fmt::format("the first kernel on it (line {}) spent {} of its {} on page faults: nothing "
                                       "declared or prefetched it before",
                                       w.first_line, percent(w.first_overhead, w.first_elapsed),
                                       format_seconds(w.first_elapsed)),
                           fix_declare_first(w.tag, w.size, w.resident_on,
                                             fmt::format("before the kernel at line {}", w.first_line))});
        }
        if (w.remigrations >= kThrashRemigrations) {
            out.push_back({"thrashing", tag, w.size, w.remigration_line,
                           fmt::format("tidal evicted it and moved it back {} times (first at line {}) while the "
                                       "program did not touch it on the host: the buffers declared in turn ({}: {}) "
                                       "do not fit {}",
                                       w.remigrations, w.remigration_line, cycle_tags, format_bytes(cycle_bytes),
                                       budget_ ? fmt::format("the budget of {}", format_bytes(budget_))
                                               : "the device"),
                           fix_thrashing(tag, budget_, cycle_bytes)});
        }
        if (w.switches >= kAlternations) {
            out.push_back({"alternation", tag, w.size, w.switch_line,
                           fmt::format("it moved between the host and the device {} times (first at line {}); each "
                                       "move migrates it whole",
                                       w.switches, w.switch_line),
                           fix_alternation(w.tag, w.size, std::max(w.resident_on, 0))});
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const Finding &a, const Finding &b) { return a.line < b.line; });
    return out;
}

} // namespace tidal_tool
