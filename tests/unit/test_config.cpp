// Configuration layer: ConfigLoader, sizes, key suggestions, hardware profiles, describe.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>


#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/toml_include.h"

#include "config/config_loader.h"
#include "config/hip_error_names.h"
#include "config/key_suggester.h"
#include "config/profile_loader.h"
#include "config/settings_describer.h"
#include "config/size_parser.h"
#include "status/error.h"

namespace fs = std::filesystem;
using namespace tidal;

namespace {

constexpr std::array<const char *, 7> kOverrideVariables = {
    "TIDAL_RUNTIME",      "TIDAL_LOG_LEVEL",  "TIDAL_POLICY_PATH", "TIDAL_RUNTIME_PATH",
    "TIDAL_SIM_DEVICES", "TIDAL_SIM_CAPACITY", "TIDAL_SIM_XNACK"};

// Clears every override variable for the test's duration and puts the caller's values back
// afterwards, so the suite gives the same answers whatever the environment that runs it.
class CleanEnvironment {
public:
    CleanEnvironment()
    {
        for (const char *name : kOverrideVariables) {
            if (const char *v = std::getenv(name))
                saved_[name] = v;
            ::unsetenv(name);
        }
    }
    ~CleanEnvironment()
    {
        for (const char *name : kOverrideVariables) {
            ::unsetenv(name);
            if (auto it = saved_.find(name); it != saved_.end())
                ::setenv(name, it->second.c_str(), 1);
        }
    }
    void set(const char *name, const char *value) { ::setenv(name, value, 1); }

private:
    std::map<std::string, std::string> saved_;
};

// A fresh folder under the system's temporary directory, removed afterwards.
class TempDir {
public:
    TempDir()
    {
        static int counter = 0;
        path_ = fs::temp_directory_path() /
                ("tidal-test-config-" + std::to_string(::getpid()) + "-" +
                 std::to_string(counter++));
        fs::create_directories(path_);
    }
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path &path() const { return path_; }
    fs::path write(const std::string &name, const std::string &text) const
    {
        const fs::path p = path_ / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
        return p;
    }

private:
    fs::path path_;
};

// The CONFIG error message from_string gives for `toml`; fails the test when there is none.
std::string config_error(const std::string &toml, const fs::path &base = {})
{
    try {
        ConfigLoader::from_string(toml, base);
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_CONFIG);
        return e.message();
    }
    FAIL("no error for: " << toml);
    return {};
}

// The CONFIG error message of the current environment applied to an empty configuration.
std::string env_error()
{
    try {
        ConfigLoader::defaults();
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_CONFIG);
        return e.message();
    }
    FAIL("no error from the environment");
    return {};
}

std::string profile_error(const std::string &text)
{
    try {
        parse_profile(text, "p.toml", "p", {});
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_CONFIG);
        return e.message();
    }
    FAIL("no error for profile: " << text);
    return {};
}

bool contains(const std::string &text, const std::string &part)
{
    return text.find(part) != std::string::npos;
}

const std::string kValidProfile = R"(name = "tiny"
[device]
name = "Tiny GPU"
vendor = "amd"
arch = "gfx90a:xnack-"
capacity = "1GiB"
page_size = "64KiB"
l2_size = 8388608
xnack = false
[bandwidth]
h2d_pageable = 5
h2d_pinned = 25.5
d2h_pageable = 6
d2h_pinned = 26
d2d = 1600
prefetch_h2d = 20
prefetch_d2h = 8
fault = 3
zero_copy = 24
host_memcpy = 12
[latency]
copy = 8
kernel_launch = 4
fault = 25
alloc_device = 10
alloc_pinned = 500
alloc_managed = 20
)";

} // namespace

// ---- sizes -----------------------------------------------------------------------------------

TEST_CASE("parse_size: plain numbers and every unit")
{
    CHECK(parse_size("4096") == 4096u);
    CHECK(parse_size("0") == 0u);
    CHECK(parse_size("512B") == 512u);
    CHECK(parse_size("64 KiB") == 65536u);
    CHECK(parse_size("64KiB") == 65536u);
    CHECK(parse_size("64Ki") == 65536u);
    CHECK(parse_size("512MiB") == 512ull << 20);
    CHECK(parse_size("8GiB") == 8ull << 30);
    CHECK(parse_size("2TiB") == 2ull << 40);
    CHECK(parse_size("3K") == 3000u);
    CHECK(parse_size("3KB") == 3000u);
    CHECK(parse_size("7M") == 7000000u);
    CHECK(parse_size("7MB") == 7000000u);
    CHECK(parse_size("2G") == 2000000000u);
    CHECK(parse_size("2GB") == 2000000000u);
    CHECK(parse_size("1T") == 1000000000000u);
    CHECK(parse_size("1TB") == 1000000000000u);
    CHECK(parse_size("1.5GB") == 1500000000u);
    CHECK(parse_size("1.5GiB") == 1610612736u);
    CHECK(parse_size("0.5 KiB") == 512u);
    CHECK(parse_size("  16 gib  ") == 16ull << 30); // units are case-insensitive
    CHECK(parse_size("16EiB").has_value() == false);
    CHECK(parse_size("18446744073709551615") == 18446744073709551615ull);
    CHECK(parse_size("16777215TiB") == 16777215ull << 40);
}

TEST_CASE("parse_size: errors say why")
{
    std::string why;
    CHECK_FALSE(parse_size("-1GiB", &why));
    CHECK(contains(why, "negative"));
    CHECK_FALSE(parse_size("18446744073709551616", &why));
    CHECK(contains(why, "too large"));
    CHECK_FALSE(parse_size("16777216TiB", &why));
    CHECK(contains(why, "too large"));
    CHECK_FALSE(parse_size("99999999999999999999999", &why));
    CHECK(contains(why, "too large"));
    CHECK_FALSE(parse_size("12 parsecs", &why));
    CHECK(contains(why, "unknown unit 'parsecs'"));
    CHECK_FALSE(parse_size("GiB", &why));
    CHECK(contains(why, "does not start with a number"));
    CHECK_FALSE(parse_size("", &why));
    CHECK(contains(why, "empty"));
    CHECK_FALSE(parse_size("   ", &why));
    CHECK_FALSE(parse_size("1.5", &why));
    CHECK(contains(why, "whole number of bytes"));
    CHECK_FALSE(parse_size("0.3KiB", &why));
    CHECK(contains(why, "whole number of bytes"));
    CHECK_FALSE(parse_size("1.GiB", &why));
    CHECK_FALSE(parse_size("1e9", &why));
    CHECK_FALSE(parse_size("1,000", &why));
    CHECK_FALSE(parse_size("4 Ki B", &why));
    CHECK_FALSE(parse_size("0x100"));
}

