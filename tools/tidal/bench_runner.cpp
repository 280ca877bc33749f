#include "bench_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>
#include <tuple>

#include "../common/cpu_pin.h"
#include "../common/parallel_memcpy.h"
#include "byte_sizes.h"
#include "progress_bar.h"
#include "tool_commands.h"

namespace tidal_tool {
namespace {

bool starts_with(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

// The resolved configuration with the runtime pinned to the one in use (so "auto" does not
// probe, and warn, again) and [pool] enabled / backend replaced.
std::string with_pool(const std::string &text, const std::string &runtime, bool pooled, const char *backend)
{
    std::istringstream in(text);
    std::string line, out;
    bool in_table = false, in_pool = false;
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] == '[') {
            in_table = true;
            in_pool = starts_with(line, "[pool]");
        }
        if (!in_table && starts_with(line, "runtime = "))
            line = fmt::format("runtime = \"{}\"", runtime);
        else if (in_pool && starts_with(line, "enabled = "))
            line = fmt::format("enabled = {}", pooled ? "true" : "false");
        else if (in_pool && starts_with(line, "backend = "))
            line = fmt::format("backend = \"{}\"", backend);
        out += line + "\n";
    }
    return out;
}

// One tidal allocation for the length of a measurement.
class TidalBuffer {
public:
    TidalBuffer(tidal_context *ctx, tidal_kind kind, int32_t device, size_t bytes) : ctx_(ctx)
    {
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = kind;
        d.device = TIDAL_KIND_IS_HOST(kind) ? TIDAL_DEVICE_DEFAULT : device;
        d.tag = "tidal-bench";
        status_ = tidal_alloc(ctx, bytes, &d, &p_);
        if (status_ != TIDAL_OK)
            error_ = failure_text(status_);
    }
    ~TidalBuffer()
    {
        if (p_)
            tidal_free(ctx_, p_);
    }
    TidalBuffer(const TidalBuffer &) = delete;
    TidalBuffer &operator=(const TidalBuffer &) = delete;

    void *get() const noexcept { return p_; }
    bool ok() const noexcept { return p_ != nullptr; }
    const std::string &error() const noexcept { return error_; }

private:
    tidal_context *ctx_;
    void *p_ = nullptr;
    tidal_status status_ = TIDAL_OK;
    std::string error_;
};

// Ordinary host memory the application owns, touched once (first touch is not a copy).
struct FreeDeleter {
    void operator()(void *p) const noexcept { std::free(p); }
};
using HostMemory = std::unique_ptr<char, FreeDeleter>;

HostMemory pageable(size_t bytes, int fill)
{
    HostMemory m(static_cast<char *>(std::aligned_alloc(4096, (bytes + 4095) & ~size_t{4095})));
    if (m)
        std::memset(m.get(), fill, bytes);
    return m;
}

// A kernel's device time in seconds, timed with runtime events.
tidal_status timed_check(tidal_context *ctx, tidal_check_kind kind, int32_t device, void *target, const void *source,
                         size_t bytes, uint32_t repeat, double &seconds)
{
    double ms = 0;
    const tidal_status s = run_check(ctx, kind, device, target, bytes, 0, nullptr, source, repeat, &ms);
    seconds = ms * 1e-3;
    return s;
}

} // namespace

BenchRunner::BenchRunner(tidal_context *base, BenchOptions options) : base_(base), o_(std::move(options)) {}

ContextHandle BenchRunner::derive(bool pooled, const char *backend, std::string *error) const
{
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    tidal_system_info_get(base_, &sys);
    const std::string text = with_pool(config_text_, sys.runtime, pooled, backend);
    tidal_context *ctx = nullptr;
    if (tidal_status s = tidal_context_create_from_string(text.c_str(), &ctx); s != TIDAL_OK) {
        *error = failure_text(s);
        return nullptr;
    }
    return ContextHandle(ctx);
}

