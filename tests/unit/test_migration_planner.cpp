// MigrationPlanner on its own: no runtime, no scheduler. Allocations are addresses that are
// never touched; residency is a map; the chain is the core's defaults or the xnack plugin.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "config/config_loader.h"
#include "migration/migration_planner.h"
#include "status/error.h"

using namespace tidal;

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr uint64_t kChunk = 16 * kMiB;

struct System {
    tidal_policy_device devices[2]{};
    tidal_policy_system system{};
    System()
    {
        for (int i = 0; i < 2; ++i) {
            devices[i].struct_size = sizeof devices[i];
            devices[i].index = i;
            devices[i].flags = TIDAL_DEVICE_FLAG_MANAGED | TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED |
                               TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT | TIDAL_DEVICE_FLAG_SIMULATED;
            devices[i].total_memory = uint64_t{1} << 34;
            devices[i].page_size = 2u << 20;
        }
        system.struct_size = sizeof system;
        system.runtime = "sim";
        system.device_count = 2;
        system.devices = devices;
    }
};

// The core's defaults alone, or the xnack plugin with `options` (TOML lines) in front of them.
Settings settings(const std::string &xnack_options = "", bool xnack = false)
{
    if (!xnack)
        return ConfigLoader::from_string("runtime = \"sim\"\n");
    const std::string plugin = TIDAL_TEST_XNACK_PLUGIN;
    return ConfigLoader::from_string("runtime = \"sim\"\npolicies = [\"" + plugin + "\"]\n[policy.\"" + plugin + "\"]\n" +
                                     xnack_options);
}

// A planner with its chain, and residency as a map (unit start -> device).
struct Fixture {
    System system;
    PolicyChain chain;
    MigrationPlanner planner;
    std::map<uintptr_t, int32_t> where;
    MigrationPlanner::Residency resident = [this](uintptr_t start, int32_t d) {
        auto it = where.find(start);
        return it != where.end() && it->second == d;
    };

    explicit Fixture(const Settings &s = settings()) : chain(s, &system.system), planner(chain, &system.system, kChunk) {}
};

// A managed allocation at a made-up address, aligned as tidal aligns them.
AllocationRecord allocation(uintptr_t base, size_t size, uint32_t hints = 0)
{
    AllocationRecord a;
    a.base = a.raw = reinterpret_cast<void *>(base);
    a.size = a.raw_size = size;
    a.kind = TIDAL_KIND_MANAGED;
    a.device = 0;
    a.hints = hints;
    return a;
}

DeclaredRange range(const AllocationRecord &owner, size_t offset, size_t size, int32_t device,
                    uint32_t mode = TIDAL_ACCESS_READ)
{
    DeclaredRange r;
    r.owner = owner;
    r.ptr = static_cast<const char *>(owner.base) + offset;
    r.size = size;
    r.device = device;
    r.mode = mode;
    return r;
}

constexpr uintptr_t kBase = uintptr_t{1} << 40;
const AllocationRecord kA = allocation(kBase, 40 * kMiB); // units of 16, 16 and 8 MiB

std::vector<uintptr_t> starts(const std::vector<Need> &needs)
{
    std::vector<uintptr_t> s;
    for (const Need &n : needs)
        s.push_back(n.start);
    return s;
}

ResidentUnit unit(uintptr_t start, size_t size, uint64_t last_use, bool held = false)
{
    ResidentUnit u;
    u.start = start;
    u.size = size;
    u.last_use = last_use;
    u.held = held;
    return u;
}

} // namespace

