// `tidal validate`: for each device and each allocation kind, allocate through tidal, run the
// validation kernels on the device, move the data both ways with prefetch and check that the
// runtime's range attributes and the data agree after every move; elastic memory also goes to
// its host home and back. Then measure the copy kernel against the runtime's own
// device-to-device memcpy.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "byte_sizes.h"
#include "command_options.h"
#include "tool_commands.h"

namespace tidal_tool {
namespace {

enum class Verdict { pass, fail, unsupported, skipped };

struct Outcome {
    Verdict verdict = Verdict::skipped;
    std::string detail;
};

const char *verdict_name(Verdict v)
{
    switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::fail: return "FAIL";
    case Verdict::unsupported: return "unsupported";
    case Verdict::skipped: return "-";
    }
    return "?";
}

// offload and fault are elastic memory's own ("-" for the other kinds).
const std::vector<std::string> kChecks = {"alloc", "touch", "pattern", "migrate", "atomics", "offload", "fault"};

// The atomic set (TIDAL_CHECK_ATOMIC_SET): one cell per operation, run by the device alone and
// with host threads on the same words at once.
const char *const kAtomicOps[] = {"and32", "or32", "xor32", "add32", "sub32", "min32", "max32", "exch32", "cas32",
                                  "and64", "or64", "xor64", "add64", "sub64", "min64", "max64", "exch64", "cas64",
                                  "fadd32"};
constexpr size_t kAtomicOpCount = sizeof kAtomicOps / sizeof kAtomicOps[0];
static_assert(TIDAL_ATOMIC_ALL == (1u << kAtomicOpCount) - 1, "one name per TIDAL_ATOMIC_* bit");

struct AtomicCells {
    Outcome device[kAtomicOpCount];
    Outcome shared[kAtomicOpCount]; // host threads and the device at once
};

// Which kinds are fine-grained on AMD: coherent with the host, and where MI200's hardware
// float atomics do nothing. Device and managed_coarse memory are coarse-grained.
bool fine_grained(tidal_kind k)
{
    return k == TIDAL_KIND_PINNED || k == TIDAL_KIND_PAGEABLE || k == TIDAL_KIND_DEVICE_FINE || k == TIDAL_KIND_MANAGED;
}

bool host_reachable(tidal_kind k) { return TIDAL_KIND_IS_HOST(k) || TIDAL_KIND_IS_MANAGED(k); }

// Why an atomic operation is known not to work on a kind of memory of this device ("" when it
// should). The one list of such rules: every unsupported cell of the table names one.
// `shared`: host threads work the same words at once.
std::string atomic_unsupported_reason(const tidal_device_info &dev, tidal_kind kind, size_t op, bool shared)
{
    if (kind == TIDAL_KIND_PAGEABLE && !(dev.flags & TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS))
        return "system-scope atomics on pageable memory need HMM (XNACK on for AMD): this device cannot reach it";
    // Without host-native atomics nothing promises that a kernel's atomics on host memory are
    // atomic against a host thread's: on the H200 add32, sub32 and exch32 lost updates in each
    // of three runs, xor32 or cas32 in one; the others happened to come out exact.
    if (shared && TIDAL_KIND_IS_HOST(kind) && !(dev.flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS))
        return "the device reports no host-native atomics (hostNativeAtomicSupported = 0): a kernel's atomics on host "
               "memory are not atomic against host threads'";
    if ((1u << op) == TIDAL_ATOMIC_FADD32 && std::string(dev.arch).rfind("gfx90a", 0) == 0 && fine_grained(kind))
        return "float atomics on fine-grained memory on MI200: its hardware float add does nothing there "
               "(coarse-grained device or managed_coarse memory works)";
    return "";
}

struct Row {
    tidal_kind kind;
    std::map<std::string, Outcome> checks;
    AtomicCells atomics;
    bool failed() const
    {
        return std::any_of(checks.begin(), checks.end(), [](const auto &c) { return c.second.verdict == Verdict::fail; });
    }
};

class KindValidator {
public:
    KindValidator(tidal_context *ctx, const tidal_device_info &dev, tidal_kind kind, size_t size)
        : ctx_(ctx), dev_(dev), kind_(kind), size_(size)
    {
    }