std::optional<double> BenchRunner::sample(const std::function<tidal_status(double &)> &once, unsigned *reps,
                                          std::string *note, bool warm_up) const
{
    std::vector<double> runs;
    double t = 0;
    if (warm_up)
        if (tidal_status s = once(t); s != TIDAL_OK) {
            *note = failure_text(s);
            return std::nullopt;
        }
    const auto t0 = WallClock::now();
    while (runs.size() < o_.max_reps && (runs.size() < o_.min_reps || since(t0) < o_.point_budget_s)) {
        if (tidal_status s = once(t); s != TIDAL_OK) {
            *note = failure_text(s);
            return std::nullopt;
        }
        runs.push_back(t);
    }
    *reps = static_cast<unsigned>(runs.size());
    return median(runs);
}

bool BenchRunner::run(BenchResults &out, std::string *error)
{
    config_text_ = describe_configuration(base_);
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    tidal_system_info_get(base_, &sys);
    if (o_.device < 0 || o_.device >= sys.device_count) {
        *error = fmt::format("device {} does not exist ({} device(s))", o_.device, sys.device_count);
        return false;
    }
    tidal_device_info_get(base_, o_.device, &device_);
    tidal_ = derive(true, "tidal", error);
    if (!tidal_)
        return false;

    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    out.date = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                           utc.tm_hour, utc.tm_min, utc.tm_sec);
    out.runtime = sys.runtime;
    out.runtime_detail = sys.runtime_detail;
    out.device = device_;
    out.simulated = device_.flags & TIDAL_DEVICE_FLAG_SIMULATED;
    out.quick = o_.quick;
    out.host_threads = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
    out.latency_sizes = o_.latency_sizes;
    out.bandwidth_sizes = o_.bandwidth_sizes;
    out.managed_sizes = o_.managed_sizes;
    out.elastic_size = o_.elastic_size;
    if (out.simulated)
        out.notes.push_back("simulated device: every time is the simulated clock's, i.e. the hardware profile's "
                            "prediction; tidal's own CPU work takes no simulated time, so pool hits read 0");

    size_t kinds = 4 + ((device_.flags & TIDAL_DEVICE_FLAG_FINE_GRAINED) ? 2 : 0);
    ProgressBar bar(kinds * o_.latency_sizes.size() * 3 + o_.bandwidth_sizes.size() * 9 + o_.managed_sizes.size() * 2 + 3 +
                        (o_.elastic_size ? 2 : 0),
                    o_.progress);
    measure_latency(out, bar);
    measure_bandwidth(out, bar);
    measure_managed(out, bar);
    measure_elastic(out, bar);
    measure_scalars(out, bar);
    return true;
}

LatencyPoint BenchRunner::latency_point(tidal_context *ctx, const std::string &backend, tidal_kind kind, uint64_t bytes)
{
    LatencyPoint pt{tidal_kind_name(kind), bytes, backend, std::nullopt, 0, 0, ""};
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = kind;
    d.device = TIDAL_KIND_IS_HOST(kind) ? TIDAL_DEVICE_DEFAULT : o_.device;
    d.tag = "tidal-bench";
    auto pair = [&]() -> tidal_status {
        void *p = nullptr;
        if (tidal_status s = tidal_alloc(ctx, bytes, &d, &p); s != TIDAL_OK)
            return s;
        return tidal_free(ctx, p);
    };
    // A warm-up pair (it fills a pool), then one on the wall clock to size the batches: cheap
    // pairs are timed many at a time so the clock's own cost disappears in the mean. The
    // thread stays on one CPU meanwhile (alloc/free start no threads that would inherit it).
    const tidal_tools::CpuPin pin;
    if (tidal_status s = pair(); s != TIDAL_OK) {
        pt.note = failure_text(s);
        return pt;
    }
    const auto w0 = WallClock::now();
    if (tidal_status s = pair(); s != TIDAL_OK) {
        pt.note = failure_text(s);
        return pt;
    }
    const double target = o_.quick ? 20e-6 : 200e-6;
    const unsigned batch = static_cast<unsigned>(std::clamp(target / std::max(since(w0), 1e-9), 1.0, 1000.0));
    pt.pairs_per_rep = batch;
    pt.seconds = sample(
        [&](double &seconds) {
            const double c0 = clock_of(ctx);
            for (unsigned i = 0; i < batch; ++i)
                if (tidal_status s = pair(); s != TIDAL_OK)
                    return s;
            seconds = (clock_of(ctx) - c0) / batch;
            return TIDAL_OK;
        },
        &pt.reps, &pt.note, false);
    return pt;
}