TEST_CASE("migration planner: units are chunk windows aligned to the allocation's start")
{
    Fixture f;
    SUBCASE("a range inside one unit names that unit")
    {
        const auto u = f.planner.units(range(kA, 17 * kMiB, 1, 0));
        REQUIRE(u.size() == 1);
        CHECK(u[0].start == kBase + kChunk);
        CHECK(u[0].size == kChunk);
    }
    SUBCASE("a range across a boundary names both; the allocation's last unit is shorter")
    {
        const auto u = f.planner.units(range(kA, 31 * kMiB, 2 * kMiB, 0));
        REQUIRE(u.size() == 2);
        CHECK(u[0].start == kBase + kChunk);
        CHECK(u[1].start == kBase + 2 * kChunk);
        CHECK(u[1].size == 8 * kMiB);
    }
    SUBCASE("a zero-size range names no unit")
    {
        CHECK(f.planner.units(range(kA, 5, 0, 0)).empty());
        DeclarationPlan plan;
        const DeclaredRange r = range(kA, 5, 0, 0);
        f.planner.add(plan, r, false, f.resident);
        CHECK(plan.devices.empty());
        CHECK(f.planner.plan_prefetch(r, f.resident).needs.empty());
    }
}

TEST_CASE("migration planner: a declaration moves what is not resident, and only that")
{
    Fixture f;
    const DeclaredRange whole = range(kA, 0, kA.size, 0);
    SUBCASE("nothing resident: every unit moves")
    {
        DeclarationPlan plan;
        f.planner.add(plan, whole, false, f.resident);
        REQUIRE(plan.devices.size() == 1);
        const DevicePlan &p = plan.devices[0];
        CHECK(p.device == 0);
        CHECK(starts(p.needs) == std::vector<uintptr_t>{kBase, kBase + kChunk, kBase + 2 * kChunk});
        CHECK(p.incoming == kA.size);
        for (const Need &n : p.needs) {
            CHECK(n.move);
            CHECK(n.range == &whole);
            CHECK(n.call_limit == 0); // the core's plan: the configured chunk size
            CHECK(n.advice_set == 0);
        }
    }
    SUBCASE("units already resident there are hits, and stay in the call's keep list")
    {
        f.where[kBase + kChunk] = 0;
        f.where[kBase] = 1; // resident, but on the other device: it moves
        DeclarationPlan plan;
        f.planner.add(plan, whole, false, f.resident);
        const DevicePlan &p = plan.devices.at(0);
        CHECK(p.needs[0].move);
        CHECK_FALSE(p.needs[1].move);
        CHECK(p.needs[2].move);
        CHECK(p.incoming == kChunk + 8 * kMiB);
        CHECK(p.keep() == std::vector<uintptr_t>{kBase, kBase + kChunk, kBase + 2 * kChunk});
    }
    SUBCASE("everything resident: nothing moves, nothing incoming")
    {
        for (uintptr_t s : {kBase, kBase + kChunk, kBase + 2 * kChunk})
            f.where[s] = 0;
        DeclarationPlan plan;
        f.planner.add(plan, whole, true, f.resident); // lookahead plans the same units
        CHECK(plan.devices.at(0).incoming == 0);
        CHECK(plan.devices.at(0).needs.size() == 3);
    }
}

TEST_CASE("migration planner: overlapping ranges need each unit once, where it was first named")
{
    Fixture f;
    const AllocationRecord b = allocation(kBase + 64 * kMiB, 16 * kMiB);
    const DeclaredRange first = range(kA, 0, 20 * kMiB, 0);
    const DeclaredRange overlap = range(kA, 10 * kMiB, 10 * kMiB, 0, TIDAL_ACCESS_WRITE);
    const DeclaredRange other_device = range(kA, 18 * kMiB, 20 * kMiB, 1);
    const DeclaredRange elsewhere = range(b, 0, b.size, 1);
    DeclarationPlan plan;
    for (const DeclaredRange *r : {&first, &overlap, &other_device, &elsewhere})
        f.planner.add(plan, *r, false, f.resident);
    REQUIRE(plan.devices.size() == 2);
    CHECK(plan.devices[0].device == 0);
    CHECK(starts(plan.devices[0].needs) == std::vector<uintptr_t>{kBase, kBase + kChunk});
    CHECK(plan.devices[0].needs[1].range == &first);
    CHECK(plan.devices[0].incoming == 32 * kMiB);
    // Device 1 gets only what device 0 did not name: a unit is in one place at a time.
    CHECK(plan.devices[1].device == 1);
    CHECK(starts(plan.devices[1].needs) == std::vector<uintptr_t>{kBase + 2 * kChunk, kBase + 64 * kMiB});
    CHECK(plan.devices[1].incoming == 8 * kMiB + 16 * kMiB);
}

