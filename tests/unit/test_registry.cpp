#include <doctest/doctest.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "registry/allocation_registry.h"
#include "registry/huge_pages.h"
#include "status/error.h"

using tidal::AllocationRecord;
using tidal::AllocationRegistry;

namespace {
AllocationRecord record(uintptr_t base, size_t size)
{
    AllocationRecord r;
    r.base = r.raw = reinterpret_cast<void *>(base);
    r.size = r.raw_size = size;
    r.kind = TIDAL_KIND_DEVICE;
    return r;
}
void *at(uintptr_t a) { return reinterpret_cast<void *>(a); }
// A fill for AddressIndex::hint and push_hint that writes `head` (the registry's fills copy a
// slot's record).
template <typename Head = tidal::NoHead> auto head(Head h = {})
{
    return [h](Head &out) { out = h; };
}
// remove(), keeping the record it returns in `out`.
AllocationRegistry::Removal take(AllocationRegistry &reg, void *p, AllocationRecord &out)
{
    auto [how, r] = reg.remove(p);
    out = r;
    return how;
}
// One of two self-consistent records of one base for the torn-read tests: its size (`size`
// or twice it), device, advice and every byte of its tag say which version it is.
AllocationRecord version_of(uintptr_t base, size_t size, int v)
{
    AllocationRecord r = record(base, v ? 2 * size : size);
    r.device = v;
    r.advice = v ? 0xffffffffu : 0;
    std::memset(r.tag, v ? 'b' : 'a', sizeof r.tag - 1);
    return r;
}
// A record a reader got is one whole version, not a mix of the two.
void require_one_version(const AllocationRecord &r, uintptr_t base, size_t size)
{
    const int v = r.size == 2 * size;
    REQUIRE(r.base == at(base));
    REQUIRE(r.device == v);
    REQUIRE(r.advice == (v ? 0xffffffffu : 0u));
    for (size_t c = 0; c + 1 < sizeof r.tag; ++c)
        REQUIRE(r.tag[c] == (v ? 'b' : 'a'));
}
// Frees `base` and revives it as one version then the other while two readers call
// read(i) for i = 0, 1, ... until each has found it (read returned true) 30 000 times.
template <typename Read> void while_reviving(AllocationRegistry &reg, uintptr_t base, size_t size, Read read)
{
    reg.insert(version_of(base, size, 0));
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        for (int k = 0; !stop.load(); ++k) {
            REQUIRE(reg.remove(at(base)).how == AllocationRegistry::Removal::removed);
            reg.insert(version_of(base, size, k % 2));
        }
    });
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t)
        readers.emplace_back([&] {
            for (int i = 0, found = 0; found < 30000; ++i)
                if (read(i))
                    ++found;
                else // between the free and the revival
                    std::this_thread::yield(); // a preempted writer may hold it there for a while
        });
    for (auto &th : readers)
        th.join();
    stop = true;
    writer.join();
}
} // namespace

TEST_CASE("registry finds allocations by base and interior pointers")
{
    AllocationRegistry reg;
    reg.insert(record(0x10000, 0x100));
    reg.insert(record(0x20000, 0x1000));
    CHECK(reg.find(at(0x10000))->base == at(0x10000));
    CHECK(reg.find(at(0x100ff))->base == at(0x10000));
    CHECK_FALSE(reg.find(at(0x10100)).has_value()); // one past the end
    CHECK_FALSE(reg.find(at(0xffff)).has_value());
    CHECK(reg.find(at(0x20fff))->size == 0x1000);
    CHECK(reg.live_count() == 2);
}

TEST_CASE("registry prefetches are only loads: any address, live, freed, never indexed or beyond the index")
{
    AllocationRegistry reg;
    for (uintptr_t a : {uintptr_t{0x1000}, uintptr_t{0x10000}, uintptr_t{1} << 47, ~uintptr_t{0}}) { // nothing indexed yet
        reg.prefetch_hints(at(a));
    }
    reg.insert(record(0x10000, 0x100));
    reg.insert(record(0x20000, 0x1000));
    CHECK(reg.find(at(0x20010))->base == at(0x20000)); // a page hint now names it
    AllocationRecord out;
    CHECK(take(reg, at(0x20000), out) == AllocationRegistry::Removal::removed);
    for (uintptr_t a : {uintptr_t{0x10000}, uintptr_t{0x20010}, uintptr_t{0x30000}, ~uintptr_t{0}}) {
        reg.prefetch_hints(at(a));
    }
    // Nothing they did changes an answer.
    CHECK(reg.find(at(0x100ff))->base == at(0x10000));
    CHECK_FALSE(reg.find(at(0x20010)).has_value());
    CHECK(reg.live_count() == 1);
}

TEST_CASE("a miss says which range around the pointer holds no allocation")
{
    AllocationRegistry reg;
    for (uintptr_t base : {0x10000u, 0x30000u, 0x50000u, 0x90000u}) // spread over shards
        reg.insert(record(base, 0x100));
    AllocationRegistry::Vacancy v;
    CHECK_FALSE(reg.find(at(0x40000), &v).has_value());
    CHECK(v.begin == 0x30100);
    CHECK(v.end == 0x50000);
    CHECK_FALSE(reg.find(at(0x95000), &v).has_value());
    CHECK(v.begin == 0x90100);
    CHECK(v.end == UINTPTR_MAX);
    CHECK_FALSE(reg.find(at(0x100), &v).has_value());
    CHECK(v.begin == 0);
    CHECK(v.end == 0x10000);
    v = {1, 2};
    CHECK(reg.find(at(0x30080), &v).has_value());
    CHECK(v.begin == 1); // untouched on a hit
}

TEST_CASE("registry removal tells interior pointers, double frees and wild pointers apart")
{
    AllocationRegistry reg;
    reg.insert(record(0x10000, 0x100));
    AllocationRecord out;
    CHECK(take(reg, at(0x10010), out) == AllocationRegistry::Removal::interior);
    CHECK(out.base == at(0x10000));
    CHECK(reg.live_count() == 1); // an interior free removes nothing
    CHECK(take(reg, at(0x10000), out) == AllocationRegistry::Removal::removed);
    CHECK(take(reg, at(0x10000), out) == AllocationRegistry::Removal::already_freed);
    CHECK(take(reg, at(0x90000), out) == AllocationRegistry::Removal::unknown);
    // The address comes back from the runtime: freeing it again is legitimate.
    reg.insert(record(0x10000, 0x80));
    CHECK(take(reg, at(0x10000), out) == AllocationRegistry::Removal::removed);
}