TEST_CASE("format_size is for people")
{
    CHECK(format_size(512) == "512 B");
    CHECK(format_size(2ull << 20) == "2 MiB");
    CHECK(format_size(16ull << 30) == "16 GiB");
    CHECK(format_size(150109880320ull) == "139.8 GiB");
}

// ---- key suggestions -------------------------------------------------------------------------

TEST_CASE("nearest_key finds plausible typos and nothing else")
{
    const std::vector<std::string_view> keys = {"runtime", "log_level", "policy_path",
                                                "runtime_path", "policies", "policy", "sim"};
    CHECK(nearest_key("polices", keys) == "policies");
    CHECK(nearest_key("runtme", keys) == "runtime");
    CHECK(nearest_key("Runtime", keys) == "runtime");
    CHECK(nearest_key("loglevel", keys) == "log_level");
    CHECK(nearest_key("polciy", keys) == "policy"); // swapped neighbours count as one edit
    CHECK(nearest_key("policy_pth", keys) == "policy_path");
    CHECK(nearest_key("sin", keys) == "sim");
    CHECK(nearest_key("banana", keys) == "");
    CHECK(nearest_key("policy_paths_extra", keys) == "policy_path"); // run on
    CHECK(nearest_key("policy_paths", std::vector<std::string_view>{"policy", "policy_path"}) ==
          "policy_path");                               // the longest shared start wins
    CHECK(nearest_key("run", keys) == "");              // too short to be sure
    const std::vector<std::string_view> levels = {"error", "warn", "info", "debug"};
    CHECK(nearest_key("warning", levels) == "warn");
    CHECK(nearest_key("verbose", levels) == "");
    CHECK(nearest_key("x", keys) == "");
    CHECK(nearest_key("SIM", keys) == "sim");
    CHECK(nearest_key("b", std::vector<std::string_view>{"a"}) == ""); // too short to guess
    CHECK(nearest_key("", keys) == "");
    const std::vector<std::string> chain = {"rules", "xnack"};
    CHECK(nearest_key("rule", chain) == "rules");
    CHECK(did_you_mean("xnak", std::vector<std::string_view>{"xnack"}) ==
          " did you mean 'xnack'?");
}

// ---- HIP error names -------------------------------------------------------------------------

TEST_CASE("HIP error names and numbers are one list")
{
    const std::vector<std::pair<const char *, int>> required = {
        {"hipErrorInvalidValue", 1},       {"hipErrorOutOfMemory", 2},
        {"hipErrorNotInitialized", 3},     {"hipErrorInvalidDevicePointer", 17},
        {"hipErrorNoDevice", 100},         {"hipErrorInvalidDevice", 101},
        {"hipErrorIllegalAddress", 700},   {"hipErrorNotSupported", 801},
        {"hipErrorUnknown", 999}};
    for (const auto &[name, code] : required) {
        CAPTURE(name);
        CHECK(hip_error_from_name(name) == code);
        REQUIRE(hip_error_name(code) != nullptr);
        CHECK(std::string(hip_error_name(code)) == name);
        CHECK(hip_error_description(code) != nullptr);
    }
    CHECK(hip_error_from_name("hipErrorMemoryAllocation") == 2); // alias
    CHECK(std::string(hip_error_name(2)) == "hipErrorOutOfMemory");
    CHECK_FALSE(hip_error_from_name("hiperroroutofmemory"));
    CHECK(hip_error_name(123456) == nullptr);
    int previous = -1;
    for (const HipErrorName &e : hip_error_names()) {
        CHECK(e.code > previous); // sorted, one name per code
        previous = e.code;
    }
}

// ---- defaults and a full file ----------------------------------------------------------------

TEST_CASE("defaults")
{
    CleanEnvironment env;
    const Settings s = ConfigLoader::defaults();
    CHECK(s.runtime == "auto");
    CHECK(s.log_level == LogLevel::warn);
    CHECK(s.policy_path.empty());
    CHECK(s.runtime_path.empty());
    CHECK(s.policies.empty());
    CHECK(s.source.empty());
    CHECK(s.base_dir == fs::current_path());
    CHECK(s.env_overrides.empty());
    REQUIRE(s.document != nullptr);
    CHECK(s.document->empty());
    CHECK(s.sim.devices == 1);
    CHECK_FALSE(s.sim.capacity);
    CHECK_FALSE(s.sim.page_size);
    CHECK_FALSE(s.sim.xnack);
    CHECK(s.sim.faults.empty());
    CHECK(s.sim.profile.name == "h200");
    CHECK(s.sim.profile.capacity == 150109880320ull);
    CHECK(s.pool.enabled);
    CHECK(s.pool.backend == PoolBackend::tidal);
    CHECK(s.pool.backend_where.empty());
}

TEST_CASE("[pool] backend: tidal's pools or the vendor's stream-ordered pool")
{
    CleanEnvironment env;
    const Settings s = ConfigLoader::from_string("[pool]\nbackend = \"vendor\"\n");
    CHECK(s.pool.backend == PoolBackend::vendor);
    // Kept for the context, which finds out later whether the runtime has such a pool.
    CHECK(s.pool.backend_where == "<string>:2:11: ");
    CHECK(ConfigLoader::from_string("[pool]\nbackend = \"tidal\"\n").pool.backend == PoolBackend::tidal);
    CHECK(contains(config_error("[pool]\nbackend = \"vendr\"\n"),
                   "<string>:2:11: pool.backend = \"vendr\" is not valid; did you mean 'vendor'?"));
    CHECK(contains(config_error("[pool]\nbackend = \"cuda\"\n"), "<string>:2:11: pool.backend = \"cuda\" is not valid"));
    CHECK(contains(config_error("[pool]\nbackend = 1\n"), "<string>:2:11: wrong type for pool.backend: expected a string"));
    CHECK(contains(config_error("[pool]\nbakend = \"vendor\"\n"), "<string>:2:1: unknown key 'bakend' in [pool]; did you mean 'backend'?"));

    const std::string text = describe_settings(s);
    CAPTURE(text);
    CHECK(contains(text, "\n[pool]\nenabled = true\nbackend = \"vendor\""));
    const Settings b = ConfigLoader::from_string(text);
    CHECK(b.pool.backend == PoolBackend::vendor);
    CHECK(describe_settings(b) == text);
    CHECK(contains(describe_settings(ConfigLoader::from_string("[pool]\nenabled = false\nbackend = \"vendor\"\n")),
                   "(unused: pools are off)"));
}