// Names `order` as MigrationPlanner::add does (asks, then names a new unit as the next need of
// device plan 0 or 1), checking each answer against a map of what was named before. Twice: the
// second time after reset(), as a call after a call.
void name_in_order(const std::vector<uintptr_t> &order)
{
    DeclarationPlan plan;
    for (int call = 0; call < 2; ++call) {
        std::map<uintptr_t, std::pair<size_t, size_t>> before;
        for (size_t k = 0; k < order.size(); ++k) {
            const uintptr_t start = order[k];
            const auto *s = plan.named(start);
            const auto it = before.find(start);
            REQUIRE((s != nullptr) == (it != before.end()));
            if (s) {
                CHECK(*s == it->second);
                continue;
            }
            const size_t device = plan.device_index(static_cast<int32_t>(k % 2));
            const std::pair<size_t, size_t> at{device, plan.devices[device].needs.size()};
            plan.name(start, at.first, at.second);
            plan.devices[device].needs.push_back(Need{start, 4096, nullptr, 0, 0, true});
            before[start] = at;
        }
        plan.reset();
    }
}

TEST_CASE("migration planner: a declaration's plan knows every unit named before, in any order")
{
    constexpr uintptr_t kPage = 4096;
    std::vector<uintptr_t> order;
    SUBCASE("increasing, with a repeat at the end")
    {
        for (uintptr_t i = 0; i < 300; ++i)
            order.push_back(kBase + i * kPage);
        order.push_back(kBase + 17 * kPage);
    }
    SUBCASE("decreasing, with a repeat")
    {
        for (uintptr_t i = 300; i > 0; --i)
            order.push_back(kBase + i * kPage);
        order.push_back(kBase + 300 * kPage);
    }
    SUBCASE("increasing runs, each below the one before (blocks of slabs mapped downwards)")
    {
        for (uintptr_t slab = 10; slab > 0; --slab)
            for (uintptr_t i = 0; i < 50; ++i)
                order.push_back(kBase + slab * 1000 * kPage + i * kPage);
        order.push_back(kBase + 5 * 1000 * kPage + 49 * kPage); // a repeat in an earlier run
        order.push_back(kBase + 5 * 1000 * kPage + 50 * kPage); // new, past that run's end
        order.push_back(kBase + 7 * 1000 * kPage + 3 * kPage);
    }
    SUBCASE("more runs than are kept apart, then repeats")
    {
        for (uintptr_t run = 0; run < 200; ++run)
            for (uintptr_t i = 0; i < 3; ++i)
                order.push_back(kBase + ((run * 7919) % 200) * 100 * kPage + i * kPage);
        order.push_back(kBase + 3 * 100 * kPage + 2 * kPage);
        order.push_back(kBase + 199 * 100 * kPage);
    }
    SUBCASE("two runs interleaved, then a start between two units named before")
    {
        for (uintptr_t i = 0; i < 40; ++i) {
            order.push_back(kBase + i * 2 * kPage);
            order.push_back(kBase + 1000 * kPage + i * 2 * kPage);
        }
        order.push_back(kBase + 3 * kPage);
        order.push_back(kBase + 4 * kPage);
    }
    SUBCASE("a shuffled set, each start named about twice")
    {
        uint64_t x = 88172645463325252ull;
        for (int i = 0; i < 2000; ++i) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            order.push_back(kBase + (x % 1000) * kPage);
        }
    }
    name_in_order(order);
}