TEST_CASE("registry rejects a base that is already live as an internal error")
{
    // The overlap check is a tripwire within one shard; the same base always meets itself.
    AllocationRegistry reg;
    reg.insert(record(0x10000, 0x100));
    CHECK_THROWS_AS(reg.insert(record(0x10000, 0x10)), tidal::Error);
    CHECK(reg.find(reinterpret_cast<void *>(0x10000))->size == 0x100);
    CHECK_NOTHROW(reg.insert(record(0x10100, 0x10)));
}

TEST_CASE("registry finds interior pointers whatever shard the base went to")
{
    AllocationRegistry reg;
    for (uintptr_t i = 0; i < 1000; ++i)
        reg.insert(record(0x100000 + i * 0x1000, 0x800));
    for (uintptr_t i = 0; i < 1000; ++i) {
        auto r = reg.find(reinterpret_cast<void *>(0x100000 + i * 0x1000 + 0x7ff));
        REQUIRE(r.has_value());
        CHECK(r->base == reinterpret_cast<void *>(0x100000 + i * 0x1000));
        CHECK_FALSE(reg.find(reinterpret_cast<void *>(0x100000 + i * 0x1000 + 0x800)).has_value());
    }
    CHECK(reg.live_count() == 1000);
}

TEST_CASE("freed allocations never shadow live ones, whatever reuses their addresses")
{
    AllocationRegistry reg;
    // A pool's way: free a block, then carve a larger one that starts below it and covers it.
    reg.insert(record(0x40000, 0x100));
    reg.insert(record(0x40100, 0x100));
    AllocationRecord out;
    CHECK(take(reg, at(0x40000), out) == AllocationRegistry::Removal::removed);
    CHECK(take(reg, at(0x40100), out) == AllocationRegistry::Removal::removed);
    CHECK_FALSE(reg.find(at(0x40180)).has_value());
    reg.insert(record(0x3ff00, 0x1000)); // over both freed bases
    CHECK(reg.find(at(0x40180))->base == at(0x3ff00));
    CHECK(reg.find(at(0x40000))->base == at(0x3ff00));
    CHECK(take(reg, at(0x40100), out) == AllocationRegistry::Removal::interior);
    CHECK(out.base == at(0x3ff00));
    // The same base again, now smaller: nothing of the old size survives.
    CHECK(take(reg, at(0x3ff00), out) == AllocationRegistry::Removal::removed);
    reg.insert(record(0x3ff00, 0x100));
    CHECK(reg.find(at(0x3ff00))->size == 0x100);
    CHECK_FALSE(reg.find(at(0x40000)).has_value());
    AllocationRegistry::Vacancy v;
    CHECK_FALSE(reg.find(at(0x40800), &v).has_value());
    CHECK(v.begin >= 0x40000); // everything live ends at or below it
    CHECK(v.begin <= 0x40800);
    CHECK(v.end > 0x40800);
    // A live allocation overlapping a freed one's old range is no conflict; a live one is.
    CHECK_THROWS_AS(reg.insert(record(0x3ff80, 0x100)), tidal::Error);
    CHECK(reg.live_count() == 1);
    CHECK(take(reg, at(0x3ff00), out) == AllocationRegistry::Removal::removed);
    CHECK(take(reg, at(0x3ff00), out) == AllocationRegistry::Removal::already_freed);
    CHECK(reg.live_count() == 0);
}

TEST_CASE("a freed block coming back checks its neighbours again once its shard changed or it grew")
{
    using R = AllocationRegistry::Removal;
    AllocationRegistry reg;
    // Checked in its first life, freed, then its shard gains a node inside its old range (one
    // 64 KiB granule: one shard). Revived at the same size, it must see it.
    reg.insert(record(0x70000, 0x1000));
    REQUIRE(reg.remove(at(0x70000)).how == R::removed);
    reg.insert(record(0x70800, 0x100)); // no conflict while the block is dead
    CHECK_THROWS_AS(reg.insert(record(0x70000, 0x1000)), tidal::Error);
    CHECK(reg.find(at(0x70880))->base == at(0x70800));
    REQUIRE(reg.remove(at(0x70800)).how == R::removed);
    reg.insert(record(0x70000, 0x1000)); // and takes over the node now dead inside it
    CHECK(reg.find(at(0x70880))->base == at(0x70000));
    CHECK(reg.remove(at(0x70800)).how == R::interior);
    // Nothing changed in its shard, but it comes back larger, into a live neighbour.
    reg.insert(record(0x80000, 0x100));
    reg.insert(record(0x80100, 0x100));
    for (int life = 0; life < 3; ++life) { // at its checked size, again and again
        REQUIRE(reg.remove(at(0x80000)).how == R::removed);
        reg.insert(record(0x80000, life == 1 ? 0x80 : 0x100));
    }
    REQUIRE(reg.remove(at(0x80000)).how == R::removed);
    CHECK_THROWS_AS(reg.insert(record(0x80000, 0x200)), tidal::Error);
    CHECK(reg.find(at(0x80180))->base == at(0x80100));
    CHECK_NOTHROW(reg.insert(record(0x80000, 0x100)));
    CHECK(reg.live_count() == 3);
}

TEST_CASE("a vacancy ends at the next live allocation, not at a freed base kept for revival")
{
    AllocationRegistry reg;
    AllocationRecord out;
    reg.insert(record(0x50000, 0x100));
    reg.insert(record(0x60000, 0x100));
    CHECK(take(reg, at(0x50000), out) == AllocationRegistry::Removal::removed); // its node stays, dead
    AllocationRegistry::Vacancy v;
    CHECK_FALSE(reg.find(at(0x4f000), &v).has_value());
    CHECK(v.end == 0x60000); // copies refuse a range that runs into v.end: a dead node must not end it
    CHECK(take(reg, at(0x60000), out) == AllocationRegistry::Removal::removed);
    CHECK_FALSE(reg.find(at(0x4f000), &v).has_value());
    CHECK(v.end == UINTPTR_MAX);
}

TEST_CASE("a freed base revived with a larger size takes over the freed blocks inside it")
{
    AllocationRegistry reg;
    // 4096 neighbours: every shard holds some, so each revival below has dead nodes after it.
    for (uintptr_t i = 0; i < 4096; ++i)
        reg.insert(record(0x100000 + i * 0x100, 0x100));
    for (uintptr_t i = 0; i < 4096; ++i)
        CHECK(reg.remove(at(0x100000 + i * 0x100)).how == AllocationRegistry::Removal::removed);
    // Used once more at its old size, so the registry's exact-base hint points at its node...
    reg.insert(record(0x100000, 0x100));
    CHECK(reg.remove(at(0x100000)).how == AllocationRegistry::Removal::removed);
    reg.insert(record(0x100000, 4096 * 0x100)); // ...then again, over all the others
    for (uintptr_t i = 0; i < 4096; i += 97) {
        const auto r = reg.find(at(0x100000 + i * 0x100 + 0x80));
        REQUIRE(r.has_value());
        CHECK(r->base == at(0x100000));
    }
    CHECK(reg.remove(at(0x100100)).how == AllocationRegistry::Removal::interior);
    CHECK(reg.live_count() == 1);
    // Freed again and revived at its old small size: the rest of the range is free once more.
    CHECK(reg.remove(at(0x100000)).how == AllocationRegistry::Removal::removed);
    reg.insert(record(0x100000, 0x100));
    CHECK(reg.find(at(0x100080))->size == 0x100);
    CHECK_FALSE(reg.find(at(0x100180)).has_value());
    reg.insert(record(0x100100, 0x100)); // a neighbour's base, live again
    CHECK(reg.find(at(0x100180))->base == at(0x100100));
    CHECK_THROWS_AS(reg.insert(record(0x100100, 0x100)), tidal::Error);
    CHECK(reg.live_count() == 2);
}

