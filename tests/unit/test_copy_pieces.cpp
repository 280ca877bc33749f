// The staged copy's pieces (CopyEngine::staging_pieces) and what the copy engine hands the
// runtime: pieces small enough that the DMA which runs alone at the end of a pageable copy is
// short, and the data arrives intact at every size.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <mutex>
#include <numeric>
#include <vector>

#include "config/config_loader.h"
#include "copy/copy_engine.h"
#include "runtime/sim/sim_module.h"

using namespace tidal;

namespace {

constexpr size_t kMiB = size_t{1} << 20;

std::mutex log_mutex;
std::vector<size_t> dma_sizes; // every runtime memcpy, in order

int logged_memcpy(void *rt, void *dst, const void *src, size_t size, void *stream)
{
    {
        std::lock_guard lock(log_mutex);
        dma_sizes.push_back(size);
    }
    return sim::sim_ops()->memcpy(rt, dst, src, size, stream);
}

// The synchronisations a staged copy costs: each is a runtime call on the H200 too.
std::atomic<uint64_t> event_records{0}, event_syncs{0}, event_queries{0}, stream_syncs{0};
// While above 0, each event query answers "not yet" and counts down: a DMA still running.
std::atomic<int> busy_queries{0};

const tidal_rt_ops *logged_ops()
{
    static const tidal_rt_ops ops = [] {
        tidal_rt_ops o = *sim::sim_ops();
        o.memcpy = logged_memcpy;
        o.event_record = [](void *rt, void *event, void *stream) {
            event_records.fetch_add(1);
            return sim::sim_ops()->event_record(rt, event, stream);
        };
        o.event_synchronize = [](void *rt, void *event) {
            event_syncs.fetch_add(1);
            return sim::sim_ops()->event_synchronize(rt, event);
        };
        o.event_query = [](void *rt, void *event, int32_t *complete) {
            event_queries.fetch_add(1);
            int rc = sim::sim_ops()->event_query(rt, event, complete);
            if (rc == 0 && busy_queries.fetch_sub(1) > 0)
                *complete = 0;
            return rc;
        };
        o.stream_synchronize = [](void *rt, void *stream) {
            stream_syncs.fetch_add(1);
            return sim::sim_ops()->stream_synchronize(rt, stream);
        };
        return o;
    }();
    return &ops;
}

// The same on real time, as a GPU runtime: no host_copy, so the engine polls its slots' events.
const tidal_rt_ops *polled_ops()
{
    static const tidal_rt_ops ops = [] {
        tidal_rt_ops o = *logged_ops();
        o.host_copy = nullptr;
        return o;
    }();
    return &ops;
}

std::vector<unsigned char> pattern(size_t size, unsigned seed)
{
    std::vector<unsigned char> v(size);
    for (size_t i = 0; i < size; ++i)
        v[i] = static_cast<unsigned char>(i * 131 + seed * 29 + (i >> 12));
    return v;
}

// An engine on the simulated device with logged runtime calls.
struct LoggedEngine {
    explicit LoggedEngine(const std::string &config = "runtime = \"sim\"\n", bool polled = false)
        : settings(ConfigLoader::from_string(config))
    {
        REQUIRE(sim::sim_create(settings.sim, &rt, nullptr, 0) == 0);
        runtime = std::make_unique<Runtime>(polled ? polled_ops() : logged_ops(), rt, "sim with logged copies");
        engine = std::make_unique<CopyEngine>(*runtime, registry, settings.copy);
    }
    Settings settings;
    void *rt = nullptr;
    std::unique_ptr<Runtime> runtime;
    AllocationRegistry registry;
    std::unique_ptr<CopyEngine> engine;
};

} // namespace