TEST_CASE("migration planner: the chain's plan decides skip, call size and advice")
{
    const AllocationRecord read_mostly = allocation(kBase, 40 * kMiB, TIDAL_HINT_READ_MOSTLY);
    SUBCASE("a skipped range plans nothing; an explicit prefetch does not ask the chain")
    {
        Fixture f(settings("demand_paging = true\n", true));
        DeclarationPlan plan;
        const DeclaredRange r = range(kA, 0, kA.size, 0);
        f.planner.add(plan, r, false, f.resident);
        CHECK(plan.devices.empty());
        const DevicePlan p = f.planner.plan_prefetch(r, f.resident);
        CHECK(p.needs.size() == 3);
        CHECK(p.incoming == kA.size);
    }
    SUBCASE("the plan's chunk size limits each call; its advice joins across overlapping ranges")
    {
        Fixture f(settings("chunk_size = \"4MiB\"\n", true));
        const DeclaredRange written = range(read_mostly, 0, 16 * kMiB, 0, TIDAL_ACCESS_WRITE);
        const DeclaredRange read = range(read_mostly, 8 * kMiB, 16 * kMiB, 0, TIDAL_ACCESS_READ);
        DeclarationPlan plan;
        f.planner.add(plan, written, false, f.resident);
        f.planner.add(plan, read, false, f.resident);
        const DevicePlan &p = plan.devices.at(0);
        REQUIRE(p.needs.size() == 2);
        CHECK(p.needs[0].call_limit == 4 * kMiB);
        // Written: no read-mostly advice from its own plan, but the read range named it too.
        CHECK(p.needs[0].advice_set == TIDAL_ADVICE_READ_MOSTLY);
        CHECK(p.needs[1].advice_set == TIDAL_ADVICE_READ_MOSTLY);
    }
}

TEST_CASE("migration planner: the chain is asked about the range as declared, lookahead included")
{
    Fixture f;
    AllocationRecord a = allocation(kBase, 40 * kMiB, TIDAL_HINT_READ_MOSTLY);
    a.advice = TIDAL_ADVICE_ACCESSED_BY_DEVICE;
    a.device = 1;
    const DeclaredRange r = range(a, 3 * kMiB, 5 * kMiB, 0, TIDAL_ACCESS_WRITE);
    for (bool lookahead : {false, true}) {
        const tidal_prefetch_request req = f.planner.request(r, lookahead);
        CHECK(req.struct_size == sizeof req);
        CHECK(req.ptr == r.ptr);
        CHECK(req.size == 5 * kMiB);
        CHECK(req.device == 0);
        CHECK(req.mode == TIDAL_ACCESS_WRITE);
        CHECK(req.lookahead == (lookahead ? 1 : 0));
        CHECK(req.kind == TIDAL_KIND_MANAGED);
        CHECK(req.alloc_device == 1);
        CHECK(req.hints == TIDAL_HINT_READ_MOSTLY);
        CHECK(req.advice == TIDAL_ADVICE_ACCESSED_BY_DEVICE);
        CHECK(req.chunk_size == kChunk);
        CHECK(req.system == &f.system.system);
    }
}

TEST_CASE("migration planner: an explicit prefetch names every unit of its range")
{
    Fixture f;
    f.where[kBase + kChunk] = 0;
    const DeclaredRange r = range(kA, 15 * kMiB, 2 * kMiB, 0);
    const DevicePlan p = f.planner.plan_prefetch(r, f.resident);
    CHECK(p.device == 0);
    CHECK(starts(p.needs) == std::vector<uintptr_t>{kBase, kBase + kChunk});
    CHECK(p.needs[0].move);
    CHECK_FALSE(p.needs[1].move);
    CHECK(p.incoming == kChunk); // whole units move, not the range's 2 MiB
}