TEST_CASE("registry stays exact over many distinct bases freed and reused")
{
    AllocationRegistry reg;
    // Enough frees at distinct bases for every shard to purge its freed entries many times.
    for (uintptr_t round = 0; round < 8; ++round) {
        for (uintptr_t i = 0; i < 4000; ++i)
            reg.insert(record(0x1000000 + (round * 4000 + i) * 0x1000, 0x800));
        for (uintptr_t i = 0; i < 4000; i += 2)
            CHECK(reg.remove(at(0x1000000 + (round * 4000 + i) * 0x1000)).how ==
                  AllocationRegistry::Removal::removed);
    }
    CHECK(reg.live_count() == 8 * 2000);
    for (uintptr_t k = 0; k < 8 * 4000; k += 7) {
        const uintptr_t base = 0x1000000 + k * 0x1000;
        const auto r = reg.find(at(base + 0x400));
        CHECK(r.has_value() == (k % 2 == 1));
    }
    CHECK(reg.drain().size() == 8 * 2000);
    CHECK(reg.live_count() == 0);
}

TEST_CASE("registry drain returns everything live")
{
    AllocationRegistry reg;
    for (uintptr_t i = 1; i <= 5; ++i)
        reg.insert(record(i * 0x1000, 0x10));
    CHECK(reg.drain().size() == 5);
    CHECK(reg.live_count() == 0);
}

TEST_CASE("registry is consistent under concurrent insert, find and remove")
{
    AllocationRegistry reg;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&reg, t] {
            for (uintptr_t i = 0; i < 2000; ++i) {
                uintptr_t base = (static_cast<uintptr_t>(t) << 32) + (i + 1) * 0x100;
                reg.insert(record(base, 0x80));
                auto found = reg.find(at(base + 0x7f));
                REQUIRE(found.has_value());
                REQUIRE(found->base == at(base));
                REQUIRE(reg.remove(at(base)).how == AllocationRegistry::Removal::removed);
            }
        });
    for (auto &th : threads)
        th.join();
    CHECK(reg.live_count() == 0);
}

// The address index: 64 KiB granules, covers per granule, per 16 MiB block and per 4 GiB leaf.
namespace {
constexpr uintptr_t kGranule = 0x10000, kMid = 0x1000000, kLeaf = 0x100000000;
void *found_base(const AllocationRegistry &reg, uintptr_t a)
{
    const auto r = reg.find(at(a));
    return r ? r->base : nullptr;
}
} // namespace

TEST_CASE("index: interior lookups at granule boundaries")
{
    AllocationRegistry reg;
    const uintptr_t g = 0x7f0000000000; // where the host's heap lives on x86-64
    reg.insert(record(g + kGranule - 0x10, 0x20)); // straddles one granule boundary
    reg.insert(record(g + kGranule + 0x10, 0x10)); // its neighbour in the next granule
    CHECK(found_base(reg, g + kGranule - 0x10) == at(g + kGranule - 0x10));
    CHECK(found_base(reg, g + kGranule - 1) == at(g + kGranule - 0x10));
    CHECK(found_base(reg, g + kGranule) == at(g + kGranule - 0x10)); // through the next granule's cover
    CHECK(found_base(reg, g + kGranule + 0xf) == at(g + kGranule - 0x10));
    CHECK(found_base(reg, g + kGranule + 0x10) == at(g + kGranule + 0x10));
    CHECK(found_base(reg, g + kGranule + 0x1f) == at(g + kGranule + 0x10));
    CHECK(found_base(reg, g + kGranule + 0x20) == nullptr);
    CHECK(found_base(reg, g + kGranule - 0x11) == nullptr);
    CHECK(found_base(reg, g) == nullptr);
    AllocationRegistry::Vacancy v;
    CHECK_FALSE(reg.find(at(g + 0x100), &v).has_value());
    CHECK(v.end == g + kGranule - 0x10);
    CHECK(v.begin <= g + 0x100);
}

TEST_CASE("index: a huge allocation is found from every granule it spans")
{
    AllocationRegistry reg;
    // 10 GiB from an unaligned base: ragged granules at both ends, whole 16 MiB blocks, whole leaves.
    const uintptr_t base = 0x7e0000000000 - 3 * kMid - 0x1234, size = 10 * kLeaf + 5 * kMid + 0x777;
    reg.insert(record(base, size));
    reg.insert(record(base + size, 0x100)); // right after it
    reg.insert(record(base - 0x100, 0x100)); // right before it
    for (uintptr_t off : {uintptr_t{0}, uintptr_t{1}, kGranule, 0x1234 + 2 * kMid, 0x1234 + 3 * kMid, kLeaf, 5 * kLeaf + 7,
                          size - kLeaf, size - kMid, size - kGranule, size - 1})
        CHECK(found_base(reg, base + off) == at(base));
    for (uintptr_t off = 0; off < size; off += 0x3ffffff3) // every 1 GiB or so, never aligned the same
        CHECK(found_base(reg, base + off) == at(base));
    CHECK(found_base(reg, base + size) == at(base + size));
    CHECK(found_base(reg, base - 1) == at(base - 0x100));
    // Gone: nothing is found in it, and its covers no longer name anything live.
    CHECK(reg.remove(at(base)).how == AllocationRegistry::Removal::removed);
    for (uintptr_t off : {uintptr_t{1}, kGranule, 3 * kMid, 5 * kLeaf + 7, size - 1})
        CHECK(found_base(reg, base + off) == nullptr);
    AllocationRegistry::Vacancy v;
    CHECK_FALSE(reg.find(at(base + kLeaf), &v).has_value());
    CHECK(v.end == base + size); // the next live allocation, exactly
    // Its middle reused by small allocations: the stale covers are checked and passed over.
    reg.insert(record(base + 2 * kLeaf + 0x100, 0x100));
    CHECK(found_base(reg, base + 2 * kLeaf + 0x1ff) == at(base + 2 * kLeaf + 0x100));
    CHECK(found_base(reg, base + 2 * kLeaf + 0x80) == nullptr);
    CHECK_FALSE(reg.find(at(base + 2 * kLeaf + 0x80), &v).has_value());
    CHECK(v.end == base + 2 * kLeaf + 0x100);
}

