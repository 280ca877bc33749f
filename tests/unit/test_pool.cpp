// The pool layer (core/pool) over fake upstreams: a malloc-backed source that counts and
// checks every acquire/release, an address-only source for alignments no test machine could
// back with memory, and simulated streams and events.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "config/settings.h"
#include "pool/device_pool.h"
#include "pool/runtime_block_source.h"
#include "pool/size_classes.h"
#include "runtime/runtime_loader.h"
#include "status/error.h"

using tidal::Error;
using namespace tidal::pool;

namespace {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * KiB;
constexpr size_t GiB = 1024 * MiB;

// Real host memory. `alignment` below 256 is enforced as an exact misalignment (base + 64 for
// 64) so that the pools' padding for 64-byte-aligned host kinds is exercised for real.
class MallocSource final : public BlockSource {
public:
    explicit MallocSource(size_t limit = SIZE_MAX, size_t alignment = 256) : limit_(limit), alignment_(alignment) {}
    ~MallocSource() override
    {
        for (const auto &[p, b] : live_)
            std::free(b.raw);
    }

    void *acquire(size_t bytes) override
    {
        std::lock_guard lock(mutex_);
        if (bytes > limit_ - outstanding_)
            throw Error(TIDAL_ERROR_OUT_OF_MEMORY, "fake source exhausted");
        const size_t shift = alignment_ < 256 ? alignment_ : 0;
        void *raw = std::aligned_alloc(256, (bytes + shift + 255) / 256 * 256);
        if (!raw)
            throw Error(TIDAL_ERROR_OUT_OF_MEMORY, "host out of memory");
        void *p = static_cast<char *>(raw) + shift;
        live_[p] = {raw, bytes};
        outstanding_ += bytes;
        ++acquires_;
        return p;
    }
    std::exception_ptr release(void *p, size_t bytes) noexcept override
    {
        std::lock_guard lock(mutex_);
        const auto it = live_.find(p);
        if (it == live_.end() || it->second.bytes != bytes) {
            ++bad_releases_;
            return nullptr;
        }
        if (refusals_ > 0) {
            --refusals_;
            ++refused_;
            return std::make_exception_ptr(Error(TIDAL_ERROR_RUNTIME, "fake source refused a release"));
        }
        std::free(it->second.raw);
        outstanding_ -= bytes;
        live_.erase(it);
        ++releases_;
        return nullptr;
    }
    size_t alignment() const noexcept override { return alignment_; }

    size_t acquires() const { std::lock_guard lock(mutex_); return acquires_; }
    size_t releases() const { std::lock_guard lock(mutex_); return releases_; }
    size_t outstanding() const { std::lock_guard lock(mutex_); return outstanding_; }
    size_t live() const { std::lock_guard lock(mutex_); return live_.size(); }
    size_t bad_releases() const { std::lock_guard lock(mutex_); return bad_releases_; }
    void set_limit(size_t limit) { std::lock_guard lock(mutex_); limit_ = limit; }
    // The next `n` releases fail, as a runtime's free can; the memory stays live.
    void refuse_releases(size_t n) { std::lock_guard lock(mutex_); refusals_ = n; }
    size_t refused() const { std::lock_guard lock(mutex_); return refused_; }

private:
    struct Block {
        void *raw;
        size_t bytes;
    };
    mutable std::mutex mutex_;
    size_t limit_;
    size_t alignment_;
    std::map<void *, Block> live_;
    size_t outstanding_ = 0, acquires_ = 0, releases_ = 0, bad_releases_ = 0, refusals_ = 0, refused_ = 0;
};

// Addresses only, handed out back to back from an odd start (256 past a 1 GiB boundary): a
// pool never touches the bytes it manages, so 1 GiB alignments cost nothing to test, and
// consecutive chunks are adjacent in address space (which must not make them merge).
class AddressSource final : public BlockSource {
public:
    void *acquire(size_t bytes) override
    {
        std::lock_guard lock(mutex_);
        const uintptr_t p = next_;
        next_ += (bytes + 255) / 256 * 256;
        live_[p] = bytes;
        return reinterpret_cast<void *>(p);
    }
    std::exception_ptr release(void *p, size_t bytes) noexcept override
    {
        std::lock_guard lock(mutex_);
        const auto it = live_.find(reinterpret_cast<uintptr_t>(p));
        if (it == live_.end() || it->second != bytes)
            ++bad_releases_;
        else
            live_.erase(it);
        return nullptr;
    }
    size_t alignment() const noexcept override { return 256; }
    size_t live() const { std::lock_guard lock(mutex_); return live_.size(); }
    size_t bad_releases() const { std::lock_guard lock(mutex_); return bad_releases_; }

private:
    mutable std::mutex mutex_;
    uintptr_t next_ = (uintptr_t{1} << 40) + 256;
    std::map<uintptr_t, size_t> live_;
    size_t bad_releases_ = 0;
};

// Streams as names, events as flags the test sets.
class FakeEvents final : public EventOracle {
public:
    Token record(StreamHandle stream) override
    {
        std::lock_guard lock(mutex_);
        if (fail_next_record_) {
            fail_next_record_ = false;
            throw Error(TIDAL_ERROR_RUNTIME, "fake event record failed");
        }
        events_.push_back({stream, false, false});
        return events_.size() - 1;
    }
    bool complete(Token token) noexcept override
    {
        std::lock_guard lock(mutex_);
        ++queries_;
        return events_[token].done;
    }
    void retire(Token token) noexcept override
    {
        std::lock_guard lock(mutex_);
        if (events_[token].retired)
            ++double_retires_;
        events_[token].retired = true;
    }
    // Everything enqueued on `stream` so far has run.
    void finish(StreamHandle stream)
    {
        std::lock_guard lock(mutex_);
        for (Event &e : events_)
            if (e.stream == stream)
                e.done = true;
    }
    void synchronize(StreamHandle stream) override
    {
        finish(stream);
        std::lock_guard lock(mutex_);
        ++syncs_;
    }
    size_t syncs() const { std::lock_guard lock(mutex_); return syncs_; }
    void fail_next_record() { std::lock_guard lock(mutex_); fail_next_record_ = true; }
    size_t recorded() const { std::lock_guard lock(mutex_); return events_.size(); }
    size_t unretired() const
    {
        std::lock_guard lock(mutex_);
        return static_cast<size_t>(std::count_if(events_.begin(), events_.end(), [](const Event &e) { return !e.retired; }));
    }
    size_t double_retires() const { std::lock_guard lock(mutex_); return double_retires_; }

private:
    struct Event {
        StreamHandle stream;
        bool done;
        bool retired;
    };
    mutable std::mutex mutex_;
    std::vector<Event> events_;
    bool fail_next_record_ = false;
    size_t queries_ = 0, double_retires_ = 0, syncs_ = 0;
};

StreamHandle stream(uintptr_t id) { return StreamHandle{reinterpret_cast<void *>(id)}; }

// Two streams seen: the pool leaves one-stream mode and holds stream frees per stream.
void use_two_streams(DevicePool &pool)
{
    pool.deallocate(pool.allocate(256, 256, stream(98)), 256, 256, stream(98));
    pool.deallocate(pool.allocate(256, 256, stream(99)), 256, 256); // synchronous: nothing held
}

uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }

bool overlaps(const void *a, size_t an, const void *b, size_t bn)
{
    return addr(a) < addr(b) + bn && addr(b) < addr(a) + an;
}

// A recognisable pattern per (owner, serial), over the whole block up to 64 KiB and over
// its first and last 4 KiB beyond (enough to catch two live blocks sharing bytes).
void fill(void *p, size_t size, uint64_t tag)
{
    auto *w = static_cast<unsigned char *>(p);
    auto put = [&](size_t from, size_t to) {
        for (size_t i = from; i < to; ++i)
            w[i] = static_cast<unsigned char>((tag * 131 + i * 7) >> 3);
    };
    if (size <= 64 * KiB) {
        put(0, size);
    } else {
        put(0, 4 * KiB);
        put(size - 4 * KiB, size);
    }
}
bool intact(const void *p, size_t size, uint64_t tag)
{
    const auto *w = static_cast<const unsigned char *>(p);
    auto ok = [&](size_t from, size_t to) {
        for (size_t i = from; i < to; ++i)
            if (w[i] != static_cast<unsigned char>((tag * 131 + i * 7) >> 3))
                return false;
        return true;
    };
    return size <= 64 * KiB ? ok(0, size) : ok(0, 4 * KiB) && ok(size - 4 * KiB, size);
}

} // namespace

TEST_CASE("pool: size classes cover 256 B .. 1 MiB in multiples of 256, the smallest class that fits")
{
    CHECK(SizeClasses::kCount == 44);
    for (unsigned c = 0; c < SizeClasses::kCount; ++c) {
        CHECK(SizeClasses::size_of(c) % 256 == 0);
        if (c > 0)
            CHECK(SizeClasses::size_of(c) > SizeClasses::size_of(c - 1));
    }
    for (size_t s = 1; s <= SizeClasses::kMaxSize; s += (s < 64 * KiB ? 1 : 97)) {
        const unsigned c = SizeClasses::index(s);
        REQUIRE(c < SizeClasses::kCount);
        CHECK(SizeClasses::size_of(c) >= s);
        if (c > 0)
            CHECK(SizeClasses::size_of(c - 1) < s);
        // From 1 KiB up no class wastes more than a fifth of its block.
        if (s > KiB)
            CHECK(SizeClasses::size_of(c) - s < SizeClasses::size_of(c) / 5 + 1);
    }
    CHECK(SizeClasses::size_of(SizeClasses::index(1)) == 256);
    CHECK(SizeClasses::size_of(SizeClasses::index(257)) == 512);
    CHECK(SizeClasses::size_of(SizeClasses::index(1025)) == 1280);
    CHECK(SizeClasses::size_of(SizeClasses::index(3000)) == 3072);
    CHECK(SizeClasses::size_of(SizeClasses::index(MiB)) == MiB);
}

TEST_CASE("pool: requests route by size and alignment, and round as they will be freed")
{
    MallocSource src;
    DevicePool pool(src);
    PooledBlock b = pool.route(1000, 256);
    CHECK(b.small);
    CHECK(b.bytes == 1024);
    b = pool.route(MiB, 0);
    CHECK(b.small);
    CHECK(b.bytes == MiB);
    b = pool.route(MiB + 1, 256);
    CHECK_FALSE(b.small);
    CHECK(b.bytes == MiB + 256);
    b = pool.route(300, 4096); // over-aligned small blocks go to the coalescing pool
    CHECK_FALSE(b.small);
    CHECK(b.bytes == 512);

    void *p = pool.allocate(1000);
    CHECK(pool.stats().in_use_bytes == 1024);
    void *q = pool.allocate(MiB + 1);
    CHECK(pool.stats().in_use_bytes == 1024 + MiB + 256);
    pool.deallocate(q, MiB + 1);
    pool.deallocate(p, 1000);
    CHECK(pool.stats().in_use_bytes == 0);
}

TEST_CASE("pool: freed blocks are reused without going upstream")
{
    MallocSource src;
    DevicePool pool(src);
    bool reused = true;
    void *big = pool.allocate(16 * MiB, 256, &reused);
    CHECK_FALSE(reused); // straight out of a new chunk
    void *small = pool.allocate(4 * KiB);
    const size_t acquires = src.acquires();
    CHECK(acquires == 2); // one 64 MiB chunk, one 4 KiB-class slab
    pool.deallocate(big, 16 * MiB);
    pool.deallocate(small, 4 * KiB);
    for (int i = 0; i < 1000; ++i) {
        void *s = pool.allocate(4 * KiB);
        CHECK(s == small);
        void *b = pool.allocate(16 * MiB, 256, &reused);
        CHECK(b == big);
        CHECK(reused);
        pool.deallocate(b, 16 * MiB);
        pool.deallocate(s, 4 * KiB);
    }
    CHECK(src.acquires() == acquires);
    const PoolStats st = pool.stats();
    CHECK(st.allocations == 2002);
    CHECK(st.frees == 2002);
    CHECK(st.cache_hits >= 1000);
    CHECK(st.upstream_acquires == 2);
}

