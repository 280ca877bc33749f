// migration-scenarios: the managed-memory migration benchmarks, each against its baselines in
// the same run, median of --reps repetitions after --warmup unrecorded ones. Public API only,
// so the one program measures a GPU and, on the simulated device (where tidal_clock is the
// simulated clock), predicts the same run from a hardware profile.
//
// The scenarios, by name (--scenario NAME; their old numbers 1-3 are accepted too, and the JSON
// keeps the number beside the name so --compare still reads runs recorded before the names):
//  1. stream: --size bytes of host-initialised managed memory through a read kernel:
//     demand paging / one whole-range prefetch / pinned copy + kernel (baselines) against
//     tidal_declare (one declaration; and per-chunk declarations with lookahead), plus sweeps
//     of [migration] chunk_size and streams.
//  2. out-of-core: a --dataset managed buffer read in --chunk pieces for --epochs epochs under
//     a --budget, against a double-buffered copy loop from pinned memory into device memory;
//     then the same loop on elastic memory (chunks of --elastic-chunk, default --chunk): read-only against that loop,
//     read-write against a double-buffered loop that also copies each chunk back out, and with
//     a spin kernel as long as a chunk's transfer against max(transfer, compute).
//  3. overlap: a compute kernel of known length (TIDAL_CHECK_SPIN) per chunk; the pipeline's
//     time against max(transfer alone, compute alone).
//  4. prediction, with --compare FILE (the --json of another run, e.g. the H200's): per-variant and
//     per-scenario error of this run's medians against it (run this one on the simulated
//     device with the h200 profile).
//
//   migration-scenarios [--runtime auto|sim|cuda|hip] [--profile h200] [--scenario stream|out-of-core|overlap|all]
//                       [--size 4GiB] [--dataset 12GiB] [--budget 4GiB] [--chunk 64MiB]
//                       [--epochs 3] [--reps 5] [--warmup 1] [--streams N] [--lookahead-hold-us US] [--worker-spin-us US] [--compute-ns NS]
//                       [--policies xnack,lru|none] [--no-sweeps] [--elastic-only] [--elastic-chunk SIZE] [--quick]
//                       [--timeline FILE]
//                       [--json FILE] [--compare FILE]
//
// --timeline FILE: the elastic overlapped row's last repetition, step by step: host
// microseconds in the plain declaration, the lookahead, the read kernel (which waits for the
// chunk's copy in) and the spin kernel (CSV), to see where a step's time goes. The stream
// scenario's per-chunk lookahead row writes the same for its last repetition to FILE.stream
// (its work is the read kernel alone: the spin column is 0).
//
// --quick: 64 MiB / 192 MiB dataset / 64 MiB budget / 16 MiB chunks, 2 epochs, 3 reps: seconds
// on the simulated device (whose memory is real host memory), for CI. The defaults need about
// 12 GiB of host memory twice over (pinned baseline, then the managed dataset) and, on an H200,
// several minutes; --scenario and --no-sweeps split or shorten a run.
//
// Every repetition starts from host-resident data (tidal_prefetch to the host, then a host
// memset); that reset is not timed. Times come from tidal_clock after the work has been
// synchronised. Exit 0 whether or not a target is met; 1 on an API error; 2 on bad usage.
#include <tidal/tidal.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_support.h"

namespace {

// Host times of one pipeline step (--timeline), microseconds: its start, after the plain
// declaration, after the lookahead, after the read kernel, after its work.
struct StepTimes {
    double start = 0, declared = 0, looked_ahead = 0, read = 0, end = 0;
};

double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// --timeline's CSV, one line per step (microseconds), then the medians on stderr.
void write_timeline(const std::string &path, const std::vector<StepTimes> &steps)
{
    std::FILE *f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "migration-scenarios: cannot write %s\n", path.c_str());
        std::exit(1);
    }
    std::fprintf(f, "step,declare_us,lookahead_us,read_kernel_us,spin_kernel_us,step_us\n");
    std::vector<double> cols[5];
    for (size_t g = 0; g < steps.size(); ++g) {
        const StepTimes &t = steps[g];
        const double next = g + 1 < steps.size() ? steps[g + 1].start : t.end;
        const double v[5] = {t.declared - t.start, t.looked_ahead - t.declared, t.read - t.looked_ahead, t.end - t.read,
                             next - t.start};
        std::fprintf(f, "%zu,%.1f,%.1f,%.1f,%.1f,%.1f\n", g, v[0], v[1], v[2], v[3], v[4]);
        for (int c = 0; c < 5; ++c)
            cols[c].push_back(v[c]);
    }
    std::fclose(f);
    std::fprintf(stderr, "timeline (median us per step): declare %.1f, lookahead %.1f, read kernel %.1f, spin kernel %.1f, step %.1f\n",
                 tidal_bench::median(cols[0]), tidal_bench::median(cols[1]), tidal_bench::median(cols[2]),
                 tidal_bench::median(cols[3]), tidal_bench::median(cols[4]));
}

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t GiB = 1ull << 30;
// The cap: the card itself is never oversubscribed, so no managed buffer, and no two
// live at once, may exceed it.
constexpr uint64_t kManagedCap = 16 * GiB;
// [migration] chunk_size must be a multiple of this (the configuration refuses anything else).
constexpr uint64_t kChunkGrain = 64 * 1024;
// Compute per chunk defaults to what the chunk takes at the whole-range prefetch rate measured
// on the H200, so compute ~ transfer and the overlap is what is being tested. A fixed figure,
// not a measured one, so a GPU run and its simulated prediction spin for the same time.
constexpr double kDefaultComputeRate = 45e9;

[[noreturn]] void die(tidal_status s, const char *what)
{
    std::fprintf(stderr, "migration-scenarios: %s: %s: %s\n", what, tidal_status_name(s), tidal_last_error());
    std::exit(1);
}

void ok(tidal_status s, const char *what)
{
    if (s != TIDAL_OK)
        die(s, what);
}

// Scenario 2 must survive a refused declaration to count it: only memory-class failures are
// counted; anything else would leave later numbers meaningless, so it still ends the run.
void counted(tidal_status s, const char *what, uint64_t *failures)
{
    if (s == TIDAL_OK)
        return;
    const bool memory = s == TIDAL_ERROR_OUT_OF_MEMORY || s == TIDAL_ERROR_BUDGET_EXCEEDED;
    if (!failures || !memory)
        die(s, what);
    if (*failures == 0)
        std::fprintf(stderr, "migration-scenarios: %s: %s: %s (counted; continuing)\n", what, tidal_status_name(s),
                     tidal_last_error());
    ++*failures;
}

std::optional<uint64_t> parse_size(const std::string &s)
{
    char *end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || v <= 0)
        return std::nullopt;
    const std::string unit(end);
    if (unit == "KiB") v *= 1024.0;
    else if (unit == "MiB") v *= double(MiB);
    else if (unit == "GiB") v *= double(GiB);
    else if (!unit.empty() && unit != "B")
        return std::nullopt;
    return static_cast<uint64_t>(v);
}

std::string size_name(uint64_t n)
{
    char b[32];
    if (n % GiB == 0) std::snprintf(b, sizeof b, "%" PRIu64 " GiB", n / GiB);
    else if (n % MiB == 0) std::snprintf(b, sizeof b, "%" PRIu64 " MiB", n / MiB);
    else std::snprintf(b, sizeof b, "%" PRIu64 " B", n);
    return b;
}

std::string json_escape(const std::string &s)
{
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') { o += '\\'; o += c; }
        else if (static_cast<unsigned char>(c) < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
        else o += c;
    }
    return o;
}