TEST_CASE("a full configuration")
{
    CleanEnvironment env;
    const Settings s = ConfigLoader::from_string(R"(
runtime = "sim"
log_level = "debug"
policy_path = ["plugins", "/opt/tidal/policies", "plugins/"]
runtime_path = ["./mods"]
policies = ["rules", "xnack"]

[policy.rules]
rule = [{ tag = "weights", kind = "managed" }]

[sim]
devices = 2
capacity = "16GiB"
page_size = 65536
xnack = false
profile = "h200"

[[sim.fault]]
operation = "alloc"
nth = 3

[[sim.fault]]
operation = "prefetch"
nth = 1
count = 0
error = "hipErrorIllegalAddress"

[[sim.fault]]
operation = "kernel"
error = 719
)",
                                                 "/work/base");
    CHECK(s.runtime == "sim");
    CHECK(s.log_level == LogLevel::debug);
    // Relative folders start at base_dir; duplicates collapse to their first position.
    CHECK(s.policy_path == std::vector<fs::path>{"/work/base/plugins", "/opt/tidal/policies"});
    CHECK(s.runtime_path == std::vector<fs::path>{"/work/base/mods"});
    CHECK(s.policies == std::vector<std::string>{"rules", "xnack"});
    CHECK(s.base_dir == "/work/base");
    CHECK(s.sim.devices == 2);
    CHECK(s.sim.capacity == 16ull << 30);
    CHECK(s.sim.page_size == 65536u);
    CHECK(s.sim.xnack == false);
    // Overrides are kept apart from the profile: the simulated device applies them.
    CHECK(s.sim.profile.capacity == 150109880320ull);
    CHECK(s.sim.profile.page_size == 2ull << 20);
    CHECK(s.sim.profile.xnack == true);
    REQUIRE(s.sim.faults.size() == 3);
    CHECK(s.sim.faults[0].operation == "alloc");
    CHECK(s.sim.faults[0].nth == 3);
    CHECK(s.sim.faults[0].count == 1);
    CHECK(s.sim.faults[0].native_error == 2);
    CHECK(s.sim.faults[1].operation == "prefetch");
    CHECK(s.sim.faults[1].count == 0);
    CHECK(s.sim.faults[1].native_error == 700);
    CHECK(s.sim.faults[2].native_error == 719);
    // The parsed document stays available for the plugins, with source positions.
    REQUIRE(s.document != nullptr);
    const toml::node *rule = s.document->at_path("policy.rules.rule").node();
    REQUIRE(rule != nullptr);
    CHECK(rule->is_array());
    CHECK(rule->source().begin.line == 9);
}

TEST_CASE("[hip] and [cuda] are checked whatever the runtime")
{
    CleanEnvironment env;
    // Neither module takes options yet: an empty table is fine, any key is an error at its
    // line even when that runtime is not the one in use (a file checked on a laptop with the
    // simulated device must not fail on the cluster).
    const Settings s = ConfigLoader::from_string("runtime = \"hip\"\n[hip]\n[cuda]\n");
    CHECK(s.runtime == "hip");
    for (const char *runtime : {"sim", "auto", "hip", "cuda"})
        for (const char *module : {"hip", "cuda"}) {
            CAPTURE(runtime);
            CAPTURE(module);
            const std::string text = std::string("runtime = \"") + runtime + "\"\n[" + module + "]\nfoo = 1\n";
            CHECK(contains(config_error(text),
                           std::string("<string>:3:1: unknown key 'foo' in [") + module + "], which takes no keys"));
        }
    CHECK(contains(config_error("[cuda]\nx = 1\n"), "<string>:2:1: unknown key 'x' in [cuda]"));
    CHECK(contains(config_error("runtime = \"hipp\"\n"), "<string>:1:11: runtime = \"hipp\" is not valid; did you mean 'hip'?"));
    CHECK(contains(config_error("hip = 3\n"), "<string>:1:7: wrong type for hip"));
    CHECK(contains(config_error("[runtime]\nselect = \"hip\"\n"), "<string>:1:1: wrong type for runtime"));
}

// ---- every error has a position --------------------------------------------------------------

TEST_CASE("unknown keys: position and suggestion")
{
    CleanEnvironment env;
    std::string m = config_error("runtime = \"sim\"\npolices = [\"rules\"]\n");
    CHECK(contains(m, "<string>:2:1: unknown key 'polices' at the top level; did you mean 'policies'?"));

    m = config_error("[sim]\ndevices = 1\ncapcity = \"1GiB\"\n");
    CHECK(contains(m, "<string>:3:1: unknown key 'capcity' in [sim]; did you mean 'capacity'?"));

    m = config_error("[[sim.fault]]\noperation = \"alloc\"\nnht = 2\n");
    CHECK(contains(m, "<string>:3:1: unknown key 'nht' in [[sim.fault]]; did you mean 'nth'?"));

    // The first unknown key in the file is reported, not the first in sorted order.
    m = config_error("zebra = 1\napple = 2\n");
    CHECK(contains(m, "<string>:1:1: unknown key 'zebra'"));
    CHECK_FALSE(contains(m, "did you mean"));

    m = config_error("[simm]\n");
    CHECK(contains(m, "<string>:1:2: unknown key 'simm' at the top level; did you mean 'sim'?"));
}

TEST_CASE("wrong types: position and expected type")
{
    CleanEnvironment env;
    CHECK(contains(config_error("runtime = 3\n"), "<string>:1:11: wrong type for runtime"));
    CHECK(contains(config_error("log_level = true\n"),
                   "<string>:1:13: wrong type for log_level: expected a string, got a boolean"));
    CHECK(contains(config_error("policies = \"rules\"\n"),
                   "<string>:1:12: wrong type for policies: expected an array, got a string"));
    CHECK(contains(config_error("policies = [\"a\", 2]\n"),
                   "<string>:1:18: wrong type for policies[1]: expected a string, got an integer"));
    CHECK(contains(config_error("policy_path = [1]\n"), "<string>:1:16: wrong type for policy_path[0]"));
    CHECK(contains(config_error("sim = 1\n"), "<string>:1:7: wrong type for sim: expected a table"));
    CHECK(contains(config_error("[sim]\ndevices = \"2\"\n"),
                   "<string>:2:11: wrong type for sim.devices: expected an integer, got a string"));
    CHECK(contains(config_error("[sim]\nxnack = 1\n"), "<string>:2:9: wrong type for sim.xnack"));
    CHECK(contains(config_error("[sim]\ncapacity = 1.5\n"), "<string>:2:12: wrong type for sim.capacity"));
    CHECK(contains(config_error("[sim]\nfault = 1\n"), "<string>:2:9: wrong type for sim.fault"));
    CHECK(contains(config_error("policies = [\"r\"]\npolicy.r = 5\n"),
                   "<string>:2:12: wrong type for policy.r: expected a table"));
}

