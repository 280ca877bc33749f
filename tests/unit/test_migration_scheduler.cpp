// MigrationScheduler with worker threads, over the simulated device: what an explicit
// prefetch waits for, and lookahead declarations joining a prefetch still queued.
#include <doctest/doctest.h>

#include <future>
#include <map>
#include <mutex>
#include <random>
#include <vector>

#include "config/config_loader.h"
#include "gate.h"
#include "migration/address_table.h"
#include "migration/migration_scheduler.h"
#include "runtime/sim/sim_module.h"
#include "runtime/sim/sim_runtime.h"
#include "status/error.h"

using namespace tidal;
using namespace tidal::test;

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// The simulated device's table, but a prefetch on a stream (a migration stream: only the
// workers use one) passes `migrations` first; every prefetch is logged in the order issued.
Gate *migrations = nullptr;
std::mutex log_mutex;
std::vector<const void *> issued;
std::vector<size_t> issued_sizes;

struct HoldMigrations {
    explicit HoldMigrations(Gate &g) { migrations = &g; }
    ~HoldMigrations() { migrations = nullptr; }
};

int gated_prefetch(void *rt, const void *ptr, size_t size, int32_t location, void *stream)
{
    if (stream && migrations)
        migrations->pass();
    {
        std::lock_guard lock(log_mutex);
        issued.push_back(ptr);
        issued_sizes.push_back(size);
    }
    return sim::sim_ops()->prefetch(rt, ptr, size, location, stream);
}

const tidal_rt_ops *gated_ops()
{
    static const tidal_rt_ops ops = [] {
        tidal_rt_ops o = *sim::sim_ops();
        o.prefetch = gated_prefetch;
        return o;
    }();
    return &ops;
}

sim::SimRuntime *last_sim = nullptr; // the instance behind the latest gated runtime

std::unique_ptr<Runtime> gated_runtime(const Settings &s)
{
    void *rt = nullptr;
    REQUIRE(sim::sim_create(s.sim, &rt, nullptr, 0) == 0);
    last_sim = static_cast<sim::SimRuntime *>(rt);
    return std::make_unique<Runtime>(gated_ops(), rt, "gated sim");
}

struct System {
    tidal_policy_device device{};
    tidal_policy_system system{};
    explicit System(const Runtime &rt)
    {
        const tidal_rt_device_props &p = rt.props(0);
        device.struct_size = sizeof device;
        device.flags = TIDAL_DEVICE_FLAG_MANAGED | TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED | TIDAL_DEVICE_FLAG_SIMULATED;
        device.total_memory = p.total_memory;
        device.page_size = p.page_size;
        system.struct_size = sizeof system;
        system.runtime = "sim";
        system.device_count = 1;
        system.devices = &device;
    }
};

AllocationRecord managed(Runtime &rt, size_t size)
{
    AllocationRecord owner;
    owner.kind = TIDAL_KIND_MANAGED;
    owner.device = 0;
    owner.size = owner.raw_size = size;
    owner.raw = owner.base = rt.alloc(TIDAL_KIND_MANAGED, 0, owner.size);
    return owner;
}

DeclaredRange range(const AllocationRecord &owner, size_t offset, size_t size, int32_t device)
{
    DeclaredRange r;
    r.owner = owner;
    r.ptr = static_cast<const char *>(owner.base) + offset;
    r.size = size;
    r.device = device;
    return r;
}

// What every test here schedules on: the gated device in 2 MiB units, its events and chain.
struct Rig {
    Settings settings = ConfigLoader::from_string("runtime = \"sim\"\n[migration]\nchunk_size = \"2MiB\"\n");
    std::unique_ptr<Runtime> runtime = gated_runtime(settings);
    EventPool events{*runtime};
    System system{*runtime};
    PolicyChain chain{settings, &system.system};
};

} // namespace