void BenchRunner::measure_latency(BenchResults &out, ProgressBar &bar)
{
    std::vector<tidal_kind> kinds = {TIDAL_KIND_DEVICE, TIDAL_KIND_MANAGED, TIDAL_KIND_PINNED, TIDAL_KIND_PAGEABLE};
    if (device_.flags & TIDAL_DEVICE_FLAG_FINE_GRAINED) {
        kinds.push_back(TIDAL_KIND_DEVICE_FINE);
        kinds.push_back(TIDAL_KIND_MANAGED_COARSE);
    }
    std::string why_raw, why_vendor;
    ContextHandle raw = derive(false, "tidal", &why_raw);
    ContextHandle vendor = derive(true, "vendor", &why_vendor);
    if (!vendor && starts_with(why_vendor, "TIDAL_ERROR_NOT_SUPPORTED"))
        why_vendor = fmt::format("the {} runtime has no stream-ordered pool (context creation with [pool] backend = "
                                 "\"vendor\" answers TIDAL_ERROR_NOT_SUPPORTED)",
                                 out.runtime);
    out.notes.push_back("latency 'runtime': [pool] enabled = false, so each pair is one runtime allocation and one "
                        "free plus tidal's own work (descriptor checks, policy chain, registry)");
    if (!raw)
        out.notes.push_back("latency 'runtime' not measured: " + why_raw);
    if (!vendor)
        out.notes.push_back("latency 'vendor' not measured: " + why_vendor);
    out.notes.push_back("latency 'vendor' is device memory only: the vendor's stream-ordered pool serves no other kind");
    out.notes.push_back("latency 'tidal' of pageable memory: never pooled, that is the C library's allocator behind "
                        "tidal's bookkeeping");
    for (tidal_kind kind : kinds)
        for (uint64_t bytes : o_.latency_sizes) {
            const std::string label = fmt::format("alloc {} {}", tidal_kind_name(kind), format_bytes(bytes));
            bar.step(label + " runtime");
            out.latency.push_back(raw ? latency_point(raw.get(), "runtime", kind, bytes)
                                      : LatencyPoint{tidal_kind_name(kind), bytes, "runtime", std::nullopt, 0, 0, why_raw});
            bar.step(label + " vendor");
            if (kind != TIDAL_KIND_DEVICE)
                out.latency.push_back({tidal_kind_name(kind), bytes, "vendor", std::nullopt, 0, 0, "device memory only"});
            else if (!vendor)
                out.latency.push_back({tidal_kind_name(kind), bytes, "vendor", std::nullopt, 0, 0, why_vendor});
            else
                out.latency.push_back(latency_point(vendor.get(), "vendor", kind, bytes));
            bar.step(label + " tidal");
            out.latency.push_back(latency_point(tidal_.get(), "tidal", kind, bytes));
            if (raw)
                tidal_pool_trim(raw.get(), nullptr);
            tidal_pool_trim(tidal_.get(), nullptr);
        }
}