// The text after `"key": ` in one line of the JSON this program writes (no nesting to skip),
// or npos. A plain search instead of <regex>: GCC 12's <regex> trips -Wmaybe-uninitialized in
// the sanitizer build.
size_t json_value_at(const std::string &line, const char *key, size_t from = 0)
{
    const std::string needle = std::string("\"") + key + "\": ";
    const size_t at = line.find(needle, from);
    return at == std::string::npos ? at : at + needle.size();
}

// A string value (unescaped quotes end it, as in the names written here), or nullopt.
std::optional<std::string> json_string(const std::string &line, const char *key)
{
    size_t at = json_value_at(line, key);
    if (at == std::string::npos || at >= line.size() || line[at] != '"')
        return std::nullopt;
    const size_t end = line.find('"', ++at);
    if (end == std::string::npos)
        return std::nullopt;
    return line.substr(at, end - at);
}

// A number value, or nullopt.
std::optional<double> json_number(const std::string &line, const char *key)
{
    const size_t at = json_value_at(line, key);
    if (at == std::string::npos)
        return std::nullopt;
    const char *begin = line.c_str() + at;
    char *end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin)
        return std::nullopt;
    return v;
}

std::string join(const std::vector<std::string> &v, const char *sep)
{
    std::string o;
    for (size_t i = 0; i < v.size(); ++i)
        o += (i ? sep : "") + v[i];
    return o;
}

// Host writes are what makes data "host-initialised": on a GPU they also invalidate any
// read-mostly duplicate the device still holds. One thread writes ~10 GB/s at best, which for
// 12 GiB per repetition would dominate the run's wall time.
void host_fill(void *p, int value, uint64_t n)
{
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
    const uint64_t per = (n + threads - 1) / threads;
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) {
        const uint64_t b = std::min<uint64_t>(n, t * per), e = std::min<uint64_t>(n, b + per);
        if (e > b)
            ts.emplace_back([=] { std::memset(static_cast<char *>(p) + b, value, e - b); });
    }
    for (auto &t : ts)
        t.join();
}

struct Options {
    std::string runtime = "auto";
    std::string profile = "h200";
    uint64_t size = 4 * GiB;
    uint64_t dataset = 12 * GiB;
    uint64_t budget = 4 * GiB;
    uint64_t chunk = 64 * MiB;
    int epochs = 3;
    int reps = 5;
    int warmup = 1;
    int streams = 0;         // 0: the library's default (the key is left out)
    int lookahead_hold_us = -1; // -1: the library's default (the key is left out)
    int worker_spin_us = -1;    // -1: the library's default (the key is left out)
    uint64_t compute_ns = 0; // 0: chunk at kDefaultComputeRate
    std::vector<std::string> policies = {"xnack", "lru"};
    int scenario = 0; // 0 = all; otherwise an index of kScenarioNames
    bool sweeps = true;
    bool elastic_only = false; // out-of-core: the elastic rows and their baselines, no managed rows
    uint64_t elastic_chunk = 0; // out-of-core's elastic rows: [elastic] chunk_size; 0: --chunk
    std::string timeline_path;  // out-of-core's elastic overlapped row: host time per step, last repetition
    std::string json_path, compare_path;
};

// Each scenario's name, indexed by its number (what the JSON and --compare use).
constexpr const char *kScenarioNames[] = {"all", "stream", "out-of-core", "overlap", "prediction"};
constexpr int kStream = 1, kOutOfCore = 2, kOverlap = 3, kPrediction = 4;

// The migration settings one tidal context is made with.
struct Migration {
    uint64_t chunk_size = 0; // 0: key left out
    int streams = 0;         // 0: key left out
    bool parallel_eviction = false;
    uint64_t elastic_chunk = 0; // [elastic] chunk_size; 0: key left out
};

// Per timed repetition, what the scheduler reported doing on device 0 (deltas of
// tidal_migration_stats around the timed work, summed over repetitions).
struct Moves {
    uint64_t migrated_bytes = 0, migration_calls = 0, resident_hits = 0, evictions = 0, evicted_bytes = 0,
             dropped_bytes = 0, budget_refusals = 0, declared_ranges = 0, noops = 0;
    uint64_t resident_high_water = 0, budget = 0;
};

struct Result {
    int scenario = 0;
    std::string name;
    std::string role; // baseline | tidal | part (overlap) | sweep | extra
    uint64_t bytes = 0; // bytes the GB/s figure counts
    std::vector<double> seconds;
    Moves moves; // summed over the timed repetitions
    uint64_t failures = 0; // memory-class failures over every repetition, warm-up included
    Migration migration;
    std::string policies;
    std::string note;

    double median() const
    {
        std::vector<double> v = seconds;
        std::sort(v.begin(), v.end());
        const size_t n = v.size();
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    }
    double min() const { return *std::min_element(seconds.begin(), seconds.end()); }
    double max() const { return *std::max_element(seconds.begin(), seconds.end()); }
    double gbps() const { return double(bytes) / median() / 1e9; }
    bool counts_for_prediction() const { return role != "sweep" && role != "extra"; }
};

struct Target {
    int scenario;
    std::string what;
    double value;
    double threshold;
    bool at_least; // value >= threshold is met; otherwise value <= threshold is
    bool met() const { return at_least ? value >= threshold : value <= threshold; }
};

struct Ratio {
    int scenario;
    std::string what;
    double value;
};

class Bench {
public:
    explicit Bench(Options o) : o_(std::move(o)) {}

    int run();

private:
    Options o_;
    std::deque<Result> results_; // a deque: measure() hands out references that must outlive later rows
    std::vector<Ratio> ratios_;
    std::vector<Target> targets_;
    std::optional<bool> policies_load_; // learnt from the first tidal context
    std::string policies_note_;
    tidal_system_info sys_ = TIDAL_SYSTEM_INFO_INIT;
    tidal_device_info dev_ = TIDAL_DEVICE_INFO_INIT;

    // ---- contexts --------------------------------------------------------------------------
    std::string toml(const Migration &m, const std::vector<std::string> &policies) const
    {
        std::string t = "runtime = \"" + o_.runtime + "\"\n";
        if (!policies.empty()) {
            t += "policies = [";
            for (size_t i = 0; i < policies.size(); ++i)
                t += (i ? ", \"" : "\"") + policies[i] + "\"";
            t += "]\n";
        }
        if (o_.runtime == "sim")
            t += "[sim]\nprofile = \"" + o_.profile + "\"\n";
        if (m.chunk_size || m.streams || m.parallel_eviction || o_.lookahead_hold_us >= 0 || o_.worker_spin_us >= 0) {
            t += "[migration]\n";
            if (o_.lookahead_hold_us >= 0)
                t += "lookahead_hold_us = " + std::to_string(o_.lookahead_hold_us) + "\n";
            if (o_.worker_spin_us >= 0)
                t += "worker_spin_us = " + std::to_string(o_.worker_spin_us) + "\n";
            if (m.chunk_size)
                t += "chunk_size = " + std::to_string(m.chunk_size) + "\n";
            if (m.streams)
                t += "streams = " + std::to_string(m.streams) + "\n";
            if (m.parallel_eviction)
                t += "parallel_eviction = true\n";
        }
        if (m.elastic_chunk)
            t += "[elastic]\nchunk_size = " + std::to_string(m.elastic_chunk) + "\n";
        return t;
    }

    tidal_context *open_plain(const Migration &m) const
    {
        tidal_context *ctx = nullptr;
        ok(tidal_context_create_from_string(toml(m, {}).c_str(), &ctx), "context");
        return ctx;
    }