TEST_CASE("migration scheduler: an explicit prefetch waits only for queued moves of its own range")
{
    Rig rig;
    AllocationRecord owner = managed(*rig.runtime, 8 * kMiB);
    {
        MigrationScheduler scheduler(*rig.runtime, rig.events, rig.chain, &rig.system.system, rig.settings.migration, true);
        Gate held; // after the scheduler: released before its workers join
        HoldMigrations hold(held);
        issued.clear();
        // A lookahead moves [0, 2 MiB) on the worker, which holds it at the gate.
        scheduler.declare(nullptr, {range(owner, 0, 2 * kMiB, 0)}, true);
        REQUIRE(held.reached_within(kBound));
        const void *held_range = owner.base;
        std::vector<const void *> expected; // the prefetches in the order they must be issued

        SUBCASE("another range goes at once")
        {
            const DeclaredRange other = range(owner, 4 * kMiB, 2 * kMiB, 0);
            auto prefetch = std::async(std::launch::async, [&] { scheduler.prefetch(other); });
            CHECK(prefetch.wait_for(kBound) == std::future_status::ready);
            held.release(); // a prefetch that waited by mistake ends here, after the check above failed
            finish(prefetch, "a prefetch once the queued move ran");
            expected = {other.ptr, held_range};
        }
        SUBCASE("the queued range waits for its move")
        {
            const DeclaredRange same = range(owner, 1 * kMiB, 4 * kMiB, TIDAL_DEVICE_HOST);
            auto prefetch = std::async(std::launch::async, [&] { scheduler.prefetch(same); });
            CHECK(prefetch.wait_for(kStillWaiting) == std::future_status::timeout);
            held.release();
            finish(prefetch, "a prefetch once the queued move ran");
            expected = {held_range, same.ptr};
        }
        scheduler.forget(owner); // waits for the workers
        std::lock_guard lock(log_mutex);
        CHECK(issued == expected);
    }
    rig.runtime->free(TIDAL_KIND_MANAGED, 0, owner.raw, owner.raw_size);
}

TEST_CASE("migration scheduler: back-to-back lookahead declarations join the prefetch still queued")
{
    Rig rig;
    AllocationRecord busy = managed(*rig.runtime, 2 * kMiB), owner = managed(*rig.runtime, 16 * kMiB);
    sim::SimRuntime *sim = last_sim;
    for (size_t i = 0; i < owner.size; ++i)
        static_cast<unsigned char *>(owner.base)[i] = static_cast<unsigned char>(i * 7);
    {
        MigrationScheduler scheduler(*rig.runtime, rig.events, rig.chain, &rig.system.system, rig.settings.migration, true);
        Gate held;
        HoldMigrations hold(held);
        {
            std::lock_guard lock(log_mutex);
            issued.clear();
            issued_sizes.clear();
        }
        const uint64_t calls_before = sim->calls(sim::Operation::prefetch);
        // The worker is busy with another allocation's move, held at the gate ...
        scheduler.declare(nullptr, {range(busy, 0, 2 * kMiB, 0)}, true);
        REQUIRE(held.reached_within(kBound));
        // ... while four lookahead declarations of adjacent 2 MiB arrive, one by one.
        for (size_t k = 0; k < 4; ++k)
            scheduler.declare(nullptr, {range(owner, k * 2 * kMiB, 2 * kMiB, 0)}, true);
        // A range further on is not adjacent: a call of its own.
        scheduler.declare(nullptr, {range(owner, 12 * kMiB, 2 * kMiB, 0)}, true);
        // A plain declaration of a joined range must wait for the joined move.
        auto plain = std::async(std::launch::async, [&] { scheduler.declare(nullptr, {range(owner, 6 * kMiB, 2 * kMiB, 0)}, false); });
        CHECK(plain.wait_for(kStillWaiting) == std::future_status::timeout);
        held.release();
        finish(plain, "a plain declaration once the joined move was issued");
        // Once issued, the open prefetch is closed: the next adjacent range is a call of its own.
        scheduler.declare(nullptr, {range(owner, 8 * kMiB, 2 * kMiB, 0)}, true);
        const tidal_migration_stats st = scheduler.stats(0);
        scheduler.forget(owner); // waits for the workers
        scheduler.forget(busy);
        std::lock_guard lock(log_mutex);
        const std::vector<const void *> first_three = {busy.base, owner.base, static_cast<char *>(owner.base) + 12 * kMiB};
        REQUIRE(issued.size() >= 4);
        CHECK(std::vector<const void *>(issued.begin(), issued.begin() + 3) == first_three);
        CHECK(issued_sizes[0] == 2 * kMiB);
        CHECK(issued_sizes[1] == 8 * kMiB); // four declarations, one runtime call
        CHECK(issued_sizes[2] == 2 * kMiB);
        CHECK(issued[3] == static_cast<char *>(owner.base) + 8 * kMiB);
        // The simulated device's own count: 4 prefetch calls (not 7) before the forgets.
        CHECK(st.migration_calls == 4);
        CHECK(st.migrated_bytes == 14 * kMiB); // the plain declaration found its range resident
        CHECK(sim->calls(sim::Operation::prefetch) - calls_before >= 4);
        // The data went along: every page of [0, 10 MiB) and [12, 14 MiB) reached device 0.
        for (size_t off = 0; off < 14 * kMiB; off += 2 * kMiB) {
            if (off == 10 * kMiB)
                continue;
            const auto page = sim->page_at(static_cast<char *>(owner.base) + off);
            REQUIRE(page.has_value());
            CHECK(page->has(0));
        }
    }
    for (size_t i = 0; i < owner.size; i += 4099)
        REQUIRE(static_cast<unsigned char *>(owner.base)[i] == static_cast<unsigned char>(i * 7));
    rig.runtime->free(TIDAL_KIND_MANAGED, 0, owner.raw, owner.raw_size);
    rig.runtime->free(TIDAL_KIND_MANAGED, 0, busy.raw, busy.raw_size);
}

