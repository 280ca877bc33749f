#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "registry/allocation_registry.h"
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
    CHECK(reg.remove(at(0x10010), &out) == AllocationRegistry::Removal::interior);
    CHECK(out.base == at(0x10000));
    CHECK(reg.live_count() == 1); // an interior free removes nothing
    CHECK(reg.remove(at(0x10000), &out) == AllocationRegistry::Removal::removed);
    CHECK(reg.remove(at(0x10000), &out) == AllocationRegistry::Removal::already_freed);
    CHECK(reg.remove(at(0x90000), &out) == AllocationRegistry::Removal::unknown);
    // The address comes back from the runtime: freeing it again is legitimate.
    reg.insert(record(0x10000, 0x80));
    CHECK(reg.remove(at(0x10000), &out) == AllocationRegistry::Removal::removed);
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
    CHECK(reg.remove(at(0x40000), &out) == AllocationRegistry::Removal::removed);
    CHECK(reg.remove(at(0x40100), &out) == AllocationRegistry::Removal::removed);
    CHECK_FALSE(reg.find(at(0x40180)).has_value());
    reg.insert(record(0x3ff00, 0x1000)); // over both freed bases
    CHECK(reg.find(at(0x40180))->base == at(0x3ff00));
    CHECK(reg.find(at(0x40000))->base == at(0x3ff00));
    CHECK(reg.remove(at(0x40100), &out) == AllocationRegistry::Removal::interior);
    CHECK(out.base == at(0x3ff00));
    // The same base again, now smaller: nothing of the old size survives.
    CHECK(reg.remove(at(0x3ff00), &out) == AllocationRegistry::Removal::removed);
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
    CHECK(reg.remove(at(0x3ff00), &out) == AllocationRegistry::Removal::removed);
    CHECK(reg.remove(at(0x3ff00), &out) == AllocationRegistry::Removal::already_freed);
    CHECK(reg.live_count() == 0);
}

TEST_CASE("a vacancy ends at the next live allocation, not at a freed base kept for revival")
{
    AllocationRegistry reg;
    AllocationRecord out;
    reg.insert(record(0x50000, 0x100));
    reg.insert(record(0x60000, 0x100));
    CHECK(reg.remove(at(0x50000), &out) == AllocationRegistry::Removal::removed); // its node stays, dead
    AllocationRegistry::Vacancy v;
    CHECK_FALSE(reg.find(at(0x4f000), &v).has_value());
    CHECK(v.end == 0x60000); // copies refuse a range that runs into v.end: a dead node must not end it
    CHECK(reg.remove(at(0x60000), &out) == AllocationRegistry::Removal::removed);
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
        CHECK(reg.remove(at(0x100000 + i * 0x100), nullptr) == AllocationRegistry::Removal::removed);
    // Used once more at its old size, so the registry's exact-base hint points at its node...
    reg.insert(record(0x100000, 0x100));
    CHECK(reg.remove(at(0x100000), nullptr) == AllocationRegistry::Removal::removed);
    reg.insert(record(0x100000, 4096 * 0x100)); // ...then again, over all the others
    for (uintptr_t i = 0; i < 4096; i += 97) {
        const auto r = reg.find(at(0x100000 + i * 0x100 + 0x80));
        REQUIRE(r.has_value());
        CHECK(r->base == at(0x100000));
    }
    CHECK(reg.remove(at(0x100100), nullptr) == AllocationRegistry::Removal::interior);
    CHECK(reg.live_count() == 1);
    // Freed again and revived at its old small size: the rest of the range is free once more.
    CHECK(reg.remove(at(0x100000), nullptr) == AllocationRegistry::Removal::removed);
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
            CHECK(reg.remove(at(0x1000000 + (round * 4000 + i) * 0x1000), nullptr) ==
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
                REQUIRE(reg.remove(at(base), nullptr) == AllocationRegistry::Removal::removed);
            }
        });
    for (auto &th : threads)
        th.join();
    CHECK(reg.live_count() == 0);
}