TEST_CASE("staged copy: pieces of about sqrt(size x overhead x rate), ramping up from 1 MiB")
{
    constexpr size_t chunk = 16 * kMiB;
    const std::vector<size_t> p16 = CopyEngine::staging_pieces(16 * kMiB, chunk);
    CHECK(p16.size() == 6); // 1, 2, 4 x 3.25 MiB
    CHECK(p16[1] == 2 * kMiB);
    const std::vector<size_t> p64 = CopyEngine::staging_pieces(64 * kMiB, chunk);
    CHECK(p64.size() == 11); // 1, 2, 4, 8 x ~7.1 MiB
    const std::vector<size_t> p1g = CopyEngine::staging_pieces(1024 * kMiB, chunk);
    CHECK(p1g.size() == 68); // 1, 2, 4, 8, 64 x ~15.8 MiB
    CHECK(p1g[4] > 15 * kMiB);
    CHECK(CopyEngine::staging_pieces(kMiB, chunk) == std::vector<size_t>{kMiB});
    CHECK(CopyEngine::staging_pieces(100, chunk) == std::vector<size_t>{100});
    for (size_t size : {size_t{1}, 3 * kMiB + 5, 8 * kMiB, 16 * kMiB, 17 * kMiB + 1, 32 * kMiB, 64 * kMiB,
                        100 * kMiB + 4097, 1024 * kMiB + 3}) {
        CAPTURE(size);
        const std::vector<size_t> p = CopyEngine::staging_pieces(size, chunk);
        CHECK(std::accumulate(p.begin(), p.end(), size_t{0}) == size);
        size_t unaligned = 0;
        for (size_t i = 0; i < p.size(); ++i) {
            CHECK((p[i] > 0 && p[i] <= chunk));
            unaligned += p[i] % 4096 != 0; // host threads split pieces by pages
        }
        CHECK(unaligned <= 1); // only the rest of the middle
        if (size >= 4 * kMiB) // the device starts after 1 MiB of host copy
            CHECK(p.front() == kMiB);
        // Up the ramp, then pieces that differ by a page at most (and the bytes past the last
        // page).
        const size_t largest = *std::max_element(p.begin(), p.end());
        size_t top = 0;
        while (p[top] + 8192 < largest)
            ++top;
        for (size_t i = 0; i < p.size(); ++i)
            CHECK((i < top ? p[i] < p[i + 1] : p[i] + 8192 >= largest || i + 1 == p.size()));
        if (size >= 16 * kMiB && size <= 64 * kMiB)
            CHECK(largest <= 8 * kMiB + 8 * 4096); // never the 16 MiB tail of old
    }
    // A chunk smaller than the smallest piece: every piece is at most a chunk.
    for (size_t piece : CopyEngine::staging_pieces(10 * kMiB, kMiB / 2))
        CHECK(piece <= kMiB / 2);
}

TEST_CASE("staged copy: the runtime's first and last DMA are small, data intact both ways")
{
    Settings s = ConfigLoader::from_string("runtime = \"sim\"\n");
    void *rt = nullptr;
    REQUIRE(sim::sim_create(s.sim, &rt, nullptr, 0) == 0);
    Runtime runtime(logged_ops(), rt, "sim with logged copies");
    AllocationRegistry registry;
    CopyEngine engine(runtime, registry, s.copy);
    for (size_t size : {64 * kMiB, 16 * kMiB, 5 * kMiB + 4099}) {
        CAPTURE(size);
        std::vector<unsigned char> host(size), back(size);
        for (size_t i = 0; i < size; ++i)
            host[i] = static_cast<unsigned char>(i * 131 + 7);
        void *dev = runtime.alloc(TIDAL_KIND_DEVICE, 0, size);
        {
            std::lock_guard lock(log_mutex);
            dma_sizes.clear();
        }
        engine.copy(dev, host.data(), size, nullptr); // pageable -> device: staged
        engine.copy(back.data(), dev, size, nullptr); // device -> pageable: staged
        CHECK(std::memcmp(host.data(), back.data(), size) == 0);
        std::lock_guard lock(log_mutex);
        const size_t half = dma_sizes.size() / 2;
        REQUIRE(half * 2 == dma_sizes.size());
        CHECK(std::accumulate(dma_sizes.begin(), dma_sizes.begin() + static_cast<long>(half), size_t{0}) == size);
        // No DMA of either direction is a whole 16 MiB chunk: the one that runs alone is short.
        for (size_t dma : dma_sizes)
            CHECK(dma <= 8 * kMiB + 8 * 4096);
        CHECK(runtime.free(TIDAL_KIND_DEVICE, 0, dev, size) == 0);
    }
}