TEST_CASE("migration scheduler: declaring the same ranges again ends the old phase without an event, and keeps them protected")
{
    Rig rig;
    sim::SimRuntime *sim = last_sim;
    AllocationRecord a = managed(*rig.runtime, 4 * kMiB), b = managed(*rig.runtime, 2 * kMiB);
    {
        MigrationScheduler scheduler(*rig.runtime, rig.events, rig.chain, &rig.system.system, rig.settings.migration, false);
        const std::vector<DeclaredRange> step = {range(a, 0, 2 * kMiB, 0), range(a, 2 * kMiB, 2 * kMiB, 0)};
        scheduler.declare(nullptr, step, false); // moves a: the migration's own event
        scheduler.declare(nullptr, step, false); // which this one finds complete (a query, once)
        const uint64_t records = sim->calls(sim::Operation::event_record);
        const uint64_t queries = sim->calls(sim::Operation::event_query);
        for (int i = 0; i < 5; ++i)
            scheduler.declare(nullptr, step, false);
        // A training loop's steps: no runtime call at all once its buffers are resident (on a GPU
        // runtime each phase's event record and later query cost microseconds).
        CHECK(sim->calls(sim::Operation::event_record) == records);
        CHECK(sim->calls(sim::Operation::event_query) == queries);
        // In another order, or a superset: the old phase's units are all held again.
        scheduler.declare(nullptr, {step[1], step[0]}, false);
        scheduler.declare(nullptr, {step[0], step[1], range(b, 0, 2 * kMiB, 0)}, false);
        const uint64_t moved = sim->calls(sim::Operation::event_record) - records; // b's migration
        CHECK(moved == 1);
        // Still protected: a budget of what is resident leaves nothing to evict for another stream.
        scheduler.set_budget(0, 6 * kMiB);
        AllocationRecord c = managed(*rig.runtime, 2 * kMiB);
        void *other = rig.runtime->stream_create(0);
        CHECK_THROWS_AS(scheduler.declare(other, {range(c, 0, 2 * kMiB, 0)}, false), Error);
        // A subset: the units left out (b) end with the old phase, so an event marks its end.
        scheduler.declare(nullptr, step, false);
        CHECK(sim->calls(sim::Operation::event_record) - records == moved + 1);
        // Once that phase's work is done (the simulated device's is, at once), b can be evicted.
        scheduler.declare(other, {range(c, 0, 2 * kMiB, 0)}, false);
        CHECK(scheduler.stats(0).evicted_bytes == 2 * kMiB);
        scheduler.end_stream(other);
        scheduler.forget(c);
        rig.runtime->free(TIDAL_KIND_MANAGED, 0, c.raw, c.raw_size);
        rig.runtime->stream_destroy(other);
        scheduler.forget(a);
        scheduler.forget(b);
    }
    rig.runtime->free(TIDAL_KIND_MANAGED, 0, a.raw, a.raw_size);
    rig.runtime->free(TIDAL_KIND_MANAGED, 0, b.raw, b.raw_size);
}