TEST_CASE("pool: each thread keeps a few large blocks for lock-free reuse, within its budget")
{
    MallocSource src;
    PoolSettings s;
    s.thread_cache_large_bytes = 24 * MiB;
    DevicePool pool(src, s);
    void *a = pool.allocate(8 * MiB);
    void *b = pool.allocate(8 * MiB);
    void *c = pool.allocate(8 * MiB);
    void *big = pool.allocate(30 * MiB); // over the budget: never kept
    pool.deallocate(a, 8 * MiB);
    pool.deallocate(b, 8 * MiB);
    pool.deallocate(big, 30 * MiB);
    PoolStats st = pool.stats();
    CHECK(st.cached_bytes == 16 * MiB);
    CHECK(st.in_use_bytes == 8 * MiB);
    pool.deallocate(c, 8 * MiB); // 24 MiB kept: exactly the budget
    CHECK(pool.stats().cached_bytes == 24 * MiB);
    const uint64_t hits = pool.stats().cache_hits;
    CHECK(pool.allocate(8 * MiB) == c); // newest first
    CHECK(pool.stats().cache_hits == hits + 1);
    void *d = pool.allocate(16 * MiB); // no 16 MiB block kept: from the shared pool
    CHECK(pool.stats().cache_hits == hits + 1);
    pool.deallocate(d, 16 * MiB); // 16 more would be 32 MiB: the oldest (a) goes back
    CHECK(pool.stats().cached_bytes == 24 * MiB);
    pool.deallocate(c, 8 * MiB);
    CHECK(pool.stats().cached_bytes == 24 * MiB); // b went back too
    pool.trim();
    CHECK(pool.stats().cached_bytes == 0);
    CHECK(pool.stats().reserved_bytes == 0);
    CHECK(pool.stats().in_use_bytes == 0);
}

namespace {
// Another thread that allocates and frees one large block, so the block sits in that thread's
// cache, and stays alive (an exiting thread gives its cache back) until destroyed.
class KeeperThread {
public:
    KeeperThread(DevicePool &pool, size_t bytes)
        : thread_([this, &pool, bytes] {
              pool.deallocate(pool.allocate(bytes), bytes);
              step_ = 1;
              while (step_.load() != 2)
                  std::this_thread::yield();
          })
    {
        while (step_.load() != 1)
            std::this_thread::yield();
    }
    ~KeeperThread()
    {
        step_ = 2;
        thread_.join();
    }

private:
    std::atomic<int> step_{0};
    std::thread thread_;
};
} // namespace

TEST_CASE("pool: large blocks other threads keep go back to the pool before it grows")
{
    MallocSource src;
    PoolSettings s;
    s.growth = 256 * MiB;
    DevicePool pool(src, s);
    KeeperThread keeper(pool, 256 * MiB);
    CHECK(pool.stats().cached_bytes == 256 * MiB);
    const size_t acquired = src.acquires();
    void *q = pool.allocate(128 * MiB); // fits in the kept block: no growth
    CHECK(src.acquires() == acquired);
    CHECK(pool.stats().reserved_bytes == 256 * MiB);
    CHECK(pool.stats().cached_bytes == 0);
    pool.deallocate(q, 128 * MiB);
}

TEST_CASE("pool: when the upstream is full, blocks other threads keep are taken back first")
{
    MallocSource src(300 * MiB);
    PoolSettings s;
    s.growth = 64 * MiB;
    DevicePool pool(src, s);
    KeeperThread keeper(pool, 200 * MiB);
    // 200 MiB are kept by the other thread and only 100 MiB are left upstream.
    void *q = pool.allocate(150 * MiB);
    CHECK(pool.stats().in_use_bytes == 150 * MiB);
    CHECK(src.outstanding() == 200 * MiB);
    pool.deallocate(q, 150 * MiB);
    pool.trim();
    CHECK(pool.stats().reserved_bytes == 0);
}

TEST_CASE("pool: trim takes back what every thread keeps, not only the caller's")
{
    MallocSource src;
    DevicePool pool(src);
    KeeperThread keeper(pool, 96 * MiB);
    CHECK(pool.stats().cached_bytes == 96 * MiB);
    pool.trim();
    CHECK(pool.stats().reserved_bytes == 0);
    CHECK(src.outstanding() == 0);
}

TEST_CASE("pool: every block is 256-aligned, and aligned as asked up to 1 GiB")
{
    SUBCASE("real memory from a 64-byte-aligned source (pinned host memory's promise)")
    {
        MallocSource src(SIZE_MAX, 64);
        PoolSettings s;
        s.growth = 4 * MiB;
        DevicePool pool(src, s);
        struct Live {
            void *p;
            size_t size, alignment;
            uint64_t tag;
        };
        std::vector<Live> live;
        uint64_t tag = 0;
        for (size_t size : {size_t{1}, size_t{100}, size_t{256}, size_t{1000}, 3 * KiB, 100 * KiB, MiB, MiB + 7, 5 * MiB})
            for (size_t a = 1; a <= 2 * MiB; a *= 4) {
                void *p = pool.allocate(size, a);
                CHECK(addr(p) % std::max<size_t>(a, 256) == 0);
                fill(p, size, ++tag);
                live.push_back({p, size, a, tag});
            }
        for (const Live &l : live)
            CHECK(intact(l.p, l.size, l.tag));
        for (const Live &l : live)
            pool.deallocate(l.p, l.size, l.alignment);
        CHECK(pool.stats().in_use_bytes == 0);
    }
    SUBCASE("addresses only, alignments up to 1 GiB")
    {
        AddressSource src;
        {
            DevicePool pool(src);
            std::vector<std::pair<void *, size_t>> live;
            for (size_t a = 512; a <= GiB; a *= 2) {
                void *p = pool.allocate(4 * KiB, a);
                CHECK(addr(p) % a == 0);
                for (const auto &[q, qa] : live)
                    CHECK_FALSE(overlaps(p, 4 * KiB, q, 4 * KiB));
                live.emplace_back(p, a);
            }
            for (const auto &[p, a] : live)
                pool.deallocate(p, 4 * KiB, a);
            CHECK(pool.stats().in_use_bytes == 0);
        }
        CHECK(src.live() == 0);
        CHECK(src.bad_releases() == 0);
    }
    SUBCASE("bad alignments and sizes are refused")
    {
        MallocSource src;
        DevicePool pool(src);
        CHECK_THROWS_AS(pool.allocate(100, 3 * KiB), Error);
        CHECK_THROWS_AS(pool.allocate(100, 2 * GiB), Error);
        try {
            pool.allocate(0, 256);
            FAIL("size 0 was accepted");
        } catch (const Error &e) {
            CHECK(e.status() == TIDAL_ERROR_INVALID_ARGUMENT);
        }
        try {
            pool.allocate(SIZE_MAX - 100, 256);
            FAIL("an impossible size was accepted");
        } catch (const Error &e) {
            CHECK(e.status() == TIDAL_ERROR_OUT_OF_MEMORY);
        }
        CHECK(src.acquires() == 0);
    }
}

