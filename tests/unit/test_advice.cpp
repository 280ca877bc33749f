// Advice: the one translation of TIDAL_ADVICE_* bits into runtime calls (Runtime::advise_bits),
// and, through a context on the simulated device, how many runtime advise calls each path
// makes (the numbers a test's `[[sim.fault]] operation = "advise"` counts with) and what the
// range then carries.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/config_loader.h"
#include "context.h"
#include "runtime/sim/sim_runtime.h"
#include "status/error.h"

using namespace tidal;

namespace tidal {
// The simulated device behind a context, for its call counters (Runtime keeps it private).
struct RuntimeTestAccess {
    static const void *instance(const Runtime &r) { return r.instance(); }
};
} // namespace tidal

namespace {

// A runtime with no device that records its advise calls and fails the `fail_at`-th.
struct AdviseCall {
    int32_t advice, location;
    bool operator==(const AdviseCall &) const = default;
};
std::vector<AdviseCall> advise_log;
size_t fail_at = 0;

int record_advise(void *, const void *, size_t, int32_t advice, int32_t location)
{
    advise_log.push_back({advice, location});
    return advise_log.size() == fail_at ? 1 : 0;
}

Runtime recording_runtime(bool takes_advice = true)
{
    static tidal_rt_ops ops = [] {
        tidal_rt_ops o{};
        o.name = "recording";
        o.family = TIDAL_RT_FAMILY_HIP;
        o.destroy = [](void *) {};
        o.error_name = [](int) { return "recordingError"; };
        o.error_string = [](int) { return "recording error"; };
        o.device_count = [](void *, int32_t *count) { *count = 0; return 0; };
        return o;
    }();
    ops.advise = takes_advice ? record_advise : nullptr;
    advise_log.clear();
    fail_at = 0;
    static int instance;
    return Runtime(&ops, &instance, "recording");
}

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
    return static_cast<const sim::SimRuntime *>(RuntimeTestAccess::instance(c.runtime()))->calls(sim::Operation::advise);
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

TEST_CASE("advise_bits: one runtime call per bit, in the order of the bits")
{
    Runtime rt = recording_runtime();
    char range[64];
    const int32_t host = TIDAL_RT_LOCATION_HOST;
    rt.advise_bits(range, sizeof range, TIDAL_ADVICE_ALL, AdviceAction::set, 3);
    CHECK(advise_log == std::vector<AdviseCall>{{TIDAL_RT_ADVISE_SET_READ_MOSTLY, 3},
                                                {TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION, 3},
                                                {TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION, host},
                                                {TIDAL_RT_ADVISE_SET_ACCESSED_BY, 3},
                                                {TIDAL_RT_ADVISE_SET_COARSE_GRAIN, 3}});
    advise_log.clear();
    rt.advise_bits(range, sizeof range, TIDAL_ADVICE_ALL, AdviceAction::unset, 3);
    CHECK(advise_log == std::vector<AdviseCall>{{TIDAL_RT_ADVISE_UNSET_READ_MOSTLY, 3},
                                                {TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION, 3},
                                                {TIDAL_RT_ADVISE_UNSET_ACCESSED_BY, 3},
                                                {TIDAL_RT_ADVISE_UNSET_COARSE_GRAIN, 3}});
    advise_log.clear();
    rt.advise_bits(range, sizeof range, TIDAL_ADVICE_PREFERRED_HOST, AdviceAction::unset, 3);
    CHECK(advise_log == std::vector<AdviseCall>{{TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION, 3}});
    advise_log.clear();
    rt.advise_bits(range, sizeof range, 0, AdviceAction::set, 3);
    CHECK(rt.advise_bits_noexcept(range, sizeof range, 0, AdviceAction::unset, 3) == 0);
    CHECK(advise_log.empty());
}

TEST_CASE("advise_bits: a failure stops the throwing form; the noexcept form goes on and reports it")
{
    Runtime rt = recording_runtime();
    char range[64];
    const uint32_t bits = TIDAL_ADVICE_READ_MOSTLY | TIDAL_ADVICE_PREFERRED_DEVICE | TIDAL_ADVICE_ACCESSED_BY_DEVICE;
    fail_at = 2;
    CHECK_THROWS_AS(rt.advise_bits(range, sizeof range, bits, AdviceAction::set, 0), Error);
    CHECK(advise_log.size() == 2);
    advise_log.clear();
    CHECK(rt.advise_bits_noexcept(range, sizeof range, bits, AdviceAction::unset, 0) == 1);
    CHECK(advise_log.size() == 3);

    Runtime deaf = recording_runtime(false);
    CHECK_NOTHROW(deaf.advise_bits(range, sizeof range, 0, AdviceAction::set, 0));
    CHECK(deaf.advise_bits_noexcept(range, sizeof range, bits, AdviceAction::unset, 0) == 0);
    try {
        deaf.advise_bits(range, sizeof range, bits, AdviceAction::set, 0);
        FAIL("a runtime without advise took advice");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_NOT_SUPPORTED);
    }
}

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
    c.advise(p, 4 * kMiB, TIDAL_ADVICE_PREFERRED_HOST, 0);
    c.advise(p, 4 * kMiB, 0, TIDAL_ADVICE_PREFERRED_DEVICE | TIDAL_ADVICE_PREFERRED_HOST);
    CHECK(advise_calls(c) - before == 7);
    CHECK(c.range_query(p, 4 * kMiB).preferred_location == TIDAL_LOCATION_NONE);
    c.release(p); // nothing left to unset
    CHECK(advise_calls(c) - before == 7);
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