void BenchRunner::measure_bandwidth(BenchResults &out, ProgressBar &bar)
{
    tidal_context *ctx = tidal_.get();
    // Both sides on one clock: events around the runtime's copy leave out the call and the
    // synchronisation that a wall-clock tidal_copy pays, which halved tidal's small-copy rate
    // on the H200 (issue 17). The event figure stays as an extra, labelled series.
    out.notes.push_back("bandwidth 'runtime' and 'tidal_copy' are timed the same way: the wall clock (tidal_clock) around "
                        "one synchronous call, the same buffers, median of repeated runs; 'runtime' is the runtime's "
                        "own memcpy through tidal_check_run (TIDAL_CHECK_RUNTIME_COPY: an asynchronous copy on the "
                        "check's stream between two event records, then an event synchronisation, a few microseconds "
                        "more than a plain synchronous memcpy, so at small sizes this column reads a little low), "
                        "'tidal_copy' is tidal_copy (pageable memory staged "
                        "through pinned chunks); 'rt_events' (extra) is the runtime's memcpy of the same runs timed "
                        "between runtime events, which leaves out the call and the synchronisation; d2d counts read "
                        "and write traffic");
    struct Series {
        const char *direction, *memory, *path;
    };
    // Each "runtime" series also yields its "rt_events" point, from the same calls.
    static const Series series[] = {
        {"h2d", "pinned", "runtime"},  {"h2d", "pinned", "tidal_copy"},  {"h2d", "pageable", "runtime"},
        {"h2d", "pageable", "tidal_copy"}, {"d2h", "pinned", "runtime"}, {"d2h", "pinned", "tidal_copy"},
        {"d2h", "pageable", "runtime"}, {"d2h", "pageable", "tidal_copy"}, {"d2d", "device", "runtime"},
    };
    for (uint64_t bytes : o_.bandwidth_sizes) {
        TidalBuffer dev(ctx, TIDAL_KIND_DEVICE, o_.device, bytes), dev2(ctx, TIDAL_KIND_DEVICE, o_.device, bytes);
        TidalBuffer pin(ctx, TIDAL_KIND_PINNED, o_.device, bytes);
        HostMemory page = pageable(bytes, 1);
        std::string missing = !dev.ok() ? dev.error() : !dev2.ok() ? dev2.error() : !pin.ok() ? pin.error() : "";
        if (missing.empty() && !page)
            missing = "malloc failed";
        if (pin.ok())
            std::memset(pin.get(), 2, bytes);
        for (const Series &s : series) {
            bar.step(fmt::format("copy {} {} {} {}", s.direction, s.memory, s.path, format_bytes(bytes)));
            const bool runtime_copy = std::strcmp(s.path, "runtime") == 0;
            BandwidthPoint pt{s.direction, s.memory, s.path, bytes, std::nullopt, 0, missing};
            BandwidthPoint events{s.direction, s.memory, "rt_events", bytes, std::nullopt, 0, missing};
            if (missing.empty()) {
                void *host = std::strcmp(s.memory, "pinned") == 0 ? pin.get() : page.get();
                void *dst = std::strcmp(s.direction, "d2d") == 0 ? dev2.get() : std::strcmp(s.direction, "h2d") == 0 ? dev.get() : host;
                const void *src = std::strcmp(s.direction, "d2h") == 0 || std::strcmp(s.direction, "d2d") == 0 ? dev.get() : host;
                std::vector<double> event_times; // one per call, the warm-up's first
                pt.seconds = sample(
                    [&](double &t) {
                        const double c0 = clock_of(ctx);
                        double between_events = 0;
                        const tidal_status st =
                            runtime_copy ? timed_check(ctx, TIDAL_CHECK_RUNTIME_COPY, o_.device, dst, src, bytes, 1, between_events)
                                         : tidal_copy(ctx, dst, src, bytes);
                        t = clock_of(ctx) - c0;
                        event_times.push_back(between_events);
                        return st;
                    },
                    &pt.reps, &pt.note);
                if (pt.seconds && *pt.seconds <= 0) {
                    pt.seconds.reset();
                    pt.note = "the clock did not advance";
                }
                if (runtime_copy && pt.seconds && event_times.size() > 1) {
                    event_times.erase(event_times.begin());
                    events.reps = static_cast<unsigned>(event_times.size());
                    events.seconds = median(event_times);
                    if (*events.seconds <= 0) {
                        events.seconds.reset();
                        events.note = "the runtime gave no event timing";
                    }
                } else if (runtime_copy) {
                    events.note = pt.note;
                }
            }
            out.bandwidth.push_back(pt);
            if (runtime_copy)
                out.bandwidth.push_back(events);
        }
        tidal_pool_trim(ctx, nullptr); // the next, larger size must not find these chunks held
    }
}

