// trace-cost: what TIDAL_TRACE adds to a pooled tidal_alloc + tidal_free pair (public API only).
// Two contexts of one configuration, one recording a trace: bursts of BURST pairs each (small
// enough that the trace's per-thread ring never fills), timed one burst at a time, with a pause
// between bursts in which the writer thread empties the ring -- the case the trace is made
// for: calls between work, not a loop of nothing but calls. The median ns per pair of each,
// and the difference. Then, separately, how many events per second the writer sustains when
// the program does nothing but call (the rate beyond which a thread waits for it), and how many
// events waited (the trace's end record says).
//
//   trace-cost [--runtime sim|cuda|hip|auto] [--size BYTES] [--rounds N] [--json]
//
// The trace goes to a file in $TMPDIR (default /tmp), removed afterwards.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <tidal/tidal.h>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBurst = 500; // pairs: 1000 events, a quarter of a ring

struct Options {
    std::string runtime = "sim";
    size_t size = 256;
    int rounds = 400;
    bool json = false;
};

tidal_context *open(const Options &o, const std::string &trace)
{
    std::string toml = "runtime = \"" + o.runtime + "\"\nlog_level = \"error\"\n";
    if (!trace.empty())
        toml += "[telemetry]\ntrace = \"" + trace + "\"\n";
    tidal_context *ctx = nullptr;
    if (tidal_context_create_from_string(toml.c_str(), &ctx) != TIDAL_OK) {
        std::fprintf(stderr, "trace-cost: %s\n", tidal_last_error());
        std::exit(1);
    }
    return ctx;
}

double burst(tidal_context *ctx, const tidal_alloc_desc &d, size_t size, int pairs)
{
    const auto t0 = Clock::now();
    for (int i = 0; i < pairs; ++i) {
        void *p = nullptr;
        if (tidal_alloc(ctx, size, &d, &p) != TIDAL_OK || tidal_free(ctx, p) != TIDAL_OK) {
            std::fprintf(stderr, "trace-cost: %s\n", tidal_last_error());
            std::exit(1);
        }
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / pairs;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runtime" && i + 1 < argc)
            o.runtime = argv[++i];
        else if (a == "--size" && i + 1 < argc)
            o.size = std::strtoull(argv[++i], nullptr, 0);
        else if (a == "--rounds" && i + 1 < argc)
            o.rounds = std::max(1, std::atoi(argv[++i]));
        else if (a == "--json")
            o.json = true;
        else {
            std::fprintf(stderr, "usage: trace-cost [--runtime R] [--size BYTES] [--rounds N] [--json]\n");
            return 2;
        }
    }
    const char *dir = std::getenv("TMPDIR");
    const std::string trace = std::string(dir && *dir ? dir : "/tmp") + "/tidal-trace-cost-" + std::to_string(getpid()) + ".jsonl";
    unsetenv("TIDAL_TRACE"); // the untraced context must be untraced
    tidal_context *plain = open(o, ""), *traced = open(o, trace);
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = TIDAL_KIND_DEVICE;
    burst(plain, d, o.size, 2000); // warm: pools, thread caches, decision caches, the ring
    burst(traced, d, o.size, 2000);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::vector<double> off, on;
    for (int r = 0; r < o.rounds; ++r) {
        // Alternate, so that drift on the machine falls on both alike.
        off.push_back(burst(plain, d, o.size, kBurst));
        on.push_back(burst(traced, d, o.size, kBurst));
        std::this_thread::sleep_for(std::chrono::milliseconds(2)); // the writer empties the ring
    }
    // Sustained: nothing but calls, for long enough that the ring fills and the thread waits.
    const int sustained_pairs = 200000;
    const auto t0 = Clock::now();
    burst(traced, d, o.size, sustained_pairs);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    tidal_context_destroy(traced);
    tidal_context_destroy(plain);
    std::FILE *f = std::fopen(trace.c_str(), "r");
    long bytes = 0;
    unsigned long long waits = 0; // the end record's "ring_full_waits": events that waited for the writer
    if (f) {
        std::fseek(f, 0, SEEK_END);
        bytes = std::ftell(f);
        char end[256] = {};
        std::fseek(f, std::max(0L, bytes - static_cast<long>(sizeof end) + 1), SEEK_SET);
        const size_t n = std::fread(end, 1, sizeof end - 1, f);
        end[n] = '\0';
        if (const char *w = std::strstr(end, "\"ring_full_waits\":"))
            waits = std::strtoull(w + std::strlen("\"ring_full_waits\":"), nullptr, 10);
        std::fclose(f);
    }
    std::remove(trace.c_str());
    const double m_off = median(off), m_on = median(on);
    const double events_per_s = 2.0 * sustained_pairs / seconds;
    const long events = 2L * (2000 + kBurst * o.rounds + sustained_pairs);
    if (o.json) {
        std::printf("{\"runtime\":\"%s\",\"size\":%zu,\"rounds\":%d,\"burst_pairs\":%d,\"ns_per_pair_untraced\":%.1f,"
                    "\"ns_per_pair_traced\":%.1f,\"ns_added_per_pair\":%.1f,\"sustained_events_per_s\":%.0f,"
                    "\"trace_bytes_per_event\":%.0f,\"ring_full_waits\":%llu}\n",
                    o.runtime.c_str(), o.size, o.rounds, kBurst, m_off, m_on, m_on - m_off, events_per_s,
                    events ? static_cast<double>(bytes) / events : 0.0, waits);
    } else {
        std::printf("pooled %zu-byte device pairs on %s, median of %d bursts of %d pairs\n", o.size, o.runtime.c_str(),
                    o.rounds, kBurst);
        std::printf("  untraced   %8.1f ns per pair\n  traced     %8.1f ns per pair\n  added      %8.1f ns per pair"
                    " (target <= 150)\n",
                    m_off, m_on, m_on - m_off);
        std::printf("writer, calls back to back: %.2e events/s sustained (%.0f bytes of trace per event)\n",
                    events_per_s, events ? static_cast<double>(bytes) / events : 0.0);
        std::printf("events that found their ring full and waited for the writer: %llu\n", waits);
    }
    return 0;
}