    // A tidal context with the configured policies when they load; the plugins are new, so a
    // build without them still runs, with the core's defaults and a note saying so.
    tidal_context *open_tidal(const Migration &m, std::string *policies_used)
    {
        policies_used->clear();
        if (!o_.policies.empty() && policies_load_.value_or(true)) {
            tidal_context *ctx = nullptr;
            const tidal_status s = tidal_context_create_from_string(toml(m, o_.policies).c_str(), &ctx);
            if (s == TIDAL_OK) {
                policies_load_ = true;
                *policies_used = join(o_.policies, ",");
                return ctx;
            }
            if (policies_load_.has_value())
                die(s, "context with policies"); // they loaded before: this is a real error
            policies_load_ = false;
            policies_note_ = std::string("policies [") + join(o_.policies, ", ") + "] did not load (" +
                             tidal_status_name(s) + ": " + tidal_last_error() + "); tidal rows use the core's defaults";
            std::printf("note: %s\n", policies_note_.c_str());
        }
        return open_plain(m);
    }

    // ---- memory ----------------------------------------------------------------------------
    static void *alloc(tidal_context *ctx, uint64_t n, tidal_kind kind, uint32_t hints, const char *tag)
    {
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = kind;
        d.device = kind == TIDAL_KIND_PINNED ? TIDAL_DEVICE_DEFAULT : 0;
        d.hints = hints;
        d.tag = tag;
        void *p = nullptr;
        ok(tidal_alloc(ctx, static_cast<size_t>(n), &d, &p), tag);
        return p;
    }

    // Every repetition starts host-resident. The prefetch keeps tidal's bookkeeping and the
    // runtime in agreement (a host write alone would leave tidal believing the range is still
    // on the device, and the next declaration would move nothing); the write then drops any
    // read-mostly duplicate a prefetch to the host leaves on the device.
    static void to_host(tidal_context *ctx, void *p, uint64_t n, int rep)
    {
        ok(tidal_prefetch(ctx, p, static_cast<size_t>(n), TIDAL_DEVICE_HOST), "prefetch to host");
        host_fill(p, 1 + (rep & 0x7f), n);
    }

    // ---- work ------------------------------------------------------------------------------
    // `write`: the kernel writes what it reads (TOUCH_WRITE), the read-write loops.
    static void touch(tidal_context *ctx, const void *p, uint64_t n, void *stream, uint64_t *failures = nullptr,
                      bool write = false)
    {
        tidal_check c = TIDAL_CHECK_INIT;
        c.kind = write ? TIDAL_CHECK_TOUCH_WRITE : TIDAL_CHECK_TOUCH_READ;
        c.device = 0;
        c.target = const_cast<void *>(p);
        c.size = static_cast<size_t>(n);
        c.stream = stream;
        counted(tidal_check_run(ctx, &c), "read kernel", failures);
    }

    // SPIN touches no memory; its operand is a small device buffer only because every check
    // names one. What it waits for is the stream's order: after a declaration, the migration.
    static void spin(tidal_context *ctx, void *scratch, uint64_t ns, void *stream)
    {
        tidal_check c = TIDAL_CHECK_INIT;
        c.kind = TIDAL_CHECK_SPIN;
        c.device = 0;
        c.target = scratch;
        c.size = 8;
        c.seed = ns;
        c.stream = stream;
        ok(tidal_check_run(ctx, &c), "spin kernel");
    }

    static tidal_access access(const void *p, uint64_t n, uint32_t mode = TIDAL_ACCESS_READ)
    {
        tidal_access a = TIDAL_ACCESS_INIT;
        a.ptr = p;
        a.size = static_cast<size_t>(n);
        a.device = 0;
        a.mode = mode;
        return a;
    }

    // Ends the stream's last phase so nothing stays protected into the next repetition's reset.
    static void end_phase(tidal_context *ctx, void *stream)
    {
        const tidal_access none = TIDAL_ACCESS_INIT; // count 0: a valid pointer all the same
        ok(tidal_declare(ctx, stream, &none, 0, 0), "end phase");
        ok(tidal_stream_synchronize(ctx, stream), "synchronize");
    }

    // Declare chunk i for the work about to run and chunk i+1 as lookahead, so i+1 migrates
    // while i is worked on; `passes` runs over the range back to back (the lookahead of a
    // pass's last chunk is the next pass's first, so epochs pipeline too). `times`: each step's
    // host times (the work sets `read` of the last one).
    static void pipeline(tidal_context *ctx, void *stream, void *base, uint64_t total, uint64_t chunk, int passes,
                         const std::function<void(char *, uint64_t)> &work, uint64_t *failures = nullptr,
                         uint32_t mode = TIDAL_ACCESS_READ, std::vector<StepTimes> *times = nullptr)
    {
        char *b = static_cast<char *>(base);
        const uint64_t count = (total + chunk - 1) / chunk;
        const uint64_t steps = count * static_cast<uint64_t>(passes);
        auto len = [&](uint64_t i) { return std::min(chunk, total - i * chunk); };
        if (times)
            times->clear();
        for (uint64_t g = 0; g < steps; ++g) {
            const uint64_t i = g % count;
            StepTimes t;
            if (times)
                t.start = now_us();
            const tidal_access now = access(b + i * chunk, len(i), mode);
            counted(tidal_declare(ctx, stream, &now, 1, 0), "declare", failures);
            if (times)
                t.declared = now_us();
            if (g + 1 < steps) {
                const uint64_t j = (g + 1) % count;
                const tidal_access next = access(b + j * chunk, len(j), mode);
                counted(tidal_declare(ctx, stream, &next, 1, TIDAL_DECLARE_LOOKAHEAD), "declare lookahead", failures);
            }
            if (times) {
                t.looked_ahead = now_us();
                times->push_back(t);
            }
            work(b + i * chunk, len(i));
            if (times)
                times->back().end = now_us();
        }
        end_phase(ctx, stream);
    }

    // ---- measurement -----------------------------------------------------------------------
    static double clock(tidal_context *ctx)
    {
        double s = 0;
        ok(tidal_clock(ctx, &s), "tidal_clock");
        return s;
    }

    static tidal_migration_stats stats(tidal_context *ctx)
    {
        tidal_migration_stats m = TIDAL_MIGRATION_STATS_INIT;
        ok(tidal_migration_stats_get(ctx, 0, &m), "migration stats");
        return m;
    }

    static void add(Moves &m, const tidal_migration_stats &a, const tidal_migration_stats &b)
    {
        m.migrated_bytes += b.migrated_bytes - a.migrated_bytes;
        m.migration_calls += b.migration_calls - a.migration_calls;
        m.resident_hits += b.resident_hits - a.resident_hits;
        m.evictions += b.evictions - a.evictions;
        m.evicted_bytes += b.evicted_bytes - a.evicted_bytes;
        m.dropped_bytes += b.dropped_bytes - a.dropped_bytes;
        m.budget_refusals += b.budget_refusals - a.budget_refusals;
        m.declared_ranges += b.declared_ranges - a.declared_ranges;
        m.noops += b.noops - a.noops;
        m.resident_high_water = std::max(m.resident_high_water, b.resident_high_water);
        m.budget = b.budget;
    }

    // `body` must return only once everything it issued has finished (the check kernels and
    // end_phase synchronise), so the host clock on a GPU reads the end of the work.
    Result &measure(Result r, tidal_context *ctx, const std::function<void(int)> &prepare,
                    const std::function<void(uint64_t *)> &body)
    {
        std::fprintf(stderr, "%s: %s...\n", kScenarioNames[r.scenario], r.name.c_str());
        for (int rep = -o_.warmup; rep < o_.reps; ++rep) {
            if (prepare)
                prepare(rep);
            const tidal_migration_stats before = stats(ctx);
            const double t0 = clock(ctx);
            body(&r.failures);
            const double t1 = clock(ctx);
            if (rep < 0)
                continue;
            r.seconds.push_back(t1 - t0);
            add(r.moves, before, stats(ctx));
        }
        results_.push_back(std::move(r));
        return results_.back();
    }

