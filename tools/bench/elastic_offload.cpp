// elastic-offload: offload and restore of elastic device memory (tidal_offload / tidal_restore)
// against the plain runtime copy of the same bytes between device memory and pinned memory,
// measured in the same run, both sides on tidal_clock (the wall clock on a GPU, the simulated
// clock on the simulated device, so one program measures the H200 and predicts it).
//
//   elastic-offload [--config FILE] [--total 16GiB] [--allocations 200] [--discard 32GiB]
//                   [--reps 3] [--quick] [--json]
//
// Rows (median of --reps, after one warm-up round that also makes the host homes):
//   baseline d2h / h2d  RUNTIME_COPY (the runtime's memcpy) of each allocation's size between a
//                       device buffer and a pinned buffer, one after the other, synchronised.
//   offload / restore   tidal_offload("weights*") and tidal_restore("weights*", stream NULL):
//                       every chunk written since it came in is copied, the physical memory
//                       given back (restore: mapped again and copied in).
//   discard             tidal_offload with TIDAL_OFFLOAD_DISCARD of --discard bytes that were
//                       never copied out (a KV cache dropped), then restored.
// Checks, each a failure of the run when it does not hold: after the offload the device's free
// memory has grown by at least 98 % of the bytes offloaded; after the restore every allocation
// is at its address with its pattern intact (PATTERN_VERIFY kernels).
#include <tidal/tidal.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_support.h"

namespace {

using tidal_bench::median;
using tidal_bench::parse_size;

constexpr uint64_t MiB = uint64_t{1} << 20;
constexpr uint64_t GiB = uint64_t{1} << 30;

void ok(tidal_status s, const char *what)
{
    if (s != TIDAL_OK)
        tidal_bench::die("elastic-offload", s, what);
}

[[noreturn]] void fail(const std::string &what)
{
    std::fprintf(stderr, "elastic-offload: %s\n", what.c_str());
    std::exit(1);
}

double now(tidal_context *ctx)
{
    double s = 0.0;
    ok(tidal_clock(ctx, &s), "clock");
    return s;
}

// Sizes of `count` allocations summing to about `total`, mixed from 1/4 to 7/4 of the mean,
// each a multiple of 2 MiB (the granularity on the H200): reproducible, no two runs differ.
std::vector<uint64_t> mixed_sizes(uint64_t total, int count)
{
    std::vector<uint64_t> sizes;
    const uint64_t mean = total / static_cast<uint64_t>(count);
    uint64_t state = 0x9E3779B97F4A7C15u, sum = 0;
    for (int i = 0; i < count; ++i) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        const uint64_t quarter = (state >> 33) % 7; // 0..6 -> 1/4..7/4 of the mean
        uint64_t s = mean * (quarter + 1) / 4;
        s = std::max<uint64_t>(2 * MiB, s / (2 * MiB) * (2 * MiB));
        sizes.push_back(s);
        sum += s;
    }
    // Scale the last one so the whole is the asked total (to the granularity).
    if (sum < total)
        sizes.back() += (total - sum) / (2 * MiB) * (2 * MiB);
    return sizes;
}

uint64_t device_free(tidal_context *ctx)
{
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    ok(tidal_device_info_get(ctx, 0, &info), "device info");
    return info.free_memory;
}

void check_run(tidal_context *ctx, tidal_check_kind kind, void *target, const void *source, uint64_t size,
               uint64_t seed, uint64_t *result = nullptr)
{
    tidal_check c = TIDAL_CHECK_INIT;
    c.kind = kind;
    c.target = target;
    c.source = source;
    c.size = size;
    c.seed = seed;
    ok(tidal_check_run(ctx, &c), "check");
    if (result)
        *result = c.result;
}

struct Row {
    std::string name;
    uint64_t bytes;
    double seconds;      // median
    double home_seconds; // median, tidal rows only
};

} // namespace