TEST_CASE("bad values: position and what is allowed")
{
    CleanEnvironment env;
    CHECK(contains(config_error("runtime = \"gpu\"\n"), "<string>:1:11: runtime = \"gpu\" is not valid"));
    CHECK(contains(config_error("runtime = \"simm\"\n"),
                   "<string>:1:11: runtime = \"simm\" is not valid; did you mean 'sim'?"));
    CHECK(contains(config_error("log_level = \"verbose\"\n"), "<string>:1:13: log_level = \"verbose\""));
    CHECK(contains(config_error("\n[sim]\ndevices = 0\n"), "<string>:3:11: sim.devices = 0 is out of range"));
    CHECK(contains(config_error("[sim]\ndevices = 65\n"), "from 1 to 64"));
    CHECK(contains(config_error("[sim]\npage_size = 3000\n"), "<string>:2:13: sim.page_size = 3000 must be a power of two"));
    CHECK(contains(config_error("[sim]\npage_size = \"1KiB\"\n"), "<string>:2:13: sim.page_size = 1024"));
    CHECK(contains(config_error("[sim]\ncapacity = 0\n"), "<string>:2:12: sim.capacity must be more than 0"));
    CHECK(contains(config_error("[sim]\ncapacity = -5\n"), "<string>:2:12: sim.capacity = -5 is negative"));
    CHECK(contains(config_error("[sim]\nprofile = \"\"\n"), "<string>:2:11: sim.profile must not be empty"));
    CHECK(contains(config_error("policies = [\"a\", \"b\", \"a\"]\n"),
                   "<string>:1:23: policy 'a' is listed twice"));
    CHECK(contains(config_error("policies = [\"\"]\n"), "<string>:1:13: policies[0] must not be empty"));
}

TEST_CASE("bad size strings: position and reason")
{
    CleanEnvironment env;
    std::string m = config_error("[sim]\n\ncapacity = \"16 GiBs\"\n");
    CHECK(contains(m, "<string>:3:12: bad size for sim.capacity: '16 GiBs' has an unknown unit 'GiBs'"));
    m = config_error("[sim]\ncapacity = \"-1GiB\"\n");
    CHECK(contains(m, "<string>:2:12: bad size for sim.capacity: '-1GiB' is negative"));
    m = config_error("[sim]\npage_size = \"lots\"\n");
    CHECK(contains(m, "<string>:2:13: bad size for sim.page_size"));
}

TEST_CASE("TOML syntax errors carry toml++'s position")
{
    CleanEnvironment env;
    std::string m = config_error("runtime = \"sim\"\nlog_level = \n");
    CHECK(contains(m, "<string>:2:"));
    CHECK(contains(m, "TOML syntax error"));
    m = config_error("[sim]\ndevices = 1\ndevices = 2\n");
    CHECK(contains(m, "<string>:3:11: TOML syntax error: Error while parsing key-value pair: cannot redefine existing integer 'devices'"));
    m = config_error("runtime = \"sim\n");
    CHECK(contains(m, "<string>:1:"));
}

TEST_CASE("a [policy.X] table for a policy outside the chain")
{
    CleanEnvironment env;
    std::string m = config_error("policies = [\"rules\", \"xnack\"]\n[policy.rulez]\nx = 1\n");
    CHECK(contains(m, "<string>:2:9: [policy.rulez] configures a policy that is not in the chain"));
    CHECK(contains(m, "did you mean 'rules'?"));
    m = config_error("policies = [\"a\"]\n[policy.b]\n");
    CHECK(m == "<string>:2:9: [policy.b] configures a policy that is not in the chain "
               "(policies = [\"a\"])");
    m = config_error("[policy.rules]\n");
    CHECK(contains(m, "<string>:1:9: [policy.rules] configures a policy that is not in the chain"));
    // Contents are the plugin's business: unknown keys inside pass here.
    CHECK_NOTHROW(ConfigLoader::from_string("policies = [\"rules\"]\n[policy.rules]\nwhatever = 1\n"));
}

TEST_CASE("fault injection: bad operation, bad error, bad counts")
{
    CleanEnvironment env;
    std::string m = config_error("[[sim.fault]]\noperation = \"alloc\"\n\n[[sim.fault]]\noperation = \"aloc\"\n");
    CHECK(contains(m, "<string>:5:13: sim.fault[1].operation = \"aloc\" is not valid; did you mean 'alloc'?"));
    m = config_error("[[sim.fault]]\noperation = \"alloc\"\nerror = \"hipErrorOutOfMemroy\"\n");
    CHECK(contains(m, "<string>:3:9: sim.fault[0].error = \"hipErrorOutOfMemroy\" is not a known HIP error name; did you mean 'hipErrorOutOfMemory'?"));
    m = config_error("[[sim.fault]]\noperation = \"alloc\"\nerror = \"hipSuccess\"\n");
    CHECK(contains(m, "<string>:3:9: sim.fault[0].error = \"hipSuccess\" is success"));
    m = config_error("[[sim.fault]]\noperation = \"alloc\"\nerror = 0\n");
    CHECK(contains(m, "<string>:3:9: sim.fault[0].error = 0 is not a HIP error number"));
    m = config_error("[[sim.fault]]\noperation = \"alloc\"\nerror = 2.0\n");
    CHECK(contains(m, "<string>:3:9: wrong type for sim.fault[0].error"));
    m = config_error("[[sim.fault]]\noperation = \"free\"\nnth = 0\n");
    CHECK(contains(m, "<string>:3:7: sim.fault[0].nth = 0 is out of range"));
    m = config_error("[[sim.fault]]\noperation = \"free\"\ncount = -1\n");
    CHECK(contains(m, "<string>:3:9: sim.fault[0].count = -1 is out of range"));
    m = config_error("[[sim.fault]]\nnth = 2\n");
    CHECK(contains(m, "<string>:1:1: [[sim.fault]] is missing the required key 'operation'"));
    for (const char *op : {"alloc", "free", "prefetch", "advise", "memcpy", "memset", "register",
                           "create", "kernel"}) {
        CAPTURE(op);
        const Settings s = ConfigLoader::from_string(
            std::string("[[sim.fault]]\noperation = \"") + op + "\"\nerror = \"hipErrorNoDevice\"\n");
        REQUIRE(s.sim.faults.size() == 1);
        CHECK(s.sim.faults[0].operation == op);
        CHECK(s.sim.faults[0].native_error == 100);
    }
}

// ---- files and relative paths ----------------------------------------------------------------

TEST_CASE("from_file: relative paths start at the file's folder")
{
    CleanEnvironment env;
    TempDir dir;
    const fs::path cfg = dir.write("conf/tidal.toml", R"(policy_path = ["plugins", "../shared"]
runtime_path = ["mods"]
[sim]
profile = "profiles/tiny.toml"
)");
    dir.write("conf/profiles/tiny.toml", kValidProfile);
    const Settings s = ConfigLoader::from_file(cfg);
    const fs::path folder = dir.path() / "conf";
    CHECK(s.source == cfg);
    CHECK(s.base_dir == folder);
    CHECK(s.policy_path == std::vector<fs::path>{folder / "plugins", dir.path() / "shared"});
    CHECK(s.runtime_path == std::vector<fs::path>{folder / "mods"});
    CHECK(s.sim.profile.name == "tiny");
    CHECK(s.sim.profile.source == folder / "profiles/tiny.toml");
    CHECK(s.sim.profile.capacity == 1ull << 30);
}