TEST_CASE("migration scheduler: windows declared out of order, with tracked units between them, are cut where their devices differ")
{
    Settings settings = ConfigLoader::from_string("runtime = \"sim\"\n[sim]\ndevices = 2\n[migration]\nchunk_size = \"2MiB\"\n");
    std::unique_ptr<Runtime> runtime = gated_runtime(settings);
    EventPool events{*runtime};
    System system{*runtime};
    PolicyChain chain{settings, &system.system};
    constexpr size_t kCount = 24;
    std::vector<AllocationRecord> owners;
    for (size_t i = 0; i < kCount; ++i)
        owners.push_back(managed(*runtime, 2 * kMiB));
    {
        MigrationScheduler scheduler(*runtime, events, chain, &system.system, settings.migration, false);
        std::vector<DeclaredRange> whole;
        for (const AllocationRecord &o : owners)
            whole.push_back(range(o, 0, 2 * kMiB, 0));
        scheduler.declare(nullptr, whole, false); // one unit per window, all on device 0
        // Halves of some windows to device 1: neighbours, gaps of one and of more than a short
        // walk (tracked units between), named in an order that is not the addresses'.
        const std::vector<size_t> picked = {17, 3, 4, 23, 5, 11, 0, 12};
        std::vector<DeclaredRange> halves;
        for (size_t i : picked) {
            halves.push_back(range(owners[i], 0, kMiB, 0));
            halves.push_back(range(owners[i], kMiB, kMiB, 1));
        }
        scheduler.declare(nullptr, halves, false);
        CHECK(scheduler.resident_now(1) == picked.size() * kMiB);
        CHECK(scheduler.resident_now(0) == kCount * 2 * kMiB - picked.size() * kMiB);
        for (const AllocationRecord &o : owners)
            scheduler.forget(o);
    }
    for (const AllocationRecord &o : owners)
        runtime->free(TIDAL_KIND_MANAGED, 0, o.raw, o.raw_size);
}

TEST_CASE("migration scheduler: a unit freed since the last declaration does not stand in for a new one")
{
    Rig rig;
    AllocationRecord a = managed(*rig.runtime, 2 * kMiB), b = managed(*rig.runtime, 2 * kMiB),
                     c = managed(*rig.runtime, 2 * kMiB), d = managed(*rig.runtime, 2 * kMiB);
    {
        MigrationScheduler scheduler(*rig.runtime, rig.events, rig.chain, &rig.system.system, rig.settings.migration, false);
        scheduler.declare(nullptr, {range(a, 0, 2 * kMiB, 0), range(b, 0, 2 * kMiB, 0)}, false);
        scheduler.forget(b); // freed by the program
        // As many units as the phase it ends, one of them new: the old phase's units are not
        // this one's, and c must stay protected with a.
        scheduler.declare(nullptr, {range(a, 0, 2 * kMiB, 0), range(c, 0, 2 * kMiB, 0)}, false);
        scheduler.set_budget(0, 4 * kMiB);
        void *other = rig.runtime->stream_create(0);
        CHECK_THROWS_AS(scheduler.declare(other, {range(d, 0, 2 * kMiB, 0)}, false), Error);
        CHECK(scheduler.stats(0).evicted_bytes == 0);
        scheduler.end_stream(other);
        rig.runtime->stream_destroy(other);
        for (const AllocationRecord *o : {&a, &c, &d})
            scheduler.forget(*o);
    }
    for (const AllocationRecord *o : {&a, &b, &c, &d})
        rig.runtime->free(TIDAL_KIND_MANAGED, 0, o->raw, o->raw_size);
}