int main(int argc, char **argv)
{
    std::string config;
    uint64_t total = 16 * GiB, discard = 32 * GiB;
    int allocations = 200, reps = 3;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--config" && i + 1 < argc)
            config = argv[++i];
        else if (a == "--total" && i + 1 < argc)
            total = parse_size(argv[++i]);
        else if (a == "--discard" && i + 1 < argc)
            discard = parse_size(argv[++i]);
        else if (a == "--allocations" && i + 1 < argc)
            allocations = std::atoi(argv[++i]);
        else if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--quick") {
            total = 256 * MiB;
            discard = 512 * MiB;
            allocations = 20;
            reps = 2;
        } else if (a == "--json")
            json = true;
        else {
            std::fprintf(stderr, "usage: elastic-offload [--config FILE] [--total 16GiB] [--allocations 200] "
                                 "[--discard 32GiB] [--reps 3] [--quick] [--json]\n");
            return 2;
        }
    }
    if (total == 0 || allocations <= 0 || static_cast<uint64_t>(allocations) * 2 * MiB > total)
        fail("--total must hold --allocations allocations of at least 2 MiB each");

    tidal_context *ctx = nullptr;
    ok(config.empty() ? tidal_context_create(&ctx) : tidal_context_create_from_file(config.c_str(), &ctx), "context");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    ok(tidal_system_info_get(ctx, &sys), "system info");

    const std::vector<uint64_t> sizes = mixed_sizes(total, allocations);
    uint64_t bytes = 0, largest = 0;
    for (uint64_t s : sizes) {
        bytes += s;
        largest = std::max(largest, s);
    }

    // The data: elastic allocations tagged "weights", each filled with its own pattern.
    std::vector<void *> ptrs;
    for (size_t i = 0; i < sizes.size(); ++i) {
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = TIDAL_KIND_ELASTIC;
        d.tag = "weights";
        void *p = nullptr;
        ok(tidal_alloc(ctx, sizes[i], &d, &p), "elastic allocation");
        check_run(ctx, TIDAL_CHECK_PATTERN_FILL, p, nullptr, sizes[i], 1000 + i);
        ptrs.push_back(p);
    }
    const std::vector<void *> addresses = ptrs;

    // The baseline's buffers: one device and one pinned buffer of the largest size.
    void *dev = nullptr, *pinned = nullptr;
    {
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = TIDAL_KIND_DEVICE;
        ok(tidal_alloc(ctx, largest, &d, &dev), "baseline device buffer");
        d.kind = TIDAL_KIND_PINNED;
        ok(tidal_alloc(ctx, largest, &d, &pinned), "baseline pinned buffer");
        std::memset(pinned, 7, largest);
    }
    auto baseline = [&](bool to_host) {
        const double t0 = now(ctx);
        for (uint64_t s : sizes)
            to_host ? check_run(ctx, TIDAL_CHECK_RUNTIME_COPY, pinned, dev, s, 0)
                    : check_run(ctx, TIDAL_CHECK_RUNTIME_COPY, dev, pinned, s, 0);
        return now(ctx) - t0;
    };

    // One offload+restore round, timed. Every chunk was written before it (the fill kernels),
    // so the offload copies all of it, as a model's weights after a training step.
    double free_gain = 0.0;
    auto round = [&](double *off_s, double *off_home, double *res_s, double *res_home, bool measure_free) {
        const uint64_t free_before = measure_free ? device_free(ctx) : 0;
        tidal_elastic_result r = TIDAL_ELASTIC_RESULT_INIT;
        double t0 = now(ctx);
        ok(tidal_offload(ctx, "weights*", 0, nullptr, &r), "offload");
        *off_s = now(ctx) - t0;
        *off_home = r.home_seconds;
        if (r.allocations != sizes.size())
            fail("offload matched " + std::to_string(r.allocations) + " allocations, not " + std::to_string(sizes.size()));
        if (measure_free)
            free_gain = static_cast<double>(device_free(ctx) - free_before) / static_cast<double>(bytes);
        tidal_elastic_result q = TIDAL_ELASTIC_RESULT_INIT;
        t0 = now(ctx);
        ok(tidal_restore(ctx, "weights*", 0, nullptr, &q), "restore");
        *res_s = now(ctx) - t0;
        *res_home = q.home_seconds;
        if (q.copied_bytes != bytes)
            fail("restore copied " + std::to_string(q.copied_bytes) + " bytes, not " + std::to_string(bytes));
    };

    // Warm-up: the first offload makes the host homes (reported, not in the medians).
    double warm_off = 0, warm_off_home = 0, warm_res = 0, warm_res_home = 0;
    round(&warm_off, &warm_off_home, &warm_res, &warm_res_home, true);
    const double first_free_gain = free_gain;
    baseline(true);
    baseline(false);

    std::vector<double> b_d2h, b_h2d, off, off_home, res, res_home;
    for (int r = 0; r < reps; ++r) {
        b_d2h.push_back(baseline(true));
        b_h2d.push_back(baseline(false));
        // Written again, so the offload must copy every chunk: a pattern fill per allocation.
        for (size_t i = 0; i < sizes.size(); ++i)
            check_run(ctx, TIDAL_CHECK_PATTERN_FILL, ptrs[i], nullptr, sizes[i], 1000 + i);
        ok(tidal_stream_synchronize(ctx, nullptr), "synchronise");
        double a, b, c, d;
        round(&a, &b, &c, &d, true);
        off.push_back(a);
        off_home.push_back(b);
        res.push_back(c);
        res_home.push_back(d);
    }

    // Contents and addresses after the last restore.
    uint64_t mismatches = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        ok(tidal_pointer_query(ctx, addresses[i], &info), "pointer query");
        if (info.base != addresses[i] || info.resident_bytes < sizes[i])
            fail("allocation " + std::to_string(i) + " moved or is not resident after the restore");
        uint64_t m = 0;
        check_run(ctx, TIDAL_CHECK_PATTERN_VERIFY, ptrs[i], nullptr, sizes[i], 1000 + i, &m);
        mismatches += m;
    }
    if (mismatches != 0)
        fail(std::to_string(mismatches) + " words differ after offload and restore");

    // Discard: a KV cache of --discard bytes in 64 allocations, dropped and brought back.
    double discard_s = 0.0, discard_restore_s = 0.0;
    {
        const int parts = 64;
        const uint64_t part = std::max<uint64_t>(2 * MiB, discard / parts / (2 * MiB) * (2 * MiB));
        std::vector<void *> kv;
        for (int i = 0; i < parts; ++i) {
            tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
            d.kind = TIDAL_KIND_ELASTIC;
            d.tag = "kv";
            void *p = nullptr;
            ok(tidal_alloc(ctx, part, &d, &p), "kv allocation");
            kv.push_back(p);
        }
        ok(tidal_stream_synchronize(ctx, nullptr), "synchronise");
        tidal_elastic_result r = TIDAL_ELASTIC_RESULT_INIT;
        double t0 = now(ctx);
        ok(tidal_offload(ctx, "kv", TIDAL_OFFLOAD_DISCARD, nullptr, &r), "discard");
        discard_s = now(ctx) - t0;
        if (r.copied_bytes != 0 || r.discarded_bytes != part * parts)
            fail("the discard copied " + std::to_string(r.copied_bytes) + " bytes and dropped " +
                 std::to_string(r.discarded_bytes));
        discard = part * parts;
        t0 = now(ctx);
        ok(tidal_restore(ctx, "kv", 0, nullptr, nullptr), "restore kv");
        discard_restore_s = now(ctx) - t0;
        for (void *p : kv)
            ok(tidal_free(ctx, p), "free kv");
    }

    const double bd = median(b_d2h), bh = median(b_h2d), o = median(off), r = median(res);
    auto gbs = [](uint64_t n, double s) { return static_cast<double>(n) / s / 1e9; };
    if (json) {
        std::printf("{\"runtime\": \"%s\", \"detail\": \"%s\", \"bytes\": %llu, \"allocations\": %d, \"reps\": %d,\n"
                    " \"baseline_d2h_s\": %.6f, \"baseline_h2d_s\": %.6f, \"offload_s\": %.6f, \"restore_s\": %.6f,\n"
                    " \"offload_ratio\": %.3f, \"restore_ratio\": %.3f, \"first_offload_s\": %.6f, "
                    "\"first_offload_home_s\": %.6f,\n \"free_gain\": %.4f, \"first_free_gain\": %.4f, "
                    "\"discard_bytes\": %llu, \"discard_s\": %.6f, \"discard_restore_s\": %.6f}\n",
                    sys.runtime, tidal_bench::json_escape(sys.runtime_detail).c_str(),
                    static_cast<unsigned long long>(bytes), allocations, reps, bd, bh, o, r, bd / o, bh / r, warm_off,
                    warm_off_home, free_gain, first_free_gain, static_cast<unsigned long long>(discard), discard_s,
                    discard_restore_s);
    } else {
        std::printf("runtime %s (%s)\n%d elastic allocations, %.2f GiB in all (mixed sizes, largest %.0f MiB); "
                    "median of %d, tidal_clock on both sides\n\n",
                    sys.runtime, sys.runtime_detail, allocations, static_cast<double>(bytes) / GiB,
                    static_cast<double>(largest) / MiB, reps);
        std::printf("%-44s %10s %9s %8s\n", "row", "seconds", "GB/s", "ratio");
        std::printf("%-44s %10.4f %9.2f %8s\n", "baseline: runtime copy device->pinned", bd, gbs(bytes, bd), "");
        std::printf("%-44s %10.4f %9.2f %7.3fx\n", "tidal_offload (copy out, unmap, release)", o, gbs(bytes, o), bd / o);
        std::printf("%-44s %10.4f %9.2f %8s\n", "baseline: runtime copy pinned->device", bh, gbs(bytes, bh), "");
        std::printf("%-44s %10.4f %9.2f %7.3fx\n", "tidal_restore (map, copy in)", r, gbs(bytes, r), bh / r);
        std::printf("\nfirst offload (makes the host homes): %.4f s, of which homes %.4f s\n", warm_off, warm_off_home);
        std::printf("device free memory gained by the offload: %.2f %% of the bytes offloaded (first round %.2f %%)\n",
                    100.0 * free_gain, 100.0 * first_free_gain);
        std::printf("discard of %.2f GiB in 64 allocations: %.2f ms; restore of it: %.2f ms\n",
                    static_cast<double>(discard) / GiB, discard_s * 1e3, discard_restore_s * 1e3);
        std::printf("contents and addresses after the restores: intact (%zu allocations verified)\n", sizes.size());
    }
    if (free_gain < 0.98)
        fail("the offload freed less than 98 % of its bytes on the device");
    for (void *p : ptrs)
        ok(tidal_free(ctx, p), "free");
    ok(tidal_free(ctx, dev), "free");
    ok(tidal_free(ctx, pinned), "free");
    ok(tidal_context_destroy(ctx), "context destroy");
    return 0;
}