TEST_CASE("pool: freed neighbours coalesce, so a larger request fits without growing")
{
    MallocSource src;
    PoolSettings s;
    s.growth = 64 * MiB;
    s.thread_cache_large_bytes = 0; // every free reaches the coalescing pool
    DevicePool pool(src, s);
    void *b[4];
    for (void *&p : b)
        p = pool.allocate(16 * MiB);
    CHECK(src.acquires() == 1); // four 16 MiB blocks in one 64 MiB chunk
    pool.deallocate(b[0], 16 * MiB);
    pool.deallocate(b[2], 16 * MiB);
    PoolStats st = pool.stats();
    CHECK(st.large_free_bytes == 32 * MiB);
    CHECK(st.large_largest_free == 16 * MiB);
    CHECK(st.fragmentation == doctest::Approx(0.5));
    pool.deallocate(b[1], 16 * MiB); // joins both neighbours
    st = pool.stats();
    CHECK(st.large_largest_free == 48 * MiB);
    CHECK(st.fragmentation == doctest::Approx(0.0));
    void *big = pool.allocate(48 * MiB);
    CHECK(big == std::min({b[0], b[1], b[2]}));
    CHECK(src.acquires() == 1);
    pool.deallocate(big, 48 * MiB);
    pool.deallocate(b[3], 16 * MiB);
    st = pool.stats();
    CHECK(st.large_largest_free == 64 * MiB);
    CHECK(st.large_free_bytes == 64 * MiB);
}

TEST_CASE("pool: adjacent chunks never merge, and each goes upstream exactly as it came")
{
    AddressSource src;
    {
        PoolSettings s;
        s.growth = 8 * MiB;
        s.thread_cache_large_bytes = 0;
        DevicePool pool(src, s);
        void *a = pool.allocate(8 * MiB);
        void *b = pool.allocate(8 * MiB);
        CHECK(addr(b) == addr(a) + 8 * MiB); // back to back in address space
        pool.deallocate(a, 8 * MiB);
        pool.deallocate(b, 8 * MiB);
        const PoolStats st = pool.stats();
        CHECK(st.large_largest_free == 8 * MiB); // two ranges, not one of 16 MiB
        CHECK(st.large_free_bytes == 16 * MiB);
        CHECK(pool.trim() == 16 * MiB);
        CHECK(src.live() == 0);
    }
    CHECK(src.bad_releases() == 0);
}

// A release the upstream refuses (a runtime's free failing) is reported, and what it concerned
// stays reserved and free for the next trim: counted neither as released nor as gone.
TEST_CASE("pool: trim keeps a chunk or slab the upstream refuses and reports the refusal")
{
    MallocSource src;
    PoolSettings s;
    s.growth = 16 * MiB;
    s.release_threshold = 0;
    s.thread_cache_blocks = 0;
    s.thread_cache_large_bytes = 0;
    DevicePool pool(src, s);
    void *a = pool.allocate(16 * MiB);
    void *b = pool.allocate(16 * MiB);
    void *small = pool.allocate(4 * KiB); // a 2 MiB slab
    pool.deallocate(a, 16 * MiB);
    pool.deallocate(b, 16 * MiB);
    pool.deallocate(small, 4 * KiB);
    CHECK(pool.stats().reserved_bytes == 34 * MiB);

    src.refuse_releases(1); // the first chunk
    std::exception_ptr failure;
    CHECK(pool.trim(&failure) == 16 * MiB + 2 * MiB); // the other chunk and the slab went
    REQUIRE(failure);
    CHECK_THROWS_AS(std::rethrow_exception(failure), Error);
    CHECK(src.refused() == 1);
    CHECK(pool.stats().reserved_bytes == 16 * MiB);
    CHECK(src.outstanding() == 16 * MiB);
    CHECK(pool.stats().upstream_releases == 2);

    // Still free and usable: handed out again without going upstream...
    void *again = pool.allocate(16 * MiB);
    CHECK(src.acquires() == 3);
    pool.deallocate(again, 16 * MiB);
    // ... and given back by the next trim that the upstream lets through.
    void *s2 = pool.allocate(4 * KiB); // a slab again
    pool.deallocate(s2, 4 * KiB);
    src.refuse_releases(1); // the chunk goes first, and is refused again
    failure = nullptr;
    CHECK(pool.trim(&failure) == 2 * MiB);
    CHECK(failure);
    CHECK(pool.stats().reserved_bytes == 16 * MiB);
    failure = nullptr;
    CHECK(pool.trim(&failure) == 16 * MiB);
    CHECK_FALSE(failure);
    CHECK(pool.stats().reserved_bytes == 0);

    // A slab refused alike keeps its blocks free.
    void *s3 = pool.allocate(4 * KiB);
    pool.deallocate(s3, 4 * KiB);
    src.refuse_releases(1);
    failure = nullptr;
    CHECK(pool.trim(&failure) == 0);
    CHECK(failure);
    CHECK(pool.stats().reserved_bytes == 2 * MiB);
    CHECK(pool.allocate(4 * KiB) == s3); // its blocks are still on the free list
    pool.deallocate(s3, 4 * KiB);
    failure = nullptr;
    CHECK(pool.trim(&failure) == 2 * MiB);
    CHECK_FALSE(failure);
    CHECK(pool.stats().reserved_bytes == 0);
    CHECK(src.outstanding() == 0);
    CHECK(src.bad_releases() == 0);
}