    static Result row(int scenario, std::string name, std::string role, uint64_t bytes, Migration m = {},
                      std::string policies = {})
    {
        Result r;
        r.scenario = scenario;
        r.name = std::move(name);
        r.role = std::move(role);
        r.bytes = bytes;
        r.migration = m;
        r.policies = std::move(policies);
        return r;
    }

    const Result *find(int scenario, const std::string &name) const
    {
        for (const Result &r : results_)
            if (r.scenario == scenario && r.name == name)
                return &r;
        return nullptr;
    }

    // ---- scenarios -------------------------------------------------------------------------
    void stream_through();
    void stream_through_tidal(const std::string &whole, const std::string &chunked, const std::string &role,
                              Migration m, uint64_t app_chunk);
    void out_of_core();
    void out_of_core_elastic();
    void double_buffered(const std::string &name, bool copy_out);
    void overlap();
    void compare();

    void print() const;
    void write_json() const;
    std::vector<std::pair<Result, double>> prediction_; // this run's row, error vs --compare
    std::map<int, double> prediction_worst_;
    std::string compare_device_;
};

// In one context: `whole` (when named) declares the whole range at once and tidal chunks it per
// chunk_size; `chunked` (when named) declares per app_chunk with lookahead.
void Bench::stream_through_tidal(const std::string &whole, const std::string &chunked, const std::string &role,
                                 Migration m, uint64_t app_chunk)
{
    const uint64_t n = o_.size;
    std::string pol;
    tidal_context *ctx = open_tidal(m, &pol);
    void *stream = nullptr;
    ok(tidal_stream_create(ctx, 0, &stream), "stream");
    void *buf = alloc(ctx, n, TIDAL_KIND_MANAGED, 0, "s1-managed");
    auto reset = [&](int rep) { to_host(ctx, buf, n, rep); };
    if (!whole.empty())
        measure(row(kStream, whole, role, n, m, pol), ctx, reset, [&](uint64_t *) {
            const tidal_access a = access(buf, n);
            ok(tidal_declare(ctx, stream, &a, 1, 0), "declare");
            touch(ctx, buf, n, stream);
            end_phase(ctx, stream);
        });
    std::vector<StepTimes> times; // --timeline: the last repetition's
    const bool timed = !o_.timeline_path.empty();
    if (!chunked.empty())
        measure(row(kStream, chunked, role, n, m, pol), ctx, reset, [&](uint64_t *) {
            pipeline(
                ctx, stream, buf, n, app_chunk, 1,
                [&](char *p, uint64_t len) {
                    touch(ctx, p, len, stream);
                    if (timed)
                        times.back().read = now_us();
                },
                nullptr, TIDAL_ACCESS_READ, timed ? &times : nullptr);
        });
    if (timed && !times.empty())
        write_timeline(o_.timeline_path + ".stream", times);
    ok(tidal_free(ctx, buf), "free");
    ok(tidal_stream_destroy(ctx, stream), "stream destroy");
    ok(tidal_context_destroy(ctx), "destroy");
}

void Bench::stream_through()
{
    const uint64_t n = o_.size;
    {
        // Baselines. Chunk size = the whole range, so tidal_prefetch is one runtime call, as
        // the careful hand-written program makes (its migration_calls column shows it).
        const Migration whole{(n + kChunkGrain - 1) / kChunkGrain * kChunkGrain, 0};
        tidal_context *ctx = open_plain(whole);
        void *buf = alloc(ctx, n, TIDAL_KIND_MANAGED, 0, "s1-managed");
        auto reset = [&](int rep) { to_host(ctx, buf, n, rep); };
        measure(row(kStream, "demand paging", "baseline", n, whole), ctx, reset,
                [&](uint64_t *) { touch(ctx, buf, n, nullptr); });
        measure(row(kStream, "prefetch whole range + kernel", "baseline", n, whole), ctx, reset, [&](uint64_t *) {
            ok(tidal_prefetch(ctx, buf, static_cast<size_t>(n), 0), "prefetch");
            touch(ctx, buf, n, nullptr);
        });
        ok(tidal_free(ctx, buf), "free");
        void *pinned = alloc(ctx, n, TIDAL_KIND_PINNED, 0, "s1-pinned");
        void *dev = alloc(ctx, n, TIDAL_KIND_DEVICE, 0, "s1-device");
        host_fill(pinned, 1, n);
        measure(row(kStream, "pinned copy + kernel", "baseline", n, whole), ctx, nullptr, [&](uint64_t *) {
            ok(tidal_copy(ctx, dev, pinned, static_cast<size_t>(n)), "copy");
            touch(ctx, dev, n, nullptr);
        });
        ok(tidal_free(ctx, pinned), "free");
        ok(tidal_free(ctx, dev), "free");
        ok(tidal_context_destroy(ctx), "destroy");
    }
    const Migration primary{o_.chunk, o_.streams};
    const uint64_t app_chunk = std::min(o_.chunk, n);
    stream_through_tidal("tidal: declare whole range", "tidal: declare per " + size_name(app_chunk) + " + lookahead",
                         "tidal", primary, app_chunk);

    if (o_.sweeps) {
        const std::string default_streams = o_.streams ? std::to_string(o_.streams) : std::string("default");
        // What lifts the migration rate itself: tidal's own chunking and stream count under
        // one whole-range declaration...
        std::vector<uint64_t> chunks;
        for (uint64_t c : {16 * MiB, 64 * MiB, 256 * MiB})
            if (c < n)
                chunks.push_back(c);
        chunks.push_back((n + kChunkGrain - 1) / kChunkGrain * kChunkGrain);
        for (uint64_t c : chunks)
            for (int s : {1, 2, 4})
                stream_through_tidal("sweep: declare whole, chunk_size " +
                                         (c >= n ? std::string("whole") : size_name(c)) + ", streams " + std::to_string(s),
                                     "", "sweep", Migration{c, s}, c);
        // ...and the application's own chunk size under per-chunk declarations.
        for (uint64_t c : {16 * MiB, 64 * MiB, 256 * MiB})
            if (c < n && c != app_chunk)
                stream_through_tidal("", "sweep: declare per " + size_name(c) + " + lookahead, streams " + default_streams,
                                     "sweep", Migration{c, o_.streams}, c);
    }

    const Result *dp = find(kStream, "demand paging"), *pf = find(kStream, "prefetch whole range + kernel"),
                 *pc = find(kStream, "pinned copy + kernel");
    for (const Result &r : results_) {
        if (r.scenario != kStream || r.role != "tidal")
            continue;
        const double vs_dp = dp->median() / r.median(), vs_pf = pf->median() / r.median(),
                     vs_pc = pc->median() / r.median();
        ratios_.push_back({kStream, r.name + " / demand paging", vs_dp});
        ratios_.push_back({kStream, r.name + " / prefetch whole range", vs_pf});
        ratios_.push_back({kStream, r.name + " / pinned copy", vs_pc});
        targets_.push_back({kStream, r.name + ": >= 6x demand paging", vs_dp, 6.0, true});
        targets_.push_back({kStream, r.name + ": >= 0.95x whole-range prefetch", vs_pf, 0.95, true});
    }
    ratios_.push_back({kStream, "prefetch whole range / demand paging", dp->median() / pf->median()});
    ratios_.push_back({kStream, "prefetch whole range / pinned copy", pc->median() / pf->median()});
}

