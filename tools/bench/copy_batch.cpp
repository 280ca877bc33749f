// copy-batch: many small copies one call each against one tidal_copy_batch, in one run.
//
// N copies of S bytes between a host buffer (pinned, or pageable malloc memory) and scattered
// slots of a device buffer, host->device and device->host:
//   separate  one tidal_copy_async per item on one stream, then a synchronize. From pinned
//             memory each is one runtime memcpy (cudaMemcpyAsync / hipMemcpyAsync) plus tidal's
//             per-call overhead: the runtime-call baseline. From pageable memory each is a
//             staged copy through tidal's pinned ring.
//   batch     one tidal_copy_batch of the same items on the same stream, then a synchronize.
// Times come from tidal_clock (the simulated clock on the simulated device, so the same
// program predicts a profile), median of --reps after one warm-up of each. The data is checked
// once (host -> device -> host by batches) before timing. Public API only.
//
//   copy-batch [--config FILE] [--count N] [--size BYTES] [--reps R] [--json FILE]
#include <tidal/tidal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_support.h"

namespace {

using tidal_bench::json_escape;
using tidal_bench::median;
using tidal_bench::parse_size;

void ok(tidal_status s, const char *what)
{
    if (s != TIDAL_OK)
        tidal_bench::die("copy-batch", s, what);
}

struct Row {
    const char *direction, *host;
    double separate = 0, batch = 0, call = 0; // seconds: tidal_clock, tidal_clock, host wall clock
};

class Bench {
public:
    Bench(tidal_context *ctx, size_t count, size_t size, int reps) : ctx_(ctx), n_(count), s_(size), reps_(reps)
    {
        ok(tidal_stream_create(ctx_, 0, &stream_), "stream");
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = TIDAL_KIND_DEVICE;
        ok(tidal_alloc(ctx_, 2 * n_ * s_, &d, &device_), "device buffer");
        d.kind = TIDAL_KIND_PINNED;
        ok(tidal_alloc(ctx_, n_ * s_, &d, &pinned_), "pinned buffer");
        pageable_ = std::malloc(n_ * s_);
        check_ = std::malloc(n_ * s_);
        if (!pageable_ || !check_)
            tidal_bench::die("copy-batch", TIDAL_ERROR_OUT_OF_MEMORY, "malloc");
        std::memset(pageable_, 1, n_ * s_); // first touch is not the copy
        std::memset(check_, 0, n_ * s_);
        for (size_t i = 0; i < n_ * s_; ++i)
            static_cast<unsigned char *>(pinned_)[i] = static_cast<unsigned char>(i * 131 + i / 4093);
    }
    ~Bench()
    {
        tidal_free(ctx_, device_);
        tidal_free(ctx_, pinned_);
        std::free(pageable_);
        std::free(check_);
        tidal_stream_destroy(ctx_, stream_);
    }

    // Item i: host slot i <-> device slot perm(i), two slots apart so no two are adjacent.
    std::vector<tidal_copy_item> items(bool to_device, void *host) const
    {
        std::vector<tidal_copy_item> v(n_);
        for (size_t i = 0; i < n_; ++i) {
            char *dev = static_cast<char *>(device_) + ((i * 7919) % n_) * 2 * s_;
            char *h = static_cast<char *>(host) + i * s_;
            v[i] = TIDAL_COPY_ITEM_INIT;
            v[i].dst = to_device ? static_cast<void *>(dev) : h;
            v[i].src = to_device ? static_cast<const void *>(h) : dev;
            v[i].size = s_;
        }
        return v;
    }

    bool data_survives_a_round_trip()
    {
        auto up = items(true, pinned_), down = items(false, check_);
        ok(tidal_copy_batch(ctx_, up.data(), up.size(), stream_), "check: batch to the device");
        ok(tidal_copy_batch(ctx_, down.data(), down.size(), stream_), "check: batch back");
        ok(tidal_stream_synchronize(ctx_, stream_), "check: synchronize");
        return std::memcmp(pinned_, check_, n_ * s_) == 0;
    }

    Row run(bool to_device, bool pinned)
    {
        Row row{to_device ? "h2d" : "d2h", pinned ? "pinned" : "pageable"};
        const auto v = items(to_device, pinned ? pinned_ : pageable_);
        std::vector<double> separate, batch, call;
        for (int r = 0; r <= reps_; ++r) { // r = 0: warm-up (staging buffers, streams)
            const double a = timed([&] {
                for (const tidal_copy_item &it : v)
                    ok(tidal_copy_async(ctx_, it.dst, it.src, it.size, stream_), "tidal_copy_async");
            });
            const auto t0 = std::chrono::steady_clock::now();
            double c = 0;
            const double b = timed([&] {
                ok(tidal_copy_batch(ctx_, v.data(), v.size(), stream_), "tidal_copy_batch");
                c = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            });
            if (r > 0) {
                separate.push_back(a);
                batch.push_back(b);
                call.push_back(c);
            }
        }
        row.separate = median(separate);
        row.batch = median(batch);
        row.call = median(call);
        return row;
    }

