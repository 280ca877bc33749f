// copy-bandwidth: host<->device copy rates through tidal_copy against the baselines measured in
// the same run: the runtime's own memcpy from pinned and from pageable memory (through
// tidal_check_run's RUNTIME_COPY, timed with runtime events), and the host's parallel memcpy
// rate with 1..N threads. Public API only. Median of --reps repetitions. The tidal copies are
// also timed on the runtime's clock (tidal_clock): on the simulated device, its modelled time.
// Two more columns split a staged copy into its halves, both on the wall clock: `pinW`, the
// pinned copy through tidal_copy (one runtime copy and a wait: the DMA half, timed as tidal's
// own column is), and `fill`, tidal_copy from the pageable buffer into pinned memory (host to
// host: tidal's memcpy threads alone, the host half).
//
//   copy-bandwidth [--config FILE] [--sizes 64MiB,256MiB,1GiB | --sweep] [--reps 5] [--json]
//
// --sweep: every power of two from 1 MiB to 1 GiB, pageable host->device and device->host;
// the target is ratio >= 0.8 from 16 MiB up (`meets_target` in the JSON, "ok"/"LOW" in the table).
#include <tidal/tidal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <sstream>
#include <thread>
#include <vector>

#include <toml++/toml.h>

#include "../common/parallel_memcpy.h"
#include "bench_support.h"