TEST_CASE("from_file: errors name the file as given, with line and column")
{
    CleanEnvironment env;
    TempDir dir;
    const fs::path cfg = dir.write("bad.toml", "runtime = \"sim\"\n\n[sim]\n  devicez = 2\n");
    try {
        ConfigLoader::from_file(cfg);
        FAIL("no error");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_CONFIG);
        CHECK(contains(e.message(), cfg.string() + ":4:3: unknown key 'devicez' in [sim]; did you mean 'devices'?"));
    }
    try {
        ConfigLoader::from_file(dir.path() / "missing.toml");
        FAIL("no error");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_CONFIG);
        CHECK(contains(e.message(), "missing.toml"));
    }
    CHECK_THROWS_AS(ConfigLoader::from_file(dir.path()), Error);
}

TEST_CASE("from_string: relative paths start at base_dir, or the current folder")
{
    CleanEnvironment env;
    CHECK(ConfigLoader::from_string("policy_path = [\"p\"]").policy_path ==
          std::vector<fs::path>{fs::current_path() / "p"});
    CHECK(ConfigLoader::from_string("policy_path = [\"p/../q\"]", "/base").policy_path ==
          std::vector<fs::path>{"/base/q"});
}

// ---- environment -----------------------------------------------------------------------------

TEST_CASE("environment overrides win over the file and are recorded")
{
    CleanEnvironment env;
    env.set("TIDAL_RUNTIME", "sim");
    env.set("TIDAL_LOG_LEVEL", "DEBUG");
    env.set("TIDAL_POLICY_PATH", "/env/a::/env/b");
    env.set("TIDAL_RUNTIME_PATH", "/env/mods");
    env.set("TIDAL_SIM_DEVICES", "4");
    env.set("TIDAL_SIM_CAPACITY", "8GiB");
    env.set("TIDAL_SIM_XNACK", "false");
    const Settings s = ConfigLoader::from_string(R"(runtime = "hip"
log_level = "error"
policy_path = ["/cfg/p", "/env/b"]
runtime_path = ["/cfg/r"]
[sim]
devices = 2
capacity = "1GiB"
xnack = true
)");
    CHECK(s.runtime == "sim");
    CHECK(s.log_level == LogLevel::debug);
    CHECK(s.policy_path == std::vector<fs::path>{"/env/a", "/env/b", "/cfg/p"});
    CHECK(s.runtime_path == std::vector<fs::path>{"/env/mods", "/cfg/r"});
    CHECK(s.sim.devices == 4);
    CHECK(s.sim.capacity == 8ull << 30);
    CHECK(s.sim.xnack == false);
    CHECK(s.env_overrides ==
          std::vector<std::string>{"TIDAL_RUNTIME=sim", "TIDAL_LOG_LEVEL=DEBUG",
                                   "TIDAL_POLICY_PATH=/env/a::/env/b",
                                   "TIDAL_RUNTIME_PATH=/env/mods", "TIDAL_SIM_DEVICES=4",
                                   "TIDAL_SIM_CAPACITY=8GiB", "TIDAL_SIM_XNACK=false"});
}

TEST_CASE("environment: relative folders start at the current folder; empty means unset")
{
    CleanEnvironment env;
    env.set("TIDAL_POLICY_PATH", "rel");
    env.set("TIDAL_RUNTIME", "");
    const Settings s = ConfigLoader::from_string("runtime = \"cuda\"\npolicy_path = [\"x\"]", "/base");
    CHECK(s.policy_path == std::vector<fs::path>{fs::current_path() / "rel", "/base/x"});
    CHECK(s.runtime == "cuda");
    CHECK(s.env_overrides == std::vector<std::string>{"TIDAL_POLICY_PATH=rel"});
}

TEST_CASE("environment: xnack spellings")
{
    CleanEnvironment env;
    for (auto [text, value] : std::vector<std::pair<const char *, bool>>{
             {"1", true}, {"0", false}, {"true", true}, {"FALSE", false}}) {
        CAPTURE(text);
        env.set("TIDAL_SIM_XNACK", text);
        CHECK(ConfigLoader::defaults().sim.xnack == value);
    }
}

TEST_CASE("environment: bad values are errors naming the variable")
{
    CleanEnvironment env;
    env.set("TIDAL_RUNTIME", "gpu");
    CHECK(contains(env_error(), "TIDAL_RUNTIME=\"gpu\""));
    env.set("TIDAL_RUNTIME", "sim");

    env.set("TIDAL_LOG_LEVEL", "loud");
    CHECK(contains(env_error(), "TIDAL_LOG_LEVEL=\"loud\""));
    env.set("TIDAL_LOG_LEVEL", "info");

    for (const char *bad : {"0", "65", "two", "3x", "-1"}) {
        CAPTURE(bad);
        env.set("TIDAL_SIM_DEVICES", bad);
        CHECK(contains(env_error(), std::string("TIDAL_SIM_DEVICES=\"") + bad + "\""));
    }
    env.set("TIDAL_SIM_DEVICES", "64");
    CHECK(ConfigLoader::defaults().sim.devices == 64);

    env.set("TIDAL_SIM_CAPACITY", "lots");
    CHECK(contains(env_error(), "TIDAL_SIM_CAPACITY=\"lots\""));
    env.set("TIDAL_SIM_CAPACITY", "0");
    CHECK(contains(env_error(), "TIDAL_SIM_CAPACITY=\"0\""));
    env.set("TIDAL_SIM_CAPACITY", "1.5GB");
    CHECK(ConfigLoader::defaults().sim.capacity == 1500000000u);

    env.set("TIDAL_SIM_XNACK", "yes please");
    CHECK(contains(env_error(), "TIDAL_SIM_XNACK=\"yes please\""));
    env.set("TIDAL_SIM_XNACK", "1");

    env.set("TIDAL_POLICY_PATH", ":::");
    CHECK(contains(env_error(), "TIDAL_POLICY_PATH"));
}

// ---- hardware profiles -----------------------------------------------------------------------