TEST_CASE("staged copy: nothing lost or reordered at sizes around the piece boundaries, unaligned, both ways")
{
    LoggedEngine e;
    CopyEngine &engine = *e.engine;
    constexpr size_t kMax = 24 * kMiB + 3 * 4096;
    const std::vector<unsigned char> src = pattern(kMax + 64, 1);
    std::vector<unsigned char> back(kMax + 64);
    char *dev = static_cast<char *>(e.runtime->alloc(TIDAL_KIND_DEVICE, 0, kMax + 64));
    // Every size where a piece ends in a 24 MiB copy (1, 3, 7 MiB, then the others'), and the
    // ramp's own boundaries at other sizes, a byte and a page either side.
    std::vector<size_t> sizes = {1, 4095, 4097, kMiB - 1, kMiB + 1, 5 * kMiB - 1, 5 * kMiB + 1, 8 * kMiB + 1,
                                 16 * kMiB - 4096, 16 * kMiB + 4097};
    size_t end = 0;
    for (size_t piece : CopyEngine::staging_pieces(24 * kMiB, e.settings.copy.chunk_size)) {
        end += piece;
        for (size_t near : {end - 4096, end - 1, end + 1, end + 4097})
            if (near <= kMax)
                sizes.push_back(near);
    }
    for (size_t size : sizes)
        for (size_t offset : {size_t{0}, size_t{3}, size_t{4096 + 17}}) {
            if (size + offset > kMax + 64)
                continue;
            CAPTURE(size);
            CAPTURE(offset);
            std::fill(back.begin(), back.end(), 0xee);
            std::memset(dev, 0, kMax + 64);
            engine.copy(dev + offset, src.data() + (offset ^ 1), size, nullptr); // pageable -> device
            engine.copy(back.data() + 5, dev + offset, size, nullptr);           // device -> pageable
            CHECK(std::memcmp(back.data() + 5, src.data() + (offset ^ 1), size) == 0);
            CHECK((back[4] == 0xee && back[5 + size] == 0xee)); // nothing written outside
        }
    CHECK(e.runtime->free(TIDAL_KIND_DEVICE, 0, dev, kMax + 64) == 0);
}

TEST_CASE("staged copy: callers on several threads at once each get their own bytes")
{
    LoggedEngine e("runtime = \"sim\"\n[copy]\nthreads = 3\nspin_us = 50\n");
    constexpr size_t kSize = 9 * kMiB + 4099; // ramped: 1, 2 MiB, then ~3 MiB pieces
    std::vector<std::thread> callers;
    std::atomic<int> bad{0};
    for (unsigned c = 0; c < 4; ++c)
        callers.emplace_back([&, c] {
            const std::vector<unsigned char> src = pattern(kSize, c + 2);
            std::vector<unsigned char> back(kSize);
            void *dev = e.runtime->alloc(TIDAL_KIND_DEVICE, 0, kSize);
            for (int round = 0; round < 4; ++round) {
                std::memset(back.data(), 0, kSize);
                e.engine->copy(dev, src.data(), kSize, nullptr);
                e.engine->copy(back.data(), dev, kSize, nullptr);
                if (std::memcmp(back.data(), src.data(), kSize) != 0)
                    bad.fetch_add(1);
            }
            (void)e.runtime->free(TIDAL_KIND_DEVICE, 0, dev, kSize);
        });
    for (auto &t : callers)
        t.join();
    CHECK(bad.load() == 0);
}