TEST_CASE("pool: trim gives whole free chunks and slabs back, keeping release_threshold")
{
    MallocSource src;
    PoolSettings s;
    s.growth = 16 * MiB;
    s.release_threshold = 40 * MiB;
    DevicePool pool(src, s);
    void *b[4];
    for (void *&p : b)
        p = pool.allocate(16 * MiB); // a chunk each
    CHECK(pool.stats().reserved_bytes == 64 * MiB);
    CHECK(pool.trim() == 0); // nothing free
    for (void *p : b)
        pool.deallocate(p, 16 * MiB);
    CHECK(pool.trim() == 32 * MiB); // down to 32 MiB spare: at most the 40 MiB threshold
    CHECK(pool.stats().reserved_bytes == 32 * MiB);
    CHECK(src.outstanding() == 32 * MiB);
    CHECK(pool.trim() == 0);

    SUBCASE("a chunk with a live block stays")
    {
        PoolSettings z = s;
        z.release_threshold = 0;
        DevicePool p2(src, z);
        void *x = p2.allocate(20 * MiB); // a 20 MiB chunk
        void *y = p2.allocate(MiB + 256);
        void *w = p2.allocate(MiB + 256); // y and w share a 16 MiB chunk
        p2.deallocate(x, 20 * MiB);
        p2.deallocate(y, MiB + 256);
        CHECK(p2.trim() == 20 * MiB);
        CHECK(p2.stats().reserved_bytes == 16 * MiB);
        p2.deallocate(w, MiB + 256);
        CHECK(p2.trim() == 16 * MiB);
        CHECK(p2.stats().reserved_bytes == 0);
    }
    SUBCASE("small slabs go back once every block is home, cached ones included")
    {
        PoolSettings z = s;
        z.release_threshold = 0;
        DevicePool p2(src, z);
        std::vector<void *> v;
        for (int i = 0; i < 600; ++i) // 600 x 4 KiB: two 2 MiB slabs
            v.push_back(p2.allocate(4 * KiB));
        CHECK(p2.stats().reserved_bytes == 4 * MiB);
        for (void *p : v)
            p2.deallocate(p, 4 * KiB); // the last 32 stay in this thread's cache
        CHECK(p2.stats().cached_bytes > 0);
        CHECK(p2.trim() == 4 * MiB);
        CHECK(p2.stats().reserved_bytes == 0);
        CHECK(p2.stats().cached_bytes == 0);
        void *again = p2.allocate(4 * KiB); // and the pool still works
        p2.deallocate(again, 4 * KiB);
    }
}

TEST_CASE("pool: statistics count bytes, blocks and high-water marks")
{
    MallocSource src;
    PoolSettings settings;
    settings.thread_cache_large_bytes = 0;
    DevicePool pool(src, settings);
    std::vector<void *> v;
    for (int i = 0; i < 10; ++i)
        v.push_back(pool.allocate(3000)); // class 3072
    void *big = pool.allocate(10 * MiB);
    PoolStats st = pool.stats();
    CHECK(st.in_use_bytes == 10 * 3072 + 10 * MiB);
    CHECK(st.in_use_high_water >= st.in_use_bytes);
    CHECK(st.reserved_bytes == 2 * MiB - (2 * MiB) % 3072 + 64 * MiB);
    CHECK(st.reserved_high_water == st.reserved_bytes);
    CHECK(st.allocations == 11);
    CHECK(st.frees == 0);
    CHECK(st.cache_misses == 1); // one refill served the ten
    CHECK(st.cache_hits == 9);
    const uint64_t peak = st.in_use_high_water;
    for (void *p : v)
        pool.deallocate(p, 3000);
    pool.deallocate(big, 10 * MiB);
    st = pool.stats();
    CHECK(st.in_use_bytes == 0);
    CHECK(st.frees == 11);
    CHECK(st.in_use_high_water == peak);
    CHECK(st.large_free_bytes == 64 * MiB);
    CHECK(st.fragmentation == doctest::Approx(0.0));
    CHECK(st.upstream_acquires == 2);
    pool.trim();
    st = pool.stats();
    CHECK(st.reserved_bytes == 0);
    CHECK(st.reserved_high_water == 2 * MiB - (2 * MiB) % 3072 + 64 * MiB);
    CHECK(st.upstream_releases == 2);
}

TEST_CASE("pool: a block freed on a stream is reused there at once, elsewhere after its event")
{
    MallocSource src;
    FakeEvents events;
    const StreamHandle a = stream(1), b = stream(2);
    SUBCASE("small blocks")
    {
        PoolSettings s;
        s.thread_cache_blocks = 0; // every block visible to the shared lists
        DevicePool pool(src, s, &events);
        use_two_streams(pool);
        void *p = pool.allocate(4 * KiB, 256, a);
        pool.deallocate(p, 4 * KiB, 256, a);
        CHECK(pool.stats().pending_bytes == 4 * KiB);
        CHECK(pool.allocate(4 * KiB, 256, a) == p); // same stream: immediately
        CHECK(pool.stats().stream_reuses == 1);
        pool.deallocate(p, 4 * KiB, 256, a);
        std::vector<void *> others;
        for (int i = 0; i < 20; ++i) { // other stream, synchronous: never p while A is busy
            others.push_back(pool.allocate(4 * KiB, 256, b));
            others.push_back(pool.allocate(4 * KiB));
        }
        CHECK(std::find(others.begin(), others.end(), p) == others.end());
        events.finish(a);
        for (void *o : others)
            pool.deallocate(o, 4 * KiB);
        bool found = false;
        std::vector<void *> again;
        for (int i = 0; i < 41 && !found; ++i) {
            again.push_back(pool.allocate(4 * KiB, 256, b));
            found = again.back() == p;
        }
        CHECK(found);
        CHECK(pool.stats().pending_bytes == 0);
        for (void *o : again)
            pool.deallocate(o, 4 * KiB);
    }
    SUBCASE("large blocks")
    {
        PoolSettings s;
        s.growth = 16 * MiB; // one block per chunk: which chunk a block sits in says everything
        DevicePool pool(src, s, &events);
        use_two_streams(pool);
        const size_t base_acquires = src.acquires();
        void *p = pool.allocate(16 * MiB, 256, a);
        pool.deallocate(p, 16 * MiB, 256, a);
        void *q = pool.allocate(16 * MiB, 256, b);
        CHECK(q != p);
        CHECK(src.acquires() == base_acquires + 2);
        void *r = pool.allocate(16 * MiB); // synchronous: also not p
        CHECK(r != p);
        CHECK(src.acquires() == base_acquires + 3);
        pool.deallocate(r, 16 * MiB);
        pool.deallocate(q, 16 * MiB, 256, b);
        events.finish(a);
        events.finish(b);
        std::set<void *> got;
        for (int i = 0; i < 3; ++i)
            got.insert(pool.allocate(16 * MiB, 256, b));
        CHECK(got == std::set<void *>{p, q, r});
        CHECK(src.acquires() == base_acquires + 3);
        for (void *o : got)
            pool.deallocate(o, 16 * MiB);
    }
    SUBCASE("a failed event record keeps the block held until a later record succeeds")
    {
        PoolSettings s;
        s.growth = 16 * MiB;
        DevicePool pool(src, s, &events);
        use_two_streams(pool);
        void *p = pool.allocate(16 * MiB, 256, a);
        pool.deallocate(p, 16 * MiB, 256, a); // no event yet: recorded lazily
        CHECK(events.recorded() == 0);
        events.fail_next_record();
        void *q = pool.allocate(16 * MiB, 256, b); // the record fails: p stays held
        CHECK(q != p);
        CHECK(pool.stats().pending_bytes == pool.route(16 * MiB, 256).bytes);
        events.finish(a);                          // finished, but no event covers p yet
        void *r = pool.allocate(16 * MiB, 256, b); // records (not yet done): still not p
        CHECK(r != p);
        CHECK(events.recorded() == 1);
        events.finish(a);
        void *t = pool.allocate(16 * MiB, 256, b); // now p is free for any stream
        CHECK(t == p);
        pool.deallocate(q, 16 * MiB);
        pool.deallocate(r, 16 * MiB);
        pool.deallocate(t, 16 * MiB);
    }
    SUBCASE("frees on one stream share one event")
    {
        PoolSettings s;
        s.thread_cache_blocks = 0;
        DevicePool pool(src, s, &events);
        use_two_streams(pool);
        std::vector<void *> blocks;
        for (int i = 0; i < 10; ++i)
            blocks.push_back(pool.allocate(4 * KiB << (i % 3), 256, a));
        for (int i = 0; i < 10; ++i)
            pool.deallocate(blocks[i], 4 * KiB << (i % 3), 256, a);
        void *other = pool.allocate(1 * MiB, 256, b); // collects: one record for all ten
        CHECK(events.recorded() == 1);
        events.finish(a);
        pool.trim();
        CHECK(pool.stats().pending_bytes == 0);
        pool.deallocate(other, 1 * MiB);
    }
    CHECK(events.unretired() == 0); // every event the pools recorded was handed back
    CHECK(events.double_retires() == 0);
    CHECK(src.live() == 0);
}