TEST_CASE("the built-in H200 profile, converted to bytes/second and seconds")
{
    const auto names = builtin_profile_names();
    CHECK(std::find(names.begin(), names.end(), "h200") != names.end());
    CHECK_FALSE(builtin_profile_text("h200").empty());
    CHECK(builtin_profile_text("nope").empty());

    const SimProfile p = load_profile("h200", "/nonexistent");
    CHECK(p.name == "h200");
    CHECK(p.vendor == "nvidia");
    CHECK(p.device_name == "NVIDIA H200 (simulated)");
    CHECK(p.arch == "sm_90");
    CHECK(p.source.empty());
    CHECK(p.capacity == 150109880320ull);
    CHECK(p.page_size == 2ull << 20);
    CHECK(p.l2_size == 60ull << 20);
    CHECK(p.xnack == true);
    CHECK(p.h2d_pageable_bw == doctest::Approx(7.0e9));
    CHECK(p.h2d_pinned_bw == doctest::Approx(55.4e9));
    CHECK(p.d2h_pageable_bw == doctest::Approx(13.2e9));
    CHECK(p.d2h_pinned_bw == doctest::Approx(55.3e9));
    CHECK(p.d2d_bw == doctest::Approx(4200e9));
    CHECK(p.prefetch_h2d_bw == doctest::Approx(45.8e9));
    CHECK(p.prefetch_d2h_bw == doctest::Approx(10e9));
    CHECK(p.fault_bw == doctest::Approx(7.5e9));
    CHECK(p.zero_copy_bw == doctest::Approx(51.3e9));
    CHECK(p.host_memcpy_bw == doctest::Approx(31e9));
    CHECK(p.copy_latency == doctest::Approx(8e-6));
    CHECK(p.kernel_latency == doctest::Approx(3.8e-6));
    CHECK(p.fault_latency == 0.0);
    CHECK(p.alloc_latency_device == doctest::Approx(3e-6));
    // Issue 17: the host's side of staged copies, collapsing duplicates, and the atomics flag.
    CHECK(p.staging_memcpy_bw == doctest::Approx(46e9));
    CHECK(p.host_memcpy_thread_bw == doctest::Approx(8.5e9));
    CHECK(p.readmostly_collapse_bw == doctest::Approx(30.1e9));
    CHECK_FALSE(p.host_native_atomics);
    CHECK(p.alloc_latency_pinned == doctest::Approx(790e-6));
    CHECK(p.alloc_latency_managed == doctest::Approx(16e-6));
}

TEST_CASE("a profile from a file, relative to base_dir")
{
    TempDir dir;
    dir.write("tiny.toml", kValidProfile);
    const SimProfile p = load_profile("tiny.toml", dir.path());
    CHECK(p.name == "tiny");
    CHECK(p.vendor == "amd");
    CHECK(p.arch == "gfx90a:xnack-");
    CHECK(p.source == dir.path() / "tiny.toml");
    CHECK(p.capacity == 1ull << 30);
    CHECK(p.page_size == 65536u);
    CHECK(p.l2_size == 8388608u);
    CHECK(p.xnack == false);
    CHECK(p.h2d_pinned_bw == doctest::Approx(25.5e9));
    CHECK(p.fault_latency == doctest::Approx(25e-6));

    // Without `name` the file's stem names it.
    std::string unnamed = kValidProfile;
    unnamed.erase(0, unnamed.find('\n') + 1);
    dir.write("mi250.toml", unnamed);
    CHECK(load_profile((dir.path() / "mi250.toml").string(), "/elsewhere").name == "mi250");
}

TEST_CASE("profiles are strict")
{
    auto with = [](const std::string &from, const std::string &to) {
        std::string t = kValidProfile;
        const size_t at = t.find(from);
        REQUIRE(at != std::string::npos);
        return t.replace(at, from.size(), to);
    };
    CHECK(contains(profile_error(with("[bandwidth]", "[bandwith]")),
                   "p.toml:10:2: unknown key 'bandwith' at the top level; did you mean 'bandwidth'?"));
    CHECK(contains(profile_error(with("d2d = 1600", "d2dd = 1600")),
                   "p.toml:15:1: unknown key 'd2dd' in [bandwidth]; did you mean 'd2d'?"));
    CHECK(contains(profile_error(with("d2d = 1600", "")),
                   "p.toml:10:1: [bandwidth] is missing the required key 'd2d'"));
    CHECK(contains(profile_error(with("vendor = \"amd\"", "vendor = \"intel\"")),
                   "p.toml:4:10: device.vendor = \"intel\" is not valid"));
    CHECK(contains(profile_error(with("fault = 3", "fault = 0")),
                   "p.toml:18:9: bandwidth.fault = 0"));
    CHECK(contains(profile_error(with("copy = 8", "copy = -1")), "p.toml:22:8: latency.copy = -1 must be zero or more"));
    CHECK(contains(profile_error(with("page_size = \"64KiB\"", "page_size = \"3KiB\"")),
                   "p.toml:7:13: device.page_size = 3072 must be a power of two"));
    CHECK(contains(profile_error(with("capacity = \"1GiB\"", "capacity = \"1 GiBB\"")),
                   "p.toml:6:12: bad size for device.capacity"));
    CHECK(contains(profile_error(with("xnack = false", "xnack = \"no\"")),
                   "p.toml:9:9: wrong type for device.xnack"));
    CHECK(contains(profile_error(with("h2d_pinned = 25.5", "h2d_pinned = \"fast\"")),
                   "p.toml:12:14: wrong type for bandwidth.h2d_pinned: expected a number"));
    CHECK(contains(profile_error("[device\n"), "p.toml:1:"));
}

TEST_CASE("a missing profile suggests the built-in names; config errors point at sim.profile")
{
    CleanEnvironment env;
    try {
        load_profile("h20", "/nonexistent");
        FAIL("no error");
    } catch (const Error &e) {
        CHECK(e.status() == TIDAL_ERROR_CONFIG);
        CHECK(contains(e.message(), "no built-in hardware profile named 'h20'"));
        CHECK(contains(e.message(), "did you mean 'h200'?"));
    }
    CHECK(contains(config_error("[sim]\nprofile = \"h20\"\n"),
                   "<string>:2:11: sim.profile = \"h20\": no built-in hardware profile"));

    TempDir dir;
    dir.write("broken.toml", "[device]\nnmae = \"x\"\n");
    const std::string m = config_error("[sim]\nprofile = \"broken.toml\"\n", dir.path());
    CHECK(contains(m, "<string>:2:11: sim.profile = \"broken.toml\": "));
    CHECK(contains(m, (dir.path() / "broken.toml").string() + ":2:1: unknown key 'nmae' in [device]; did you mean 'name'?"));
}

// ---- describe --------------------------------------------------------------------------------

