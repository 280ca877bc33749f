// scaling: what tidal's per-call costs do as the program grows. With N live 4 KiB pooled
// device allocations kept, one row per N: an alloc+free pair, tidal_pointer_query of an
// interior pointer of a random live allocation (and, query(set), of a random one of 1 000 spread
// evenly through the N: the cost of a lookup as other allocations are added, which the caches do
// not hide when the queried set itself grows; the sizes timed interleaved, see
// measure_query_sets), tidal_copy of 64 bytes between interior
// ranges of two random live allocations, tidal_copy_batch of N such items (per item), and
// tidal's host memory per live allocation, measured: the process's resident set before and
// after the N allocations, divided by N (registry and pool bookkeeping; device memory of the
// simulated device is host memory that nothing touches), and the process's memory on
// transparent huge pages with them live. A second table: tidal_declare of N
// single-allocation managed ranges in one call (per range), in allocation order and shuffled,
// the sizes' repetitions interleaved in short slices (see main).
// Wall clock, median of --reps runs; the query and the declarations also in the thread's CPU
// time (a loaded machine's wall clock counts waits for a core).
// The query's addresses are computed before it is timed and read in order: picking them from
// the array of N pointers at random was a cache miss of the benchmark's own at 10^6 (8 MB).
//
// --threads R: at the largest N (--threads-only: at --max), 1, 2, 4, ... R threads doing interior
// queries while --churn C other threads allocate and free; then queries each followed by an
// interior tidal_copy between pinned host allocations (the copy engine's host path), then between
// device allocations (the runtime's copy: serialised by the simulated device). Per row: the
// readers' total calls/s, the churning threads' pairs/s, and the speed-up over one reader with
// the same C churning. --seconds S: how long each row runs (default 2).
//
//   scaling [--runtime sim] [--max N] [--quick] [--reps R] [--threads R] [--churn C] [--seconds S] [--threads-only]
//           [--declare-only] [--json]
// --quick: N = 10^3 and 10^4 only, fewer calls (the bench-smoke test); --max N: sizes up to N;
// --declare-only: the declaration table alone;
// --json: the same figures as one JSON object on stdout instead of the tables.
// Public API only.
#include <tidal/tidal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include "bench_support.h"