namespace {

using tidal_tool::parallel_memcpy;
using Clock = std::chrono::steady_clock;

using tidal_bench::median;
using tidal_bench::parse_size;

void die(tidal_status s, const char *what) { tidal_bench::die("copy-bandwidth", s, what); }

void ok(tidal_status s, const char *what)
{
    if (s != TIDAL_OK)
        die(s, what);
}

// GB/s of `bytes` moved by `run`, median over reps after one warm-up.
double rate(size_t bytes, int reps, const std::function<double()> &run_seconds)
{
    run_seconds();
    std::vector<double> r;
    for (int i = 0; i < reps; ++i)
        r.push_back(static_cast<double>(bytes) / run_seconds() / 1e9);
    return median(r);
}

double wall(const std::function<void()> &f)
{
    auto t0 = Clock::now();
    f();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The context's [copy] settings as one line ("batch_direct = true; chunk_size = ...", keys in
// order), read with toml++ from tidal_config_describe: a table of staged-copy rates says which
// way it staged.
std::string copy_settings(tidal_context *ctx)
{
    size_t needed = 0;
    (void)tidal_config_describe(ctx, nullptr, 0, &needed);
    std::string text(needed, '\0');
    ok(tidal_config_describe(ctx, text.data(), text.size(), nullptr), "config describe");
    text.resize(std::strlen(text.c_str()));
    std::string line;
    try {
        const toml::table settings = toml::parse(text);
        if (const toml::table *copy = settings["copy"].as_table())
            for (const auto &[key, value] : *copy) {
                std::ostringstream v;
                value.visit([&v](const auto &node) { v << node; });
                line += (line.empty() ? "" : "; ") + std::string(key.str()) + " = " + v.str();
            }
    } catch (const toml::parse_error &e) {
        std::fprintf(stderr, "copy-bandwidth: tidal_config_describe gave text toml++ cannot read: %s\n", e.what());
        std::exit(1);
    }
    return line;
}

} // namespace

int main(int argc, char **argv)
{
    std::string config;
    std::vector<size_t> sizes = {64u << 20, 256u << 20, 1u << 30};
    int reps = 5;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--config" && i + 1 < argc)
            config = argv[++i];
        else if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--json")
            json = true;
        else if (a == "--sweep") {
            sizes.clear();
            for (size_t sz = size_t{1} << 20; sz <= size_t{1} << 30; sz *= 2)
                sizes.push_back(sz);
        }
        else if (a == "--sizes" && i + 1 < argc) {
            sizes.clear();
            std::string list = argv[++i];
            for (size_t p = 0; p != std::string::npos;) {
                size_t q = list.find(',', p);
                sizes.push_back(parse_size(list.substr(p, q == std::string::npos ? q : q - p)));
                p = q == std::string::npos ? q : q + 1;
            }
        } else {
            std::fprintf(stderr, "usage: copy-bandwidth [--config FILE] [--sizes 64MiB,1GiB | --sweep] [--reps N] [--json]\n");
            return 2;
        }
    }
    tidal_context *ctx = nullptr;
    ok(config.empty() ? tidal_context_create(&ctx) : tidal_context_create_from_file(config.c_str(), &ctx), "context");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    ok(tidal_system_info_get(ctx, &sys), "system info");
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());

    const std::string copy = copy_settings(ctx);
    if (json)
        std::printf("{\"runtime\": \"%s\", \"detail\": \"%s\", \"host_threads\": %u, \"copy_settings\": \"%s\", \"results\": [\n",
                    sys.runtime, sys.runtime_detail, hw, tidal_bench::json_escape(copy).c_str());
    else
        std::printf("runtime %s (%s), %u host threads; GB/s, median of %d\n[copy] %s\n\n%-10s %-5s %8s %8s %8s %8s %8s %8s %8s     %8s %8s %8s\n",
                    sys.runtime, sys.runtime_detail, hw, reps, copy.c_str(), "size", "dir", "pinned", "pageable", "host1", "hostN",
                    "tidal", "regist.", "ratio", "clock", "pinW", "fill");
    constexpr size_t kTargetFrom = size_t{16} << 20; // the 0.8x target holds from here up
    bool first = true;
    for (size_t size : sizes) {
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = TIDAL_KIND_DEVICE;
        void *dev = nullptr, *pinned = nullptr;
        ok(tidal_alloc(ctx, size, &d, &dev), "device buffer");
        d.kind = TIDAL_KIND_PINNED;
        ok(tidal_alloc(ctx, size, &d, &pinned), "pinned buffer");
        // Pageable buffers the application owns, touched first (first touch is not the copy).
        char *page = static_cast<char *>(std::malloc(size)), *page2 = static_cast<char *>(std::malloc(size));
        if (!page || !page2)
            die(TIDAL_ERROR_OUT_OF_MEMORY, "malloc");
        std::memset(page, 1, size);
        std::memset(page2, 2, size);
        std::memset(pinned, 3, size);

        auto runtime_copy = [&](void *dst, const void *src) {
            tidal_check c = TIDAL_CHECK_INIT;
            c.kind = TIDAL_CHECK_RUNTIME_COPY;
            c.target = dst;
            c.source = src;
            c.size = size;
            ok(tidal_check_run(ctx, &c), "runtime copy");
            return c.elapsed_ms * 1e-3;
        };
        const double host1 = rate(size, reps, [&] { return wall([&] { std::memcpy(page2, page, size); }); });
        const double hostn = rate(size, reps, [&] { return wall([&] { parallel_memcpy(page2, page, size, hw); }); });
        for (int dir = 0; dir < 2; ++dir) {
            const bool h2d = dir == 0;
            const double pin = rate(size, reps, [&] { return h2d ? runtime_copy(dev, pinned) : runtime_copy(pinned, dev); });
            const double pag = rate(size, reps, [&] { return h2d ? runtime_copy(dev, page) : runtime_copy(page, dev); });
            std::vector<double> on_clock; // the same copies on the runtime's clock
            const double tid = rate(size, reps, [&] {
                double t0 = 0, t1 = 0;
                ok(tidal_clock(ctx, &t0), "clock");
                const double s = wall([&] { ok(h2d ? tidal_copy(ctx, dev, page, size) : tidal_copy(ctx, page, dev, size), "tidal_copy"); });
                ok(tidal_clock(ctx, &t1), "clock");
                on_clock.push_back(static_cast<double>(size) / (t1 - t0) / 1e9);
                return s;
            });
            on_clock.erase(on_clock.begin()); // the warm-up
            const double tid_clock = median(on_clock);
            ok(tidal_register(ctx, page, size), "register");
            const double reg = rate(size, reps, [&] {
                return wall([&] { ok(h2d ? tidal_copy(ctx, dev, page, size) : tidal_copy(ctx, page, dev, size), "tidal_copy registered"); });
            });
            ok(tidal_unregister(ctx, page), "unregister");
            const double pin_wall = rate(size, reps, [&] {
                return wall([&] { ok(h2d ? tidal_copy(ctx, dev, pinned, size) : tidal_copy(ctx, pinned, dev, size), "tidal_copy pinned"); });
            });
            const double fill = rate(size, reps, [&] {
                return wall([&] { ok(h2d ? tidal_copy(ctx, pinned, page, size) : tidal_copy(ctx, page, pinned, size), "tidal_copy host"); });
            });
            const double bound = std::min(pin, hostn);
            const char *verdict = size < kTargetFrom ? "-" : tid / bound >= 0.8 ? "ok" : "LOW";
            if (json)
                std::printf("%s  {\"bytes\": %zu, \"direction\": \"%s\", \"pinned_runtime\": %.2f, \"pageable_runtime\": %.2f, "
                            "\"host_memcpy_1\": %.2f, \"host_memcpy_n\": %.2f, \"tidal_copy_pageable\": %.2f, "
                            "\"tidal_copy_registered\": %.2f, \"ratio_to_bound\": %.3f, \"registered_to_pinned\": %.3f, "
                            "\"meets_target\": %s, \"tidal_copy_pageable_clock\": %.2f, \"pinned_tidal_wall\": %.2f, \"host_fill\": %.2f}",
                            first ? "" : ",\n", size, h2d ? "h2d" : "d2h", pin, pag, host1, hostn, tid, reg, tid / bound,
                            reg / pin, size < kTargetFrom ? "null" : tid / bound >= 0.8 ? "true" : "false", tid_clock, pin_wall, fill);
            else
                std::printf("%-10zu %-5s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %7.2fx %-3s %8.1f %8.1f %8.1f\n", size,
                            h2d ? "h2d" : "d2h", pin, pag, host1, hostn, tid, reg, tid / bound, verdict, tid_clock, pin_wall, fill);
            first = false;
        }
        std::free(page);
        std::free(page2);
        tidal_free(ctx, dev);
        tidal_free(ctx, pinned);
    }
    if (json)
        std::printf("\n]}\n");
    else
        std::printf("\nratio = tidal (pageable) / min(pinned runtime copy, host parallel memcpy); target >= 0.8 from 16 MiB\n"
                    "regist. = tidal_copy from memory registered with tidal_register; target >= 0.9 x pinned\n"
                    "clock = the tidal column on the runtime's clock (tidal_clock): the simulated device's modelled\n"
                    "        time, where the wall clock shows this machine's memcpy; a GPU runtime's host clock\n"
                    "pinned = runtime copy timed with runtime events; pinW = the same copy through tidal_copy on the wall\n"
                    "        clock; fill = tidal_copy between the pageable and the pinned buffer (host threads only)\n");
    ok(tidal_context_destroy(ctx), "destroy");
    return 0;
}
