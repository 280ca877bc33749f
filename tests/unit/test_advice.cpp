// Advice through a context on the simulated device: how many runtime advise calls each path
// makes (the numbers a test's `[[sim.fault]] operation = "advise"` counts with) and what the
// range then carries.
#include <doctest/doctest.h>

#include <string>

#include "config/config_loader.h"
#include "context.h"
#include "runtime/sim/sim_runtime.h"

using namespace tidal;

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Allocations tagged "a" become `kind` with `advice` (a TOML list of the rules plugin's names).
Settings settings(const std::string &kind, const std::string &advice, const std::string &extra = "", bool amd = false)
{
    std::string policies = std::string("\"") + TIDAL_TEST_RULES_PLUGIN + "\", \"" + TIDAL_TEST_XNACK_PLUGIN + "\"";
    Settings s = ConfigLoader::from_string("runtime = \"sim\"\npolicies = [" + policies + "]\n" + extra + "\n[policy.\"" +
                                           TIDAL_TEST_RULES_PLUGIN + "\"]\n[[policy.\"" + TIDAL_TEST_RULES_PLUGIN +
                                           "\".rule]]\ntag = \"a\"\nkind = \"" + kind + "\"\nadvice = [" + advice + "]\n");
    if (amd)
        s.sim.profile.vendor = "amd"; // fine- and coarse-grained memory exist
    return s;
}

uint64_t advise_calls(const Context &c)
{
    return static_cast<const sim::SimRuntime *>(c.runtime().instance())->calls(sim::Operation::advise);
}

void *alloc(Context &c, size_t size, uint32_t hints = 0)
{
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.tag = "a";
    d.hints = hints;
    return c.allocate(size, d);
}

constexpr const char *kEveryAdvice = R"("read-mostly", "preferred-device", "accessed-by-device", "coarse-grain")";

} // namespace

TEST_CASE("advice: a pooled managed block gets one call per bit when handed out and when given back")
{
    Context c(settings("managed", kEveryAdvice, "", true));
    const uint64_t before = advise_calls(c);
    void *p = alloc(c, 4 * kMiB);
    CHECK(advise_calls(c) - before == 4);
    const tidal_range_info r = c.range_query(p, 4 * kMiB);
    CHECK(r.read_mostly == 1);
    CHECK(r.preferred_location == 0);
    CHECK(r.coherency == TIDAL_COHERENCY_COARSE);
    c.release(p);
    CHECK(advise_calls(c) - before == 8);
    void *q = alloc(c, 4 * kMiB);
    CHECK(q == p); // the same block, advised again
    CHECK(advise_calls(c) - before == 12);
    c.release(q);
}

TEST_CASE("advice: unpooled managed memory has only coarse grain unset before the runtime frees it")
{
    Context c(settings("managed", kEveryAdvice, "[pool]\nenabled = false", true));
    const uint64_t before = advise_calls(c);
    void *p = alloc(c, 4 * kMiB);
    CHECK(advise_calls(c) - before == 4);
    c.release(p);
    CHECK(advise_calls(c) - before == 5);
}

TEST_CASE("advice: managed-coarse memory gets its coarse grain from the runtime, not from advice")
{
    Context c(settings("managed-coarse", R"("read-mostly", "coarse-grain")", "", true));
    const uint64_t before = advise_calls(c);
    void *p = alloc(c, 4 * kMiB);
    CHECK(advise_calls(c) - before == 1);
    CHECK(c.range_query(p, 4 * kMiB).coherency == TIDAL_COHERENCY_COARSE);
    c.release(p);
    CHECK(advise_calls(c) - before == 2);
}

TEST_CASE("advice: tidal_advise unsets, then sets; preferred device and host are one location")
{
    Context c(settings("managed", ""));
    void *p = alloc(c, 4 * kMiB);
    const uint64_t before = advise_calls(c);
    c.advise(p, 4 * kMiB, TIDAL_ADVICE_READ_MOSTLY | TIDAL_ADVICE_PREFERRED_HOST, 0);
    CHECK(advise_calls(c) - before == 2);
    CHECK(c.range_query(p, 4 * kMiB).preferred_location == TIDAL_DEVICE_HOST);
    c.advise(p, 4 * kMiB, TIDAL_ADVICE_PREFERRED_DEVICE, TIDAL_ADVICE_READ_MOSTLY);
    CHECK(advise_calls(c) - before == 4);
    tidal_range_info r = c.range_query(p, 4 * kMiB);
    CHECK(r.preferred_location == 0);
    CHECK(r.read_mostly == 0);
    CHECK(c.query(p).advice == TIDAL_ADVICE_PREFERRED_DEVICE);
    c.advise(p, 4 * kMiB, 0, TIDAL_ADVICE_PREFERRED_DEVICE);
    CHECK(advise_calls(c) - before == 5);
    CHECK(c.range_query(p, 4 * kMiB).preferred_location == TIDAL_LOCATION_NONE);
    CHECK(c.query(p).advice == 0);
    c.release(p); // nothing left to unset
    CHECK(advise_calls(c) - before == 5);
}

TEST_CASE("advice: what a declaration's plan set is unset when the allocation is freed")
{
    for (const bool pooled : {true, false}) {
        CAPTURE(pooled);
        Context c(settings("managed", "", pooled ? "" : "[pool]\nenabled = false"));
        void *stream = c.stream_create(0);
        void *p = alloc(c, 4 * kMiB, TIDAL_HINT_READ_MOSTLY);
        const uint64_t before = advise_calls(c);
        tidal_access a = TIDAL_ACCESS_INIT;
        a.ptr = p;
        a.size = 4 * kMiB;
        a.device = 0;
        a.mode = TIDAL_ACCESS_READ;
        c.declare(stream, &a, 1, 0);
        CHECK(advise_calls(c) - before == 1); // xnack: read-only work on a read-mostly buffer
        CHECK(c.range_query(p, 4 * kMiB).read_mostly == 1);
        c.stream_synchronize(stream);
        c.release(p);
        // A pooled block's next owner must not inherit it; the runtime forgets it with unpooled memory.
        CHECK(advise_calls(c) - before == (pooled ? 2 : 1));
        c.stream_destroy(stream);
    }
}
