#include "config/config_loader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <system_error>
#include <unordered_set>

#include "config/fault_operations.h"
#include "config/hip_error_names.h"
#include "config/key_suggester.h"
#include "config/profile_loader.h"
#include "config/size_parser.h"
#include "config/text_file.h"
#include "config/toml_reader.h"
#include "status/error.h"

namespace tidal {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 17> kTopKeys = {
    "runtime", "log_level", "device_selection", "policy_path", "runtime_path", "policies", "policy", "sim", "hip", "cuda", "copy", "pool", "migration",
    "security", "elastic", "topology", "telemetry"};
constexpr std::array<std::string_view, 3> kTopologyKeys = {"peer_access", "peer_fallback", "numa_bind"};
constexpr std::array<std::string_view, 2> kPeerAccess = {"auto", "off"};
constexpr std::array<std::string_view, 2> kPeerFallback = {"stage", "error"};
constexpr std::array<std::string_view, 1> kSecurityKeys = {"allow_writable_plugins"};
constexpr std::array<std::string_view, 7> kPoolKeys = {"enabled",     "backend",
                                                      "release_threshold", "growth",
                                                      "thread_cache_blocks", "thread_cache_large",
                                                      "small_max"};
constexpr std::array<std::string_view, 2> kPoolBackends = {"tidal", "vendor"};
constexpr std::array<std::string_view, 6> kCopyKeys = {"chunk_size", "ring_depth", "threads", "batch_direct", "spin_us", "slot_stores"};
constexpr std::array<std::string_view, 6> kMigrationKeys = {"budget", "chunk_size", "streams", "parallel_eviction",
                                                             "lookahead_hold_us", "worker_spin_us"};
constexpr std::array<std::string_view, 3> kElasticKeys = {"home", "chunk_size", "copy_streams"};
// [telemetry]: statistics and leak keys.
constexpr std::array<std::string_view, 5> kTelemetryKeys = {"stats", "tag_depth", "leak_backtrace", "ranges", "trace"};
constexpr std::array<std::string_view, 2> kElasticHomes = {"lazy", "eager"};
constexpr std::array<std::string_view, 4> kRuntimes = {"auto", "sim", "hip", "cuda"};
constexpr std::array<std::string_view, 4> kLogLevels = {"error", "warn", "info", "debug"};
constexpr std::array<std::string_view, 2> kDeviceSelections = {"first", "local-rank"};
constexpr std::array<std::string_view, 6> kSimKeys = {"devices", "capacity", "page_size",
                                                      "xnack",   "profile",  "fault"};
constexpr std::array<std::string_view, 4> kFaultKeys = {"operation", "nth", "count", "error"};
constexpr int64_t kMaxSimDevices = 64;
constexpr const char *kDefaultProfile = "h200";
constexpr uint64_t kMinPageSize = 4096;
constexpr uint64_t kMaxPageSize = 1ull << 30;

LogLevel to_log_level(std::string_view s)
{
    if (s == "error")
        return LogLevel::error;
    if (s == "info")
        return LogLevel::info;
    if (s == "debug")
        return LogLevel::debug;
    return LogLevel::warn;
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char &c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string quoted_list(std::span<const std::string_view> names)
{
    std::string out;
    for (std::string_view n : names)
        out += (out.empty() ? "\"" : ", \"") + std::string(n) + "\"";
    return out;
}

bool power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Absolute and tidy: "/cfg/./plugins/" -> "/cfg/plugins".
fs::path resolve_path(const fs::path &base, const fs::path &p)
{
    fs::path out = (p.is_relative() ? base / p : p).lexically_normal();
    if (!out.has_filename() && out.has_relative_path())
        out = out.parent_path();
    return out;
}

// A folder listed twice is searched once, at its first position. This also keeps
// environment prepends idempotent when described settings are read back in.
// Paths arrive lexically normal, so equal text is the same folder; hashing keeps a long list
// linear (a pairwise search took 12 s for 20 000 entries).
void remove_duplicates(std::vector<fs::path> &paths)
{
    std::unordered_set<std::string> seen;
    seen.reserve(paths.size());
    std::vector<fs::path> out;
    out.reserve(paths.size());
    for (auto &p : paths)
        if (seen.insert(p.native()).second)
            out.push_back(std::move(p));
    paths = std::move(out);
}

std::vector<fs::path> read_paths(const TomlReader &r, const toml::node &node,
                                 std::string_view name, const fs::path &base)
{
    std::vector<fs::path> out;
    for (const std::string &p : r.string_array(node, name))
        out.push_back(resolve_path(base, p));
    remove_duplicates(out);
    return out;
}

void read_runtime(const TomlReader &r, const toml::node &node, Settings &s)
{
    if (!node.is_string())
        r.fail(node.source(),
               std::string("wrong type for runtime: expected a string (\"auto\", \"sim\", \"hip\", \"cuda\"), got ") +
                   TomlReader::type_name(node.type()));
    s.runtime = r.choice(node, "runtime", kRuntimes);
}

void read_policies(const TomlReader &r, const toml::node &node, Settings &s)
{
    const toml::array &a = r.array(node, "policies");
    for (size_t i = 0; i < a.size(); ++i) {
        std::string name = r.nonempty_string(a[i], "policies[" + std::to_string(i) + "]");
        if (std::find(s.policies.begin(), s.policies.end(), name) != s.policies.end())
            r.fail(a[i].source(), "policy '" + name + "' is listed twice in policies",
                   "a policy appears once in the chain; remove the second entry");
        s.policies.push_back(std::move(name));
    }
}

// [policy.NAME] tables belong to the plugins, which declare and check their own keys when
// they load; here a table must only name a policy of the chain.
void check_policy_tables(const TomlReader &r, const toml::node &node, const Settings &s)
{
    const toml::table &t = r.table(node, "policy");
    std::vector<std::string_view> chain(s.policies.begin(), s.policies.end());
    for (auto &&[key, value] : t) {
        if (std::find(chain.begin(), chain.end(), key.str()) == chain.end()) {
            std::string message = "[policy." + std::string(key.str()) +
                                  "] configures a policy that is not in the chain (policies = [" +
                                  quoted_list(chain) + "]);";
            message += did_you_mean(key.str(), chain);
            if (message.back() == ';')
                message.pop_back();
            r.fail(key.source(), message,
                   "add '" + std::string(key.str()) + "' to policies, or remove the table");
        }
        r.table(value, "policy." + std::string(key.str()));
    }
}

int read_fault_error(const TomlReader &r, const toml::node &node, const std::string &name)
{
    if (const auto *v = node.as_integer()) {
        if (v->get() < 1 || v->get() > std::numeric_limits<int>::max())
            r.fail(node.source(), name + " = " + std::to_string(v->get()) +
                                      " is not a HIP error number (1 or more)");
        return static_cast<int>(v->get());
    }
    if (const auto *v = node.as_string()) {
        const std::string &text = v->get();
        const std::optional<int> code = hip_error_from_name(text);
        if (code && *code == 0)
            r.fail(node.source(), name + " = \"" + text + "\" is success, not an error");
        if (code)
            return *code;
        std::vector<std::string_view> names;
        for (const HipErrorName &e : hip_error_names())
            if (e.code != 0)
                names.push_back(e.name);
        std::string message = name + " = \"" + text + "\" is not a known HIP error name;";
        message += did_you_mean(text, names);
        if (message.back() == ';')
            message.pop_back();
        r.fail(node.source(), message,
               "use a name such as hipErrorOutOfMemory or the error's number");
    }
    r.fail(node.source(), std::string("wrong type for ") + name +
                              ": expected a HIP error name or number, got " +
                              TomlReader::type_name(node.type()));
}

FaultSpec read_fault(const TomlReader &r, const toml::node &node, size_t index)
{
    const std::string name = "sim.fault[" + std::to_string(index) + "]";
    const toml::table &t = r.table(node, name);
    r.require_known_keys(t, "[sim.fault]", kFaultKeys);
    FaultSpec f;
    f.operation = r.choice(r.required(t, "[sim.fault]", "operation"), name + ".operation",
                           kFaultOperations);
    const int64_t max = std::numeric_limits<int64_t>::max();
    if (const toml::node *n = t.get("nth"))
        f.nth = static_cast<uint64_t>(r.integer(*n, name + ".nth", 1, max));
    if (const toml::node *n = t.get("count"))
        f.count = static_cast<uint64_t>(r.integer(*n, name + ".count", 0, max));
    if (const toml::node *n = t.get("error"))
        f.native_error = read_fault_error(r, *n, name + ".error");
    return f;
}

void read_copy(const TomlReader &r, const toml::node &node, Settings &s)
{
    const toml::table &t = r.table(node, "copy");
    r.require_known_keys(t, "copy", kCopyKeys);
    if (const toml::node *n = t.get("chunk_size")) {
        s.copy.chunk_size = r.size(*n, "copy.chunk_size");
        if (s.copy.chunk_size < 4096 || s.copy.chunk_size > (uint64_t{1} << 30) || s.copy.chunk_size % 4096 != 0)
            r.fail(n->source(), "copy.chunk_size must be a multiple of 4 KiB between 4 KiB and 1 GiB",
                   "16MiB suits most machines");
    }
    if (const toml::node *n = t.get("ring_depth"))
        s.copy.ring_depth = static_cast<uint32_t>(r.integer(*n, "copy.ring_depth", 2, 64));
    if (const toml::node *n = t.get("threads"))
        s.copy.threads = static_cast<uint32_t>(r.integer(*n, "copy.threads", 0, 256));
    if (const toml::node *n = t.get("batch_direct"))
        s.copy.batch_direct = r.boolean(*n, "copy.batch_direct");
    if (const toml::node *n = t.get("spin_us"))
        s.copy.spin_us = static_cast<uint32_t>(r.integer(*n, "copy.spin_us", 0, 100000));
    if (const toml::node *n = t.get("slot_stores")) {
        const std::string v = r.choice(*n, "copy.slot_stores", kSlotStoresNames);
        s.copy.slot_stores = static_cast<SlotStores>(
            std::find(kSlotStoresNames.begin(), kSlotStoresNames.end(), v) - kSlotStoresNames.begin());
    }
}

void read_elastic(const TomlReader &r, const toml::node &node, Settings &s)
{
    const toml::table &t = r.table(node, "elastic");
    r.require_known_keys(t, "elastic", kElasticKeys);
    if (const toml::node *n = t.get("home"))
        s.elastic.eager_home = r.choice(*n, "elastic.home", kElasticHomes) == "eager";
    if (const toml::node *n = t.get("chunk_size")) {
        s.elastic.chunk_size = r.size(*n, "elastic.chunk_size");
        if (s.elastic.chunk_size < 4096 || s.elastic.chunk_size > (uint64_t{16} << 30))
            r.fail(n->source(), "elastic.chunk_size must be between 4 KiB and 16 GiB (it is rounded up to the granularity)",
                   "64MiB suits most machines");
    }
    if (const toml::node *n = t.get("copy_streams"))
        s.elastic.copy_streams = static_cast<uint32_t>(r.integer(*n, "elastic.copy_streams", 1, 16));
}

void read_topology(const TomlReader &r, const toml::node &node, Settings &s)
{
    const toml::table &t = r.table(node, "topology");
    r.require_known_keys(t, "topology", kTopologyKeys);
    if (const toml::node *n = t.get("peer_access"))
        s.topology.peer_access = r.choice(*n, "topology.peer_access", kPeerAccess) == "auto";
    if (const toml::node *n = t.get("peer_fallback"))
        s.topology.peer_fallback_stage = r.choice(*n, "topology.peer_fallback", kPeerFallback) == "stage";
    if (const toml::node *n = t.get("numa_bind"))
        s.topology.numa_bind = r.boolean(*n, "topology.numa_bind");
}

// "stderr" stays a name; anything else is a file, relative to the configuration's folder.
std::string stats_destination(const fs::path &base, const std::string &value)
{
    return value == "stderr" ? value : resolve_path(base, value).string();
}

void read_telemetry(const TomlReader &r, const toml::node &node, Settings &s)
{
    const toml::table &t = r.table(node, "telemetry");
    r.require_known_keys(t, "telemetry", kTelemetryKeys);
    // statistics and leaks
    if (const toml::node *n = t.get("stats"))
        s.telemetry.stats = stats_destination(s.base_dir, r.nonempty_string(*n, "telemetry.stats"));
    if (const toml::node *n = t.get("tag_depth"))
        s.telemetry.tag_depth = static_cast<uint32_t>(r.integer(*n, "telemetry.tag_depth", 0, 16));
    if (const toml::node *n = t.get("leak_backtrace"))
        s.telemetry.leak_backtrace = r.boolean(*n, "telemetry.leak_backtrace");
    if (const toml::node *n = t.get("ranges"))
        s.telemetry.ranges = r.boolean(*n, "telemetry.ranges");
    // traces: a path, relative to the configuration's folder as every path in it
    if (const toml::node *n = t.get("trace")) {
        s.trace.file = resolve_path(s.base_dir, r.nonempty_string(*n, "telemetry.trace"));
        s.trace.where = r.where(n->source()) + "telemetry.trace";
    }
}

void read_migration(const TomlReader &r, const toml::node &node, Settings &s)
{
    const toml::table &t = r.table(node, "migration");
    r.require_known_keys(t, "migration", kMigrationKeys);
    if (const toml::node *n = t.get("budget"))
        s.migration.budget = r.size(*n, "migration.budget");
    if (const toml::node *n = t.get("chunk_size")) {
        s.migration.chunk_size = r.size(*n, "migration.chunk_size");
        if (s.migration.chunk_size < 65536 || s.migration.chunk_size > (uint64_t{16} << 30) ||
            s.migration.chunk_size % 65536 != 0)
            r.fail(n->source(), "migration.chunk_size must be a multiple of 64 KiB between 64 KiB and 16 GiB",
                   "64MiB suits most GPUs; smaller pieces migrate slower");
    }
    if (const toml::node *n = t.get("streams"))
        s.migration.streams = static_cast<uint32_t>(r.integer(*n, "migration.streams", 1, 16));
    if (const toml::node *n = t.get("parallel_eviction"))
        s.migration.parallel_eviction = r.boolean(*n, "migration.parallel_eviction");
    if (const toml::node *n = t.get("lookahead_hold_us"))
        s.migration.lookahead_hold_us = static_cast<uint32_t>(r.integer(*n, "migration.lookahead_hold_us", 0, 100000));
    if (const toml::node *n = t.get("worker_spin_us"))
        s.migration.worker_spin_us = static_cast<uint32_t>(r.integer(*n, "migration.worker_spin_us", 0, 100000));
}

void read_pool(const TomlReader &r, const toml::node &node, Settings &s)
{
    const toml::table &t = r.table(node, "pool");
    r.require_known_keys(t, "pool", kPoolKeys);
    if (const toml::node *n = t.get("enabled"))
        s.pool.enabled = r.boolean(*n, "pool.enabled");
    if (const toml::node *n = t.get("backend")) {
        s.pool.backend = r.choice(*n, "pool.backend", kPoolBackends) == "vendor" ? PoolBackend::vendor : PoolBackend::tidal;
        s.pool.backend_where = r.where(n->source());
    }
    if (const toml::node *n = t.get("release_threshold"))
        s.pool.release_threshold = r.size(*n, "pool.release_threshold");
    if (const toml::node *n = t.get("growth")) {
        s.pool.growth = r.size(*n, "pool.growth");
        if (s.pool.growth < (uint64_t{1} << 20))
            r.fail(n->source(), "pool.growth must be at least 1 MiB", "64MiB suits most programs");
    }
    if (const toml::node *n = t.get("thread_cache_blocks"))
        s.pool.thread_cache_blocks = static_cast<uint32_t>(r.integer(*n, "pool.thread_cache_blocks", 0, 65536));
    if (const toml::node *n = t.get("thread_cache_large"))
        s.pool.thread_cache_large = r.size(*n, "pool.thread_cache_large");
    if (const toml::node *n = t.get("small_max")) {
        s.pool.small_max = r.size(*n, "pool.small_max");
        if (s.pool.small_max > (uint64_t{1} << 20))
            r.fail(n->source(), "pool.small_max must be at most 1 MiB (the largest size class)",
                   "0 sends every request to the best-fit pool");
    }
}

// The keys each runtime module accepts; keep in step with core/runtime/{hip,cuda}, which take
// none yet.
void check_module_table(const TomlReader &r, const toml::node &node, std::string_view module)
{
    r.require_known_keys(r.table(node, module), module, {});
}

void read_security(const TomlReader &r, const toml::node &node, Settings &s)
{
    const toml::table &t = r.table(node, "security");
    r.require_known_keys(t, "security", kSecurityKeys);
    if (const toml::node *n = t.get("allow_writable_plugins"))
        s.security.allow_writable_plugins = r.boolean(*n, "security.allow_writable_plugins");
}

void read_sim(const TomlReader &r, const toml::node &node, Settings &s)
{
    const toml::table &t = r.table(node, "sim");
    r.require_known_keys(t, "sim", kSimKeys);
    SimSettings &sim = s.sim;
    if (const toml::node *n = t.get("devices"))
        sim.devices = static_cast<int32_t>(r.integer(*n, "sim.devices", 1, kMaxSimDevices));
    if (const toml::node *n = t.get("capacity")) {
        sim.capacity = r.size(*n, "sim.capacity");
        if (*sim.capacity == 0)
            r.fail(n->source(), "sim.capacity must be more than 0 bytes");
    }
    if (const toml::node *n = t.get("page_size")) {
        sim.page_size = r.size(*n, "sim.page_size");
        if (!power_of_two(*sim.page_size) || *sim.page_size < kMinPageSize ||
            *sim.page_size > kMaxPageSize)
            r.fail(n->source(),
                   "sim.page_size = " + std::to_string(*sim.page_size) +
                       " must be a power of two from 4 KiB to 1 GiB",
                   "migration granularity is usually \"2MiB\" (NVIDIA UVM, AMD SVM) or \"64KiB\"");
    }
    if (const toml::node *n = t.get("xnack"))
        sim.xnack = r.boolean(*n, "sim.xnack");
    if (const toml::node *n = t.get("fault")) {
        const toml::array &faults = r.array(*n, "sim.fault");
        for (size_t i = 0; i < faults.size(); ++i)
            sim.faults.push_back(read_fault(r, faults[i], i));
    }
    if (const toml::node *n = t.get("profile")) {
        const std::string name = r.nonempty_string(*n, "sim.profile");
        try {
            sim.profile = load_profile(name, s.base_dir);
        } catch (const Error &e) {
            r.fail(n->source(), "sim.profile = \"" + name + "\": " + e.message(), e.hint());
        }
    } else {
        sim.profile = load_profile(kDefaultProfile, s.base_dir);
    }
    // A profile that describes a machine of several GPUs simulates all of them unless told.
    if (!t.contains("devices") && sim.profile.machine_devices > 0)
        sim.devices = sim.profile.machine_devices;
}

void read_document(const TomlReader &r, const toml::table &doc, Settings &s)
{
    r.require_known_keys(doc, "", kTopKeys);
    if (const toml::node *n = doc.get("runtime"))
        read_runtime(r, *n, s);
    if (const toml::node *n = doc.get("log_level"))
        s.log_level = to_log_level(r.choice(*n, "log_level", kLogLevels));
    if (const toml::node *n = doc.get("device_selection"))
        s.device_selection = r.choice(*n, "device_selection", kDeviceSelections) == "local-rank"
                                 ? DeviceSelection::local_rank
                                 : DeviceSelection::first;
    if (const toml::node *n = doc.get("policy_path"))
        s.policy_path = read_paths(r, *n, "policy_path", s.base_dir);
    if (const toml::node *n = doc.get("runtime_path"))
        s.runtime_path = read_paths(r, *n, "runtime_path", s.base_dir);
    if (const toml::node *n = doc.get("policies"))
        read_policies(r, *n, s);
    if (const toml::node *n = doc.get("policy"))
        check_policy_tables(r, *n, s);
    // [hip] and [cuda] hold module options. The module checks them again when it starts, but
    // they are checked here too, whatever the runtime, so that a file checked where the
    // simulated device runs is also right on the cluster.
    for (std::string_view module : {"hip", "cuda"})
        if (const toml::node *n = doc.get(module))
            check_module_table(r, *n, module);
    if (const toml::node *n = doc.get("security"))
        read_security(r, *n, s);
    if (const toml::node *n = doc.get("copy"))
        read_copy(r, *n, s);
    if (const toml::node *n = doc.get("pool"))
        read_pool(r, *n, s);
    if (const toml::node *n = doc.get("migration"))
        read_migration(r, *n, s);
    if (const toml::node *n = doc.get("elastic"))
        read_elastic(r, *n, s);
    if (const toml::node *n = doc.get("topology"))
        read_topology(r, *n, s);
    if (const toml::node *n = doc.get("telemetry"))
        read_telemetry(r, *n, s);
    if (const toml::node *n = doc.get("sim"))
        read_sim(r, *n, s);
    else
        s.sim.profile = load_profile(kDefaultProfile, s.base_dir);
}

// ---- environment overrides --------------------------------------------------------------

std::optional<std::string> env_value(const char *name)
{
    const char *v = std::getenv(name);
    if (!v || !*v)
        return std::nullopt;
    return std::string(v);
}

[[noreturn]] void env_fail(const char *name, const std::string &value, const std::string &why,
                           const std::string &hint)
{
    throw Error(TIDAL_ERROR_CONFIG,
                std::string("environment variable ") + name + "=\"" + value + "\": " + why,
                hint + "; or unset " + name);
}

std::string env_choice(const char *name, const std::string &value,
                       std::span<const std::string_view> options)
{
    const std::string v = lower(value);
    for (std::string_view o : options)
        if (v == o)
            return v;
    std::string why = "not valid;" + did_you_mean(v, options);
    if (why.back() == ';')
        why.pop_back();
    env_fail(name, value, why, "use one of: " + TomlReader::join(options));
}

void prepend_env_paths(const char *name, const std::string &value,
                       std::vector<fs::path> &paths)
{
    const fs::path cwd = fs::current_path();
    std::vector<fs::path> front;
    size_t start = 0;
    while (start <= value.size()) {
        size_t end = value.find(':', start);
        if (end == std::string::npos)
            end = value.size();
        if (end > start)
            front.push_back(resolve_path(cwd, value.substr(start, end - start)));
        start = end + 1;
    }
    if (front.empty())
        env_fail(name, value, "names no folder", "give colon-separated folders");
    front.insert(front.end(), paths.begin(), paths.end());
    paths = std::move(front);
    remove_duplicates(paths);
}

void apply_environment(Settings &s)
{
    auto record = [&](const char *name, const std::string &value) {
        s.env_overrides.push_back(std::string(name) + "=" + value);
    };
    if (auto v = env_value("TIDAL_RUNTIME")) {
        s.runtime = env_choice("TIDAL_RUNTIME", *v, kRuntimes);
        record("TIDAL_RUNTIME", *v);
    }
    if (auto v = env_value("TIDAL_STATS")) {
        s.telemetry.stats = stats_destination(fs::current_path(), *v);
        record("TIDAL_STATS", *v);
    }
    if (auto v = env_value("TIDAL_LOG_LEVEL")) {
        s.log_level = to_log_level(env_choice("TIDAL_LOG_LEVEL", *v, kLogLevels));
        record("TIDAL_LOG_LEVEL", *v);
    }
    if (auto v = env_value("TIDAL_DEVICE_SELECTION")) {
        s.device_selection = env_choice("TIDAL_DEVICE_SELECTION", *v, kDeviceSelections) == "local-rank"
                                 ? DeviceSelection::local_rank
                                 : DeviceSelection::first;
        record("TIDAL_DEVICE_SELECTION", *v);
    }
    if (auto v = env_value("TIDAL_POLICY_PATH")) {
        prepend_env_paths("TIDAL_POLICY_PATH", *v, s.policy_path);
        record("TIDAL_POLICY_PATH", *v);
    }
    if (auto v = env_value("TIDAL_RUNTIME_PATH")) {
        prepend_env_paths("TIDAL_RUNTIME_PATH", *v, s.runtime_path);
        record("TIDAL_RUNTIME_PATH", *v);
    }
    if (auto v = env_value("TIDAL_SIM_DEVICES")) {
        int64_t n = 0;
        const char *end = v->data() + v->size();
        auto [ptr, ec] = std::from_chars(v->data(), end, n);
        if (ec != std::errc() || ptr != end || n < 1 || n > kMaxSimDevices)
            env_fail("TIDAL_SIM_DEVICES", *v, "expected a whole number from 1 to 64",
                     "set it to the number of simulated devices");
        s.sim.devices = static_cast<int32_t>(n);
        record("TIDAL_SIM_DEVICES", *v);
    }
    if (auto v = env_value("TIDAL_SIM_CAPACITY")) {
        std::string why;
        const std::optional<uint64_t> bytes = parse_size(*v, &why);
        if (!bytes)
            env_fail("TIDAL_SIM_CAPACITY", *v, why,
                     "write a byte count or a size such as 16GiB");
        if (*bytes == 0)
            env_fail("TIDAL_SIM_CAPACITY", *v, "capacity must be more than 0 bytes",
                     "write a byte count or a size such as 16GiB");
        s.sim.capacity = *bytes;
        record("TIDAL_SIM_CAPACITY", *v);
    }
    if (auto v = env_value("TIDAL_TRACE")) {
        s.trace.file = resolve_path(fs::current_path(), *v);
        s.trace.where = "environment variable TIDAL_TRACE";
        record("TIDAL_TRACE", *v);
    }
    if (auto v = env_value("TIDAL_SIM_PROFILE")) {
        try {
            s.sim.profile = load_profile(*v, fs::current_path());
        } catch (const Error &e) {
            env_fail("TIDAL_SIM_PROFILE", *v, e.message(), e.hint());
        }
        record("TIDAL_SIM_PROFILE", *v);
    }
    if (auto v = env_value("TIDAL_SIM_XNACK")) {
        const std::string x = lower(*v);
        if (x == "1" || x == "true")
            s.sim.xnack = true;
        else if (x == "0" || x == "false")
            s.sim.xnack = false;
        else
            env_fail("TIDAL_SIM_XNACK", *v, "expected 0, 1, true or false",
                     "1/true: managed pages migrate on a device fault, 0/false: they do not");
        record("TIDAL_SIM_XNACK", *v);
    }
}

Settings load(std::string_view text, const std::string &label, const fs::path &base_dir,
              const fs::path &source)
{
    const TomlReader r(label);
    auto doc = std::make_shared<toml::table>(r.parse(text));
    Settings s;
    s.source = source;
    s.base_dir = base_dir;
    read_document(r, *doc, s);
    s.document = std::move(doc);
    apply_environment(s);
    return s;
}

} // namespace

Settings ConfigLoader::from_file(const fs::path &file)
{
    const std::string text =
        read_text_file(file, "configuration file",
                       "check that the file exists and is readable (TIDAL_CONFIG names it when "
                       "tidal_context_create is used)");
    const fs::path absolute = fs::absolute(file).lexically_normal();
    return load(text, file.string(), absolute.parent_path(), absolute);
}

Settings ConfigLoader::from_string(std::string_view toml, const fs::path &base_dir)
{
    const fs::path base =
        base_dir.empty() ? fs::current_path() : fs::absolute(base_dir).lexically_normal();
    return load(toml, "<string>", resolve_path(base, {}), {});
}

Settings ConfigLoader::defaults() { return from_string(""); }

} // namespace tidal