TEST_CASE("index: small allocations sharing a granule, some freed")
{
    AllocationRegistry reg;
    const uintptr_t g = 0x7f1200000000;
    for (uintptr_t i = 0; i < kGranule / 0x100; ++i)
        reg.insert(record(g + i * 0x100, 0xc0));
    for (uintptr_t i = 0; i < kGranule / 0x100; i += 3)
        CHECK(reg.remove(at(g + i * 0x100)).how == AllocationRegistry::Removal::removed);
    for (uintptr_t i = 0; i < kGranule / 0x100; ++i) {
        const bool live = i % 3 != 0;
        CHECK(found_base(reg, g + i * 0x100 + 0xbf) == (live ? at(g + i * 0x100) : nullptr));
        CHECK(found_base(reg, g + i * 0x100 + 0xc0) == nullptr);
        AllocationRegistry::Vacancy v;
        if (!reg.find(at(g + i * 0x100 + 0xc0), &v)) {
            const uintptr_t next = i + 1 == kGranule / 0x100 ? UINTPTR_MAX : g + (i + 1 + ((i + 1) % 3 == 0)) * 0x100;
            CHECK(v.end == (next >= g + kGranule ? UINTPTR_MAX : next));
            CHECK(v.begin <= g + i * 0x100 + 0xc0);
        }
    }
}

TEST_CASE("index: a freed base revived larger is found in the granules it now spans")
{
    AllocationRegistry reg;
    const uintptr_t base = 0x7f3400000000;
    reg.insert(record(base, 0x100));
    CHECK(reg.remove(at(base)).how == AllocationRegistry::Removal::removed);
    reg.insert(record(base, 0x100000)); // the pool's way: the same base back, now 1 MiB (16 granules)
    CHECK(found_base(reg, base + 0x80000) == at(base));
    CHECK(found_base(reg, base + 0xfffff) == at(base));
    CHECK(reg.remove(at(base)).how == AllocationRegistry::Removal::removed);
    CHECK(found_base(reg, base + 0x80000) == nullptr);
    reg.insert(record(base, 0x80)); // and small again
    CHECK(found_base(reg, base + 0x7f) == at(base));
    CHECK(found_base(reg, base + 0x80000) == nullptr);
}

namespace {
// Random inserts (new bases and revivals of old ones), frees and lookups in [region, region +
// span), each lookup checked against a plain map. Sizes: the first five mostly, all eight at times.
void agree_with_model(uint64_t seed, uintptr_t region, uintptr_t span, const std::array<uintptr_t, 8> &sizes, int steps)
{
    AllocationRegistry reg;
    std::map<uintptr_t, uintptr_t> live; // base -> end
    std::mt19937_64 rng(seed);
    std::vector<uintptr_t> bases; // every base ever used: revivals come from here
    auto overlaps = [&](uintptr_t b, uintptr_t e) {
        auto it = live.lower_bound(b);
        if (it != live.end() && it->first < e)
            return true;
        return it != live.begin() && std::prev(it)->second > b;
    };
    auto check_point = [&](uintptr_t a) {
        AllocationRegistry::Vacancy v;
        const auto r = reg.find(at(a), &v);
        auto it = live.upper_bound(a);
        const bool inside = it != live.begin() && std::prev(it)->second > a;
        REQUIRE(r.has_value() == inside);
        if (inside) {
            CHECK(r->base == at(std::prev(it)->first));
            return;
        }
        CHECK(v.end == (it == live.end() ? UINTPTR_MAX : it->first));
        CHECK(v.begin <= a);
        CHECK((it == live.begin() || std::prev(it)->second <= v.begin));
    };
    for (int step = 0; step < steps; ++step) {
        const unsigned op = rng() % 8;
        if (op < 3 || live.empty()) {
            uintptr_t b = !bases.empty() && rng() % 2 ? bases[rng() % bases.size()]
                                                      : region + (rng() % span) / 0x40 * 0x40;
            const uintptr_t e = b + sizes[rng() % (rng() % 4 ? 5 : 8)];
            if (overlaps(b, e))
                continue;
            reg.insert(record(b, e - b));
            live[b] = e;
            bases.push_back(b);
        } else if (op < 5) {
            auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
            REQUIRE(reg.remove(at(it->first)).how == AllocationRegistry::Removal::removed);
            live.erase(it);
        } else {
            auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
            const uintptr_t len = it->second - it->first;
            for (uintptr_t a : {it->first, it->first + len / 2, it->second - 1, it->second, it->first - 1,
                                region + rng() % span, (it->first | (kGranule - 1)) + 1, (it->first | (kMid - 1)) + 1})
                check_point(a);
        }
    }
    CHECK(reg.live_count() == live.size());
}
} // namespace

TEST_CASE("index: every lookup and vacancy agrees with a plain model, through frees, revivals and purges")
{
    agree_with_model(15, 0x7f0000000000, 64 * kLeaf,
                     {0x40, 0x100, 0x1000, kGranule - 0x10, kGranule + 0x10, 0x100000, kMid + 0x1000, 3 * kLeaf}, 6000);
}

TEST_CASE("index: page hints agree with the model where the same pages are used again and again")
{
    // Eight granules: every page is queried, freed, revived at another size and reused many
    // times, so most lookups go through a page hint, some naming a freed or resized node.
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        CAPTURE(seed);
        agree_with_model(seed, 0x7f3000000000 - 2 * kGranule, 8 * kGranule,
                         {0x40, 0x200, 0x1000, 0x1800, 0x3000, kGranule - 0x40, kGranule + 0x1000, 3 * kGranule}, 20000);
    }
}

TEST_CASE("index: concurrent lookups of interior pointers while other threads allocate and free")
{
    AllocationRegistry reg;
    const uintptr_t region = 0x7f5000000000;
    for (uintptr_t i = 0; i < 4096; ++i) // the stable ones: 4 KiB each, 16 per granule
        reg.insert(record(region + i * 0x1000, 0x1000));
    std::atomic<bool> stop{false};
    std::vector<std::thread> churn;
    for (int t = 0; t < 2; ++t)
        churn.emplace_back([&, t] {
            const uintptr_t mine = region + 0x100000000 * (t + 1);
            for (uintptr_t i = 0; !stop.load(); i = (i + 1) % 512) {
                reg.insert(record(mine + i * 0x3000, 0x2000 + (i % 3) * 0x10000)); // some span granules
                REQUIRE(reg.remove(at(mine + i * 0x3000)).how == AllocationRegistry::Removal::removed);
            }
        });
    for (uintptr_t i = 0; i < 200000; ++i) {
        const uintptr_t a = region + (i * 7919 % 4096) * 0x1000 + (i % 0x1000);
        const auto r = reg.find(at(a));
        REQUIRE(r.has_value());
        REQUIRE(r->base == at(a & ~uintptr_t{0xfff}));
    }
    stop = true;
    for (auto &th : churn)
        th.join();
    CHECK(reg.live_count() == 4096);
}