void BenchRunner::measure_managed(BenchResults &out, ProgressBar &bar)
{
    tidal_context *ctx = tidal_.get();
    const bool managed = device_.flags & TIDAL_DEVICE_FLAG_MANAGED;
    const bool migrates = device_.flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT;
    out.notes.push_back("managed: 'demand_paging' runs the touch kernel (one word of every 4 KiB) on host-resident "
                        "pages; 'prefetch_h2d' / 'prefetch_d2h' time tidal_prefetch with tidal_clock; "
                        "'prefetch_then_touch' is the prefetch plus the same kernel");
    if (!managed)
        out.notes.push_back("managed: this device has no managed memory");
    else if (!migrates)
        out.notes.push_back("managed: pages do not migrate on a device fault here (a kernel reads host-resident "
                            "managed memory over the link), so there is no demand paging to measure");
    for (uint64_t bytes : o_.managed_sizes) {
        bar.step(fmt::format("managed demand paging {}", format_bytes(bytes)));
        ManagedPoint paging{"demand_paging", bytes, std::nullopt, 0, ""};
        ManagedPoint h2d{"prefetch_h2d", bytes, std::nullopt, 0, ""};
        ManagedPoint both{"prefetch_then_touch", bytes, std::nullopt, 0, ""};
        ManagedPoint d2h{"prefetch_d2h", bytes, std::nullopt, 0, ""};
        TidalBuffer m(ctx, TIDAL_KIND_MANAGED, o_.device, managed ? bytes : 0);
        std::string missing = !managed ? "no managed memory" : m.ok() ? "" : m.error();
        if (m.ok())
            std::memset(m.get(), 3, bytes); // the host writes it first: its pages start on the host
        auto to_host = [&] { return tidal_prefetch(ctx, m.get(), bytes, TIDAL_DEVICE_HOST); };
        if (!missing.empty() || !migrates) {
            paging.note = missing.empty() ? "no migration on fault" : missing;
        } else {
            paging.seconds = sample(
                [&](double &t) {
                    if (tidal_status s = to_host(); s != TIDAL_OK)
                        return s;
                    return timed_check(ctx, TIDAL_CHECK_TOUCH_READ, o_.device, m.get(), nullptr, bytes, 1, t);
                },
                &paging.reps, &paging.note);
        }
        bar.step(fmt::format("managed prefetch {}", format_bytes(bytes)));
        if (!missing.empty()) {
            h2d.note = both.note = d2h.note = missing;
        } else {
            // One run gives three figures, so the repetitions are collected here.
            std::vector<double> there, touched, back;
            std::string note;
            const auto t0 = WallClock::now();
            for (unsigned rep = 0; rep <= o_.max_reps && (rep <= o_.min_reps || since(t0) < o_.point_budget_s); ++rep) {
                double kernel = 0;
                tidal_status s = to_host();
                const double c0 = clock_of(ctx);
                if (s == TIDAL_OK)
                    s = tidal_prefetch(ctx, m.get(), bytes, o_.device);
                const double c1 = clock_of(ctx);
                if (s == TIDAL_OK)
                    s = timed_check(ctx, TIDAL_CHECK_TOUCH_READ, o_.device, m.get(), nullptr, bytes, 1, kernel);
                const double c2 = clock_of(ctx);
                if (s == TIDAL_OK)
                    s = to_host();
                const double c3 = clock_of(ctx);
                if (s != TIDAL_OK) {
                    note = failure_text(s);
                    break;
                }
                if (rep == 0)
                    continue; // warm-up
                there.push_back(c1 - c0);
                touched.push_back(c1 - c0 + kernel);
                back.push_back(c3 - c2);
            }
            for (auto [pt, v] : {std::pair{&h2d, &there}, std::pair{&both, &touched}, std::pair{&d2h, &back}}) {
                pt->reps = static_cast<unsigned>(v->size());
                if (!note.empty() || v->empty())
                    pt->note = note.empty() ? "no repetition finished" : note;
                else
                    pt->seconds = median(*v);
            }
        }
        for (const ManagedPoint &p : {paging, h2d, both, d2h})
            out.managed.push_back(p);
    }
    tidal_pool_trim(ctx, nullptr);
}

