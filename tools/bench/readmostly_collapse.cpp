// readmostly-collapse: what collapsing read-mostly duplicates costs, measured on its own (the
// simulated device's [bandwidth] readmostly_collapse). tidal drops a clean read-mostly range
// from a device with advice alone (migration_scheduler.cpp, evict_unit): preferred location
// host, unset read-mostly, set read-mostly again, unset the preferred location. This times that
// sequence through tidal_advise on a range whose pages are duplicated on the device, and, for
// scale, the first prefetch that made the duplicates. Public API only; tidal_clock is the host
// clock on a GPU and the simulated clock on the simulated device, so the same program predicts
// the run from a profile.
//
//   readmostly-collapse [--runtime auto|sim|cuda|hip] [--profile h200] [--size 4GiB] [--reps 5] [--json FILE]
//
// Each repetition: allocate managed memory with read-mostly advice, write it on the host (its
// pages start there), prefetch it to device 0 (duplicates: the host keeps its copy), then the
// four advice calls; the allocation is freed before the next repetition. Median of --reps after
// one unrecorded warm-up. Exit 0 on success, 1 on an API error, 2 on bad usage.
#include <tidal/tidal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_support.h"

namespace {

[[noreturn]] void die(tidal_status s, const char *what)
{
    std::fprintf(stderr, "readmostly-collapse: %s: %s: %s\n", what, tidal_status_name(s), tidal_last_error());
    std::exit(1);
}

void ok(tidal_status s, const char *what)
{
    if (s != TIDAL_OK)
        die(s, what);
}

double now(tidal_context *ctx)
{
    double s = 0;
    ok(tidal_clock(ctx, &s), "clock");
    return s;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

uint64_t parse_size(const char *text)
{
    char *end = nullptr;
    double v = std::strtod(text, &end);
    const std::string unit(end ? end : "");
    if (unit == "KiB") v *= 1024.0;
    else if (unit == "MiB") v *= 1024.0 * 1024.0;
    else if (unit == "GiB") v *= 1024.0 * 1024.0 * 1024.0;
    else if (!unit.empty() && unit != "B") v = 0;
    return v > 0 ? static_cast<uint64_t>(v) : 0;
}

} // namespace

int main(int argc, char **argv)
{
    std::string runtime = "auto", profile = "h200", json_path;
    uint64_t size = uint64_t{4} << 30;
    int reps = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runtime" && i + 1 < argc) runtime = argv[++i];
        else if (a == "--profile" && i + 1 < argc) profile = argv[++i];
        else if (a == "--size" && i + 1 < argc) size = parse_size(argv[++i]);
        else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
        else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
        else {
            std::fprintf(stderr, "usage: readmostly-collapse [--runtime auto|sim|cuda|hip] [--profile h200] "
                                 "[--size 4GiB] [--reps 5] [--json FILE]\n");
            return 2;
        }
    }
    if (size == 0 || reps < 1) {
        std::fprintf(stderr, "readmostly-collapse: --size and --reps must be positive\n");
        return 2;
    }
    std::string config = "runtime = \"" + runtime + "\"\n";
    if (runtime == "sim")
        config += "[sim]\nprofile = \"" + profile + "\"\n";
    tidal_context *ctx = nullptr;
    ok(tidal_context_create_from_string(config.c_str(), &ctx), "context");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    ok(tidal_system_info_get(ctx, &sys), "system info");
    tidal_device_info dev = TIDAL_DEVICE_INFO_INIT;
    ok(tidal_device_info_get(ctx, 0, &dev), "device info");

    std::vector<double> collapse, duplicate;
    for (int rep = 0; rep <= reps; ++rep) {
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = TIDAL_KIND_MANAGED;
        d.device = 0;
        d.tag = "readmostly-collapse";
        void *p = nullptr;
        ok(tidal_alloc(ctx, size, &d, &p), "alloc");
        std::memset(p, 1, size); // the host writes it: its pages start on the host
        ok(tidal_advise(ctx, p, size, TIDAL_ADVICE_READ_MOSTLY, 0), "advise read-mostly");
        const double t0 = now(ctx);
        ok(tidal_prefetch(ctx, p, size, 0), "prefetch to the device");
        const double t1 = now(ctx);
        // The eviction's advice sequence, in its order.
        ok(tidal_advise(ctx, p, size, TIDAL_ADVICE_PREFERRED_HOST, 0), "advise preferred host");
        ok(tidal_advise(ctx, p, size, 0, TIDAL_ADVICE_READ_MOSTLY), "unset read-mostly");
        ok(tidal_advise(ctx, p, size, TIDAL_ADVICE_READ_MOSTLY, 0), "advise read-mostly again");
        ok(tidal_advise(ctx, p, size, 0, TIDAL_ADVICE_PREFERRED_HOST), "unset preferred host");
        const double t2 = now(ctx);
        ok(tidal_free(ctx, p), "free");
        if (rep == 0)
            continue; // warm-up
        duplicate.push_back(t1 - t0);
        collapse.push_back(t2 - t1);
    }
    const double c = median(collapse), dup = median(duplicate);
    const double gb = static_cast<double>(size) / 1e9;
    std::printf("readmostly-collapse: runtime %s (%s), device %s\n", sys.runtime, sys.runtime_detail, dev.name);
    if (dev.flags & TIDAL_DEVICE_FLAG_SIMULATED)
        std::printf("  (profile %s: times are its predictions)\n", profile.c_str());
    std::printf("%.0f MiB, median of %d after one warm-up (tidal_clock)\n", static_cast<double>(size) / 1048576.0, reps);
    std::printf("  first prefetch of read-mostly pages (duplicates) %9.4f s  %7.2f GB/s\n", dup, dup > 0 ? gb / dup : 0.0);
    std::printf("  collapse (4 advice calls, no copy)               %9.4f s  %7.2f GB/s\n", c, c > 0 ? gb / c : 0.0);
    if (!json_path.empty()) {
        FILE *f = json_path == "-" ? stdout : tidal_bench::open_output("readmostly-collapse", json_path);
        if (!f)
            return 1;
        std::fprintf(f, "{\"runtime\": \"%s\", \"device\": \"%s\", \"simulated\": %s, \"bytes\": %llu, \"reps\": %d,\n"
                        " \"duplicate_prefetch_s\": %.9f, \"collapse_s\": %.9f, \"collapse_gbs\": %.4f,\n"
                        " \"collapse_all_s\": [",
                     sys.runtime, dev.name, (dev.flags & TIDAL_DEVICE_FLAG_SIMULATED) ? "true" : "false",
                     static_cast<unsigned long long>(size), reps, dup, c, c > 0 ? gb / c : 0.0);
        for (size_t i = 0; i < collapse.size(); ++i)
            std::fprintf(f, "%s%.9f", i ? ", " : "", collapse[i]);
        std::fprintf(f, "]}\n");
        if (f != stdout)
            std::fclose(f);
    }
    ok(tidal_context_destroy(ctx), "destroy");
    return 0;
}
