// The staged copy's pieces (CopyEngine::staging_pieces) and what the copy engine hands the
// runtime: pieces small enough that the DMA which runs alone at the end of a pageable copy is
// short, and the data arrives intact at every size.
#include <doctest/doctest.h>

#include <cstring>
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

const tidal_rt_ops *logged_ops()
{
    static const tidal_rt_ops ops = [] {
        tidal_rt_ops o = *sim::sim_ops();
        o.memcpy = logged_memcpy;
        return o;
    }();
    return &ops;
}

} // namespace

TEST_CASE("staged copy: equal pieces of about sqrt(size x overhead x rate), from 1 MiB up to the chunk")
{
    constexpr size_t chunk = 16 * kMiB;
    CHECK(CopyEngine::staging_pieces(16 * kMiB, chunk).size() == 5); // ~3.2 MiB each
    const std::vector<size_t> p64 = CopyEngine::staging_pieces(64 * kMiB, chunk);
    CHECK(p64.size() == 9); // ~7.1 MiB each: the last DMA runs alone for 0.14 ms instead of 0.3
    CHECK(CopyEngine::staging_pieces(1024 * kMiB, chunk) == std::vector<size_t>(64, chunk));
    CHECK(CopyEngine::staging_pieces(kMiB, chunk) == std::vector<size_t>{kMiB});
    CHECK(CopyEngine::staging_pieces(100, chunk) == std::vector<size_t>{100});
    for (size_t size : {size_t{1}, 3 * kMiB + 5, 16 * kMiB, 17 * kMiB + 1, 64 * kMiB, 100 * kMiB + 4097, 1024 * kMiB + 3}) {
        CAPTURE(size);
        const std::vector<size_t> p = CopyEngine::staging_pieces(size, chunk);
        CHECK(std::accumulate(p.begin(), p.end(), size_t{0}) == size);
        for (size_t i = 0; i < p.size(); ++i) {
            CHECK((p[i] > 0 && p[i] <= chunk));
            if (i + 1 < p.size())
                CHECK((p[i] == p.front() && p[i] % 4096 == 0)); // equal, on page boundaries
        }
        if (size >= 16 * kMiB && size <= 64 * kMiB)
            CHECK(p.back() <= 8 * kMiB + 8 * 4096); // never the 16 MiB tail of old
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