    Row run()
    {
        Row row{kind_, {}, {}};
        for (const auto &c : kChecks)
            row.checks[c] = {};
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        desc.kind = kind_;
        desc.device = dev_.index;
        desc.tag = "tidal-validate";
        void *p = nullptr;
        tidal_status s = tidal_alloc(ctx_, size_, &desc, &p);
        if (s == TIDAL_ERROR_NOT_SUPPORTED) {
            row.checks["alloc"] = {Verdict::unsupported, tidal_last_error()};
            return row;
        }
        if (s != TIDAL_OK) {
            row.checks["alloc"] = {Verdict::fail, failure_text(s)};
            return row;
        }
        row.checks["alloc"] = {Verdict::pass, fmt::format("{} MiB", size_ >> 20)};
        const bool host_kind = kind_ == TIDAL_KIND_PAGEABLE;
        if (host_kind && !(dev_.flags & TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS)) {
            // The hardware would fault (and a real GPU context would not survive it).
            const std::string why = "the device cannot access pageable memory (no HMM / XNACK off)";
            for (const char *c : {"touch", "pattern", "migrate", "atomics"})
                row.checks[c] = {Verdict::unsupported, why};
            for (size_t op = 0; op < kAtomicOpCount; ++op)
                row.atomics.device[op] = row.atomics.shared[op] = {Verdict::unsupported,
                                                                   atomic_unsupported_reason(dev_, kind_, op, false)};
        } else {
            row.checks["touch"] = touch(p);
            row.checks["pattern"] = pattern(p);
            row.checks["migrate"] = migrate(p);
            row.checks["atomics"] = atomics(p, row.atomics);
            if (kind_ == TIDAL_KIND_ELASTIC)
                offload_round_trip(p, row);
        }
        if ((s = tidal_free(ctx_, p)) != TIDAL_OK)
            row.checks["alloc"] = {Verdict::fail, "free: " + failure_text(s)};
        return row;
    }

private:
    bool managed() const { return TIDAL_KIND_IS_MANAGED(kind_); }
    bool host_readable() const
    {
        return kind_ != TIDAL_KIND_DEVICE && kind_ != TIDAL_KIND_DEVICE_FINE && kind_ != TIDAL_KIND_ELASTIC;
    }

    Outcome touch(void *p)
    {
        for (tidal_check_kind k : {TIDAL_CHECK_TOUCH_WRITE, TIDAL_CHECK_TOUCH_READ})
            if (tidal_status s = run_check(ctx_, k, dev_.index, p, size_, 0); s != TIDAL_OK)
                return {Verdict::fail, failure_text(s)};
        return {Verdict::pass, "every 4 KiB page read and written by the device"};
    }

    Outcome verify(void *p, uint64_t seed, const char *when)
    {
        uint64_t mismatches = 0;
        if (tidal_status s = run_check(ctx_, TIDAL_CHECK_PATTERN_VERIFY, dev_.index, p, size_, seed, &mismatches);
            s != TIDAL_OK)
            return {Verdict::fail, fmt::format("{}: {}", when, failure_text(s))};
        if (mismatches)
            return {Verdict::fail, fmt::format("{}: {} of {} words corrupted", when, mismatches, size_ / 8)};
        return {Verdict::pass, ""};
    }

    Outcome pattern(void *p)
    {
        const uint64_t seed = 0x7da1 + static_cast<uint64_t>(kind_);
        if (tidal_status s = run_check(ctx_, TIDAL_CHECK_PATTERN_FILL, dev_.index, p, size_, seed); s != TIDAL_OK)
            return {Verdict::fail, failure_text(s)};
        Outcome o = verify(p, seed, "after fill");
        if (o.verdict == Verdict::pass)
            o.detail = "address-derived pattern written and verified on the device";
        return o;
    }