TEST_CASE("pool: with one stream only, a freed block serves any size on that stream at once")
{
    MallocSource src;
    FakeEvents events;
    PoolSettings s;
    s.growth = 16 * MiB;
    s.thread_cache_large_bytes = 0; // a thread-cached large block is kept for its own size
    DevicePool pool(src, s, &events);
    const StreamHandle a = stream(1);
    void *p = pool.allocate(16 * MiB, 256, a);
    pool.deallocate(p, 16 * MiB, 256, a);
    CHECK(pool.stats().pending_bytes == 0); // not held: only work on `a` can follow
    void *q = pool.allocate(8 * MiB, 256, a); // another size, same chunk: no new memory
    CHECK(src.acquires() == 1);
    CHECK(reinterpret_cast<uintptr_t>(q) >= reinterpret_cast<uintptr_t>(p));
    CHECK(reinterpret_cast<uintptr_t>(q) < reinterpret_cast<uintptr_t>(p) + 16 * MiB);
    CHECK(events.syncs() == 0);
    pool.deallocate(q, 8 * MiB, 256, a);
    // A synchronous allocation may land on memory `a` still uses: the pool waits for `a` once.
    void *r = pool.allocate(8 * MiB);
    CHECK(events.syncs() == 1);
    pool.deallocate(r, 8 * MiB);
    // From now on frees on streams are held until their event completes.
    void *t = pool.allocate(8 * MiB, 256, a);
    pool.deallocate(t, 8 * MiB, 256, a);
    CHECK(pool.stats().pending_bytes == 8 * MiB);
    void *u = pool.allocate(8 * MiB);
    CHECK(events.syncs() == 1);
    events.finish(a);
    pool.trim();
    pool.deallocate(u, 8 * MiB);
    CHECK(events.unretired() == 0);
}

TEST_CASE("pool: a pool without an event oracle refuses stream frees")
{
    MallocSource src;
    DevicePool pool(src);
    void *p = pool.allocate(4 * KiB);
    try {
        pool.deallocate(p, 4 * KiB, 256, stream(1));
        FAIL("a stream free without events was accepted");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_NOT_SUPPORTED);
    }
    CHECK(pool.stats().in_use_bytes == 4 * KiB);
    pool.deallocate(p, 4 * KiB);
}