// The hand-written double-buffered loop, a baseline of scenario 2. check_run waits for its
// stream, so the overlap comes from issuing chunk g+1's copy on the other stream before kernel
// g. `copy_out`: the kernel writes its chunk, which is copied back to pinned memory after it;
// chunk g+1's copy in follows chunk g-1's copy out of the same buffer on the same stream.
void Bench::double_buffered(const std::string &name, bool copy_out)
{
    const uint64_t n = o_.dataset, chunk = o_.chunk;
    const uint64_t count = (n + chunk - 1) / chunk;
    const uint64_t steps = count * static_cast<uint64_t>(o_.epochs);
    auto len = [&](uint64_t i) { return std::min(chunk, n - i * chunk); };
    tidal_context *ctx = open_plain({});
    void *src = alloc(ctx, n, TIDAL_KIND_PINNED, 0, "s2-pinned");
    void *dev[2] = {alloc(ctx, chunk, TIDAL_KIND_DEVICE, 0, "s2-dev0"), alloc(ctx, chunk, TIDAL_KIND_DEVICE, 0, "s2-dev1")};
    void *st[2] = {nullptr, nullptr};
    ok(tidal_stream_create(ctx, 0, &st[0]), "stream");
    ok(tidal_stream_create(ctx, 0, &st[1]), "stream");
    host_fill(src, 1, n);
    char *s = static_cast<char *>(src);
    measure(row(kOutOfCore, name, "baseline", n * static_cast<uint64_t>(o_.epochs)), ctx, nullptr, [&](uint64_t *) {
        ok(tidal_copy_async(ctx, dev[0], s, static_cast<size_t>(len(0)), st[0]), "copy_async");
        for (uint64_t g = 0; g < steps; ++g) {
            const uint64_t i = g % count;
            if (g + 1 < steps) {
                const uint64_t j = (g + 1) % count;
                ok(tidal_copy_async(ctx, dev[(g + 1) % 2], s + j * chunk, static_cast<size_t>(len(j)), st[(g + 1) % 2]),
                   "copy_async");
            }
            touch(ctx, dev[g % 2], len(i), st[g % 2], nullptr, copy_out);
            if (copy_out)
                ok(tidal_copy_async(ctx, s + i * chunk, dev[g % 2], static_cast<size_t>(len(i)), st[g % 2]), "copy_async");
        }
        ok(tidal_stream_synchronize(ctx, st[0]), "synchronize");
        ok(tidal_stream_synchronize(ctx, st[1]), "synchronize");
    });
    ok(tidal_stream_destroy(ctx, st[0]), "stream destroy");
    ok(tidal_stream_destroy(ctx, st[1]), "stream destroy");
    ok(tidal_free(ctx, dev[0]), "free");
    ok(tidal_free(ctx, dev[1]), "free");
    ok(tidal_free(ctx, src), "free");
    ok(tidal_context_destroy(ctx), "destroy");
}

void Bench::out_of_core()
{
    const uint64_t n = o_.dataset, chunk = o_.chunk;
    const uint64_t moved = n * static_cast<uint64_t>(o_.epochs);
    double_buffered("double-buffered pinned copy + kernel", false);
    // tidal: the read-mostly hint is what lets an eviction drop the device copy instead of
    // copying it back; the row without it (an extra) shows what that saves.
    struct Variant {
        std::string name;
        uint32_t hints;
        bool parallel_eviction;
    };
    std::vector<Variant> variants = {{"tidal: declare + lookahead, read-mostly", TIDAL_HINT_READ_MOSTLY, false},
                                     {"tidal: declare + lookahead, read-mostly, parallel eviction",
                                      TIDAL_HINT_READ_MOSTLY, true}};
    if (o_.sweeps)
        variants.push_back({"tidal: declare + lookahead, no hint", 0u, false});
    if (o_.elastic_only)
        variants.clear();
    for (const auto &[name, hints, parallel] : variants) {
        const Migration m{chunk, o_.streams, parallel};
        std::string pol;
        tidal_context *ctx = open_tidal(m, &pol);
        ok(tidal_budget_set(ctx, 0, o_.budget), "budget");
        void *stream = nullptr;
        ok(tidal_stream_create(ctx, 0, &stream), "stream");
        void *buf = alloc(ctx, n, TIDAL_KIND_MANAGED, hints, "s2-dataset");
        Result &r = measure(row(kOutOfCore, name, hints ? "tidal" : "extra", moved, m, pol), ctx,
                            [&](int rep) { to_host(ctx, buf, n, rep); },
                            [&](uint64_t *failures) {
                                pipeline(ctx, stream, buf, n, chunk, o_.epochs,
                                         [&](char *p, uint64_t l) { touch(ctx, p, l, stream, failures); }, failures);
                            });
        r.note = "budget " + size_name(o_.budget);
        ok(tidal_free(ctx, buf), "free");
        ok(tidal_stream_destroy(ctx, stream), "stream destroy");
        ok(tidal_context_destroy(ctx), "destroy");
    }
    const Result *base = find(kOutOfCore, "double-buffered pinned copy + kernel");
    for (const Result &r : results_) {
        if (r.scenario != kOutOfCore || r.name == base->name)
            continue;
        const double ratio = base->median() / r.median();
        ratios_.push_back({kOutOfCore, r.name + " / double-buffered copy", ratio});
        if (r.role != "tidal")
            continue;
        targets_.push_back({kOutOfCore, r.name + ": >= 0.8x double-buffered copy", ratio, 0.8, true});
        targets_.push_back({kOutOfCore, r.name + ": out-of-memory failures == 0", double(r.failures), 0.0, false});
        targets_.push_back({kOutOfCore, r.name + ": bytes copied back by eviction == 0",
                            double(r.moves.evicted_bytes), 0.0, false});
    }
    out_of_core_elastic();
}