namespace {
using Clock = std::chrono::steady_clock;
constexpr const char *kProgram = "scaling";
constexpr size_t kBlock = 4096, kCopy = 64;
constexpr size_t kSet = 1000; // the query(set) column's working set of allocations
constexpr size_t kDeclareSlices = 10; // timed slices of each declaration row per round
constexpr size_t kQuerySlices = 10; // timed slices of each query(set) row per round

void check(tidal_status s, const char *what)
{
    if (s != TIDAL_OK)
        tidal_bench::die(kProgram, s, what);
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The process's anonymous memory on transparent huge pages (0 where the kernel gives none):
// says whether the registry's tables got the huge pages they ask for once many allocations live.
size_t huge_kib()
{
    FILE *f = std::fopen("/proc/self/smaps_rollup", "r");
    size_t kib = 0;
    char line[256];
    while (f && std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "AnonHugePages: %zu kB", &kib) == 1)
            break;
    if (f)
        std::fclose(f);
    return kib;
}

size_t resident_bytes()
{
    FILE *f = std::fopen("/proc/self/statm", "r");
    unsigned long pages = 0, resident = 0;
    if (f) {
        if (std::fscanf(f, "%lu %lu", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

tidal_context *open(const std::string &runtime)
{
    const std::string toml = "runtime = \"" + runtime + "\"\nlog_level = \"error\"\n";
    tidal_context *ctx = nullptr;
    check(tidal_context_create_from_string(toml.c_str(), &ctx), "tidal_context_create");
    return ctx;
}

std::vector<char *> allocate(tidal_context *ctx, size_t n, tidal_kind kind)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = kind;
    std::vector<char *> live(n);
    for (auto &p : live)
        check(tidal_alloc(ctx, kBlock, &d, reinterpret_cast<void **>(&p)), "tidal_alloc");
    return live;
}

void release(tidal_context *ctx, const std::vector<char *> &live)
{
    for (char *p : live)
        check(tidal_free(ctx, p), "tidal_free");
}

// Median over `reps` runs of the ns per call of `run(calls)`.
template <typename F> double per_call_ns(int reps, size_t calls, F &&run)
{
    std::vector<double> v;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        run(calls);
        v.push_back(seconds_since(t0) * 1e9 / static_cast<double>(calls));
    }
    return tidal_bench::median(v);
}

// The calling thread's CPU time: on a loaded machine, the wall clock also counts the time the
// thread waited for a core.
double thread_cpu_seconds()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// tidal_pointer_query of addresses[from, from + count), in order.
void query_each(tidal_context *ctx, const std::vector<const char *> &addresses, size_t from, size_t count)
{
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    for (size_t i = from; i < from + count; ++i)
        check(tidal_pointer_query(ctx, addresses[i], &info), "tidal_pointer_query");
}

// The interleaving the declaration table and the query(set) column share: `rounds` times
// `slices` passes over `rows` rows, each pass starting one row further on (so no row always
// follows the same other one); sample(row, slice) times one slice of a row.
template <typename Sample> void in_turn(int rounds, size_t slices, size_t rows, Sample &&sample)
{
    for (int round = 0; round < rounds; ++round)
        for (size_t s = 0; s < slices; ++s)
            for (size_t i = 0; i < rows; ++i)
                sample((i + s) % rows, s);
}

struct Floor {
    double overlapped_ns, dependent_ns;
};

struct Row {
    size_t live;
    double pair_ns, query_ns, query_cpu_ns, query_set_ns, copy_ns, batch_ns, bytes_per_live;
    size_t huge_kib; // with the N allocations live
    Floor floor;
};

// What a lookup of these addresses costs on this machine with no tidal code: the same order of
// the same number of blocks over a stand-in of the registry's layout, a table of one 128-byte
// entry per 4 KiB block (a page's two hints, AddressIndex::Hint), in memory advised as huge pages
// as the registry's is; per lookup, the entry's first 64-byte line (a hint: the node and the
// copy of the record's head) copied out and checked. Two figures: lookups one after the other
// as a loop makes them (the processor overlaps the misses of many: a throughput), and each
// lookup's address made to depend on the line before (nothing overlaps: the latency of one
// miss, which a single query cannot go below). Before 2026-12-03 (session 15) the stand-in
// was the two-level layout of that time: a 16-byte entry naming a 208-byte node, the entry
// then the node's 144-byte record; its figures are in the results up to session 14.
Floor floor_ns(size_t n, const std::vector<uint32_t> &order, int reps)
{
    constexpr size_t kEntry = 128, kLine = 64, kKeyAt = 8, kHuge = size_t{2} << 20;
    auto huge = [&](size_t bytes) {
        bytes = (bytes + kHuge - 1) / kHuge * kHuge;
        void *p = std::aligned_alloc(kHuge, bytes);
        if (!p)
            tidal_bench::die(kProgram, TIDAL_ERROR_OUT_OF_MEMORY, "the floor's table");
        madvise(p, bytes, MADV_HUGEPAGE);
        std::memset(p, 0, bytes);
        return static_cast<unsigned char *>(p);
    };
    unsigned char *table = huge(n * kEntry);
    for (size_t i = 0; i < n; ++i)
        std::memcpy(table + i * kEntry + kKeyAt, &i, sizeof i);
    static volatile size_t zero = 0; // read at run time: the compiler cannot drop the dependency
    const size_t z = zero;
    size_t found = 0;
    auto lookups = [&](size_t k, bool dependent) {
        size_t key = 0;
        for (size_t i = 0; i < k; ++i) {
            alignas(64) unsigned char line[kLine];
            const size_t j = order[i] + (dependent ? (key & z) : 0);
            std::memcpy(line, table + j * kEntry, kLine);
            asm volatile("" : : "r"(line) : "memory"); // the whole line is copied, as the query's head is
            std::memcpy(&key, line + kKeyAt, sizeof key);
            found += key == order[i];
        }
    };
    Floor f{};
    f.overlapped_ns = per_call_ns(reps, order.size(), [&](size_t k) { lookups(k, false); });
    f.dependent_ns = per_call_ns(reps, order.size(), [&](size_t k) { lookups(k, true); });
    if (found != 2 * order.size() * static_cast<size_t>(reps))
        tidal_bench::die(kProgram, TIDAL_ERROR_INTERNAL, "the floor's lookups");
    std::free(table);
    return f;
}

Row measure(const std::string &runtime, size_t n, size_t calls, int reps)
{
    tidal_context *ctx = open(runtime);
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = TIDAL_KIND_DEVICE;
    { // warm the pool's first slab and the context's lazy parts outside the memory figure
        void *p = nullptr;
        check(tidal_alloc(ctx, kBlock, &d, &p), "tidal_alloc");
        check(tidal_free(ctx, p), "tidal_free");
    }
    const size_t rss0 = resident_bytes();
    const std::vector<char *> live = allocate(ctx, n, TIDAL_KIND_DEVICE);
    const size_t rss1 = resident_bytes();
    Row row{n, 0, 0, 0, 0, 0, 0, rss1 > rss0 ? static_cast<double>(rss1 - rss0) / static_cast<double>(n) : 0.0, huge_kib(), {}};

    std::mt19937_64 rng(n);
    std::vector<uint32_t> order(calls);
    for (auto &i : order)
        i = static_cast<uint32_t>(rng() % n);
    std::vector<const char *> interior(calls);
    for (size_t i = 0; i < calls; ++i)
        interior[i] = live[order[i]] + 1 + i % (kBlock - 1);

    row.pair_ns = per_call_ns(reps, calls, [&](size_t k) {
        for (size_t i = 0; i < k; ++i) {
            void *p = nullptr;
            check(tidal_alloc(ctx, kBlock, &d, &p), "tidal_alloc");
            check(tidal_free(ctx, p), "tidal_free");
        }
    });
    std::vector<double> cpu;
    row.query_ns = per_call_ns(reps, calls, [&](size_t k) {
        const double c0 = thread_cpu_seconds();
        query_each(ctx, interior, 0, k);
        cpu.push_back((thread_cpu_seconds() - c0) * 1e9 / static_cast<double>(k));
    });
    row.query_cpu_ns = tidal_bench::median(cpu);
    row.floor = floor_ns(n, order, reps);
    row.copy_ns = per_call_ns(reps, calls, [&](size_t k) {
        for (size_t i = 0; i < k; ++i)
            check(tidal_copy(ctx, live[order[i]] + 0x100, live[order[(i + 1) % k]] + 0x800, kCopy), "tidal_copy");
    });
    std::vector<tidal_copy_item> items(n);
    for (size_t i = 0; i < n; ++i) { // destinations and sources at different offsets: no overlaps
        items[i] = TIDAL_COPY_ITEM_INIT;
        items[i].dst = live[i] + 0x100;
        items[i].src = live[(i + 1) % n] + 0x800;
        items[i].size = kCopy;
    }
    row.batch_ns = per_call_ns(reps, n, [&](size_t k) { check(tidal_copy_batch(ctx, items.data(), k, nullptr), "tidal_copy_batch"); });
    release(ctx, live);
    tidal_context_destroy(ctx);
    return row;
}

// The query(set) column of every row: interior queries of a random one of kSet blocks spread
// evenly through the n live (all of them at n = kSet), the same addresses measure() made for
// its query column: what a lookup costs when the number of *other* live allocations grows,
// apart from the caches missing on a set that itself grows. Timed one size after the other, a
// spell of the host running slower fell on whole rows (H200, sessions 8-9: 1.5x was missed by
// 17 and 35 ns in 2 runs of 10, ARCHITECTURE "Not built yet"), so, as the declaration table does (see
// main), a context per size, all live at once, and in each of `reps` rounds kQuerySlices slices
// of calls / kQuerySlices queries of each size in turn, each after one untimed query of every
// block of its set (the set is small enough to stay in the caches between a row's queries; the
// other rows' slices would otherwise have evicted it); the median per row over every slice.
// The plain query column stays in measure(): spread over all n, its cache state is what the
// queries before it left, which slices of other sizes between would change.
void measure_query_sets(const std::string &runtime, std::vector<Row> &table, size_t calls, int reps)
{
    struct Size {
        tidal_context *ctx;
        std::vector<char *> live;
        std::vector<const char *> in_set, warm;
    };
    std::vector<Size> sizes;
    for (const Row &r : table) {
        const size_t n = r.live, set = std::min(kSet, n);
        Size z{open(runtime), {}, std::vector<const char *>(calls), std::vector<const char *>(set)};
        z.live = allocate(z.ctx, n, TIDAL_KIND_DEVICE);
        std::mt19937_64 rng(n); // the blocks measure()'s query column picked, in the same order
        for (size_t i = 0; i < calls; ++i)
            z.in_set[i] = z.live[(rng() % n % set) * n / set] + 1 + i % (kBlock - 1);
        for (size_t k = 0; k < set; ++k)
            z.warm[k] = z.live[k * n / set] + 1 + k % (kBlock - 1);
        sizes.push_back(std::move(z));
    }
    const size_t slice = calls / kQuerySlices;
    std::vector<std::vector<double>> ns(table.size());
    in_turn(reps, kQuerySlices, table.size(), [&](size_t k, size_t s) {
        const Size &z = sizes[k];
        query_each(z.ctx, z.warm, 0, z.warm.size());
        const auto t0 = Clock::now();
        query_each(z.ctx, z.in_set, s * slice, slice);
        ns[k].push_back(seconds_since(t0) * 1e9 / static_cast<double>(slice));
    });
    for (size_t k = 0; k < table.size(); ++k) {
        table[k].query_set_ns = tidal_bench::median(ns[k]);
        release(sizes[k].ctx, sizes[k].live);
        tidal_context_destroy(sizes[k].ctx);
    }
}

// One context whose n managed allocations one declaration names (after one that moved them),
// kept for a round of slices. A slice is untimed calls naming ~3x10^4 ranges (at least one
// call), then timed calls naming ~10^4 (at least one): its wall clock and the thread's CPU time
// per range. The untimed calls bring the row back to the state its own calls leave the caches
// in: after the 10^5-range rows' slices, one untimed call of 10^4 ranges did not (H200, results/
// 2026-12-02-h200-session11 call 5: the 10^4 row 1.32 and 1.60x the 10^3 one with one untimed
// call, 1.27 and 1.29x with three, 1.33-1.35x with no 10^5 rows).
// `shuffled`: the ranges named in a random order, not in the order they were allocated (which
// rises through each of the pool's slabs: a declaration then needs no table of the units it
// has named, see DeclarationPlan).
class Declarer {
  public:
    Declarer(const std::string &runtime, size_t n, bool shuffled)
        : ctx_(open(runtime)), live_(allocate(ctx_, n, TIDAL_KIND_MANAGED)), acc_(n),
          calls_(std::max<size_t>(1, 10000 / n)), warm_calls_(std::max<size_t>(1, 30000 / n))
    {
        for (size_t i = 0; i < n; ++i) {
            acc_[i] = TIDAL_ACCESS_INIT;
            acc_[i].ptr = live_[i];
            acc_[i].size = kBlock;
            acc_[i].mode = TIDAL_ACCESS_READ_WRITE;
        }
        if (shuffled) {
            std::mt19937_64 rng(n);
            std::shuffle(acc_.begin(), acc_.end(), rng);
        }
        declare();
    }
    Declarer(const Declarer &) = delete;
    Declarer &operator=(const Declarer &) = delete;
    ~Declarer()
    {
        check(tidal_declare(ctx_, nullptr, nullptr, 0, 0), "tidal_declare"); // end the phase
        release(ctx_, live_);
        tidal_context_destroy(ctx_);
    }
    struct Slice {
        double wall_ns, cpu_ns; // per range
    };
    Slice slice()
    {
        for (size_t k = 0; k < warm_calls_; ++k)
            declare();
        const double c0 = thread_cpu_seconds();
        const auto t0 = Clock::now();
        for (size_t c = 0; c < calls_; ++c)
            declare();
        const double wall = seconds_since(t0), cpu = thread_cpu_seconds() - c0;
        const auto ranges = static_cast<double>(calls_ * acc_.size());
        return {wall * 1e9 / ranges, cpu * 1e9 / ranges};
    }

  private:
    void declare() { check(tidal_declare(ctx_, nullptr, acc_.data(), acc_.size(), 0), "tidal_declare"); }
    tidal_context *ctx_;
    std::vector<char *> live_;
    std::vector<tidal_access> acc_;
    size_t calls_, warm_calls_;
};

// What the reader threads call: interior queries alone, or each query followed by a tidal_copy
// of 64 bytes between interior ranges of two live allocations, either pinned host memory (the
// copy engine's host path: no runtime call) or device memory (the runtime's copy: on the
// simulated device every runtime call takes one lock, TIDAL_SIM_SERIALIZE, so it cannot scale).
// copy_pinned_elastic: the pinned copies with one elastic allocation live, which none of them
// touches (a copy finds that neither end is elastic through the registry's index, and takes no
// lock of the elastic space's or the migration scheduler's).
enum class Calls { query, copy_pinned, copy_pinned_elastic, copy_device };
const char *calls_name(Calls c)
{
    switch (c) {
    case Calls::query: return "query";
    case Calls::copy_pinned: return "query+copy pinned";
    case Calls::copy_pinned_elastic: return "+elastic live";
    case Calls::copy_device: break;
    }
    return "query+copy device";
}

// Calls per second of `readers` threads doing `calls` on n live allocations while `churn`
// threads allocate and free 4 KiB device blocks.
double reader_rate(const std::string &runtime, size_t n, unsigned readers, unsigned churn, double secs, Calls calls,
                   double *churn_rate)
{
    tidal_context *ctx = open(runtime);
    const bool pinned = calls == Calls::copy_pinned || calls == Calls::copy_pinned_elastic;
    const std::vector<char *> live = allocate(ctx, n, pinned ? TIDAL_KIND_PINNED : TIDAL_KIND_DEVICE);
    void *elastic = nullptr;
    if (calls == Calls::copy_pinned_elastic) {
        tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
        d.kind = TIDAL_KIND_ELASTIC;
        check(tidal_alloc(ctx, size_t{2} << 20, &d, &elastic), "tidal_alloc (elastic)");
    }
    std::atomic<bool> go{false}, stop{false};
    std::atomic<uint64_t> reads{0}, pairs{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < churn; ++t)
        threads.emplace_back([&] {
            tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
            d.kind = TIDAL_KIND_DEVICE;
            uint64_t k = 0;
            while (!go.load())
                std::this_thread::yield();
            for (; !stop.load(std::memory_order_relaxed); ++k) {
                void *p = nullptr;
                check(tidal_alloc(ctx, kBlock, &d, &p), "tidal_alloc");
                check(tidal_free(ctx, p), "tidal_free");
            }
            pairs += k;
        });
    const bool copies = calls != Calls::query;
    for (unsigned t = 0; t < readers; ++t)
        threads.emplace_back([&, t] {
            std::mt19937_64 rng(t + 1);
            tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
            uint64_t k = 0;
            while (!go.load())
                std::this_thread::yield();
            for (; !stop.load(std::memory_order_relaxed); k += copies ? 2 : 1) {
                const size_t i = rng() % n, j = rng() % n;
                check(tidal_pointer_query(ctx, live[i] + 1 + k % (kBlock - 1), &info), "tidal_pointer_query");
                if (!copies)
                    continue;
                // Each reader writes only the allocations i with i % readers == t: no two write one range.
                const size_t w = i - i % readers + t < n ? i - i % readers + t : t;
                check(tidal_copy(ctx, live[w] + 0x100, live[j] + 0x800, kCopy), "tidal_copy");
            }
            reads += k;
        });
    const auto t0 = Clock::now();
    go = true;
    std::this_thread::sleep_for(std::chrono::duration<double>(secs));
    stop = true;
    for (auto &t : threads)
        t.join();
    const double elapsed = seconds_since(t0);
    *churn_rate = static_cast<double>(pairs.load()) / elapsed;
    release(ctx, live);
    if (elastic)
        check(tidal_free(ctx, elastic), "tidal_free (elastic)");
    tidal_context_destroy(ctx);
    return static_cast<double>(reads.load()) / elapsed;
}

// 1, 2, 4, ... readers up to `most`, and `most` itself.
std::vector<unsigned> reader_counts(unsigned most)
{
    std::vector<unsigned> v;
    for (unsigned r = 1; r < most; r *= 2)
        v.push_back(r);
    v.push_back(most);
    return v;
}

} // namespace

int main(int argc, char **argv)
{
    std::string runtime = "sim";
    size_t max = 1000000;
    int reps = 5;
    unsigned readers = 0, churn = 2;
    double secs = 2.0;
    bool quick = false, threads_only = false, declare_only = false, json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runtime" && i + 1 < argc)
            runtime = argv[++i];
        else if (a == "--max" && i + 1 < argc)
            max = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--threads" && i + 1 < argc)
            readers = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
        else if (a == "--churn" && i + 1 < argc)
            churn = static_cast<unsigned>(std::max(0, std::atoi(argv[++i])));
        else if (a == "--seconds" && i + 1 < argc)
            secs = std::max(0.05, std::atof(argv[++i]));
        else if (a == "--quick")
            quick = true;
        else if (a == "--threads-only")
            threads_only = true;
        else if (a == "--declare-only")
            declare_only = true;
        else if (a == "--json")
            json = true;
        else {
            std::fprintf(stderr, "usage: scaling [--runtime R] [--max N] [--quick] [--reps R] [--threads R] [--churn C] [--seconds S] "
                                 "[--threads-only] [--declare-only] [--json]\n");
            return 2;
        }
    }
    if (threads_only && declare_only) {
        std::fprintf(stderr, "scaling: --threads-only and --declare-only each leave out the other's table\n");
        return 2;
    }
    if (quick) {
        max = std::min<size_t>(max, 10000);
        reps = std::min(reps, 3);
        secs = std::min(secs, 0.3);
    }
    const size_t calls = quick ? 20000 : 200000;

    // The JSON form keeps the tables' figures and names; a list is closed before the next opens.
    const char *sep = "";
    if (json)
        std::printf("{\"program\": \"scaling\", \"runtime\": \"%s\", \"reps\": %d, \"block_bytes\": %zu, \"sizes\": [",
                    tidal_bench::json_escape(runtime).c_str(), reps, kBlock);
    else
        std::printf("# scaling (%s): 4 KiB pooled device allocations kept live; ns per call, median of %d\n", runtime.c_str(), reps);
    if (!threads_only && !declare_only && !json)
        std::printf("%10s %12s %12s %12s %12s %12s %12s %12s %14s %14s %12s\n", "live", "alloc+free", "query", "query(cpu)",
                    "query(set)", "floor(ovl)", "floor(dep)", "copy", "batch/item", "bytes/live", "huge KiB");
    size_t largest = threads_only ? max : 0;
    std::vector<Row> table;
    for (size_t n = 1000; n <= max && !threads_only && !declare_only; n *= 10) {
        table.push_back(measure(runtime, n, calls, reps));
        largest = n;
    }
    measure_query_sets(runtime, table, calls, reps);
    for (const Row &r : table) {
        if (json)
            std::printf("%s\n  {\"live\": %zu, \"alloc_free_ns\": %.1f, \"query_ns\": %.1f, \"query_cpu_ns\": %.1f, "
                        "\"query_set_ns\": %.1f, \"query_set\": %zu, "
                        "\"floor_overlapped_ns\": %.1f, \"floor_dependent_ns\": %.1f, \"copy_ns\": %.1f, \"batch_item_ns\": %.1f, "
                        "\"bytes_per_live\": %.0f, \"anon_huge_kib\": %zu}",
                        sep, r.live, r.pair_ns, r.query_ns, r.query_cpu_ns, r.query_set_ns, std::min(kSet, r.live),
                        r.floor.overlapped_ns, r.floor.dependent_ns, r.copy_ns, r.batch_ns, r.bytes_per_live, r.huge_kib);
        else
            std::printf("%10zu %12.1f %12.1f %12.1f %12.1f %12.1f %12.1f %12.1f %14.1f %14.0f %12zu\n", r.live, r.pair_ns,
                        r.query_ns, r.query_cpu_ns, r.query_set_ns, r.floor.overlapped_ns, r.floor.dependent_ns, r.copy_ns,
                        r.batch_ns, r.bytes_per_live, r.huge_kib);
        sep = ",";
    }
    std::fflush(stdout);
    if (json) {
        std::printf("], \"declare\": [");
    } else if (!threads_only) {
        std::printf("\n# tidal_declare of N single-allocation managed ranges in one call, repeated: ns per range, median of %d "
                    "slices of ~10^4 ranges (%d rounds, the sizes' slices interleaved), wall clock and the thread's CPU time; "
                    "the ranges in the order they were allocated, and shuffled\n",
                    reps * static_cast<int>(kDeclareSlices), reps);
        std::printf("%10s %12s %12s %12s %12s\n", "ranges", "declare", "declare(cpu)", "shuffled", "shuffled(cpu)");
    }
    sep = "";
    // Interleaved: in each of --reps rounds, a context per size and order, all live at once,
    // then kDeclareSlices slices of each in turn (each slice ~10^4 ranges timed, ~1-2 ms, after
    // untimed calls: see Declarer), the median per row over every slice of every round. Timed
    // one size after the other, a change of the host's speed lasting a fraction of a second or
    // more fell on whole rows: on the H200's host the rows of one run moved against each other
    // by up to 1.5x (results/2026-12-02-h200-session10), and rounds of one ~10 ms repetition
    // each did not cure it. Slices a millisecond or two long, in turn, give every row the same
    // share of a slow spell. New contexts each round keep a context's own layout from deciding
    // a row. The thread's CPU time is shown beside the wall clock: the wall clock also counts
    // time the thread waited for a core.
    std::vector<size_t> ranges;
    for (size_t n = 10; n <= std::min<size_t>(max, 100000) && !threads_only; n *= 10)
        ranges.push_back(n);
    const size_t rows = ranges.size() * 2; // row 2k: ranges[k] in order; 2k + 1: shuffled
    std::vector<std::vector<double>> wall(rows), cpu(rows);
    for (int round = 0; round < reps && rows; ++round) {
        std::vector<std::unique_ptr<Declarer>> declarers;
        for (size_t r = 0; r < rows; ++r)
            declarers.push_back(std::make_unique<Declarer>(runtime, ranges[r / 2], r % 2 == 1));
        for (auto &d : declarers) // the calls after a move run colder: one slice each, untimed
            d->slice();
        in_turn(1, kDeclareSlices, rows, [&](size_t r, size_t) {
            const Declarer::Slice t = declarers[r]->slice();
            wall[r].push_back(t.wall_ns);
            cpu[r].push_back(t.cpu_ns);
        });
    }
    for (size_t k = 0; k < ranges.size(); ++k) {
        const double ns = tidal_bench::median(wall[2 * k]), ns_cpu = tidal_bench::median(cpu[2 * k]);
        const double mixed = tidal_bench::median(wall[2 * k + 1]), mixed_cpu = tidal_bench::median(cpu[2 * k + 1]);
        if (json)
            std::printf("%s\n  {\"ranges\": %zu, \"declare_ns\": %.1f, \"declare_cpu_ns\": %.1f, "
                        "\"declare_shuffled_ns\": %.1f, \"declare_shuffled_cpu_ns\": %.1f, \"slices\": %zu}",
                        sep, ranges[k], ns, ns_cpu, mixed, mixed_cpu, wall[2 * k].size());
        else
            std::printf("%10zu %12.1f %12.1f %12.1f %12.1f\n", ranges[k], ns, ns_cpu, mixed, mixed_cpu);
        sep = ",";
    }
    std::fflush(stdout);
    if (json)
        std::printf("], \"threads\": [");
    sep = "";
    if (readers && !declare_only) {
        const size_t n = largest ? largest : 1000;
        if (!json)
            std::printf("\n# %zu live; readers' calls/s (a query, or a query and a copy, count 2) while %u threads "
                        "allocate and free; %u hardware threads\n%20s %8s %14s %14s %10s\n",
                        n, churn, std::thread::hardware_concurrency(), "calls", "readers", "calls/s", "churn pairs/s",
                        "speed-up");
        for (const Calls calls : {Calls::query, Calls::copy_pinned, Calls::copy_pinned_elastic, Calls::copy_device}) {
            double one = 0;
            for (const unsigned r : reader_counts(readers)) {
                double churned = 0;
                const double rate = reader_rate(runtime, n, r, churn, secs, calls, &churned);
                if (r == 1)
                    one = rate;
                if (json)
                    std::printf("%s\n  {\"live\": %zu, \"calls\": \"%s\", \"churn_threads\": %u, \"readers\": %u, "
                                "\"calls_per_s\": %.0f, \"churn_pairs_per_s\": %.0f, \"speedup\": %.2f, "
                                "\"hardware_threads\": %u}",
                                sep, n, calls_name(calls), churn, r, rate, churned, rate / one,
                                std::thread::hardware_concurrency());
                else
                    std::printf("%20s %8u %14.4g %14.4g %9.2fx\n", calls_name(calls), r, rate, churned, rate / one);
                std::fflush(stdout);
                sep = ",";
            }
        }
    }
    if (json)
        std::printf("]}\n");
    return 0;
}
