// CPU micro-benchmark of the pool layer (issue 5): alloc+free pair latency of a DevicePool over
// a malloc-backed fake upstream, single-thread vs many-thread throughput, and a mode that runs
// only the thread-cache fast path for valgrind --tool=callgrind to count instructions.
// No GPU: what it measures is the pool's own bookkeeping, which is all a pool hit costs.
//
//   pool-fastpath                      latency table and thread scaling
//   pool-fastpath --threads 16         scaling with that many threads (default 16)
//   pool-fastpath --callgrind N [SIZE] N pairs of SIZE bytes (default 256: the thread-cache
//                                      fast path) inside pool_fastpath_pairs()
//
// Count instructions with (see tools/bench/results/pool-fastpath-callgrind.md):
//   valgrind --tool=callgrind --toggle-collect='*pool_fastpath_pairs*'
//       --callgrind-out-file=cg.out pool-fastpath --callgrind 1000000
//   callgrind_annotate cg.out | head     # total Ir / N = instructions per alloc+free pair
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pool/device_pool.h"
#include "status/error.h"

using namespace tidal::pool;

namespace {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * KiB;

// Upstream that hands out untouched host memory: a pool never reads or writes its blocks, so
// 256 MiB blocks cost only address space.
class MallocSource final : public BlockSource {
public:
    void *acquire(size_t bytes) override
    {
        void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
        if (!p)
            throw tidal::Error(TIDAL_ERROR_OUT_OF_MEMORY, "host out of memory");
        acquires_.fetch_add(1, std::memory_order_relaxed);
        return p;
    }
    std::exception_ptr release(void *p, size_t) noexcept override
    {
        std::free(p);
        releases_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    size_t alignment() const noexcept override { return 256; }
    uint64_t acquires() const { return acquires_.load(); }

private:
    std::atomic<uint64_t> acquires_{0}, releases_{0};
};

// Keeps the compiler from eliding the pair or hoisting it out of the loop.
inline void escape(void *p) { asm volatile("" : : "r"(p) : "memory"); }

} // namespace

// Not static, not inlined, not in an anonymous namespace: callgrind's --toggle-collect finds it
// by name and counts exactly the instructions executed inside (loop overhead included).
[[gnu::noinline]] void pool_fastpath_pairs(DevicePool &pool, size_t size, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        // Hide the size from the optimiser each time round: a caller's sizes vary, so the size
        // class must be computed in every call, not hoisted out of the loop.
        size_t s = size;
        asm volatile("" : "+r"(s));
        void *p = pool.allocate(s);
        escape(p);
        pool.deallocate(p, s);
    }
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string size_name(size_t s)
{
    if (s >= MiB)
        return std::to_string(s / MiB) + " MiB";
    if (s >= KiB)
        return std::to_string(s / KiB) + " KiB";
    return std::to_string(s) + " B";
}

// Median ns per alloc+free pair over `reps` timed runs of `n` pairs, after a warm-up.
double pair_latency_ns(DevicePool &pool, size_t size, size_t n, int reps)
{
    pool_fastpath_pairs(pool, size, n / 10 + 1);
    std::vector<double> per_pair;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        pool_fastpath_pairs(pool, size, n);
        per_pair.push_back(seconds_since(t0) * 1e9 / static_cast<double>(n));
    }
    return median(per_pair);
}

// Pairs per second with `threads` threads each doing `n` pairs of `size` at once on one pool.
double throughput(DevicePool &pool, size_t size, size_t n, int threads)
{
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&] {
            pool_fastpath_pairs(pool, size, 1000); // this thread's cache, warmed
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire))
                std::this_thread::yield();
            pool_fastpath_pairs(pool, size, n);
        });
    while (ready.load() != threads)
        std::this_thread::yield();
    const auto t0 = Clock::now();
    go.store(true, std::memory_order_release);
    for (auto &w : workers)
        w.join();
    return static_cast<double>(n) * threads / seconds_since(t0);
}

int run_callgrind(size_t n, size_t size)
{
    MallocSource src;
    DevicePool pool(src);
    // Warm: the thread's cache exists and holds a block (or the large pool a free one), so
    // every counted pair takes the path being measured.
    void *p = pool.allocate(size);
    pool.deallocate(p, size);
    pool_fastpath_pairs(pool, size, n);
    const PoolStats st = pool.stats();
    std::printf("%zu pairs of %zu B; cache hits %llu of %llu allocations; upstream acquires %llu\n", n, size,
                static_cast<unsigned long long>(st.cache_hits), static_cast<unsigned long long>(st.allocations),
                static_cast<unsigned long long>(st.upstream_acquires));
    return st.upstream_acquires == 1 ? 0 : 1;
}

int run_benchmark(int threads)
{
    const size_t sizes[] = {256, 4 * KiB, 64 * KiB, MiB, 16 * MiB, 256 * MiB};
    std::printf("# DevicePool alloc+free pair latency over a malloc-backed source (median of 21 runs)\n");
    std::printf("| size | ns per pair | path |\n|---|---|---|\n");
    for (size_t size : sizes) {
        MallocSource src;
        DevicePool pool(src);
        const double ns = pair_latency_ns(pool, size, 200000, 21);
        const char *path = pool.route(size, 256).small                        ? "size class, thread cache"
                           : size <= pool.settings().thread_cache_large_bytes ? "large block kept by the thread"
                                                                            : "coalescing best-fit, locked";
        std::printf("| %s | %.1f | %s |\n", size_name(size).c_str(), ns, path);
    }
    std::printf("\n# Throughput, %d threads vs 1 (hardware threads here: %u)\n", threads,
                std::thread::hardware_concurrency());
    std::printf("| size | 1 thread (M pairs/s) | %d threads (M pairs/s) | ratio |\n|---|---|---|---|\n", threads);
    for (size_t size : {size_t{256}, 4 * KiB, 16 * MiB, 256 * MiB}) {
        MallocSource src;
        DevicePool pool(src);
        const size_t n = pool.route(size, 256).small ? 2000000 : 200000;
        std::vector<double> one, many;
        for (int r = 0; r < 5; ++r) {
            one.push_back(throughput(pool, size, n, 1));
            many.push_back(throughput(pool, size, n, threads));
        }
        const double a = median(one), b = median(many);
        std::printf("| %s | %.1f | %.1f | %.2f |\n", size_name(size).c_str(), a / 1e6, b / 1e6, b / a);
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    int threads = 16;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--callgrind" && i + 1 < argc) {
            const size_t n = std::strtoull(argv[++i], nullptr, 10);
            const size_t size = i + 1 < argc ? std::strtoull(argv[++i], nullptr, 10) : 256;
            return run_callgrind(n, size);
        }
        if (arg == "--threads" && i + 1 < argc) {
            threads = std::max(1, std::atoi(argv[++i]));
            continue;
        }
        std::fprintf(stderr, "usage: %s [--threads N] | --callgrind PAIRS [SIZE]\n", argv[0]);
        return 2;
    }
    return run_benchmark(threads);
}