// The same loop on elastic memory (issue 14, target a), each row against a hand-written loop
// measured here: read-only against the double-buffered copy in; read-write (each epoch writes
// the chunk it reads) against a double-buffered loop that copies in and back out; and, with a
// kernel as long as a chunk's transfer, the overlapped loop against max(transfer, compute).
void Bench::out_of_core_elastic()
{
    const uint64_t n = o_.dataset, chunk = o_.chunk;
    const uint64_t count = (n + chunk - 1) / chunk;
    const uint64_t steps = count * static_cast<uint64_t>(o_.epochs);
    const uint64_t moved = n * static_cast<uint64_t>(o_.epochs);
    auto len = [&](uint64_t i) { return std::min(chunk, n - i * chunk); };
    double_buffered("double-buffered pinned copy in + kernel + copy out", true);
    // One elastic chunk per loop chunk; the dataset stays in device and elastic memory (its
    // homes are pinned host memory), never managed memory.
    Migration m;
    m.streams = o_.streams;
    m.elastic_chunk = o_.elastic_chunk ? o_.elastic_chunk : chunk;
    std::string pol;
    tidal_context *ctx = open_tidal(m, &pol);
    ok(tidal_budget_set(ctx, 0, o_.budget), "budget");
    void *stream = nullptr;
    ok(tidal_stream_create(ctx, 0, &stream), "stream");
    void *buf = alloc(ctx, n, TIDAL_KIND_ELASTIC, 0, "s2-elastic");
    void *scratch = alloc(ctx, 4096, TIDAL_KIND_DEVICE, 0, "s2-spin");
    const std::string budget_note =
        "budget " + size_name(o_.budget) + ", elastic" + (o_.elastic_chunk ? " chunks of " + size_name(o_.elastic_chunk) : "");
    // Every repetition starts with the dataset in its homes, as the baselines' starts in pinned
    // memory (untimed; the first one copies what the allocation left on the device).
    auto offloaded = [&](int) {
        tidal_elastic_result r = TIDAL_ELASTIC_RESULT_INIT;
        ok(tidal_offload_range(ctx, buf, static_cast<size_t>(n), 0, nullptr, &r), "offload");
    };
    auto loop = [&](uint64_t *failures, uint32_t mode, uint64_t spin_ns, std::vector<StepTimes> *times = nullptr) {
        pipeline(ctx, stream, buf, n, chunk, o_.epochs, [&](char *p, uint64_t l) {
            touch(ctx, p, l, stream, failures, mode & TIDAL_ACCESS_WRITE);
            if (times)
                times->back().read = now_us();
            if (spin_ns)
                spin(ctx, scratch, spin_ns, stream);
        }, failures, mode, times);
    };
    Result &ro = measure(row(kOutOfCore, "elastic: declare + lookahead, read-only", "elastic", moved, m, pol), ctx, offloaded,
                         [&](uint64_t *f) { loop(f, TIDAL_ACCESS_READ, 0); });
    ro.note = budget_note;
    Result &rw = measure(row(kOutOfCore, "elastic: declare + lookahead, read-write", "elastic", moved, m, pol), ctx, offloaded,
                         [&](uint64_t *f) { loop(f, TIDAL_ACCESS_READ_WRITE, 0); });
    rw.note = budget_note;
    // Compute as long as a chunk's transfer, as the read-only loop measured it on this machine.
    const uint64_t ns = o_.compute_ns ? o_.compute_ns : static_cast<uint64_t>(ro.median() / double(steps) * 1e9);
    Result &cp = measure(row(kOutOfCore, "elastic compute alone: read + spin on a resident chunk", "part", moved, m, pol),
                         ctx, offloaded, [&](uint64_t *f) {
                             const tidal_access a = access(buf, len(0));
                             counted(tidal_declare(ctx, stream, &a, 1, 0), "declare", f);
                             for (uint64_t g = 0; g < steps; ++g) {
                                 touch(ctx, buf, len(0), stream, f);
                                 spin(ctx, scratch, ns, stream);
                             }
                             end_phase(ctx, stream);
                         });
    std::vector<StepTimes> times; // --timeline: the last repetition's
    const bool timed = !o_.timeline_path.empty();
    Result &ov = measure(row(kOutOfCore, "elastic overlapped: declare + lookahead + read + spin", "elastic", moved, m, pol),
                         ctx, offloaded, [&](uint64_t *f) { loop(f, TIDAL_ACCESS_READ, ns, timed ? &times : nullptr); });
    if (timed)
        write_timeline(o_.timeline_path, times);
    char note[96];
    std::snprintf(note, sizeof note, "%s, %" PRIu64 " chunks x %.3f ms spin", budget_note.c_str(), steps,
                  double(ns) / 1e6);
    cp.note = ov.note = note;
    ok(tidal_free(ctx, scratch), "free");
    ok(tidal_free(ctx, buf), "free");
    ok(tidal_stream_destroy(ctx, stream), "stream destroy");
    ok(tidal_context_destroy(ctx), "destroy");

    const Result *in = find(kOutOfCore, "double-buffered pinned copy + kernel"),
                 *inout = find(kOutOfCore, "double-buffered pinned copy in + kernel + copy out");
    const double vs_in = in->median() / ro.median(), vs_inout = inout->median() / rw.median(),
                 vs_bound = ov.median() / std::max(ro.median(), cp.median());
    ratios_.push_back({kOutOfCore, ro.name + " / double-buffered copy", vs_in});
    ratios_.push_back({kOutOfCore, rw.name + " / double-buffered copy in and out", vs_inout});
    ratios_.push_back({kOutOfCore, "elastic overlapped / max(transfer, compute)", vs_bound});
    targets_.push_back({kOutOfCore, ro.name + ": >= 0.85x double-buffered copy", vs_in, 0.85, true});
    targets_.push_back({kOutOfCore, rw.name + ": >= 0.75x double-buffered copy in and out", vs_inout, 0.75, true});
    targets_.push_back({kOutOfCore, "elastic overlapped <= 1.15 x max(transfer alone, compute alone)", vs_bound, 1.15, false});
    for (const Result *r : {&ro, &rw, &ov})
        targets_.push_back({kOutOfCore, r->name + ": failures == 0", double(r->failures), 0.0, false});
}

void Bench::overlap()
{
    const uint64_t n = o_.size, chunk = std::min(o_.chunk, o_.size);
    const uint64_t count = (n + chunk - 1) / chunk;
    const uint64_t ns = o_.compute_ns ? o_.compute_ns : static_cast<uint64_t>(double(chunk) / kDefaultComputeRate * 1e9);
    const Migration m{o_.chunk, o_.streams}; // chunk_size may exceed a small --size
    std::string pol;
    tidal_context *ctx = open_tidal(m, &pol);
    void *stream = nullptr;
    ok(tidal_stream_create(ctx, 0, &stream), "stream");
    void *buf = alloc(ctx, n, TIDAL_KIND_MANAGED, 0, "s3-managed");
    void *scratch = alloc(ctx, 4096, TIDAL_KIND_DEVICE, 0, "s3-spin");
    auto reset = [&](int rep) { to_host(ctx, buf, n, rep); };
    // The same read kernel runs in every variant, so "transfer alone" and "compute alone" each
    // contain exactly what the overlapped pipeline adds to the other.
    Result &tr = measure(row(kOverlap, "transfer alone: declare + lookahead + read", "part", n, m, pol), ctx, reset, [&](uint64_t *) {
        pipeline(ctx, stream, buf, n, chunk, 1, [&](char *p, uint64_t l) { touch(ctx, p, l, stream); });
    });
    Result &cp = measure(row(kOverlap, "compute alone: read + spin on resident data", "part", n, m, pol), ctx,
                         [&](int) { ok(tidal_prefetch(ctx, buf, static_cast<size_t>(n), 0), "prefetch"); },
                         [&](uint64_t *) {
                             char *b = static_cast<char *>(buf);
                             for (uint64_t i = 0; i < count; ++i) {
                                 touch(ctx, b + i * chunk, std::min(chunk, n - i * chunk), stream);
                                 spin(ctx, scratch, ns, stream);
                             }
                         });
    Result &ov = measure(row(kOverlap, "overlapped: declare + lookahead + read + spin", "tidal", n, m, pol), ctx, reset, [&](uint64_t *) {
        pipeline(ctx, stream, buf, n, chunk, 1, [&](char *p, uint64_t l) {
            touch(ctx, p, l, stream);
            spin(ctx, scratch, ns, stream);
        });
    });
    char note[96];
    std::snprintf(note, sizeof note, "%" PRIu64 " chunks x %.3f ms spin", count, double(ns) / 1e6);
    tr.note = cp.note = ov.note = note;
    const double bound = std::max(tr.median(), cp.median());
    ratios_.push_back({kOverlap, "overlapped / max(transfer, compute)", ov.median() / bound});
    ratios_.push_back({kOverlap, "compute / transfer", cp.median() / tr.median()});
    targets_.push_back({kOverlap, "overlapped <= 1.15 x max(transfer alone, compute alone)", ov.median() / bound, 1.15, false});
    ok(tidal_free(ctx, scratch), "free");
    ok(tidal_free(ctx, buf), "free");
    ok(tidal_stream_destroy(ctx, stream), "stream destroy");
    ok(tidal_context_destroy(ctx), "destroy");
}

// Prediction: this run's medians against another run's --json (rows matched by scenario and
// name; the JSON writes one row per line with those keys first, which is all this reads).
void Bench::compare()
{
    std::ifstream f(o_.compare_path);
    if (!f) {
        std::fprintf(stderr, "migration-scenarios: cannot read %s\n", o_.compare_path.c_str());
        std::exit(2);
    }
    std::map<std::pair<int, std::string>, double> ref;
    std::string line;
    while (std::getline(f, line)) {
        const auto scenario = json_number(line, "scenario");
        const auto name = json_string(line, "name");
        const auto median = json_number(line, "median_s");
        if (scenario && name && median)
            ref[{int(*scenario), *name}] = *median;
        else if (compare_device_.empty())
            compare_device_ = json_string(line, "device").value_or("");
    }
    for (const Result &r : results_) {
        auto it = ref.find({r.scenario, r.name});
        if (it == ref.end() || it->second <= 0)
            continue;
        const double err = r.median() / it->second - 1.0;
        prediction_.push_back({r, err});
        if (r.counts_for_prediction()) {
            double &w = prediction_worst_[r.scenario];
            if (std::fabs(err) > std::fabs(w))
                w = err;
        }
    }
    for (const auto &[scenario, worst] : prediction_worst_)
        targets_.push_back({kPrediction, std::string(kScenarioNames[scenario]) + ": worst |error| of predicted time <= 25%",
                            std::fabs(worst), 0.25, false});
}