TEST_CASE("staged copy: runtime calls per copy, one DMA and one event per piece")
{
    for (bool polled : {false, true}) {
    CAPTURE(polled);
    LoggedEngine e("runtime = \"sim\"\n", polled);
    for (size_t size : {16 * kMiB, 32 * kMiB}) {
        CAPTURE(size);
        const std::vector<unsigned char> src = pattern(size, 4);
        std::vector<unsigned char> back(size);
        void *dev = e.runtime->alloc(TIDAL_KIND_DEVICE, 0, size);
        const size_t pieces = CopyEngine::staging_pieces(size, e.settings.copy.chunk_size).size();
        const size_t depth = e.settings.copy.ring_depth;
        for (int dir = 0; dir < 2; ++dir) {
            e.engine->copy(dev, src.data(), size, nullptr); // the ring exists; warm
            {
                std::lock_guard lock(log_mutex);
                dma_sizes.clear();
            }
            event_records = event_syncs = event_queries = stream_syncs = 0;
            const HostWorkers::Stats before = e.engine->workers().stats();
            if (dir == 0)
                e.engine->copy(dev, src.data(), size, nullptr);
            else
                e.engine->copy(back.data(), dev, size, nullptr);
            MESSAGE(size, dir == 0 ? " h2d: " : " d2h: ", pieces, " pieces, ", dma_sizes.size(), " DMAs, ",
                    event_records.load(), " event records, ", event_syncs.load(), " event syncs, ", event_queries.load(),
                    " event queries, ",
                    stream_syncs.load(), " stream syncs; host threads: ",
                    e.engine->workers().stats().runs - before.runs, " hand-offs, ",
                    e.engine->workers().stats().wakes - before.wakes, " wake-ups"); // timing-dependent: not checked
            CHECK(dma_sizes.size() == pieces);
            CHECK(event_records.load() == pieces);
            // A slot is asked about only when the ring comes round to it (to the host: every
            // piece, whose DMA the host then empties), and a synchronous copy to the device
            // waits once for its stream at the end, after which no slot is asked about again.
            // On real time the engine polls (the DMAs here have ended: one query each); on the
            // simulated device's own clock it waits, which is what moves that clock.
            const size_t asked = dir == 0 ? pieces - std::min(pieces, depth) : pieces;
            CHECK(event_queries.load() == (polled ? asked : 0));
            CHECK(event_syncs.load() == (polled ? 0 : asked));
            CHECK(stream_syncs.load() == (dir == 0 ? 1u : 0u));
        }
        CHECK(std::memcmp(back.data(), src.data(), size) == 0);
        CHECK(e.runtime->free(TIDAL_KIND_DEVICE, 0, dev, size) == 0);
    }
    }
}

TEST_CASE("staged copy: DMAs still running when the ring comes round: the bytes arrive intact")
{
    LoggedEngine e("runtime = \"sim\"\n[copy]\nthreads = 3\nspin_us = 50\nring_depth = 2\nchunk_size = \"2MiB\"\n", true);
    for (size_t size : {size_t{4096}, 3 * kMiB + 17, 16 * kMiB + 4095}) {
        CAPTURE(size);
        const std::vector<unsigned char> src = pattern(size, 9);
        std::vector<unsigned char> back(size);
        void *dev = e.runtime->alloc(TIDAL_KIND_DEVICE, 0, size);
        for (int busy : {0, 3, 1000}) {
            CAPTURE(busy);
            std::memset(back.data(), 0, size);
            busy_queries = busy;
            event_syncs = 0;
            e.engine->copy(dev, src.data(), size, nullptr);
            busy_queries = busy;
            e.engine->copy(back.data(), dev, size, nullptr);
            busy_queries = 0;
            CHECK(std::memcmp(back.data(), src.data(), size) == 0);
            if (busy == 1000 && size > 4 * kMiB) // queries kept saying "running": the copy waited instead
                CHECK(event_syncs.load() > 0);
        }
        CHECK(e.runtime->free(TIDAL_KIND_DEVICE, 0, dev, size) == 0);
    }
}