TEST_CASE("pool: 16 threads allocate, write, verify and free concurrently, also each other's blocks")
{
    MallocSource src;
    FakeEvents events;
    PoolSettings s;
    s.growth = 8 * MiB;
    DevicePool pool(src, s, &events);
    constexpr int kThreads = 16;
    constexpr int kIterations = 3000;
    struct Block {
        void *p;
        size_t size, alignment;
        uint64_t tag;
    };
    // Blocks handed from thread t to thread (t + 1) % kThreads, which verifies and frees them.
    std::vector<std::vector<Block>> mailbox(kThreads);
    std::vector<std::mutex> mailbox_mutex(kThreads);
    std::atomic<int> corrupt{0}, misaligned{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            std::mt19937_64 rng(t + 1);
            const size_t sizes[] = {1, 200, 256, 1000, 4 * KiB, 10 * KiB, 64 * KiB, 300 * KiB, MiB, MiB + 1, 3 * MiB};
            std::vector<Block> mine;
            auto release = [&](const Block &b) {
                if (!intact(b.p, b.size, b.tag))
                    ++corrupt;
                if (rng() % 8 == 0)
                    pool.deallocate(b.p, b.size, b.alignment, stream(1 + rng() % 3));
                else
                    pool.deallocate(b.p, b.size, b.alignment);
            };
            for (int i = 0; i < kIterations; ++i) {
                const size_t size = sizes[rng() % std::size(sizes)];
                const size_t alignment = rng() % 16 == 0 ? 4096 : 256;
                Block b{nullptr, size, alignment, (uint64_t{static_cast<uint64_t>(t)} << 32) | static_cast<uint64_t>(i)};
                b.p = rng() % 4 == 0 ? pool.allocate(size, alignment, stream(1 + rng() % 3)) : pool.allocate(size, alignment);
                if (addr(b.p) % alignment != 0)
                    ++misaligned;
                fill(b.p, size, b.tag);
                if (rng() % 5 == 0) {
                    std::lock_guard lock(mailbox_mutex[(t + 1) % kThreads]);
                    mailbox[(t + 1) % kThreads].push_back(b);
                } else {
                    mine.push_back(b);
                }
                if (mine.size() > 24) {
                    const size_t k = rng() % mine.size();
                    release(mine[k]);
                    mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(k));
                }
                if (i % 64 == 0) {
                    std::vector<Block> in;
                    {
                        std::lock_guard lock(mailbox_mutex[t]);
                        in.swap(mailbox[t]);
                    }
                    for (const Block &x : in)
                        release(x);
                    if (i % 1024 == 0) {
                        events.finish(stream(1 + rng() % 3));
                        if (t == 0)
                            pool.trim();
                    }
                }
            }
            for (const Block &x : mine)
                release(x);
        });
    for (auto &th : threads)
        th.join();
    for (int t = 0; t < kThreads; ++t)
        for (const Block &b : mailbox[t]) {
            if (!intact(b.p, b.size, b.tag))
                ++corrupt;
            pool.deallocate(b.p, b.size, b.alignment);
        }
    CHECK(corrupt.load() == 0);
    CHECK(misaligned.load() == 0);
    PoolStats st = pool.stats();
    CHECK(st.allocations == kThreads * kIterations);
    CHECK(st.frees == kThreads * kIterations);
    CHECK(st.in_use_bytes == 0);
    CHECK(st.cache_hits > 0);
    events.finish(stream(1));
    events.finish(stream(2));
    events.finish(stream(3));
    pool.trim(); // flushes this thread's cache too
    st = pool.stats();
    CHECK(st.cached_bytes == 0); // the 16 threads gave their caches back when they exited
    CHECK(st.pending_bytes == 0);
    CHECK(st.reserved_bytes == 0); // everything came home, so everything could go upstream
    CHECK(src.outstanding() == 0);
    CHECK(src.bad_releases() == 0);
}

TEST_CASE("pool: a thread's cache goes back to the pool when the thread exits")
{
    MallocSource src;
    DevicePool pool(src);
    std::thread([&] {
        std::vector<void *> v;
        for (int i = 0; i < 10; ++i)
            v.push_back(pool.allocate(4 * KiB));
        for (void *p : v)
            pool.deallocate(p, 4 * KiB); // all ten stay in this thread's cache
        void *big = pool.allocate(8 * MiB);
        pool.deallocate(big, 8 * MiB); // and so does this one
        CHECK(pool.stats().cached_bytes >= 10 * 4 * KiB + 8 * MiB); // a refill may bring a few more
    }).join();
    PoolStats st = pool.stats();
    CHECK(st.cached_bytes == 0);
    CHECK(st.frees == 11); // the exited thread's counters are kept
    CHECK(st.cache_hits == 9);
    // The slab and the 64 MiB chunk are wholly free: nothing was stranded in the cache.
    CHECK(pool.trim() == 2 * MiB + 64 * MiB);
    CHECK(src.outstanding() == 0);
}

TEST_CASE("pool: destroying a pool while threads still hold caches of it is safe")
{
    MallocSource src;
    std::optional<DevicePool> pool(std::in_place, src);
    constexpr int kThreads = 4;
    std::barrier filled(kThreads + 1), destroyed(kThreads + 1), reused(kThreads + 1);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    MallocSource src2;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 5; ++i) {
                void *p = pool->allocate(512);
                pool->deallocate(p, 512); // the block sits in this thread's cache
            }
            filled.arrive_and_wait();
            destroyed.arrive_and_wait();
            // A new pool, maybe at the very same address: the old cache must not answer.
            void *p = pool->allocate(512);
            if (src2.acquires() == 0)
                ++wrong;
            fill(p, 512, 3);
            pool->deallocate(p, 512);
            reused.arrive_and_wait();
        });
    filled.arrive_and_wait();
    pool.reset(); // caches of four live threads still hold its blocks
    CHECK(src.outstanding() == 0);
    CHECK(src.live() == 0);
    pool.emplace(src2);
    destroyed.arrive_and_wait();
    reused.arrive_and_wait();
    for (auto &th : threads)
        th.join(); // their detached caches of the first pool die with them
    CHECK(wrong.load() == 0);
    CHECK(pool->stats().in_use_bytes == 0);
    CHECK(pool->stats().cached_bytes == 0);
    pool.reset();
    CHECK(src2.outstanding() == 0);
    CHECK(src.bad_releases() == 0);
    CHECK(src2.bad_releases() == 0);
}

TEST_CASE("pool: one thread alternating between two pools keeps their blocks apart")
{
    MallocSource s1, s2;
    DevicePool p1(s1), p2(s2);
    for (int i = 0; i < 100; ++i) {
        void *a = p1.allocate(1000);
        void *b = p2.allocate(1000);
        CHECK(a != b);
        p1.deallocate(a, 1000);
        p2.deallocate(b, 1000);
    }
    CHECK(p1.stats().allocations == 100);
    CHECK(p2.stats().allocations == 100);
    CHECK(s1.acquires() == 1); // one 1 KiB-class slab each
    CHECK(s2.acquires() == 1);
    CHECK(p1.trim() == 2 * MiB); // every block of p1 came home to p1
    CHECK(s1.outstanding() == 0);
    CHECK(p2.trim() == 2 * MiB);
    CHECK(s2.outstanding() == 0);
}

