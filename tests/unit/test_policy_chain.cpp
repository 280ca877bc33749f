#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "config/config_loader.h"
#include "policy/core_defaults.h"
#include "policy/policy_chain.h"
#include "status/error.h"

using namespace tidal;

namespace {
struct System {
    tidal_policy_device devices[2]{};
    tidal_policy_system system{};
    explicit System(uint32_t flags = TIDAL_DEVICE_FLAG_MANAGED | TIDAL_DEVICE_FLAG_SIMULATED)
    {
        for (int i = 0; i < 2; ++i) {
            devices[i].struct_size = sizeof devices[i];
            devices[i].index = i;
            devices[i].flags = flags;
            devices[i].total_memory = 1ull << 34;
            devices[i].page_size = 2u << 20;
        }
        system.struct_size = sizeof system;
        system.runtime = "sim";
        system.device_count = 2;
        system.devices = devices;
    }
};

tidal_place_request request(size_t size, const char *tag, uint32_t hints = 0, tidal_kind kind = TIDAL_KIND_AUTO)
{
    tidal_place_request r{};
    r.struct_size = sizeof r;
    r.size = size;
    r.kind = kind;
    r.device = TIDAL_DEVICE_DEFAULT;
    r.hints = hints;
    r.tag = tag;
    return r;
}

std::string rules_config(const std::string &body)
{
    return std::string("policies = [\"") + TIDAL_TEST_RULES_PLUGIN + "\"]\n" + body;
}
} // namespace

TEST_CASE("core defaults: device unless the host is the heavy user; explicit kinds kept")
{
    auto p = CoreDefaults::place(request(64, ""));
    CHECK(p.kind == TIDAL_KIND_DEVICE);
    CHECK(p.device == 0);
    p = CoreDefaults::place(request(64, "", TIDAL_HINT_HOST_READ));
    CHECK(p.kind == TIDAL_KIND_PINNED);
    CHECK(p.device == TIDAL_DEVICE_HOST);
    p = CoreDefaults::place(request(64, "", TIDAL_HINT_HOST_READ | TIDAL_HINT_DEVICE_ONLY));
    CHECK(p.kind == TIDAL_KIND_DEVICE);
    p = CoreDefaults::place(request(64, "", TIDAL_HINT_READ_MOSTLY, TIDAL_KIND_MANAGED));
    CHECK(p.kind == TIDAL_KIND_MANAGED);
    CHECK(p.advice == TIDAL_ADVICE_READ_MOSTLY);
}

TEST_CASE("an empty chain ends in the core defaults")
{
    System sys;
    Settings s = ConfigLoader::from_string("runtime = \"sim\"");
    PolicyChain chain(s, &sys.system);
    auto r = request(4096, "x");
    r.system = &sys.system;
    Decision d = chain.place(r);
    CHECK(std::string_view(d.placed_by) == "core");
    CHECK(d.placement.kind == TIDAL_KIND_DEVICE);
}

TEST_CASE("the rules plugin places by tag, size and hints, and defers otherwise")
{
    System sys;
    Settings s = ConfigLoader::from_string(rules_config(R"(
[policy.")" TIDAL_TEST_RULES_PLUGIN R"("]
[[policy.")" TIDAL_TEST_RULES_PLUGIN R"(".rule]]
tag = "weights*"
min_size = "1MiB"
hints = ["read-mostly"]
kind = "managed"
device = 1
advice = ["read-mostly", "preferred-device"]
)"));
    PolicyChain chain(s, &sys.system);
    auto r = request(2u << 20, "weights.0", TIDAL_HINT_READ_MOSTLY);
    r.system = &sys.system;
    Decision d = chain.place(r);
    CHECK(d.placement.kind == TIDAL_KIND_MANAGED);
    CHECK(d.placement.device == 1);
    CHECK(d.placement.advice == (TIDAL_ADVICE_READ_MOSTLY | TIDAL_ADVICE_PREFERRED_DEVICE));
    CHECK(std::string_view(d.placed_by) != "core");

    auto small = request(4096, "weights.1", TIDAL_HINT_READ_MOSTLY);
    small.system = &sys.system;
    CHECK(std::string_view(chain.place(small).placed_by) == "core");
    auto no_hint = request(2u << 20, "weights.2");
    no_hint.system = &sys.system;
    CHECK(std::string_view(chain.place(no_hint).placed_by) == "core");
}

TEST_CASE("decisions the device cannot honour are NOT_SUPPORTED, malformed ones a plugin error")
{
    System sys; // no fine-grained memory
    Settings s = ConfigLoader::from_string(rules_config(R"(
[policy.")" TIDAL_TEST_RULES_PLUGIN R"("]
[[policy.")" TIDAL_TEST_RULES_PLUGIN R"(".rule]]
tag = "fine"
kind = "device-fine"
)"));
    PolicyChain chain(s, &sys.system);
    auto r = request(64, "fine");
    r.system = &sys.system;
    try {
        chain.place(r);
        FAIL("expected an error");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_NOT_SUPPORTED);
        CHECK(std::string(e.what()).find("device-fine") != std::string::npos);
    }
}

TEST_CASE("rules plugin options are checked with positions")
{
    System sys;
    const std::string name = TIDAL_TEST_RULES_PLUGIN;
    Settings s = ConfigLoader::from_string(rules_config("[policy.\"" + name + "\"]\nfallbak = \"pinned\"\n"));
    try {
        PolicyChain chain(s, &sys.system);
        FAIL("expected a configuration error");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_CONFIG);
        const std::string text = e.what();
        CHECK(text.find("did you mean 'fallback'") != std::string::npos);
        CHECK(text.find("<string>:3:") != std::string::npos);
    }
}