TEST_CASE("a large block revived at the same size finds its covers again, even after one made inside it")
{
    AllocationRegistry reg;
    AllocationRecord out;
    const uintptr_t y = 0x40000000 + 0x1000; // not granule-aligned: ragged ends
    const size_t size = 16u << 20;
    reg.insert(record(y, size));
    CHECK(reg.find(at(y + (5u << 20)))->base == at(y));
    // The same block again and again (what a pool does): its covers are still its own.
    for (int i = 0; i < 3; ++i) {
        CHECK(take(reg, at(y), out) == AllocationRegistry::Removal::removed);
        reg.insert(record(y, size));
        CHECK(reg.find(at(y + size - 1))->base == at(y));
    }
    // While it is dead, a block made inside its range writes its own covers there. Its base
    // lies in some granule's shard: over 64 granules, some are not Y's shard, so Y's revival
    // does not see W's dead node and must not trust the covers W overwrote.
    for (uintptr_t g = 1; g <= 64; ++g) {
        CAPTURE(g);
        CHECK(take(reg, at(y), out) == AllocationRegistry::Removal::removed);
        const uintptr_t w = y + g * 0x10000;
        reg.insert(record(w, 4u << 20));
        CHECK(reg.find(at(w + (1u << 20)))->base == at(w));
        CHECK(take(reg, at(w), out) == AllocationRegistry::Removal::removed);
        reg.insert(record(y, size));
        CHECK(reg.find(at(w + (1u << 20)))->base == at(y));
        CHECK(reg.find(at(y + size - 1))->base == at(y));
    }
}

TEST_CASE("index: page hints name an item in the pages of its base's granule only, and are all forgotten")
{
    tidal::AddressIndex<int> index;
    int a = 0, b = 0, c = 0;
    const uintptr_t g = 0x7f4000000000, page = 0x1000;
    using Index = tidal::AddressIndex<int>;
    index.bucket(g);
    index.bucket(g + kGranule);
    Index::Granule *first = index.find_granule(g), *second = index.find_granule(g + kGranule);
    REQUIRE(first != nullptr);
    REQUIRE(second != nullptr);
    CHECK(index.find_granule(g + kLeaf) == nullptr); // no leaf there: nothing made
    index.hint(g + 0x800, 0x2000, &a, head()); // pages 0, 1 and 2, the last one partly
    CHECK(first->pages[0][0].item == &a);
    CHECK(first->pages[1][0].item == &a);
    CHECK(first->pages[2][0].item == &a);
    CHECK(first->pages[3][0].item == nullptr);
    index.hint(g + kGranule - 0x1800, kGranule, &b, head()); // into the next granule: its own pages only
    CHECK(first->pages[Index::kPages - 2][0].item == &b);
    CHECK(first->pages[Index::kPages - 1][0].item == &b);
    for (auto &hints : second->pages)
        for (const Index::Hint &h : hints)
            CHECK(h.item == nullptr);
    index.hint(g + 3 * page, 1, &c, head()); // one byte: one page
    CHECK(first->pages[3][0].item == &c);
    CHECK(first->pages[4][0].item == nullptr);
    CHECK(Index::page_of(g + kGranule - 1) == Index::kPages - 1);
    CHECK(Index::page_of(g + kGranule) == 0);
    // A hint written while `a` was larger is forgotten too.
    first->pages[9][0].item = &a;
    index.forget_hints(g + 0x800, &a);
    for (size_t p : {0, 1, 2, 9})
        CHECK(first->pages[p][0].item == nullptr);
    CHECK(first->pages[3][0].item == &c);
    CHECK(first->pages[Index::kPages - 1][0].item == &b);
}

TEST_CASE("index: readers writing page hints while a writer frees, revives and replaces blocks in the same granules")
{
    AllocationRegistry reg;
    const uintptr_t region = 0x7f6000000000, page = 0x1000, pages = 16 * (kGranule / page);
    for (uintptr_t i = 0; i < pages; i += 2) // even pages: stable blocks
        reg.insert(record(region + i * page, page));
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        // Odd pages: a block freed and revived at other sizes, and quarter blocks inside a freed
        // one, so that nodes named by hints are resized and erased while readers look.
        for (uintptr_t k = 0; !stop.load(); ++k) {
            const uintptr_t b = region + ((k * 2 + 1) % pages) * page;
            const bool quarter = k % 3 == 0;
            const uintptr_t at_b = quarter ? b + page / 4 : b;
            reg.insert(record(at_b, quarter ? page / 4 : page >> (k % 2)));
            REQUIRE(reg.remove(at(at_b)).how == AllocationRegistry::Removal::removed);
        }
    });
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t)
        readers.emplace_back([&, t] {
            std::mt19937_64 rng(t + 7);
            for (int i = 0; i < 100000; ++i) {
                const uintptr_t p = rng() % pages, a = region + p * page + rng() % page;
                const auto r = reg.find(at(a));
                if (p % 2 == 0) {
                    REQUIRE(r.has_value());
                    REQUIRE(r->base == at(region + p * page));
                } else if (r) {
                    REQUIRE(r->contains(at(a)));
                    REQUIRE(reinterpret_cast<uintptr_t>(r->base) >= region + p * page);
                }
            }
        });
    for (auto &th : readers)
        th.join();
    stop = true;
    writer.join();
    CHECK(reg.live_count() == pages / 2);
}

TEST_CASE("node arena: aligned blocks that never overlap, from chunks that grow to huge pages")
{
    tidal::NodeArena arena;
    const size_t bytes = 200, block = tidal::NodeArena::block_size(bytes);
    CHECK(block == 256); // whole cache lines
    CHECK(tidal::NodeArena::block_size(192) == 192);
    std::map<uintptr_t, size_t> seen; // block start -> its end
    size_t total = 0;
    while (total < tidal::NodeArena::kHugeAfter + 3 * tidal::NodeArena::kHuge) { // into huge chunks
        size_t got = 0;
        char *first = static_cast<char *>(arena.take(bytes, 32, &got));
        REQUIRE(got >= 1);
        REQUIRE(got <= 32);
        CHECK(reinterpret_cast<uintptr_t>(first) % tidal::NodeArena::kAlign == 0);
        const uintptr_t b = reinterpret_cast<uintptr_t>(first), e = b + got * block;
        auto it = seen.lower_bound(b);
        CHECK((it == seen.end() || it->first >= e));
        CHECK((it == seen.begin() || std::prev(it)->second <= b));
        seen[b] = e;
        std::memset(first, 0xa5, got * block); // ASan: every block handed out is the arena's
        total += got * block;
    }
    // A shard's list filled from the arena hands its blocks out one by one.
    tidal::NodeFreeList list;
    list.attach(&arena);
    void *a = list.pop(bytes), *b = list.pop(bytes);
    CHECK(a != b);
    list.push(a);
    CHECK(list.pop(bytes) == a);
}