void BenchRunner::measure_elastic(BenchResults &out, ProgressBar &bar)
{
    const uint64_t bytes = o_.elastic_size;
    if (!bytes)
        return;
    tidal_context *ctx = tidal_.get();
    out.notes.push_back("elastic: 'offload' times tidal_offload_range (copy to the host home, unmap, give the memory "
                        "back), 'restore' tidal_restore_range (map, copy back), 'runtime_d2h' / 'runtime_h2d' the "
                        "runtime's memcpy between device and pinned memory of the same bytes; all four with "
                        "tidal_clock around the call, so they compare alike; 'home' is making the host home at the "
                        "first offload, which the timed offloads do not pay");
    ElasticPoint offload{"offload", bytes, std::nullopt, 0, ""}, restore{"restore", bytes, std::nullopt, 0, ""};
    ElasticPoint d2h{"runtime_d2h", bytes, std::nullopt, 0, ""}, h2d{"runtime_h2d", bytes, std::nullopt, 0, ""};
    ElasticPoint home{"home", bytes, std::nullopt, 0, ""};
    bar.step(fmt::format("elastic offload/restore {}", format_bytes(bytes)));
    {
        TidalBuffer e(ctx, TIDAL_KIND_ELASTIC, o_.device, bytes);
        std::vector<double> out_s, in_s;
        std::string note = e.ok() ? "" : e.error();
        const auto t0 = WallClock::now();
        for (unsigned rep = 0; e.ok() && rep <= o_.max_reps && (rep <= o_.min_reps || since(t0) < o_.point_budget_s);
             ++rep) {
            // Restored without TIDAL_RESTORE_READ_ONLY, every chunk counts as written, so each
            // offload copies all of it, as after a phase that wrote the memory.
            tidal_elastic_result r = TIDAL_ELASTIC_RESULT_INIT;
            const double c0 = clock_of(ctx);
            tidal_status s = tidal_offload_range(ctx, e.get(), bytes, 0, nullptr, &r);
            const double c1 = clock_of(ctx);
            if (s == TIDAL_OK)
                s = tidal_restore_range(ctx, e.get(), bytes, 0, nullptr, nullptr);
            const double c2 = clock_of(ctx);
            if (s != TIDAL_OK) {
                note = failure_text(s);
                break;
            }
            if (rep == 0) { // warm-up: it makes the home
                home.seconds = r.home_seconds;
                home.reps = 1;
                continue;
            }
            out_s.push_back(c1 - c0);
            in_s.push_back(c2 - c1);
        }
        for (auto [pt, v] : {std::pair{&offload, &out_s}, std::pair{&restore, &in_s}}) {
            pt->reps = static_cast<unsigned>(v->size());
            if (!note.empty() || v->empty())
                pt->note = note.empty() ? "no repetition finished" : note;
            else
                pt->seconds = median(*v);
        }
        if (!home.seconds)
            home.note = note.empty() ? "no offload finished" : note;
        if (!note.empty())
            out.notes.push_back("elastic not measured: " + note);
    }
    tidal_pool_trim(ctx, nullptr);
    bar.step(fmt::format("elastic baseline copies {}", format_bytes(bytes)));
    {
        TidalBuffer dev(ctx, TIDAL_KIND_DEVICE, o_.device, bytes), pin(ctx, TIDAL_KIND_PINNED, o_.device, bytes);
        const std::string missing = !dev.ok() ? dev.error() : !pin.ok() ? pin.error() : "";
        for (auto [pt, dst, src] : {std::tuple{&d2h, pin.get(), dev.get()}, std::tuple{&h2d, dev.get(), pin.get()}}) {
            if (!missing.empty()) {
                pt->note = missing;
                continue;
            }
            pt->seconds = sample(
                [&, dst = dst, src = src](double &t) {
                    const double c0 = clock_of(ctx);
                    const tidal_status st = run_check(ctx, TIDAL_CHECK_RUNTIME_COPY, o_.device, dst, bytes, 0, nullptr, src);
                    t = clock_of(ctx) - c0;
                    return st;
                },
                &pt->reps, &pt->note);
        }
    }
    tidal_pool_trim(ctx, nullptr);
    for (const ElasticPoint &p : {offload, restore, d2h, h2d, home})
        out.elastic.push_back(p);
}