TEST_CASE("pool: upstream out of memory arrives as tidal::Error and leaks nothing")
{
    SUBCASE("large blocks until the upstream is full")
    {
        MallocSource src(40 * MiB);
        {
            PoolSettings s;
            s.growth = 64 * MiB; // more than the source has: the pool asks for the request alone
            DevicePool pool(src, s);
            std::vector<void *> v;
            tidal_status status = TIDAL_OK;
            try {
                for (;;)
                    v.push_back(pool.allocate(7 * MiB));
            } catch (const Error &e) {
                status = e.status();
            }
            CHECK(status == TIDAL_ERROR_OUT_OF_MEMORY);
            CHECK(v.size() == 5);
            CHECK(pool.stats().in_use_bytes == 5 * 7 * MiB);
            for (void *p : v)
                pool.deallocate(p, 7 * MiB);
        }
        CHECK(src.outstanding() == 0);
        CHECK(src.live() == 0);
    }
    SUBCASE("a slab that cannot be had")
    {
        MallocSource src(MiB);
        {
            DevicePool pool(src);
            // Its full slab is 2 MiB: a smaller slab (halved down to one block) fits instead.
            void *q = pool.allocate(64 * KiB);
            CHECK(src.acquires() == 1);
            CHECK(pool.stats().reserved_bytes <= MiB);
            pool.deallocate(q, 64 * KiB);
            pool.trim();
            CHECK(pool.stats().reserved_bytes == 0);
            const uint64_t acquired = src.acquires();
            try {
                pool.allocate(2 * MiB); // more than the whole source
                FAIL("a block larger than the source came out of it");
            } catch (const Error &e) {
                CHECK(e.status() == TIDAL_ERROR_OUT_OF_MEMORY);
            }
            CHECK(pool.stats().reserved_bytes == 0);
            CHECK(pool.stats().in_use_bytes == 0);
            CHECK(src.acquires() == acquired);
            // The 64 MiB growth step does not fit either, but the request alone does.
            void *p = pool.allocate(512 * KiB, 4096);
            CHECK(pool.stats().reserved_bytes == 512 * KiB + 4096);
            pool.deallocate(p, 512 * KiB, 4096);
        }
        CHECK(src.outstanding() == 0);
    }
    SUBCASE("spare memory is given back and the request retried")
    {
        MallocSource src(5 * MiB);
        {
            DevicePool pool(src);
            std::vector<void *> v;
            for (int i = 0; i < 100; ++i)
                v.push_back(pool.allocate(4 * KiB)); // one 2 MiB slab
            for (void *p : v)
                pool.deallocate(p, 4 * KiB);
            CHECK(pool.stats().reserved_bytes == 2 * MiB);
            void *big = pool.allocate(4 * MiB); // only fits once the idle slab is gone
            CHECK(pool.stats().reserved_bytes == 4 * MiB);
            pool.deallocate(big, 4 * MiB);
        }
        CHECK(src.outstanding() == 0);
    }
}

TEST_CASE("pool: switched off, every call goes straight upstream")
{
    MallocSource src(SIZE_MAX, 64);
    {
        PoolSettings s;
        s.enabled = false;
        DevicePool pool(src, s);
        bool reused = true;
        void *a = pool.allocate(1000, 64, &reused);
        CHECK_FALSE(reused);
        void *b = pool.allocate(1000, 4096);
        CHECK(addr(b) % 4096 == 0);
        CHECK(src.acquires() == 2);
        CHECK(pool.stats().in_use_bytes == 2000);
        pool.deallocate(a, 1000, 64);
        pool.deallocate(b, 1000, 4096);
        CHECK(src.releases() == 2);
        CHECK(src.outstanding() == 0);
        CHECK(pool.trim() == 0);
        pool.allocate(5000, 64); // never freed: the pool gives it back when it goes
        CHECK(src.outstanding() == 5000);
    }
    CHECK(src.outstanding() == 0);
    CHECK(src.bad_releases() == 0);
}

TEST_CASE("pool: settings out of range are refused")
{
    MallocSource src;
    PoolSettings s;
    s.small_max = 2 * MiB;
    CHECK_THROWS_AS(DevicePool(src, s), Error);
    s.small_max = 0; // no size classes: everything coalesces
    DevicePool pool(src, s);
    void *p = pool.allocate(100);
    CHECK_FALSE(pool.route(100, 256).small);
    pool.deallocate(p, 100);
    CHECK(pool.stats().cache_hits == 0);
}

TEST_CASE("pool: over the simulated device's runtime, memory comes and goes upstream and OOM is translated")
{
    tidal::Settings settings;
    settings.runtime = "sim";
    settings.sim.devices = 1;
    tidal::SimProfile &p = settings.sim.profile;
    p.name = "pool-test";
    p.capacity = 64 * MiB;
    p.page_size = 64 * KiB;
    p.l2_size = 4 * MiB;
    p.h2d_pageable_bw = p.h2d_pinned_bw = p.d2h_pageable_bw = p.d2h_pinned_bw = 1e9;
    p.d2d_bw = p.prefetch_h2d_bw = p.prefetch_d2h_bw = p.fault_bw = p.zero_copy_bw = p.host_memcpy_bw = 1e9;
    p.copy_latency = p.kernel_latency = p.fault_latency = 1e-6;
    p.alloc_latency_device = p.alloc_latency_pinned = p.alloc_latency_managed = 1e-6;
    const std::unique_ptr<tidal::Runtime> runtime = tidal::RuntimeLoader::load(settings);
    auto device_free = [&] {
        uint64_t free_bytes = 0, total = 0;
        runtime->mem_info(0, &free_bytes, &total);
        return free_bytes;
    };
    const uint64_t free_at_start = device_free();

    RuntimeBlockSource device(*runtime, TIDAL_KIND_DEVICE, 0);
    RuntimeBlockSource pinned(*runtime, TIDAL_KIND_PINNED, 0);
    CHECK(device.alignment() == 256);
    CHECK(pinned.alignment() == 64);
    {
        PoolSettings s;
        s.growth = 16 * MiB;
        DevicePool pool(device, s);
        void *a = pool.allocate(40 * MiB);
        void *b = pool.allocate(1000);
        CHECK(device_free() == free_at_start - 40 * MiB - 2 * MiB);
        try {
            pool.allocate(40 * MiB);
            FAIL("the simulated device gave 80 MiB of its 64");
        } catch (const Error &e) {
            CHECK(e.status() == TIDAL_ERROR_OUT_OF_MEMORY);
            CHECK_FALSE(e.native().name.empty()); // the runtime's own error, carried along
        }
        pool.deallocate(a, 40 * MiB);
        pool.deallocate(b, 1000);
        void *c = pool.allocate(40 * MiB); // reused: no upstream call
        CHECK(c == a);
        pool.deallocate(c, 40 * MiB);
    }
    CHECK(device_free() == free_at_start); // the pool gave everything back
    {
        DevicePool pool(pinned); // the pinned pool: the same class over another source
        void *h = pool.allocate(3000, 64);
        std::memset(h, 0x5a, 3000); // pinned memory is host memory: the caller may touch it
        CHECK(addr(h) % 256 == 0);
        pool.deallocate(h, 3000, 64);
    }
}