void Bench::print() const
{
    int last = 0;
    for (const Result &r : results_) {
        if (r.scenario != last) {
            last = r.scenario;
            const char *what[] = {"", "stream host-initialised managed memory through a read kernel",
                                  "out-of-core loop under a device budget", "transfer/compute overlap"};
            std::printf("\n%s (scenario %d): %s\n%-58s %9s %9s %9s %8s %9s %7s %9s %9s  %s\n", kScenarioNames[r.scenario], r.scenario, what[r.scenario],
                        "variant", "median s", "min s", "max s", "GB/s", "migr MiB", "calls", "evict MiB", "drop MiB",
                        "notes");
        }
        const double reps = double(std::max<size_t>(1, r.seconds.size()));
        std::string notes = r.note;
        if (r.failures)
            notes += (notes.empty() ? "" : "; ") + std::to_string(r.failures) + " OOM failures";
        std::printf("%-58s %9.4f %9.4f %9.4f %8.2f %9.0f %7.0f %9.0f %9.0f  %s\n", r.name.c_str(), r.median(), r.min(),
                    r.max(), r.gbps(), double(r.moves.migrated_bytes) / reps / double(MiB),
                    double(r.moves.migration_calls) / reps, double(r.moves.evicted_bytes) / reps / double(MiB),
                    double(r.moves.dropped_bytes) / reps / double(MiB), notes.c_str());
    }
    std::printf("\n(migr/calls/evict/drop: tidal's migration statistics per timed repetition on device 0)\n");
    if (!ratios_.empty())
        std::printf("\nratios (speed-ups: baseline time / variant time; for overlap, time ratios)\n");
    for (const Ratio &r : ratios_)
        std::printf("  [%s] %-86s %7.3f\n", kScenarioNames[r.scenario], r.what.c_str(), r.value);
    if (!prediction_.empty()) {
        std::printf("\nprediction (scenario 4): this run's medians against %s (%s); error = this / that - 1\n", o_.compare_path.c_str(),
                    compare_device_.c_str());
        for (const auto &[r, err] : prediction_)
            std::printf("  [%s] %-70s %+7.1f%%%s\n", kScenarioNames[r.scenario], r.name.c_str(), 100 * err,
                        r.counts_for_prediction() ? "" : " (not in the target)");
    }
    if (!targets_.empty())
        std::printf("\ntargets\n");
    for (const Target &t : targets_)
        std::printf("  [%s] %-86s %9.3f %s %-6.3g %s\n", kScenarioNames[t.scenario], t.what.c_str(), t.value, t.at_least ? ">=" : "<=",
                    t.threshold, t.met() ? "met" : "NOT MET");
    if (!policies_note_.empty())
        std::printf("\nnote: %s\n", policies_note_.c_str());
}

void Bench::write_json() const
{
    std::FILE *f = tidal_bench::open_output("migration-scenarios", o_.json_path);
    if (!f)
        std::exit(2);
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::fprintf(f, "{\"benchmark\": \"migration-scenarios\", \"date\": \"%s\",\n", date);
    std::fprintf(f, " \"runtime\": \"%s\", \"detail\": \"%s\", \"device\": \"%s\", \"arch\": \"%s\", \"simulated\": %s,\n",
                 json_escape(sys_.runtime).c_str(), json_escape(sys_.runtime_detail).c_str(), json_escape(dev_.name).c_str(),
                 json_escape(dev_.arch).c_str(), (dev_.flags & TIDAL_DEVICE_FLAG_SIMULATED) ? "true" : "false");
    const uint64_t ns = o_.compute_ns ? o_.compute_ns
                                      : static_cast<uint64_t>(double(std::min(o_.chunk, o_.size)) / kDefaultComputeRate * 1e9);
    std::fprintf(f,
                 " \"settings\": {\"size\": %" PRIu64 ", \"dataset\": %" PRIu64 ", \"budget\": %" PRIu64
                 ", \"chunk\": %" PRIu64 ", \"epochs\": %d, \"reps\": %d, \"warmup\": %d, \"streams\": %d, "
                 "\"compute_ns\": %" PRIu64 ", \"policies_asked\": \"%s\", \"policies_loaded\": %s, \"profile\": \"%s\"},\n",
                 o_.size, o_.dataset, o_.budget, o_.chunk, o_.epochs, o_.reps, o_.warmup, o_.streams, ns,
                 json_escape(join(o_.policies, ",")).c_str(), policies_load_.value_or(false) ? "true" : "false",
                 o_.runtime == "sim" ? json_escape(o_.profile).c_str() : "");
    std::fprintf(f, " \"variants\": [\n");
    for (size_t i = 0; i < results_.size(); ++i) {
        const Result &r = results_[i];
        const double reps = double(std::max<size_t>(1, r.seconds.size()));
        std::string secs;
        for (double s : r.seconds) {
            char b[32];
            std::snprintf(b, sizeof b, "%s%.9g", secs.empty() ? "" : ", ", s);
            secs += b;
        }
        const Moves &m = r.moves;
        std::fprintf(f,
                     "  {\"scenario\": %d, \"name\": \"%s\", \"scenario_name\": \"%s\", \"role\": \"%s\", \"bytes\": %" PRIu64 ", \"median_s\": %.9g, "
                     "\"min_s\": %.9g, \"max_s\": %.9g, \"gbps\": %.4f, \"seconds\": [%s], \"chunk_size\": %" PRIu64
                     ", \"streams\": %d, \"policies\": \"%s\", \"oom_failures\": %" PRIu64 ", \"note\": \"%s\", "
                     "\"per_rep\": {\"migrated_bytes\": %.0f, \"migration_calls\": %.1f, \"resident_hits\": %.0f, "
                     "\"declared_ranges\": %.1f, \"noops\": %.1f, \"evictions\": %.1f, \"evicted_bytes\": %.0f, "
                     "\"dropped_bytes\": %.0f, \"budget_refusals\": %.1f}, \"budget\": %" PRIu64
                     ", \"resident_high_water\": %" PRIu64 "}%s\n",
                     r.scenario, json_escape(r.name).c_str(), kScenarioNames[r.scenario], r.role.c_str(), r.bytes, r.median(), r.min(), r.max(), r.gbps(),
                     secs.c_str(), r.migration.chunk_size, r.migration.streams, json_escape(r.policies).c_str(), r.failures,
                     json_escape(r.note).c_str(), double(m.migrated_bytes) / reps, double(m.migration_calls) / reps,
                     double(m.resident_hits) / reps, double(m.declared_ranges) / reps, double(m.noops) / reps,
                     double(m.evictions) / reps, double(m.evicted_bytes) / reps, double(m.dropped_bytes) / reps,
                     double(m.budget_refusals) / reps, m.budget, m.resident_high_water,
                     i + 1 < results_.size() ? "," : "");
    }
    std::fprintf(f, " ],\n \"ratios\": [\n");
    for (size_t i = 0; i < ratios_.size(); ++i)
        std::fprintf(f, "  {\"scenario\": %d, \"what\": \"%s\", \"value\": %.4f}%s\n", ratios_[i].scenario,
                     json_escape(ratios_[i].what).c_str(), ratios_[i].value, i + 1 < ratios_.size() ? "," : "");
    std::fprintf(f, " ],\n \"prediction\": {\"reference\": \"%s\", \"reference_device\": \"%s\", \"rows\": [\n",
                 json_escape(o_.compare_path).c_str(), json_escape(compare_device_).c_str());
    for (size_t i = 0; i < prediction_.size(); ++i)
        std::fprintf(f, "  {\"scenario_of\": %d, \"row\": \"%s\", \"error\": %.4f, \"in_target\": %s}%s\n",
                     prediction_[i].first.scenario, json_escape(prediction_[i].first.name).c_str(), prediction_[i].second,
                     prediction_[i].first.counts_for_prediction() ? "true" : "false", i + 1 < prediction_.size() ? "," : "");
    std::fprintf(f, " ]},\n \"targets\": [\n");
    for (size_t i = 0; i < targets_.size(); ++i) {
        const Target &t = targets_[i];
        std::fprintf(f, "  {\"scenario_of\": %d, \"what\": \"%s\", \"value\": %.4f, \"threshold\": %.4g, \"op\": \"%s\", \"met\": %s}%s\n",
                     t.scenario, json_escape(t.what).c_str(), t.value, t.threshold, t.at_least ? ">=" : "<=",
                     t.met() ? "true" : "false", i + 1 < targets_.size() ? "," : "");
    }
    std::fprintf(f, " ],\n \"note\": \"%s\"}\n", json_escape(policies_note_).c_str());
    std::fclose(f);
}