namespace {
// Stand-ins for madvise: one that records what it was asked, one that refuses (THP "never", an
// old kernel, a sandbox).
struct AdviceCall {
    uintptr_t start;
    size_t size;
    int advice;
};
std::vector<AdviceCall> advice_calls;
int recording_madvise(void *p, size_t size, int advice)
{
    advice_calls.push_back({reinterpret_cast<uintptr_t>(p), size, advice});
    return 0;
}
int refusing_madvise(void *p, size_t size, int advice)
{
    advice_calls.push_back({reinterpret_cast<uintptr_t>(p), size, advice});
    errno = EINVAL;
    return -1;
}
constexpr size_t kHugePage = tidal::HugePages::kHuge;
} // namespace

TEST_CASE("huge pages: a mapping is zeroed and starts at a 2 MiB boundary, whatever its size")
{
    for (size_t bytes : {size_t{1}, kHugePage, kHugePage + 1, 9 * kHugePage - 100}) {
        auto *p = static_cast<unsigned char *>(tidal::HugePages::map(bytes));
        CHECK(reinterpret_cast<uintptr_t>(p) % kHugePage == 0);
        CHECK(p[0] == 0);
        CHECK(p[bytes - 1] == 0);
        std::memset(p, 0x5a, tidal::HugePages::round_up(bytes)); // the whole rounded size is usable
        tidal::HugePages::unmap(p, bytes);
    }
    // Refused advice is reported, and errno is left as it was.
    advice_calls.clear();
    void *p = tidal::HugePages::map(kHugePage);
    errno = 0;
    CHECK_FALSE(tidal::HugePages::advise(p, kHugePage, &refusing_madvise));
    CHECK(errno == 0);
    REQUIRE(advice_calls.size() == 1); // no collapse asked of a kernel that took no advice
    CHECK(advice_calls[0].advice == MADV_HUGEPAGE);
    tidal::HugePages::unmap(p, kHugePage);
}

TEST_CASE("index: a leaf region is advised as huge pages once, when enough of its granules are used")
{
    using Index = tidal::AddressIndex<int>;
    const uintptr_t leaf = 0x7f5000000000; // a leaf's first address (4 GiB aligned)
    advice_calls.clear();
    Index index(&recording_madvise);
    for (uintptr_t g = 0; g + 1 < Index::kHugeAt; ++g)
        index.bucket(leaf + g * kGranule);
    CHECK(advice_calls.empty()); // a sparse leaf keeps its small pages
    index.bucket(leaf); // a granule already used does not count twice
    CHECK(advice_calls.empty());
    index.bucket(leaf + (Index::kHugeAt - 1) * kGranule);
    REQUIRE(advice_calls.size() == 2); // advised, then its small pages collapsed
    CHECK(advice_calls[0].advice == MADV_HUGEPAGE);
    CHECK(advice_calls[1].advice == MADV_COLLAPSE);
    for (const AdviceCall &c : advice_calls) {
        CHECK(c.start % kHugePage == 0);
        CHECK(c.size == kHugePage);
        CHECK(c.start <= reinterpret_cast<uintptr_t>(index.find_granule(leaf)));
        CHECK(reinterpret_cast<uintptr_t>(index.find_granule(leaf + (Index::kHugeAt - 1) * kGranule)) < c.start + c.size);
    }
    CHECK(index.huge_regions() == 1);
    for (uintptr_t g = Index::kHugeAt; g < 2 * Index::kHugeAt; ++g) // the same region: asked once only
        index.bucket(leaf + g * kGranule);
    CHECK(advice_calls.size() == 2);
}

TEST_CASE("registry: where the kernel refuses huge pages, the index and the nodes work on small pages")
{
    using Index = tidal::AddressIndex<int>;
    const uintptr_t leaf = 0x7f5100000000;
    advice_calls.clear();
    Index index(&refusing_madvise);
    for (uintptr_t g = 0; g < Index::kHugeAt; ++g)
        index.bucket(leaf + g * kGranule).push_back({leaf + g * kGranule, nullptr});
    CHECK(advice_calls.size() == 1); // asked, refused, not asked to collapse
    CHECK(index.huge_regions() == 0);
    for (uintptr_t g = 0; g < Index::kHugeAt; ++g) {
        const Index::Bucket *b = index.find_bucket(leaf + g * kGranule + 5);
        REQUIRE(b != nullptr);
        CHECK(b->size() == 1);
    }

    advice_calls.clear();
    tidal::NodeArena arena(&refusing_madvise);
    size_t total = 0;
    while (total < tidal::NodeArena::kHugeAfter + 2 * kHugePage) {
        size_t got = 0;
        auto *first = static_cast<char *>(arena.take(208, 32, &got));
        REQUIRE(got >= 1);
        std::memset(first, 0x3c, got * 208);
        total += got * 208;
    }
    CHECK_FALSE(arena.huge());
    CHECK_FALSE(advice_calls.empty());
    for (const AdviceCall &c : advice_calls)
        CHECK(c.advice == MADV_HUGEPAGE);
}

TEST_CASE("node arena: once 8 MiB of nodes exist, every 2 MiB chunk is advised, the full ones before included")
{
    advice_calls.clear();
    tidal::NodeArena arena(&recording_madvise);
    std::vector<std::pair<uintptr_t, size_t>> taken; // first block, bytes
    size_t total = 0;
    auto take = [&] {
        size_t got = 0;
        const auto first = reinterpret_cast<uintptr_t>(arena.take(208, 32, &got));
        taken.emplace_back(first, got * 208);
        total += got * 208;
    };
    while (total < tidal::NodeArena::kHugeAfter - kHugePage)
        take();
    CHECK(advice_calls.empty()); // few nodes: small pages
    while (total < tidal::NodeArena::kHugeAfter + 2 * kHugePage)
        take();
    CHECK(arena.huge());
    std::vector<uintptr_t> advised;
    for (const AdviceCall &c : advice_calls) {
        CHECK(c.start % kHugePage == 0);
        CHECK(c.size == kHugePage);
        if (c.advice == MADV_HUGEPAGE)
            advised.push_back(c.start);
    }
    CHECK(advised.size() >= 4); // the chunks of 2 MiB: those before the 8 MiB mark and after
    // Every node but those of the first, small chunks (under 2 MiB in all) lies in an advised chunk.
    size_t in_huge = 0;
    for (const auto &[b, bytes] : taken)
        for (uintptr_t a : advised)
            if (b >= a && b < a + kHugePage)
                in_huge += bytes;
    CHECK(in_huge + (size_t{2} << 20) > total);
}

