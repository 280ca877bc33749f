#include "config/settings_describer.h"

#include <cstdio>
#include <sstream>

#include "config/toml_include.h"

#include "config/hip_error_names.h"
#include "config/size_parser.h"

namespace tidal {
namespace {

const char *log_level_name(LogLevel level)
{
    switch (level) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warn";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
    }
    return "warn";
}

// A TOML basic string.
std::string quote(std::string_view s)
{
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\f': out += "\\f"; break;
        case '\r': out += "\\r"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

template <class T, class F> std::string list(const std::vector<T> &items, F &&to_text)
{
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i)
        out += (i ? ", " : "") + quote(to_text(items[i]));
    return out + "]";
}

const toml::table *subtable(const Settings &s, std::string_view key)
{
    return s.document ? s.document->get_as<toml::table>(key) : nullptr;
}

// Free-form tables ([policy.NAME], [hip], [cuda]) are written by toml++ itself, so every
// value type round-trips exactly.
std::string format_tables(const toml::table &wrapper)
{
    std::ostringstream os;
    os << toml::toml_formatter(wrapper, toml::toml_formatter::default_flags &
                                            ~toml::format_flags::indentation);
    return os.str();
}

std::string format_capacity(uint64_t bytes)
{
    return std::to_string(bytes) + "  # " + format_size(bytes);
}

void describe_copy(std::ostringstream &os, const CopySettings &copy)
{
    os << "\n[copy]\n";
    os << "chunk_size = " << copy.chunk_size << "  # " << format_size(copy.chunk_size) << "\n";
    os << "ring_depth = " << copy.ring_depth << "\n";
    os << "threads = " << copy.threads << (copy.threads ? "" : "  # 0: min(cores, 16)") << "\n";
    os << "batch_direct = " << (copy.batch_direct ? "true" : "false") << "\n";
    os << "spin_us = " << copy.spin_us << "\n";
    os << "slot_stores = \"" << kSlotStoresNames[static_cast<size_t>(copy.slot_stores)] << "\"\n";
}

void describe_pool(std::ostringstream &os, const PoolConfig &pool)
{
    os << "\n[pool]\n";
    os << "enabled = " << (pool.enabled ? "true" : "false") << (pool.enabled ? "" : "  # every tidal_alloc calls the runtime") << "\n";
    os << "backend = " << (pool.backend == PoolBackend::vendor ? "\"vendor\"  # device memory from the runtime's stream-ordered pool"
                                                                : "\"tidal\"  # device memory from tidal's own pools")
       << (pool.enabled ? "" : " (unused: pools are off)") << "\n";
    os << "release_threshold = " << pool.release_threshold << "  # " << format_size(pool.release_threshold) << "\n";
    os << "growth = " << pool.growth << "  # " << format_size(pool.growth) << "\n";
    os << "thread_cache_blocks = " << pool.thread_cache_blocks << "\n";
    os << "thread_cache_large = " << pool.thread_cache_large << "  # " << format_size(pool.thread_cache_large) << "\n";
    os << "small_max = " << pool.small_max << "  # " << format_size(pool.small_max) << "\n";
}

void describe_migration(std::ostringstream &os, const MigrationSettings &m)
{
    os << "\n[migration]\n";
    os << "budget = " << m.budget << "  # " << (m.budget ? format_size(m.budget) : std::string("no limit")) << "\n";
    os << "chunk_size = " << m.chunk_size << "  # " << format_size(m.chunk_size) << "\n";
    os << "streams = " << m.streams << "\n";
    os << "parallel_eviction = " << (m.parallel_eviction ? "true" : "false") << "\n";
    os << "lookahead_hold_us = " << m.lookahead_hold_us << "\n";
    os << "worker_spin_us = " << m.worker_spin_us << "\n";
}

void describe_elastic(std::ostringstream &os, const ElasticSettings &e)
{
    os << "\n[elastic]\n";
    os << "home = \"" << (e.eager_home ? "eager" : "lazy") << "\"\n";
    os << "chunk_size = " << e.chunk_size << "  # " << format_size(e.chunk_size) << ", rounded up to the granularity\n";
    os << "copy_streams = " << e.copy_streams << "\n";
}

void describe_topology(std::ostringstream &os, const TopologySettings &t)
{
    os << "\n[topology]\n";
    os << "peer_access = \"" << (t.peer_access ? "auto" : "off") << "\"\n";
    os << "peer_fallback = \"" << (t.peer_fallback_stage ? "stage" : "error") << "\"\n";
    os << "numa_bind = " << (t.numa_bind ? "true" : "false") << "\n";
}

void describe_telemetry(std::ostringstream &os, const TelemetrySettings &t)
{
    os << "\n[telemetry]\n";
    if (t.stats.empty())
        os << "# stats: not written at destroy\n";
    else
        os << "stats = " << quote(t.stats) << "\n";
    os << "tag_depth = " << t.tag_depth << (t.tag_depth ? "" : "  # whole tags") << "\n";
    os << "leak_backtrace = " << (t.leak_backtrace ? "true" : "false") << "\n";
    os << "ranges = " << (t.ranges ? "true" : "false") << "  # profiler ranges (NVTX, roctx)\n";
}

void describe_security(std::ostringstream &os, const SecuritySettings &security)
{
    os << "\n[security]\n";
    os << "allow_writable_plugins = "
       << (security.allow_writable_plugins ? "true  # plugins anyone may replace are loaded too"
                                           : "false  # plugins in world-writable files or folders are refused")
       << "\n";
}

// Only when a trace is recorded: an absent [telemetry] means the same as an empty one.
void describe_trace(std::ostringstream &os, const TraceSettings &trace)
{
    if (trace.file.empty())
        return;
    os << "\n[telemetry]\n";
    os << "trace = " << quote(trace.file.string()) << "  # every API event as JSON lines\n";
}

void describe_sim(std::ostringstream &os, const SimSettings &sim)
{
    const SimProfile &p = sim.profile;
    os << "\n[sim]\n";
    os << "devices = " << sim.devices << "\n";
    os << "profile = " << quote(p.source.empty() ? p.name : p.source.string()) << "  # "
       << p.device_name << ": " << p.vendor << " " << p.arch
       << (p.source.empty() ? ", built in" : "") << "\n";
    // Overrides are real keys; the profile's own values stay comments, so reading this text
    // back does not turn them into overrides.
    if (sim.capacity)
        os << "capacity = " << format_capacity(*sim.capacity) << "; overrides the profile's "
           << format_size(p.capacity) << "\n";
    else
        os << "# capacity = " << format_capacity(p.capacity) << ", from the profile\n";
    if (sim.page_size)
        os << "page_size = " << format_capacity(*sim.page_size) << "; overrides the profile's "
           << format_size(p.page_size) << "\n";
    else
        os << "# page_size = " << format_capacity(p.page_size) << ", from the profile\n";
    if (sim.xnack)
        os << "xnack = " << (*sim.xnack ? "true" : "false") << "  # overrides the profile's "
           << (p.xnack ? "true" : "false") << "\n";
    else
        os << "# xnack = " << (p.xnack ? "true" : "false") << "  # from the profile\n";

    for (const FaultSpec &f : sim.faults) {
        os << "\n[[sim.fault]]\n";
        os << "operation = " << quote(f.operation) << "\n";
        os << "nth = " << f.nth << "\n";
        os << "count = " << f.count << (f.count == 0 ? "  # every call from nth on" : "")
           << "\n";
        if (const char *name = hip_error_name(f.native_error))
            os << "error = " << quote(name) << "  # " << f.native_error << "\n";
        else
            os << "error = " << f.native_error << "\n";
    }
}

} // namespace