int Bench::run()
{
    {
        tidal_context *ctx = open_plain({});
        ok(tidal_system_info_get(ctx, &sys_), "system info");
        ok(tidal_device_info_get(ctx, 0, &dev_), "device info");
        ok(tidal_context_destroy(ctx), "destroy");
    }
    const bool simulated = dev_.flags & TIDAL_DEVICE_FLAG_SIMULATED;
    std::printf("runtime %s (%s), device 0: %s (%s)%s\n", sys_.runtime, sys_.runtime_detail, dev_.name, dev_.arch,
                simulated ? " -- times below are the simulated clock's predictions" : "");
    std::printf("size %s, dataset %s, budget %s, chunk %s, %d epochs; median of %d after %d warm-up\n",
                size_name(o_.size).c_str(), size_name(o_.dataset).c_str(), size_name(o_.budget).c_str(),
                size_name(o_.chunk).c_str(), o_.epochs, o_.reps, o_.warmup);
    if (o_.scenario == 0 || o_.scenario == kOutOfCore) {
        if (o_.dataset <= o_.budget)
            std::printf("note: dataset <= budget: out-of-core will not evict\n");
        // A chunk's phase and its lookahead are both protected: together they must fit.
        if (2 * o_.chunk > o_.budget)
            std::printf("note: 2 x chunk > budget: out-of-core's declarations will be refused\n");
    }
    if (o_.scenario == 0 || o_.scenario == kStream)
        stream_through();
    if (o_.scenario == 0 || o_.scenario == kOutOfCore)
        out_of_core();
    if (o_.scenario == 0 || o_.scenario == kOverlap)
        overlap();
    if (!o_.compare_path.empty())
        compare();
    print();
    if (!o_.json_path.empty())
        write_json();
    return 0;
}

[[noreturn]] void usage()
{
    std::fprintf(stderr,
                 "usage: migration-scenarios [--runtime auto|sim|cuda|hip] [--profile NAME]\n"
                 "         [--scenario stream|out-of-core|overlap|all (or 1|2|3)]\n"
                 "         [--size 4GiB] [--dataset 12GiB] [--budget 4GiB] [--chunk 64MiB (64 KiB multiple)] [--epochs 3]\n"
                 "         [--reps 5] [--warmup 1] [--streams N] [--lookahead-hold-us US] [--worker-spin-us US] [--compute-ns NS] [--policies a,b|none] [--elastic-only]\n"
                 "         [--elastic-chunk SIZE (default: --chunk)] [--timeline FILE] [--no-sweeps] [--quick] [--json FILE] [--compare FILE]\n");
    std::exit(2);
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    // --quick first, so options given with it still win over its sizes.
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--quick") {
            // Seconds on the simulated device (whose memory is real host memory): for CI. The
            // chunk stays well under the budget: the phase in flight plus its lookahead must fit.
            o.size = 64 * MiB;
            o.dataset = 192 * MiB;
            o.budget = 64 * MiB;
            o.chunk = 16 * MiB;
            o.epochs = 2;
            o.reps = 3;
        }
    auto size_arg = [&](int &i) {
        if (i + 1 >= argc)
            usage();
        const auto v = parse_size(argv[++i]);
        if (!v || *v % 8)
            usage(); // the check kernels take multiples of 8 bytes
        return *v;
    };
    auto int_arg = [&](int &i, int lo) {
        if (i + 1 >= argc)
            usage();
        const int v = std::atoi(argv[++i]);
        if (v < lo)
            usage();
        return v;
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") continue;
        else if (a == "--runtime" && i + 1 < argc) o.runtime = argv[++i];
        else if (a == "--profile" && i + 1 < argc) o.profile = argv[++i];
        else if (a == "--size") o.size = size_arg(i);
        else if (a == "--dataset") o.dataset = size_arg(i);
        else if (a == "--budget") o.budget = size_arg(i);
        else if (a == "--chunk") {
            o.chunk = size_arg(i);
            if (o.chunk % kChunkGrain)
                usage(); // it is also [migration] chunk_size
        }
        else if (a == "--elastic-chunk") {
            o.elastic_chunk = size_arg(i);
            if (o.elastic_chunk == 0 || o.elastic_chunk % kChunkGrain)
                usage();
        }
        else if (a == "--epochs") o.epochs = int_arg(i, 1);
        else if (a == "--reps") o.reps = int_arg(i, 1);
        else if (a == "--warmup") o.warmup = int_arg(i, 0);
        else if (a == "--streams") o.streams = int_arg(i, 0);
        else if (a == "--lookahead-hold-us") o.lookahead_hold_us = int_arg(i, 0);
        else if (a == "--worker-spin-us") o.worker_spin_us = int_arg(i, 0);
        else if (a == "--elastic-only") o.elastic_only = true;
        else if (a == "--timeline" && i + 1 < argc) o.timeline_path = argv[++i];
        else if (a == "--compute-ns") o.compute_ns = static_cast<uint64_t>(int_arg(i, 1));
        else if (a == "--no-sweeps") o.sweeps = false;
        else if (a == "--json" && i + 1 < argc) o.json_path = argv[++i];
        else if (a == "--compare" && i + 1 < argc) o.compare_path = argv[++i];
        else if (a == "--policies" && i + 1 < argc) {
            const std::string list = argv[++i];
            o.policies.clear();
            if (list != "none" && !list.empty()) {
                std::stringstream ss(list);
                for (std::string p; std::getline(ss, p, ',');)
                    if (!p.empty())
                        o.policies.push_back(p);
            }
        } else if (a == "--scenario" && i + 1 < argc) {
            const std::string s = argv[++i];
            o.scenario = -1;
            for (int n = 0; n <= kOverlap; ++n) // prediction is --compare, not a --scenario
                if (s == kScenarioNames[n] || (n > 0 && s == std::to_string(n))) // the numbers: old names
                    o.scenario = n;
            if (o.scenario < 0)
                usage();
        } else
            usage();
    }
    if (o.size > kManagedCap || o.dataset > kManagedCap) {
        std::fprintf(stderr, "migration-scenarios: managed buffers are capped at %s (never oversubscribe the card)\n",
                     size_name(kManagedCap).c_str());
        return 2;
    }
    return Bench(std::move(o)).run();
}
