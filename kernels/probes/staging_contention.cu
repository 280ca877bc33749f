// staging-contention: does a host→device DMA from pinned memory slow down while host threads
// copy memory, and do those threads slow down while it runs? A staged pageable copy needs both
// at once (threads fill pinned slots from the pageable source while the copy engine reads the
// slots filled before), so if each costs the other, the staged rate stays below
// min(DMA alone, host copy alone) whatever the pipeline does. For N = 4, 8, 16 host threads:
//   DMA alone        cudaMemcpyAsync of 64 MiB pieces from pinned memory, back to back;
//   host alone       N threads memcpy from a pageable buffer into a second pinned buffer
//                    (what tidal's fill does), each its own slice, over and over;
//   read alone       N threads only read the pageable buffer;
//   DMA + host, DMA + read: both at once; each side's rate while the other runs.
// Each row runs ~0.4 s; GB/s of bytes moved (a memcpy moves its size once).
// Then a model of the staged copy itself: 256 MiB of pageable memory to the device through a
// ring of `depth` pinned slots of S bytes, N threads filling each slot (the calling thread one
// of them) while the DMAs of the slots filled before run, with three ways to store into a slot:
//   nt        non-temporal stores (tidal's fill): the lines go to DRAM, the DMA reads them there;
//   cached    ordinary stores: the lines stay modified in the filling cores' caches;
//   demote    ordinary stores, each line then pushed to the shared L3 (CLDEMOTE; a no-op on
//             processors without it), where the DMA may read it without a trip to DRAM.
// GB/s of the whole copy, median of 5, against the runtime's copy from pinned memory.
// Plain CUDA on purpose: it measures the machine, not tidal. Built with the nvcc kernels; run
// on a GPU machine.
#include <cuda_runtime.h>
#include <emmintrin.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CK(x)                                                                                                    \
    do {                                                                                                         \
        cudaError_t e_ = (x);                                                                                    \
        if (e_ != cudaSuccess) {                                                                                 \
            std::printf("%s failed: %s\n", #x, cudaGetErrorString(e_));                                          \
            std::exit(1);                                                                                        \
        }                                                                                                        \
    } while (0)

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBytes = size_t{256} << 20, kPiece = size_t{64} << 20;
constexpr double kSeconds = 0.4;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Rates {
    double dma = 0, host = 0;
};

// Host threads copying (or only reading) their slices until `stop`; returns bytes moved.
size_t host_work(unsigned threads, bool copy, const char *src, char *dst, const std::atomic<bool> &stop)
{
    std::vector<std::thread> pool;
    std::vector<size_t> moved(threads, 0);
    std::atomic<unsigned long> sink{0};
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            const size_t slice = kBytes / threads, begin = slice * t;
            unsigned long sum = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                if (copy) {
                    std::memcpy(dst + begin, src + begin, slice);
                } else {
                    const auto *p = reinterpret_cast<const unsigned long *>(src + begin);
                    for (size_t i = 0; i < slice / sizeof(unsigned long); i += 8)
                        sum += p[i] ^ p[i + 1] ^ p[i + 2] ^ p[i + 3] ^ p[i + 4] ^ p[i + 5] ^ p[i + 6] ^ p[i + 7];
                }
                moved[t] += slice;
            }
            sink.fetch_add(sum, std::memory_order_relaxed);
        });
    for (auto &t : pool)
        t.join();
    size_t total = 0;
    for (size_t m : moved)
        total += m;
    return total + (sink.load() == 42 ? 1 : 0); // keeps the reads
}

// One row: DMA and/or host work for kSeconds, each side's rate.
Rates run(bool dma, unsigned threads, bool copy, char *device, const char *pinned, const char *pageable, char *pinned_dst,
          cudaStream_t stream)
{
    std::atomic<bool> stop{false};
    size_t host_bytes = 0;
    double host_s = 0;
    std::thread host;
    if (threads)
        host = std::thread([&] {
            const auto t0 = Clock::now();
            host_bytes = host_work(threads, copy, pageable, pinned_dst, stop);
            host_s = seconds_since(t0);
        });
    Rates r;
    const auto t0 = Clock::now();
    if (dma) {
        size_t i = 0;
        // Keep the engine busy: four pieces queued, one more each time the oldest completes.
        cudaEvent_t done[4];
        for (auto &e : done)
            CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        while (seconds_since(t0) < kSeconds) {
            cudaEvent_t &e = done[i % 4];
            if (i >= 4)
                CK(cudaEventSynchronize(e));
            const size_t off = (i * kPiece) % kBytes;
            CK(cudaMemcpyAsync(device + off, pinned + off, kPiece, cudaMemcpyHostToDevice, stream));
            CK(cudaEventRecord(e, stream));
            ++i;
        }
        CK(cudaStreamSynchronize(stream));
        const size_t moved = i * kPiece;
        r.dma = static_cast<double>(moved) / seconds_since(t0) / 1e9;
        for (auto &e : done)
            CK(cudaEventDestroy(e));
    } else {
        std::this_thread::sleep_for(std::chrono::duration<double>(kSeconds));
    }
    stop.store(true);
    if (host.joinable()) {
        host.join();
        r.host = static_cast<double>(host_bytes) / host_s / 1e9;
    }
    return r;
}