    Outcome expect_location(int32_t want, const char *when)
    {
        tidal_range_info info = TIDAL_RANGE_INFO_INIT;
        if (tidal_status s = tidal_range_query(ctx_, base_, size_, &info); s != TIDAL_OK)
            return {Verdict::fail, fmt::format("{}: {}", when, failure_text(s))};
        if (info.last_prefetch_location != want)
            return {Verdict::fail, fmt::format("{}: the runtime reports last prefetch location {}, expected {}", when,
                                               info.last_prefetch_location, want)};
        return {Verdict::pass, ""};
    }

    Outcome migrate(void *p)
    {
        base_ = p;
        const uint64_t seed = 0x5eed;
        if (tidal_status s = run_check(ctx_, TIDAL_CHECK_PATTERN_FILL, dev_.index, p, size_, seed); s != TIDAL_OK)
            return {Verdict::fail, failure_text(s)};
        if (!managed()) {
            // Other kinds cannot move: prefetch must succeed as a no-op and leave the data intact.
            for (int32_t to : {TIDAL_DEVICE_HOST, dev_.index})
                if (tidal_status s = tidal_prefetch(ctx_, p, size_, to); s != TIDAL_OK)
                    return {Verdict::fail, "prefetch (no-op expected): " + failure_text(s)};
            Outcome o = verify(p, seed, "after no-op prefetches");
            if (o.verdict == Verdict::pass)
                o = {Verdict::pass, "not migratable: prefetch is a counted no-op, data intact"};
            return o;
        }
        const struct { int32_t to; const char *when; } moves[] = {
            {TIDAL_DEVICE_HOST, "after prefetch to host"},
            {dev_.index, "after prefetch to device"},
            {TIDAL_DEVICE_HOST, "after second prefetch to host"},
            {dev_.index, "after second prefetch to device"},
        };
        for (const auto &m : moves) {
            if (tidal_status s = tidal_prefetch(ctx_, p, size_, m.to); s != TIDAL_OK)
                return {Verdict::fail, fmt::format("{}: {}", m.when, failure_text(s))};
            if (Outcome o = expect_location(m.to, m.when); o.verdict != Verdict::pass)
                return o;
            if (Outcome o = verify(p, seed, m.when); o.verdict != Verdict::pass)
                return o;
        }
        return {Verdict::pass, "host<->device twice; attributes and pattern checked after each move"};
    }

    // One run of the atomic set: fills `cells`, one per operation.
    void atomic_run(void *p, tidal_check_kind kind, Outcome *cells)
    {
        uint64_t wrong = 0;
        const tidal_status s = run_check(ctx_, kind, dev_.index, p, TIDAL_ATOMIC_SET_BYTES, 0, &wrong);
        const std::string failure = s == TIDAL_OK ? "" : failure_text(s);
        for (size_t op = 0; op < kAtomicOpCount; ++op) {
            const std::string reason = atomic_unsupported_reason(dev_, kind_, op, kind == TIDAL_CHECK_ATOMIC_SET_SHARED);
            const bool exact = s == TIDAL_OK && !(wrong >> op & 1u);
            if (exact)
                cells[op] = {Verdict::pass, reason.empty() ? "exact" : "exact, although expected to fail: " + reason};
            else if (!reason.empty())
                cells[op] = {Verdict::unsupported, reason};
            else
                cells[op] = {Verdict::fail, s == TIDAL_OK ? "the word came out wrong" : failure};
        }
    }