std::string describe_settings(const Settings &s)
{
    std::ostringstream os;
    os << "# tidal settings as resolved\n";
    os << "# source: " << (s.source.empty() ? std::string("<string>") : s.source.string())
       << "\n";
    os << "# base_dir: " << s.base_dir.string() << "\n";
    if (s.env_overrides.empty()) {
        os << "# environment overrides: none\n";
    } else {
        os << "# environment overrides (applied after the file):\n";
        for (const std::string &e : s.env_overrides)
            os << "#   " << e << "\n";
    }

    os << "\n";
    os << "runtime = " << quote(s.runtime) << "\n";
    os << "log_level = " << quote(log_level_name(s.log_level)) << "\n";
    os << "device_selection = "
       << (s.device_selection == DeviceSelection::local_rank
               ? "\"local-rank\"  # TIDAL_DEVICE_DEFAULT: the node-local rank round-robin over the devices"
               : "\"first\"  # TIDAL_DEVICE_DEFAULT: the policy chain chooses (core default: device 0)")
       << "\n";
    auto path_text = [](const std::filesystem::path &p) { return p.string(); };
    auto same = [](const std::string &x) { return x; };
    os << "policy_path = " << list(s.policy_path, path_text) << "\n";
    os << "runtime_path = " << list(s.runtime_path, path_text) << "\n";
    os << "policies = " << list(s.policies, same) << "  # the chain, asked in this order\n";

    for (std::string_view module : {"hip", "cuda"})
        if (const toml::table *m = subtable(s, module)) {
            toml::table wrapper;
            wrapper.insert(module, *m);
            os << "\n" << format_tables(wrapper) << "\n";
        }

    if (const toml::table *policy = subtable(s, "policy"); policy && !policy->empty()) {
        toml::table wrapper;
        wrapper.insert("policy", *policy);
        os << "\n" << format_tables(wrapper) << "\n";
    }

    describe_copy(os, s.copy);
    describe_pool(os, s.pool);
    describe_migration(os, s.migration);
    describe_elastic(os, s.elastic);
    describe_topology(os, s.topology);
    describe_telemetry(os, s.telemetry);
    describe_security(os, s.security);
    describe_trace(os, s.trace);
    describe_sim(os, s.sim);
    return os.str();
}

} // namespace tidal