// ---- the staged copy's model -------------------------------------------------------------
enum class Store { nt, cached, demote };

void fill(char *dst, const char *src, size_t n, Store how)
{
    for (size_t i = 0; i + 64 <= n; i += 64) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 32));
        const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i + 48));
        auto *d = reinterpret_cast<__m128i *>(dst + i);
        if (how == Store::nt) {
            _mm_stream_si128(d, a);
            _mm_stream_si128(d + 1, b);
            _mm_stream_si128(d + 2, c);
            _mm_stream_si128(d + 3, e);
        } else {
            _mm_store_si128(d, a);
            _mm_store_si128(d + 1, b);
            _mm_store_si128(d + 2, c);
            _mm_store_si128(d + 3, e);
            if (how == Store::demote)
                asm volatile("cldemote (%0)" : : "r"(d) : "memory");
        }
    }
    _mm_sfence();
}

// N-1 threads that wait for a piece number, fill their share of it, and count themselves done.
class Fillers {
public:
    Fillers(unsigned n) : n_(n)
    {
        for (unsigned t = 1; t < n; ++t)
            threads_.emplace_back([this, t] { loop(t); });
    }
    ~Fillers()
    {
        stop_.store(true);
        for (auto &t : threads_)
            t.join();
    }
    // Fills `size` bytes of `dst` from `src` with all N threads (this one too); returns when done.
    void run(char *dst, const char *src, size_t size, Store how)
    {
        dst_ = dst;
        src_ = src;
        size_ = size;
        how_ = how;
        done_.store(0, std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
        share(0);
        while (done_.load(std::memory_order_acquire) != n_)
            _mm_pause();
    }

private:
    void share(unsigned t)
    {
        const size_t lines = size_ / 64, begin = lines * t / n_ * 64, end = lines * (t + 1) / n_ * 64;
        fill(dst_ + begin, src_ + begin, end - begin, how_);
        done_.fetch_add(1, std::memory_order_release);
    }
    void loop(unsigned t)
    {
        unsigned long seen = 0;
        while (!stop_.load(std::memory_order_relaxed)) {
            const unsigned long g = generation_.load(std::memory_order_acquire);
            if (g == seen) {
                _mm_pause();
                continue;
            }
            seen = g;
            share(t);
        }
    }
    unsigned n_;
    std::vector<std::thread> threads_;
    std::atomic<bool> stop_{false};
    std::atomic<unsigned long> generation_{0};
    std::atomic<unsigned> done_{0};
    char *dst_ = nullptr;
    const char *src_ = nullptr;
    size_t size_ = 0;
    Store how_ = Store::nt;
};

// One staged copy of kBytes: GB/s.
double staged(Fillers &fillers, char *device, const char *pageable, char *ring, size_t slot, unsigned depth, Store how,
              cudaStream_t stream, cudaEvent_t *events)
{
    const auto t0 = Clock::now();
    const size_t pieces = kBytes / slot;
    for (size_t k = 0; k < pieces; ++k) {
        char *buffer = ring + (k % depth) * slot;
        if (k >= depth)
            CK(cudaEventSynchronize(events[k % depth]));
        fillers.run(buffer, pageable + k * slot, slot, how);
        CK(cudaMemcpyAsync(device + k * slot, buffer, slot, cudaMemcpyHostToDevice, stream));
        CK(cudaEventRecord(events[k % depth], stream));
    }
    CK(cudaStreamSynchronize(stream));
    return static_cast<double>(kBytes) / seconds_since(t0) / 1e9;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void model(char *device, const char *pinned, const char *pageable, cudaStream_t stream)
{
    constexpr unsigned kDepth = 4;
    char *ring = nullptr;
    CK(cudaHostAlloc(reinterpret_cast<void **>(&ring), kDepth * (size_t{16} << 20), cudaHostAllocDefault));
    cudaEvent_t events[kDepth];
    for (auto &e : events)
        CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    std::vector<double> pinned_rates;
    for (int r = 0; r < 5; ++r) {
        const auto t0 = Clock::now();
        CK(cudaMemcpyAsync(device, pinned, kBytes, cudaMemcpyHostToDevice, stream));
        CK(cudaStreamSynchronize(stream));
        pinned_rates.push_back(static_cast<double>(kBytes) / seconds_since(t0) / 1e9);
    }
    std::printf("\nstaged-copy model: 256 MiB pageable -> device through %u pinned slots; GB/s, median of 5; the runtime's "
                "copy from pinned memory: %.1f\n",
                kDepth, median(pinned_rates));
    std::printf("%-8s %-10s %10s %10s %10s\n", "threads", "slot", "nt", "cached", "demote");
    for (unsigned n : {8u, 16u}) {
        Fillers fillers(n);
        for (size_t slot : {size_t{256} << 10, size_t{1} << 20, size_t{4} << 20, size_t{16} << 20}) {
            double rate[3];
            for (Store how : {Store::nt, Store::cached, Store::demote}) {
                std::vector<double> v;
                staged(fillers, device, pageable, ring, slot, kDepth, how, stream, events); // warm-up
                for (int r = 0; r < 5; ++r)
                    v.push_back(staged(fillers, device, pageable, ring, slot, kDepth, how, stream, events));
                rate[static_cast<int>(how)] = median(v);
            }
            std::printf("%-8u %-7zu KiB %10.1f %10.1f %10.1f\n", n, slot >> 10, rate[0], rate[1], rate[2]);
        }
    }
    for (auto &e : events)
        CK(cudaEventDestroy(e));
    CK(cudaFreeHost(ring));
}

} // namespace

int main()
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("staging-contention: no CUDA device; skipped\n");
        return 77;
    }
    char *device = nullptr, *pinned = nullptr, *pinned_dst = nullptr;
    CK(cudaMalloc(&device, kBytes));
    CK(cudaHostAlloc(reinterpret_cast<void **>(&pinned), kBytes, cudaHostAllocDefault));
    CK(cudaHostAlloc(reinterpret_cast<void **>(&pinned_dst), kBytes, cudaHostAllocDefault));
    auto *pageable = static_cast<char *>(std::malloc(kBytes));
    std::memset(pageable, 3, kBytes);
    std::memset(pinned, 5, kBytes);
    std::memset(pinned_dst, 0, kBytes);
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    run(true, 4, true, device, pinned, pageable, pinned_dst, stream); // warm-up
    std::printf("staging-contention: 256 MiB buffers, 64 MiB DMA pieces, %.1f s a row, GB/s, two rounds\n", kSeconds);
    std::printf("%-8s %10s %10s %10s %12s %12s %10s %12s %12s\n", "threads", "DMA alone", "host copy", "host read",
                "DMA|copy", "copy|DMA", "sum", "DMA|read", "read|DMA");
    for (int round = 0; round < 2; ++round)
        for (unsigned n : {4u, 8u, 16u}) {
            const Rates dma = run(true, 0, true, device, pinned, pageable, pinned_dst, stream);
            const Rates copy = run(false, n, true, device, pinned, pageable, pinned_dst, stream);
            const Rates read = run(false, n, false, device, pinned, pageable, pinned_dst, stream);
            const Rates both = run(true, n, true, device, pinned, pageable, pinned_dst, stream);
            const Rates both_read = run(true, n, false, device, pinned, pageable, pinned_dst, stream);
            std::printf("%-8u %10.1f %10.1f %10.1f %12.1f %12.1f %10.1f %12.1f %12.1f\n", n, dma.dma, copy.host, read.host,
                        both.dma, both.host, both.dma + both.host, both_read.dma, both_read.host);
        }
    std::printf("DMA|copy: the DMA's rate while the host threads copy; copy|DMA: the copy's rate while the DMA runs\n");
    model(device, pinned, pageable, stream);
    cudaFree(device);
    cudaFreeHost(pinned);
    cudaFreeHost(pinned_dst);
    std::free(pageable);
    return 0;
}