    Outcome atomics(void *p, AtomicCells &cells)
    {
        atomic_run(p, TIDAL_CHECK_ATOMIC_SET, cells.device);
        const bool shared = host_reachable(kind_);
        if (shared)
            atomic_run(p, TIDAL_CHECK_ATOMIC_SET_SHARED, cells.shared);
        else
            for (Outcome &c : cells.shared)
                c = {Verdict::skipped, "device memory: the host cannot reach it"};
        size_t failed = 0, unsupported = 0;
        for (size_t op = 0; op < kAtomicOpCount; ++op)
            for (const Outcome *c : {&cells.device[op], &cells.shared[op]}) {
                failed += c->verdict == Verdict::fail;
                unsupported += c->verdict == Verdict::unsupported;
            }
        const std::string what = fmt::format("{} atomics (32/64-bit integer, float add), device{}", kAtomicOpCount,
                                             shared ? " alone and with host threads at once" : " alone");
        if (failed)
            return {Verdict::fail, fmt::format("{}: {} cell(s) wrong", what, failed)};
        if (unsupported)
            return {Verdict::unsupported, fmt::format("{}: {} cell(s) unsupported, see the atomics table", what, unsupported)};
        return {Verdict::pass, what + ": every word exact"};
    }

    Outcome expect_residency(void *p, uint64_t resident, const char *when)
    {
        tidal_range_info info = TIDAL_RANGE_INFO_INIT;
        if (tidal_status s = tidal_range_query(ctx_, p, size_, &info); s != TIDAL_OK)
            return {Verdict::fail, fmt::format("{}: range query: {}", when, failure_text(s))};
        if (info.resident_bytes != resident)
            return {Verdict::fail, fmt::format("{}: {} bytes resident, expected {}", when, info.resident_bytes, resident)};
        return {Verdict::pass, ""};
    }

    // Elastic memory: the pattern comes back at the same address after an offload to the host
    // home and a restore; while offloaded, a kernel on it faults (fills row's "fault").
    void offload_round_trip(void *p, Row &row)
    {
        const uint64_t seed = 0xe1a5;
        row.checks["offload"] = [&]() -> Outcome {
            if (tidal_status s = run_check(ctx_, TIDAL_CHECK_PATTERN_FILL, dev_.index, p, size_, seed); s != TIDAL_OK)
                return {Verdict::fail, failure_text(s)};
            tidal_range_info before = TIDAL_RANGE_INFO_INIT;
            if (tidal_status s = tidal_range_query(ctx_, p, size_, &before); s != TIDAL_OK)
                return {Verdict::fail, "range query: " + failure_text(s)};
            tidal_elastic_result out = TIDAL_ELASTIC_RESULT_INIT;
            if (tidal_status s = tidal_offload_range(ctx_, p, size_, 0, nullptr, &out); s != TIDAL_OK)
                return {Verdict::fail, "offload: " + failure_text(s)};
            if (out.copied_bytes < size_)
                return {Verdict::fail, fmt::format("offload copied {} bytes to the home, expected at least {}",
                                                   out.copied_bytes, size_)};
            if (Outcome o = expect_residency(p, 0, "after offload"); o.verdict != Verdict::pass)
                return o;
            row.checks["fault"] = kernel_faults(p);
            if (tidal_status s = tidal_restore_range(ctx_, p, size_, 0, nullptr, nullptr); s != TIDAL_OK)
                return {Verdict::fail, "restore: " + failure_text(s)};
            if (Outcome o = expect_residency(p, before.resident_bytes, "after restore"); o.verdict != Verdict::pass)
                return o;
            Outcome o = verify(p, seed, "after offload and restore");
            if (o.verdict == Verdict::pass)
                o.detail = fmt::format("{} copied to the host home and back, pattern intact at the same address",
                                       format_bytes(out.copied_bytes));
            return o;
        }();
    }

    Outcome kernel_faults(void *p)
    {
        if (!(dev_.flags & TIDAL_DEVICE_FLAG_SIMULATED))
            // A GPU kernel on unmapped memory is a fault the GPU context does not survive.
            return {Verdict::skipped, "checked on the simulated device only: on a GPU the fault would end the context"};
        const tidal_status s = run_check(ctx_, TIDAL_CHECK_TOUCH_READ, dev_.index, p, size_, 0);
        if (s == TIDAL_ERROR_ILLEGAL_ACCESS)
            return {Verdict::pass, "a kernel on the offloaded memory gets TIDAL_ERROR_ILLEGAL_ACCESS"};
        if (s == TIDAL_OK)
            return {Verdict::fail, "a kernel read the offloaded memory without a fault"};
        return {Verdict::fail, "a kernel on the offloaded memory: expected TIDAL_ERROR_ILLEGAL_ACCESS, got " +
                                   failure_text(s)};
    }

