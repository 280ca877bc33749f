// MigrationScheduler with worker threads, over the simulated device: what an explicit
// prefetch waits for.
#include <doctest/doctest.h>

#include <future>
#include <mutex>
#include <vector>

#include "config/config_loader.h"
#include "gate.h"
#include "migration/migration_scheduler.h"
#include "runtime/sim/sim_module.h"

using namespace tidal;
using namespace tidal::test;

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// The simulated device's table, but a prefetch on a stream (a migration stream: only the
// workers use one) passes `migrations` first; every prefetch is logged in the order issued.
Gate *migrations = nullptr;
std::mutex log_mutex;
std::vector<const void *> issued;

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

std::unique_ptr<Runtime> gated_runtime(const Settings &s)
{
    void *rt = nullptr;
    REQUIRE(sim::sim_create(s.sim, &rt, nullptr, 0) == 0);
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

DeclaredRange range(const AllocationRecord &owner, size_t offset, size_t size, int32_t device)
{
    DeclaredRange r;
    r.owner = owner;
    r.ptr = static_cast<const char *>(owner.base) + offset;
    r.size = size;
    r.device = device;
    return r;
}

} // namespace

TEST_CASE("migration scheduler: an explicit prefetch waits only for queued moves of its own range")
{
    Settings s = ConfigLoader::from_string("runtime = \"sim\"\n[migration]\nchunk_size = \"2MiB\"\n");
    auto runtime = gated_runtime(s);
    EventPool events(*runtime);
    System system(*runtime);
    PolicyChain chain(s, &system.system);
    AllocationRecord owner;
    owner.kind = TIDAL_KIND_MANAGED;
    owner.device = 0;
    owner.size = owner.raw_size = 8 * kMiB;
    owner.raw = owner.base = runtime->alloc(TIDAL_KIND_MANAGED, 0, owner.size);
    {
        MigrationScheduler scheduler(*runtime, events, chain, &system.system, s.migration, true);
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
    runtime->free(TIDAL_KIND_MANAGED, 0, owner.raw, owner.raw_size);
}