namespace {

void check_same_settings(const Settings &a, const Settings &b)
{
    CHECK(a.runtime == b.runtime);
    CHECK(a.log_level == b.log_level);
    CHECK(a.policy_path == b.policy_path);
    CHECK(a.runtime_path == b.runtime_path);
    CHECK(a.policies == b.policies);
    CHECK(a.pool.enabled == b.pool.enabled);
    CHECK(a.pool.backend == b.pool.backend);
    CHECK(a.security.allow_writable_plugins == b.security.allow_writable_plugins);
    CHECK(a.sim.devices == b.sim.devices);
    CHECK(a.sim.capacity == b.sim.capacity);
    CHECK(a.sim.page_size == b.sim.page_size);
    CHECK(a.sim.xnack == b.sim.xnack);
    CHECK(a.sim.profile.name == b.sim.profile.name);
    CHECK(a.sim.profile.source == b.sim.profile.source);
    CHECK(a.sim.profile.capacity == b.sim.profile.capacity);
    REQUIRE(a.sim.faults.size() == b.sim.faults.size());
    for (size_t i = 0; i < a.sim.faults.size(); ++i) {
        CHECK(a.sim.faults[i].operation == b.sim.faults[i].operation);
        CHECK(a.sim.faults[i].nth == b.sim.faults[i].nth);
        CHECK(a.sim.faults[i].count == b.sim.faults[i].count);
        CHECK(a.sim.faults[i].native_error == b.sim.faults[i].native_error);
    }
    for (const char *table : {"policy", "hip"}) {
        CAPTURE(table);
        const toml::node *x = a.document->get(table);
        const toml::node *y = b.document->get(table);
        CHECK((x == nullptr) == (y == nullptr));
        if (x && y && x->is_table() && y->is_table()) {
            for (auto &&[k, v] : *x->as_table()) {
                CAPTURE(k.str());
                const toml::node *w = y->as_table()->get(k.str());
                REQUIRE(w != nullptr);
                if (v.is_table() && w->is_table())
                    CHECK(*v.as_table() == *w->as_table());
            }
        }
    }
}

} // namespace

TEST_CASE("describe_settings round-trips through from_string")
{
    CleanEnvironment env;
    TempDir dir;
    dir.write("tiny.toml", kValidProfile);
    const std::string original = R"(
runtime = "sim"
log_level = "info"
policy_path = ["plugins", "/abs/with \"quote\""]
policies = ["rules", "xnack"]

[policy.rules]
rule = [{ tag = "weights", kind = "managed", advice = ["read-mostly"] }, { tag = "act" }]
limit = "2GiB"
ratio = 0.25

[policy.xnack]

[hip]

[security]
allow_writable_plugins = true

[sim]
devices = 3
page_size = "64KiB"
xnack = false
profile = "tiny.toml"

[[sim.fault]]
operation = "memcpy"
nth = 2
count = 0
error = "hipErrorOutOfMemory"

[[sim.fault]]
operation = "alloc"
error = 4242
)";
    const Settings a = ConfigLoader::from_string(original, dir.path());
    const std::string text = describe_settings(a);
    CAPTURE(text);
    CHECK(contains(text, "runtime = \"sim\""));
    CHECK(contains(text, "[hip]"));
    CHECK(contains(text, "allow_writable_plugins = true"));
    CHECK(contains(text, "policies = [\"rules\", \"xnack\"]"));
    CHECK(contains(text, "devices = 3"));
    CHECK(contains(text, "page_size = 65536"));
    CHECK(contains(text, "# capacity = 1073741824"));
    CHECK(contains(text, "profile = \"" + (dir.path() / "tiny.toml").string() + "\""));
    CHECK(contains(text, "error = \"hipErrorOutOfMemory\""));
    CHECK(contains(text, "error = 4242"));
    CHECK(contains(text, "# environment overrides: none"));

    const Settings b = ConfigLoader::from_string(text, dir.path());
    check_same_settings(a, b);
    CHECK(describe_settings(b) == text);
}

TEST_CASE("describe_settings: defaults, the built-in profile and environment overrides")
{
    CleanEnvironment env;
    env.set("TIDAL_SIM_CAPACITY", "16GiB");
    env.set("TIDAL_POLICY_PATH", "/env/p");
    const Settings a = ConfigLoader::from_string("runtime = \"sim\"\n", "/base");
    const std::string text = describe_settings(a);
    CAPTURE(text);
    CHECK(contains(text, "#   TIDAL_SIM_CAPACITY=16GiB\n"));
    CHECK(contains(text, "#   TIDAL_POLICY_PATH=/env/p\n"));
    CHECK(contains(text, "runtime = \"sim\"\n"));
    CHECK(contains(text, "profile = \"h200\""));
    CHECK(contains(text, "capacity = 17179869184"));
    CHECK(contains(text, "# page_size = 2097152"));
    CHECK(contains(text, "# xnack = true"));
    // Read back with the same environment: the same settings (the prepended folder is not
    // doubled).
    const Settings b = ConfigLoader::from_string(text, "/base");
    check_same_settings(a, b);
    CHECK(b.policy_path == std::vector<fs::path>{"/env/p"});
}

TEST_CASE("describe_settings copes with hand-made settings that have no document")
{
    CleanEnvironment env;
    Settings s;
    s.runtime = "cuda";
    s.policies = {"rules"};
    const std::string text = describe_settings(s);
    CAPTURE(text);
    CHECK(contains(text, "runtime = \"cuda\"\n"));
    const Settings back = ConfigLoader::from_string(text);
    CHECK(back.runtime == "cuda");
    CHECK(back.policies == std::vector<std::string>{"rules"});
    CHECK(back.sim.profile.name == "h200");
}

// ---- bounded input (issue 11, item 4) ----------------------------------------------------

namespace {

std::string dotted(const std::string &part, size_t levels)
{
    std::string key;
    key.reserve(levels * (part.size() + 1));
    for (size_t i = 0; i < levels; ++i)
        key += (i ? "." : "") + part;
    return key;
}

} // namespace

TEST_CASE("a key or header a million levels deep is a CONFIG error, not a stack overflow")
{
    CleanEnvironment env;
    // 2 MB of text: refused for its size before anything parses it.
    const std::string million = "[policy]\n" + dotted("a", 1000000) + " = 1\n";
    CHECK(contains(config_error(million), "<string>:2:"));
    CHECK(contains(config_error(million), "longer than 1048576 bytes (1 MiB)"));
    // 300 000 levels fit in the size limit; toml++ overflowed its stack on them.
    const std::string deep = dotted("a", 300000);
    CHECK(contains(config_error("[policy]\n" + deep + " = 1\n"),
                   "<string>:2:126: nesting deeper than 64 levels"));
    CHECK(contains(config_error("runtime = \"sim\"\n[" + deep + "]\n"),
                   "<string>:2:129: nesting deeper than 64 levels"));
    CHECK(contains(config_error("[[" + deep + "]]\n"), "<string>:1:130: nesting deeper"));
    CHECK(contains(config_error("x = " + std::string(100000, '[') + std::string(100000, ']') + "\n"),
                   "<string>:1:"));
    std::string inline_tables = "x = ";
    for (int i = 0; i < 100000; ++i)
        inline_tables += "{a = ";
    inline_tables += "1" + std::string(100000, '}') + "\n";
    CHECK(contains(config_error(inline_tables), "nesting deeper than 64 levels"));
}