    tidal_context *ctx_;
    const tidal_device_info &dev_;
    tidal_kind kind_;
    size_t size_;
    void *base_ = nullptr;
};

struct Bandwidth {
    Outcome outcome;
    double kernel_gbs = 0, runtime_gbs = 0, ratio = 0;
    size_t bytes = 0;
};

Bandwidth measure_bandwidth(tidal_context *ctx, const tidal_device_info &dev, size_t bytes, unsigned repeat)
{
    Bandwidth b;
    b.bytes = bytes;
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = dev.index;
    void *src = nullptr, *dst = nullptr;
    tidal_status s = tidal_alloc(ctx, bytes, &desc, &src);
    if (s == TIDAL_OK)
        s = tidal_alloc(ctx, bytes, &desc, &dst);
    auto timed = [&](tidal_check_kind kind, double *gbs) {
        tidal_check c = TIDAL_CHECK_INIT;
        c.kind = kind;
        c.device = dev.index;
        c.target = dst;
        c.source = src;
        c.size = bytes;
        c.repeat = 1;
        tidal_status st = tidal_check_run(ctx, &c); // warm-up
        c.repeat = repeat;
        if (st == TIDAL_OK)
            st = tidal_check_run(ctx, &c);
        // Read and write counted, as cudaMemcpy device-to-device bandwidth is usually quoted.
        if (st == TIDAL_OK && c.elapsed_ms > 0)
            *gbs = 2.0 * static_cast<double>(bytes) * repeat / (c.elapsed_ms * 1e-3) / 1e9;
        return st;
    };
    if (s == TIDAL_OK)
        s = timed(TIDAL_CHECK_RUNTIME_COPY, &b.runtime_gbs);
    if (s == TIDAL_OK)
        s = timed(TIDAL_CHECK_COPY, &b.kernel_gbs);
    if (s == TIDAL_ERROR_NOT_SUPPORTED)
        b.outcome = {Verdict::unsupported, tidal_last_error()};
    else if (s != TIDAL_OK)
        b.outcome = {Verdict::fail, failure_text(s)};
    else if (b.runtime_gbs <= 0)
        b.outcome = {Verdict::unsupported, "the runtime gives no event timing"};
    else {
        b.ratio = b.kernel_gbs / b.runtime_gbs;
        b.outcome = {b.ratio >= 0.9 ? Verdict::pass : Verdict::fail,
                     fmt::format("copy kernel {:.0f} GB/s = {:.1f}% of the runtime's memcpy {:.0f} GB/s (target >= 90%)",
                                 b.kernel_gbs, 100.0 * b.ratio, b.runtime_gbs)};
    }
    tidal_free(ctx, src);
    tidal_free(ctx, dst);
    return b;
}

// What the device reports (hostNativeAtomicSupported) against what the shared runs saw.
struct AtomicsSeen {
    std::vector<std::string> exact, wrong; // kinds whose host+device run was exact / not
    std::string summary(const tidal_device_info &dev) const
    {
        const bool reported = dev.flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS;
        auto list = [](const std::vector<std::string> &v) {
            std::string out;
            for (const std::string &k : v)
                out += (out.empty() ? "" : ", ") + k;
            return out.empty() ? std::string("none") : out;
        };
        return fmt::format("host-native atomics: the device reports {} (hostNativeAtomicSupported); host threads and "
                           "kernels at once were exact on: {}; wrong or not run on: {}",
                           reported ? "yes" : "no", list(exact), list(wrong));
    }
};

AtomicsSeen atomics_seen(const std::vector<Row> &rows)
{
    AtomicsSeen seen;
    for (const Row &r : rows) {
        const Outcome *cells = r.atomics.shared;
        if (cells[0].verdict == Verdict::skipped || r.checks.at("alloc").verdict != Verdict::pass)
            continue; // not run: device memory, or not allocated
        std::string unsupported;
        bool wrong = false, any = false;
        for (size_t op = 0; op < kAtomicOpCount; ++op) {
            wrong |= cells[op].verdict == Verdict::fail;
            any |= cells[op].verdict == Verdict::pass;
            if (cells[op].verdict == Verdict::unsupported)
                unsupported += std::string(unsupported.empty() ? "" : " ") + kAtomicOps[op];
        }
        std::string name = tidal_kind_name(r.kind);
        if (any && !unsupported.empty())
            name += " (unsupported: " + unsupported + ")";
        (wrong || !any ? seen.wrong : seen.exact).push_back(name);
    }
    return seen;
}

// Rows: kind x (device alone, host+device); columns: the operations; then a reason for every
// cell that is not a pass, one line per distinct reason.
void print_atomics(const std::vector<Row> &rows)
{
    fmt::print("  atomics ({} = exact, FAIL = wrong, unsup = unsupported, - = not run)\n  {:<29}", "ok", "kind / who");
    for (const char *op : kAtomicOps)
        fmt::print(" {:<6}", op);
    fmt::print("\n");
    auto cell = [](const Outcome &c) {
        switch (c.verdict) {
        case Verdict::pass: return "ok";
        case Verdict::fail: return "FAIL";
        case Verdict::unsupported: return "unsup";
        case Verdict::skipped: return "-";
        }
        return "?";
    };
    std::vector<std::pair<std::string, std::string>> notes; // reason, the cells it explains
    for (const Row &r : rows) {
        if (r.checks.at("alloc").verdict != Verdict::pass)
            continue;
        for (const auto &[who, cells] : {std::pair{"device", r.atomics.device}, std::pair{"host+device", r.atomics.shared}}) {
            fmt::print("  {:<29}", fmt::format("{} / {}", tidal_kind_name(r.kind), who));
            for (size_t op = 0; op < kAtomicOpCount; ++op) {
                fmt::print(" {:<6}", cell(cells[op]));
                if (cells[op].verdict != Verdict::pass && cells[op].verdict != Verdict::skipped) {
                    const std::string where = fmt::format("{} {} ({})", tidal_kind_name(r.kind), kAtomicOps[op], who);
                    auto it = std::find_if(notes.begin(), notes.end(), [&](const auto &n) { return n.first == cells[op].detail; });
                    if (it == notes.end())
                        notes.emplace_back(cells[op].detail, where);
                    else
                        it->second += ", " + where;
                }
            }
            fmt::print("\n");
        }
    }
    for (const auto &[reason, cells] : notes)
        fmt::print("    {}: {}\n", cells, reason);
}

} // namespace