TEST_CASE("address table: finds, inserts and erases as a map does, through collisions and growth")
{
    AddressTable<uint64_t> table;
    std::map<uintptr_t, uint64_t> model;
    std::mt19937_64 random(15);
    // Few distinct keys, 4 KiB apart (as units are), so that inserts, finds and erases of the
    // same keys mix, with runs of neighbouring slots that erase has to shift back.
    auto key = [&] { return uintptr_t{0x7f0000000000} + (random() % 3000) * 4096; };
    for (int op = 0; op < 200000; ++op) {
        const uintptr_t k = key();
        switch (random() % 3) {
        case 0: {
            const auto [value, inserted] = table.try_emplace(k, k * 3);
            const bool model_inserted = model.try_emplace(k, k * 3).second;
            REQUIRE(inserted == model_inserted);
            REQUIRE(*value == k * 3);
            break;
        }
        case 1: {
            const uint64_t *value = table.find(k);
            REQUIRE((value != nullptr) == (model.count(k) == 1));
            break;
        }
        default:
            table.erase(k);
            model.erase(k);
        }
        REQUIRE(table.size() == model.size());
    }
    for (const auto &[k, v] : model) {
        REQUIRE(table.find(k) != nullptr);
        CHECK(*table.find(k) == v);
    }
    table.clear();
    CHECK(table.size() == 0);
    for (const auto &[k, v] : model)
        CHECK(table.find(k) == nullptr);
    // Reused after a clear, small or large.
    CHECK(table.try_emplace(4096, 1).second);
    CHECK(*table.find(4096) == 1);
    table.erase(8192); // absent: nothing happens
    CHECK(table.size() == 1);
}

TEST_CASE("migration scheduler: a window one range names whole is still cut where an earlier range of the call named part of it for another device")
{
    Settings settings = ConfigLoader::from_string("runtime = \"sim\"\n[sim]\ndevices = 2\n[migration]\nchunk_size = \"2MiB\"\n");
    std::unique_ptr<Runtime> runtime = gated_runtime(settings);
    EventPool events{*runtime};
    System system{*runtime};
    PolicyChain chain{settings, &system.system};
    AllocationRecord owner = managed(*runtime, 2 * kMiB);
    {
        MigrationScheduler scheduler(*runtime, events, chain, &system.system, settings.migration, false);
        // The first claim of a byte wins: the first half is device 1's, the rest device 0's,
        // though the second range covers the whole window (for one device, it alone would need no cut).
        scheduler.declare(nullptr, {range(owner, 0, kMiB, 1), range(owner, 0, 2 * kMiB, 0)}, false);
        CHECK(scheduler.resident_now(1) == kMiB);
        CHECK(scheduler.resident_now(0) == kMiB);
        // Declared whole for one device again: the two units are its tiles, both end up there.
        scheduler.declare(nullptr, {range(owner, 0, 2 * kMiB, 0)}, false);
        CHECK(scheduler.resident_now(1) == 0);
        CHECK(scheduler.resident_now(0) == 2 * kMiB);
        scheduler.forget(owner);
    }
    runtime->free(TIDAL_KIND_MANAGED, 0, owner.raw, owner.raw_size);
}