TEST_CASE("nesting up to the limit is read; the limit counts keys, not dots in values")
{
    CleanEnvironment env;
    // 64 levels: policy + 63 parts below it. The policy is not in the chain, so the loader
    // stops at the table, after toml++ parsed it: the depth itself was accepted.
    CHECK(contains(config_error("[policy]\n" + dotted("a", 63) + " = 1\n"),
                   "[policy.a] configures a policy that is not in the chain"));
    CHECK(contains(config_error("[policy]\n" + dotted("a", 64) + " = 1\n"),
                   "<string>:2:126: nesting deeper than 64 levels (this point is at level 65"));
    // Every key and every array element is a level; dots in values (floats, dates, strings)
    // and in comments are not.
    const std::string at_62 = "[" + dotted("a", 62) + "]\n";
    const std::string values = "x = 1.5\ny = 1979-05-27T07:32:00.999\nz = \"a.b.c\"  # d.e.f\n"
                               "w = [1.5, 2.5]\nv = '''\nm.n.o\n'''\n";
    CHECK(contains(config_error(at_62 + values), "unknown key 'a' at the top level"));
    CHECK(contains(config_error(at_62 + "p.q.r = 1\n"), "<string>:2:4: nesting deeper"));
    CHECK(contains(config_error(at_62 + "p = {q = {r = 1}}\n"), "<string>:2:13: nesting deeper"));
    CHECK(contains(config_error(at_62 + "w = [1.5, { q = 0.5 }]\n"), "<string>:2:15: nesting deeper"));
    CHECK(contains(config_error(at_62 + "w = [[1]]\n"), "<string>:2:6: nesting deeper"));
}

TEST_CASE("a table header starting with '.' or '{' is a syntax error, not toml++'s assertion")
{
    CleanEnvironment env;
    CHECK(contains(config_error("[.b]\n"), "<string>:1:2: TOML syntax error: a table header starts with a key, not '.'"));
    CHECK(contains(config_error("[{.}\n"), "<string>:1:2: TOML syntax error: a table header starts with a key, not '{'"));
    CHECK(contains(config_error("runtime = \"sim\"\n[[ \t.a]]\n"), "<string>:2:5: TOML syntax error"));
    CHECK(contains(config_error("[ .]\n"), "<string>:1:3: TOML syntax error"));
    CHECK(contains(config_error("[ ]\n"), "TOML syntax error"));
    CHECK(contains(config_error("x = [ .5 ]\n"), "TOML syntax error")); // an array, toml++'s own error
}

TEST_CASE("text that trips toml++'s own assertions is a CONFIG error, not an abort")
{
    CleanEnvironment env;
    // toml++ 3.3 asserts in its value parser here (found by fuzzing); the assertion now throws.
    CHECK(contains(config_error("a=[}\n"), "TOML syntax error"));
    CHECK(contains(config_error("runtime = \"sim\"\nx = [1, }]\n"), "TOML syntax error"));
    // Non-ASCII outside strings and comments (toml++ reached an "unreachable" branch on U+3001).
    CHECK(contains(config_error("x = 1 \xe3\x80\x81\n"), "<string>:1:7: TOML syntax error: a non-ASCII character"));
    CHECK(contains(config_error("x = 1 \xef\xbb\xbd\n"), "TOML syntax error"));
    // ... and is fine where TOML allows it.
    CHECK_NOTHROW(ConfigLoader::from_string("runtime = \"sim\" # caf\xc3\xa9 \xe3\x80\x81\nlog_level = \"error\"\n"));
}

TEST_CASE("an array longer than the limit is a CONFIG error at the array")
{
    CleanEnvironment env;
    std::string items;
    for (int i = 0; i < 65537; ++i)
        items += "1,";
    CHECK(contains(config_error("runtime = \"sim\"\n[policy]\nx = [" + items + "]\n"),
                   "<string>:3:5: an array of 65537 elements; the limit is 65536"));
}

TEST_CASE("policy_path with 20 000 entries loads in linear time, duplicates dropped in order")
{
    CleanEnvironment env;
    std::string list = "policy_path = [";
    for (int i = 0; i < 20000; ++i)
        list += "\"/p/" + std::to_string(i % 15000) + "\",";
    list += "]\n";
    const auto start = std::chrono::steady_clock::now();
    const Settings s = ConfigLoader::from_string(list);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(s.policy_path.size() == 15000);
    CHECK(s.policy_path[0] == fs::path("/p/0"));
    CHECK(s.policy_path[14999] == fs::path("/p/14999"));
    // The pairwise removal took 12 s on 20 000 entries; hashing takes a few milliseconds.
    CHECK(seconds < 2.0);
    // The environment's folders go first and a folder it repeats is searched once.
    env.set("TIDAL_POLICY_PATH", "/p/7:/q");
    const Settings e = ConfigLoader::from_string(list);
    REQUIRE(e.policy_path.size() == 15001);
    CHECK(e.policy_path[0] == fs::path("/p/7"));
    CHECK(e.policy_path[1] == fs::path("/q"));
    CHECK(e.policy_path[2] == fs::path("/p/0"));
}

TEST_CASE("from_file reads regular files only, and at most 1 MiB of them")
{
    CleanEnvironment env;
    auto file_error = [](const fs::path &p) {
        try {
            ConfigLoader::from_file(p);
        } catch (const Error &e) {
            CHECK(e.status() == TIDAL_ERROR_CONFIG);
            return e.message();
        }
        FAIL("no error for " << p);
        return std::string();
    };
    CHECK(contains(file_error("/dev/zero"), "configuration file '/dev/zero' is a character device"));
    TempDir dir;
    const fs::path fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // Opening a FIFO with no writer would block: the loader must answer at once.
    CHECK(contains(file_error(fifo), "is a FIFO (named pipe), not a regular file"));
    CHECK(contains(file_error(dir.path()), "is a directory"));
    CHECK(contains(file_error(dir.path() / "missing.toml"), "cannot read configuration file"));
    const fs::path big = dir.write("big.toml", "# padding\n" + std::string(2u << 20, '#') + "\n");
    CHECK(contains(file_error(big), big.string() + ":2:1048567: longer than 1048576 bytes"));
    // A profile named by the file is read the same way.
    CHECK(contains(config_error("[sim]\nprofile = \"big.toml\"\n", dir.path()),
                   "<string>:2:11: sim.profile = \"big.toml\": " + big.string() + ":2:1048567: longer than"));
}

TEST_CASE("[security] allow_writable_plugins")
{
    CleanEnvironment env;
    CHECK_FALSE(ConfigLoader::defaults().security.allow_writable_plugins);
    CHECK(ConfigLoader::from_string("[security]\nallow_writable_plugins = true\n").security.allow_writable_plugins);
    CHECK(contains(config_error("[security]\nallow_writable_plugin = true\n"),
                   "did you mean 'allow_writable_plugins'?"));
    CHECK(contains(config_error("[security]\nallow_writable_plugins = 1\n"), "<string>:2:26: wrong type"));
}