TEST_CASE("index: a query without the shard lock never returns a record torn by a writer of the same block")
{
    // One base freed and revived again and again as two different records, each consistent in
    // itself (its size, device, advice and every byte of its tag say which one it is), while
    // readers query an address both contain through its page hint. A record copied while the
    // writer was rewriting it mixes the two: the sequence count must send that reader to the lock.
    AllocationRegistry reg;
    const uintptr_t base = 0x7f7000000000;
    while_reviving(reg, base, 0x800, [&](int i) {
        const auto r = reg.find(at(base + 0x10 + i % 0x7f0));
        if (r)
            require_one_version(*r, base, 0x800);
        return r.has_value();
    });
}

TEST_CASE("index: a page keeps its two newest hints, and forgetting an item clears both places")
{
    // Two small blocks of one page queried in turn (a copy's two ends) must both stay hinted:
    // with one hint per page, each displaced the other and every query took the shard's lock.
    tidal::AddressIndex<int> index;
    int a = 0, b = 0, c = 0;
    const uintptr_t g = 0x7f4100000000;
    using Index = tidal::AddressIndex<int>;
    index.bucket(g);
    Index::Granule *first = index.find_granule(g);
    REQUIRE(first != nullptr);
    index.hint(g, 0x80, &a, head());
    index.hint(g + 0x80, 0x40, &b, head());
    CHECK(first->pages[0][0].item == &b);
    CHECK(first->pages[0][1].item == &a);
    Index::push_hint(first->pages[0], &b, head()); // already the newest: nothing moves
    CHECK(first->pages[0][0].item == &b);
    CHECK(first->pages[0][1].item == &a);
    Index::push_hint(first->pages[0], &a, head()); // found again: newest, b kept
    CHECK(first->pages[0][0].item == &a);
    CHECK(first->pages[0][1].item == &b);
    index.hint(g + 0xc0, 0x40, &c, head()); // a third: the oldest (b) goes
    CHECK(first->pages[0][0].item == &c);
    CHECK(first->pages[0][1].item == &a);
    index.forget_hints(g, &a);
    CHECK(first->pages[0][0].item == &c);
    CHECK(first->pages[0][1].item == nullptr);
}

TEST_CASE("index: lock-free queries through either hint of a page never return a torn record")
{
    // Two small blocks of one page: `stable` stays, `moving` is freed and revived as two
    // self-consistent versions, while readers query both in turn, so that each is found
    // through the page's first or second hint without the lock. A record copied while the
    // writer rewrote it mixes the versions: the sequence count must send that reader to the lock.
    AllocationRegistry reg;
    const uintptr_t page = 0x7f7100000000, stable = page, moving = page + 0x100;
    AllocationRecord s = record(stable, 0x100);
    std::memset(s.tag, 's', sizeof s.tag - 1);
    reg.insert(s);
    while_reviving(reg, moving, 0x100, [&](int i) {
        AllocationRecord r;
        REQUIRE(reg.find(at(stable + 0x10 + i % 0xf0), r));
        REQUIRE(r.base == at(stable));
        REQUIRE(r.size == 0x100u);
        REQUIRE(r.tag[sizeof r.tag - 2] == 's');
        if (!reg.find(at(moving + 0x10 + i % 0xf0), r))
            return false;
        require_one_version(r, moving, 0x100);
        return true;
    });
}

TEST_CASE("registry find_head: a declaration's lookup fills the record's head, through a page hint or the lock")
{
    AllocationRegistry reg;
    // Three small blocks of one page: a page keeps two hints, so one of them is found through
    // the bucket under the lock (the whole record) and the others through a hint (the head).
    const uintptr_t page = 0x7f7200000000;
    for (int k = 0; k < 3; ++k) {
        AllocationRecord r = record(page + 0x100 * static_cast<uintptr_t>(k), 0x100);
        r.device = k;
        r.advice = 0x10u << k;
        std::memset(r.tag, 'a' + k, sizeof r.tag - 1);
        r.runtime_device = 7 + k;
        r.hints = 0x40u + static_cast<uint32_t>(k);
        r.alignment = 4096;
        reg.insert(r);
    }
    for (int round = 0; round < 2; ++round)
        for (int k = 0; k < 3; ++k) {
            const uintptr_t base = page + 0x100 * static_cast<uintptr_t>(k);
            AllocationRecord full, head;
            REQUIRE(reg.find(at(base + 0x80), full));
            REQUIRE(reg.find_head(at(base + 0x80), head));
            CHECK(head.base == full.base);
            CHECK(head.size == full.size);
            CHECK(head.kind == full.kind);
            CHECK(head.device == full.device);
            CHECK(head.runtime_device == 7 + k);
            CHECK(head.hints == 0x40u + static_cast<uint32_t>(k));
            CHECK(head.advice == full.advice);
            CHECK(std::memcmp(reinterpret_cast<const char *>(&head) + AllocationRegistry::kHeadFrom,
                              reinterpret_cast<const char *>(&full) + AllocationRegistry::kHeadFrom,
                              AllocationRegistry::kHeadBytes) == 0);
        }
    AllocationRecord r;
    CHECK_FALSE(reg.find_head(at(page + 0x300), r)); // one past the last block
    CHECK_FALSE(reg.find_head(at(0x1000), r));       // never indexed
    REQUIRE(reg.remove(at(page + 0x100)).how == AllocationRegistry::Removal::removed);
    CHECK_FALSE(reg.find_head(at(page + 0x180), r)); // freed: its hint names a dead node
    CHECK(reg.find_head(at(page + 0x280), r));
    CHECK(r.base == at(page + 0x200));
}