void BenchRunner::measure_scalars(BenchResults &out, ProgressBar &bar)
{
    tidal_context *ctx = tidal_.get();
    bar.step("kernel launch");
    {
        constexpr uint32_t kLaunches = 100;
        ScalarPoint pt{"kernel_launch", std::nullopt, "s", 0,
                       fmt::format("a kernel that does nothing (SPIN, 0 ns), {} back to back, timed with events", kLaunches)};
        unsigned reps = 0;
        std::string note;
        if (auto t = sample([&](double &s) { return timed_check(ctx, TIDAL_CHECK_SPIN, o_.device, nullptr, nullptr, 0, kLaunches, s); },
                            &reps, &note))
            pt.value = *t / kLaunches;
        else
            pt.detail = note;
        out.scalars.push_back(pt);
    }
    // Kernels read pinned memory over the link: the zero-copy rate, at the largest copy size.
    const uint64_t big = o_.bandwidth_sizes.empty() ? 0 : o_.bandwidth_sizes.back();
    bar.step("zero-copy read");
    {
        ScalarPoint pt{"zero_copy", std::nullopt, "GB/s", big,
                       fmt::format("the copy kernel reading pinned host memory over the link into device memory, {}",
                                   format_bytes(big))};
        TidalBuffer dev(ctx, TIDAL_KIND_DEVICE, o_.device, big), pin(ctx, TIDAL_KIND_PINNED, o_.device, big);
        unsigned reps = 0;
        std::string note;
        if (!dev.ok() || !pin.ok())
            pt.detail = !dev.ok() ? dev.error() : pin.error();
        else if (auto t = sample([&](double &s) { return timed_check(ctx, TIDAL_CHECK_COPY, o_.device, dev.get(), pin.get(), big, 1, s); },
                                 &reps, &note); t && *t > 0)
            pt.value = static_cast<double>(big) / *t / 1e9;
        else
            pt.detail = note.empty() ? "the runtime gave no timing" : note;
        out.scalars.push_back(pt);
    }
    tidal_pool_trim(ctx, nullptr);
    // The host's own copy rate bounds staged pageable copies; the simulated device models it too.
    bar.step("host memcpy");
    {
        ScalarPoint pt{"host_memcpy", std::nullopt, "GB/s", big,
                       fmt::format("memcpy between resident {} buffers, {} host threads, wall clock", format_bytes(big),
                                   out.host_threads)};
        HostMemory a = pageable(big, 4), b = pageable(big, 5);
        unsigned reps = 0;
        std::string note;
        if (!a || !b)
            pt.detail = "malloc failed";
        else if (auto t = sample(
                     [&](double &s) {
                         const auto t0 = WallClock::now();
                         parallel_memcpy(b.get(), a.get(), big, out.host_threads);
                         s = since(t0);
                         return TIDAL_OK;
                     },
                     &reps, &note))
            pt.value = static_cast<double>(big) / *t / 1e9;
        out.scalars.push_back(pt);
    }
}

} // namespace tidal_tool