TEST_CASE("migration planner: making room under a budget")
{
    Fixture f;
    const uintptr_t u0 = kBase, u1 = kBase + kChunk, u2 = kBase + 2 * kChunk, u3 = kBase + 3 * kChunk;
    SUBCASE("no budget, or room enough: nothing to do, the chain is not asked")
    {
        CHECK(MigrationPlanner::excess(0, 1000, 1000) == 0);
        CHECK(MigrationPlanner::excess(2000, 1000, 1000) == 0);
        CHECK(MigrationPlanner::excess(2000, 1000, 1001) == 1);
        const EvictionPlan room = f.planner.make_room(0, 64 * kMiB, 48 * kMiB, 16 * kMiB, {}, {unit(u0, kChunk, 1)}, 9);
        CHECK(room.need == 0);
        CHECK(room.victims.empty());
    }
    SUBCASE("over budget: least recently used first, until the need is covered")
    {
        const std::vector<ResidentUnit> units = {unit(u0, kChunk, 5), unit(u1, kChunk, 2), unit(u2, kChunk, 7),
                                                 unit(u3, kChunk, 3)};
        const EvictionPlan room = f.planner.make_room(0, 64 * kMiB, 64 * kMiB, 20 * kMiB, {}, units, 9);
        CHECK(room.need == 20 * kMiB);
        CHECK(room.available == 64 * kMiB);
        CHECK(room.victims == std::vector<uintptr_t>{u1, u3});
        CHECK(room.freed == 32 * kMiB);
        CHECK(std::string(room.chosen_by) == "core");
        CHECK_NOTHROW(MigrationPlanner::require_covered(room, 0));
    }
    SUBCASE("units held by a phase or a lookahead, and the call's own units, are never victims")
    {
        const std::vector<ResidentUnit> units = {unit(u0, kChunk, 1, true), unit(u1, kChunk, 2), unit(u2, kChunk, 3)};
        const EvictionPlan room = f.planner.make_room(0, 48 * kMiB, 48 * kMiB, 16 * kMiB, {u1}, units, 9);
        CHECK(room.held == 32 * kMiB);
        CHECK(room.available == 16 * kMiB);
        CHECK(room.victims == std::vector<uintptr_t>{u2});
    }
    SUBCASE("too little may be evicted: short, and the chain is not asked")
    {
        const std::vector<ResidentUnit> units = {unit(u0, kChunk, 1, true), unit(u1, kChunk, 2)};
        const EvictionPlan room = f.planner.make_room(0, 32 * kMiB, 32 * kMiB, 32 * kMiB, {}, units, 9);
        CHECK(room.short_of_candidates());
        CHECK(room.need == 32 * kMiB);
        CHECK(room.available == 16 * kMiB);
        CHECK(room.held == 16 * kMiB);
        CHECK(room.victims.empty());
    }
    SUBCASE("a range larger than the budget cannot fit even on an empty device")
    {
        const DevicePlan p = f.planner.plan_prefetch(range(kA, 0, kA.size, 0), f.resident);
        const EvictionPlan room = f.planner.make_room(0, 32 * kMiB, 0, p.incoming, p.keep(), {}, 9);
        CHECK(room.short_of_candidates());
        CHECK(room.need == 8 * kMiB);
        CHECK(room.available == 0);
    }
    SUBCASE("equally old units: the larger goes first, so fewer calls cover the need")
    {
        const std::vector<ResidentUnit> units = {unit(u0, 8 * kMiB, 4), unit(u1, kChunk, 4)};
        const EvictionPlan room = f.planner.make_room(0, 24 * kMiB, 24 * kMiB, 8 * kMiB, {}, units, 9);
        CHECK(room.victims == std::vector<uintptr_t>{u1});
    }
    SUBCASE("a choice that does not cover the need is the policy's error")
    {
        EvictionPlan room;
        room.need = 2 * kMiB;
        room.freed = kMiB;
        room.chosen_by = "stingy";
        try {
            MigrationPlanner::require_covered(room, 1);
            FAIL("no error");
        } catch (const Error &e) {
            CHECK(e.status() == TIDAL_ERROR_PLUGIN);
            CHECK(std::string(e.what()).find("policy 'stingy'") != std::string::npos);
        }
    }
}