TEST_CASE("registry describe: a pointer query's lookup fills the head and the tag, empty or not")
{
    AllocationRegistry reg;
    const uintptr_t page = 0x7f7300000000;
    // Two blocks of one page (both found through its hints): the first tagged, the second not.
    AllocationRecord tagged = record(page, 0x100), plain = record(page + 0x100, 0x100);
    std::strcpy(tagged.tag, "layer/weights");
    tagged.advice = 0x4;
    plain.hints = 0x8;
    reg.insert(tagged);
    reg.insert(plain);
    for (int round = 0; round < 2; ++round) { // the first round may go through the lock
        AllocationRecord r;
        std::memset(r.tag, 'x', sizeof r.tag); // what an earlier query left: must not show through
        REQUIRE(reg.describe(at(page + 0x80), r));
        CHECK(r.base == at(page));
        CHECK(std::string(r.tag) == "layer/weights");
        CHECK(r.advice == 0x4u);
        std::memset(r.tag, 'x', sizeof r.tag);
        REQUIRE(reg.describe(at(page + 0x1ff), r));
        CHECK(r.base == at(page + 0x100));
        CHECK(r.tag[0] == '\0');
        CHECK(std::memcmp(r.tag, AllocationRecord{}.tag, sizeof r.tag) == 0);
        CHECK(r.hints == 0x8u);
    }
    // A freed and revived base takes the new record's tag, or its lack.
    REQUIRE(reg.remove(at(page)).how == AllocationRegistry::Removal::removed);
    reg.insert(record(page, 0x100));
    AllocationRecord r;
    std::memset(r.tag, 'x', sizeof r.tag);
    REQUIRE(reg.describe(at(page + 0x10), r));
    CHECK(r.tag[0] == '\0');
    AllocationRecord none;
    CHECK_FALSE(reg.describe(at(page + 0x200), none));
}

TEST_CASE("index: a page hint's copy of the head stays true through advice, a free and a revival at another size")
{
    // A lookup through a page hint reads the hint's copy of the record's head, not the node:
    // every change of the record must reach the copy, or a query answers with what was.
    AllocationRegistry reg;
    const uintptr_t base = 0x7f7400000000;
    AllocationRecord r = record(base, 0x3000); // three pages
    r.advice = 0x1;
    reg.insert(r);
    AllocationRecord out;
    for (int round = 0; round < 2; ++round) { // the second through the hints
        REQUIRE(reg.find_head(at(base + 0x2100), out));
        CHECK(out.advice == 0x1u);
    }
    REQUIRE(reg.set_advice(at(base), 0x6));
    for (uintptr_t off : {uintptr_t{0x10}, uintptr_t{0x1100}, uintptr_t{0x2fff}}) {
        REQUIRE(reg.find_head(at(base + off), out));
        CHECK(out.advice == 0x6u);
        REQUIRE(reg.describe(at(base + off), out));
        CHECK(out.advice == 0x6u);
    }
    REQUIRE(reg.remove(at(base)).how == AllocationRegistry::Removal::removed);
    CHECK_FALSE(reg.find_head(at(base + 0x2100), out)); // its hints went with it
    CHECK_FALSE(reg.describe(at(base + 0x10), out));
    AllocationRecord smaller = record(base, 0x1000); // revived in place, one page, elsewhere
    smaller.device = 3;
    std::strcpy(smaller.tag, "again");
    reg.insert(smaller);
    for (int round = 0; round < 2; ++round) {
        CHECK_FALSE(reg.find_head(at(base + 0x1100), out)); // the pages it no longer covers
        CHECK_FALSE(reg.find_head(at(base + 0x2100), out));
        REQUIRE(reg.describe(at(base + 0xfff), out));
        CHECK(out.size == 0x1000u);
        CHECK(out.device == 3);
        CHECK(out.advice == 0u);
        CHECK(std::string(out.tag) == "again");
    }
    AllocationRecord larger = record(base + 0x1000, 0x2000); // a new node in the freed pages
    reg.insert(larger);
    REQUIRE(reg.find_head(at(base + 0x2100), out));
    CHECK(out.base == at(base + 0x1000));
    REQUIRE(reg.find(at(base + 0x10), out));
    CHECK(out.base == at(base));
}

TEST_CASE("index: each_hint reaches the item's hints in its pages only, and an empty newest place is taken as it is")
{
    struct Head {
        unsigned char bytes[48];
        int version;
    };
    using Index = tidal::AddressIndex<int, Head>;
    Index index;
    int a = 0, b = 0;
    const uintptr_t g = 0x7f4200000000, page = 0x1000;
    index.bucket(g);
    Index::Granule *first = index.find_granule(g);
    REQUIRE(first != nullptr);
    index.hint(g, 2 * page, &a, head(Head{{}, 1}));
    index.hint(g + 2 * page - 0x100, 0x200, &b, head(Head{{}, 7})); // shares page 1 with a, reaches page 2
    CHECK(first->pages[1][0].item == &b);
    CHECK(first->pages[1][1].item == &a);
    CHECK(first->pages[1][1].head.version == 1);
    int seen = 0;
    index.each_hint(g, 2 * page, &a, [&](Index::Hint &h) {
        h.head.version = 2;
        ++seen;
    });
    CHECK(seen == 2); // pages 0 and 1
    CHECK(first->pages[0][0].head.version == 2);
    CHECK(first->pages[1][1].head.version == 2);
    CHECK(first->pages[1][0].head.version == 7);
    index.each_hint(g, 2 * page, &a, [](Index::Hint &h) { Index::clear_hint(h); });
    CHECK(first->pages[0][0].item == nullptr);
    CHECK(first->pages[1][1].item == nullptr);
    CHECK(first->pages[1][0].item == &b);
    Index::clear_hint(first->pages[1][0]);
    index.hint(g + page, 0x10, &a, head(Head{{}, 3})); // the newest place is empty: nothing shifts
    CHECK(first->pages[1][0].item == &a);
    CHECK(first->pages[1][0].head.version == 3);
    CHECK(first->pages[1][1].item == nullptr);
    Index::push_hint(first->pages[1], &a, head(Head{{}, 4})); // named already: its head rewritten in place
    CHECK(first->pages[1][0].head.version == 4);
    CHECK(first->pages[1][1].item == nullptr);
}

TEST_CASE("index: a block over several pages is found in every page through each life, and in none once freed")
{
    // A revived block of several pages names itself in its first page; lookups repair the hints
    // of the others, and its free must clear each of them (the pages it was found in), or a
    // query of a freed page would answer with the block's old head.
    AllocationRegistry reg;
    const uintptr_t base = 0x7f7500000000;
    AllocationRecord first = record(base, 0x8000); // eight pages
    first.device = 0;
    reg.insert(first);
    const uintptr_t offsets[] = {0x10, 0x3010, 0x7ff0};
    AllocationRecord out;
    for (int life = 0; life < 3; ++life) {
        for (int round = 0; round < 2; ++round) // the second round through the hints
            for (uintptr_t off : offsets) {
                REQUIRE(reg.find_head(at(base + off), out));
                CHECK(out.base == at(base));
                CHECK(out.device == life);
                REQUIRE(reg.describe(at(base + off), out));
                CHECK(out.device == life);
            }
        REQUIRE(reg.remove(at(base)).how == AllocationRegistry::Removal::removed);
        for (uintptr_t off : offsets) {
            CHECK_FALSE(reg.find_head(at(base + off), out));
            CHECK_FALSE(reg.describe(at(base + off), out));
        }
        AllocationRecord next = record(base, 0x8000);
        next.device = life + 1;
        reg.insert(next); // revived in place
    }
}