int run_validate(const ValidateOptions &o)
{
    if (o.size % 8 != 0 || o.bandwidth_size % 8 != 0) {
        fmt::print(stderr, "tidal validate: sizes must be multiples of 8 bytes\n");
        return 1;
    }
    tidal_context *ctx = open_context(o.config, o.runtime);
    if (!ctx)
        return 1;
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    tidal_system_info_get(ctx, &sys);
    if (o.device >= sys.device_count) {
        fmt::print(stderr, "tidal validate: device {} does not exist ({} device(s))\n", o.device, sys.device_count);
        tidal_context_destroy(ctx);
        return 1;
    }
    nlohmann::json report{{"runtime", sys.runtime}, {"runtime_detail", sys.runtime_detail}, {"devices", nlohmann::json::array()}};
    bool failed = false;
    for (int32_t d = 0; d < sys.device_count; ++d) {
        if (o.device >= 0 && d != o.device)
            continue;
        tidal_device_info dev = TIDAL_DEVICE_INFO_INIT;
        tidal_device_info_get(ctx, d, &dev);
        const bool simulated = dev.flags & TIDAL_DEVICE_FLAG_SIMULATED;
        std::vector<Row> rows;
        for (int k = TIDAL_KIND_DEVICE; k < TIDAL_KIND_COUNT; ++k)
            rows.push_back(KindValidator(ctx, dev, static_cast<tidal_kind>(k), o.size).run());
        const size_t bw_bytes = o.bandwidth_size ? o.bandwidth_size : (simulated ? 64ull << 20 : 1ull << 30);
        Bandwidth bw = measure_bandwidth(ctx, dev, bw_bytes, o.repeat);

        nlohmann::json jd{{"index", d}, {"name", dev.name}, {"simulated", simulated}, {"kinds", nlohmann::json::array()}};
        for (const Row &r : rows) {
            nlohmann::json jr{{"kind", tidal_kind_name(r.kind)}};
            for (const auto &c : kChecks)
                jr["checks"][c] = {{"result", verdict_name(r.checks.at(c).verdict)}, {"detail", r.checks.at(c).detail}};
            for (size_t op = 0; op < kAtomicOpCount; ++op)
                for (const auto &[mode, cell] : {std::pair{"device", &r.atomics.device[op]}, std::pair{"host_and_device", &r.atomics.shared[op]}})
                    jr["atomics"][mode][kAtomicOps[op]] = {{"result", verdict_name(cell->verdict)}, {"detail", cell->detail}};
            jd["kinds"].push_back(jr);
            failed |= r.failed();
        }
        const AtomicsSeen seen = atomics_seen(rows);
        jd["atomics"] = {{"host_native_atomics_reported", (dev.flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS) != 0},
                         {"host_and_device_exact_on", seen.exact}, {"host_and_device_wrong_on", seen.wrong},
                         {"summary", seen.summary(dev)}};
        jd["bandwidth"] = {{"result", verdict_name(bw.outcome.verdict)}, {"detail", bw.outcome.detail},
                           {"bytes", bw.bytes}, {"kernel_gbs", bw.kernel_gbs}, {"runtime_memcpy_gbs", bw.runtime_gbs},
                           {"ratio", bw.ratio}};
        failed |= bw.outcome.verdict == Verdict::fail;
        report["devices"].push_back(jd);

        if (!o.json) {
            fmt::print("device {}: {}{}  (runtime {}; {} MiB per kind)\n", d, dev.name, simulated ? " [SIMULATED]" : "",
                       sys.runtime, o.size >> 20);
            fmt::print("  {:<15}", "kind");
            for (const auto &c : kChecks)
                fmt::print(" {:<12}", c);
            fmt::print("\n");
            for (const Row &r : rows) {
                fmt::print("  {:<15}", tidal_kind_name(r.kind));
                for (const auto &c : kChecks)
                    fmt::print(" {:<12}", verdict_name(r.checks.at(c).verdict));
                fmt::print("\n");
            }
            for (const Row &r : rows)
                for (const auto &c : kChecks) {
                    const Outcome &out = r.checks.at(c);
                    if (out.verdict == Verdict::fail || (out.verdict == Verdict::unsupported && c == "alloc") ||
                        (out.verdict == Verdict::unsupported && c == "touch") ||
                        (out.verdict == Verdict::skipped && !out.detail.empty()))
                        fmt::print("    {} / {}: {}: {}\n", tidal_kind_name(r.kind), c, verdict_name(out.verdict), out.detail);
                }
            print_atomics(rows);
            fmt::print("  {}\n", seen.summary(dev));
            fmt::print("  bandwidth ({} MiB device-to-device): {}: {}\n\n", bw_bytes >> 20, verdict_name(bw.outcome.verdict),
                       bw.outcome.detail);
        }
    }
    tidal_context_destroy(ctx);
    report["result"] = failed ? "fail" : "pass";
    if (o.json)
        fmt::print("{}\n", report.dump(2));
    else
        fmt::print("{}\n", failed ? "validation FAILED" : "validation passed");
    return failed ? 1 : 0;
}

} // namespace tidal_tool