    size_t bytes() const { return n_ * s_; }

private:
    // tidal_clock seconds of `work` plus a synchronize of the stream.
    double timed(const std::function<void()> &work)
    {
        double t0 = 0, t1 = 0;
        ok(tidal_stream_synchronize(ctx_, stream_), "synchronize");
        ok(tidal_clock(ctx_, &t0), "tidal_clock");
        work();
        ok(tidal_stream_synchronize(ctx_, stream_), "synchronize");
        ok(tidal_clock(ctx_, &t1), "tidal_clock");
        return t1 - t0;
    }

    tidal_context *ctx_;
    size_t n_, s_;
    int reps_;
    void *stream_ = nullptr, *device_ = nullptr, *pinned_ = nullptr, *pageable_ = nullptr, *check_ = nullptr;
};

} // namespace

int main(int argc, char **argv)
{
    std::string config, json;
    size_t count = 1000, size = 4096;
    int reps = 20;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--config" && i + 1 < argc)
            config = argv[++i];
        else if (a == "--json" && i + 1 < argc)
            json = argv[++i];
        else if (a == "--count" && i + 1 < argc)
            count = parse_size(argv[++i]);
        else if (a == "--size" && i + 1 < argc)
            size = parse_size(argv[++i]);
        else if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else {
            std::fprintf(stderr, "usage: copy-batch [--config FILE] [--count N] [--size BYTES|4KiB] [--reps R] [--json FILE]\n");
            return 2;
        }
    }
    if (count == 0 || size == 0) {
        std::fprintf(stderr, "copy-batch: --count and --size must be above 0\n");
        return 2;
    }
    tidal_context *ctx = nullptr;
    ok(config.empty() ? tidal_context_create(&ctx) : tidal_context_create_from_file(config.c_str(), &ctx), "context");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    ok(tidal_system_info_get(ctx, &sys), "system info");
    tidal_device_info dev = TIDAL_DEVICE_INFO_INIT;
    ok(tidal_device_info_get(ctx, 0, &dev), "device info");
    const bool simulated = dev.flags & TIDAL_DEVICE_FLAG_SIMULATED;

    std::vector<Row> rows;
    bool intact = false;
    {
        Bench bench(ctx, count, size, reps);
        intact = bench.data_survives_a_round_trip();
        for (bool to_device : {true, false})
            for (bool pinned : {true, false})
                rows.push_back(bench.run(to_device, pinned));
    }
    const double bytes = static_cast<double>(count) * static_cast<double>(size);
    std::printf("runtime %s (%s), device %s\n%zu copies of %zu bytes to/from scattered device slots; median of %d; "
                "times from tidal_clock%s\ndata check (host->device->host by batches): %s\n\n",
                sys.runtime, sys.runtime_detail, dev.name, count, size, reps,
                simulated ? " (the SIMULATED clock: a prediction from the profile)" : "", intact ? "intact" : "CORRUPTED");
    std::printf("%-4s %-9s %12s %12s %10s %10s %8s %12s\n", "dir", "host", "separate ms", "batch ms", "sep GB/s",
                "batch GB/s", "ratio", "call ms");
    for (const Row &r : rows)
        std::printf("%-4s %-9s %12.3f %12.3f %10.2f %10.2f %7.1fx %12.3f\n", r.direction, r.host, r.separate * 1e3,
                    r.batch * 1e3, bytes / r.separate / 1e9, bytes / r.batch / 1e9, r.separate / r.batch, r.call * 1e3);
    std::printf("\nseparate = one tidal_copy_async per item on one stream: from pinned memory each is one runtime\n"
                "  memcpy (cudaMemcpyAsync / hipMemcpyAsync) plus tidal's per-call overhead, the runtime-call\n"
                "  baseline; from pageable memory each is a staged copy.\n"
                "batch = one tidal_copy_batch of the same items. ratio = separate / batch time (target for h2d\n"
                "  pinned, 1000 x 4 KiB on the H200: >= 10x). call ms = host wall time until tidal_copy_batch returned.\n");

    if (!json.empty()) {
        std::FILE *f = tidal_bench::open_output("copy-batch", json);
        if (!f)
            return 1;
        std::fprintf(f,
                     "{\"runtime\": \"%s\", \"detail\": \"%s\", \"device\": \"%s\", \"simulated\": %s, \"count\": %zu, "
                     "\"size\": %zu, \"reps\": %d, \"intact\": %s, \"results\": [\n",
                     json_escape(sys.runtime).c_str(), json_escape(sys.runtime_detail).c_str(), json_escape(dev.name).c_str(),
                     simulated ? "true" : "false", count, size, reps, intact ? "true" : "false");
        for (size_t i = 0; i < rows.size(); ++i) {
            const Row &r = rows[i];
            std::fprintf(f,
                         "  {\"direction\": \"%s\", \"host\": \"%s\", \"separate_s\": %.9g, \"batch_s\": %.9g, "
                         "\"separate_gbps\": %.4g, \"batch_gbps\": %.4g, \"ratio\": %.4g, \"batch_call_wall_s\": %.9g}%s\n",
                         r.direction, r.host, r.separate, r.batch, bytes / r.separate / 1e9, bytes / r.batch / 1e9,
                         r.separate / r.batch, r.call, i + 1 < rows.size() ? "," : "");
        }
        std::fprintf(f, "]}\n");
        std::fclose(f);
    }
    ok(tidal_context_destroy(ctx), "destroy");
    return intact ? 0 : 1;
}
