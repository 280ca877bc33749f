#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "byte_sizes.h"
#include "command_options.h"
#include "tool_commands.h"

namespace tidal_tool {
namespace {

// The device device_selection = "local-rank" would pick, whatever is configured: the local
// rank round-robin over the devices (the library's rule, JobEnvironment::device_for).
int32_t local_rank_device(const tidal_system_info &sys)
{
    return sys.local_rank >= 0 && sys.device_count > 0 ? sys.local_rank % sys.device_count : 0;
}

// ROCm's guidance: keep a batch's working set within half the L2, i.e. L2 / (2 x sample size).
uint64_t batch_hint(uint64_t l2, uint64_t sample) { return sample && l2 ? l2 / (2 * sample) : 0; }

const char *xnack_name(tidal_xnack x)
{
    switch (x) {
    case TIDAL_XNACK_ON: return "on";
    case TIDAL_XNACK_OFF: return "off";
    case TIDAL_XNACK_UNKNOWN: return "unknown";
    default: return "n/a";
    }
}

std::string bytes(uint64_t n)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, units[u]);
}

const char *yes(bool b) { return b ? "yes" : "no"; }

const char *link_name(tidal_link_type t)
{
    switch (t) {
    case TIDAL_LINK_SAME: return "self";
    case TIDAL_LINK_PCIE: return "pcie";
    case TIDAL_LINK_XGMI: return "xgmi";
    case TIDAL_LINK_NVLINK: return "nvlink";
    case TIDAL_LINK_NONE: return "none";
    default: return "unknown";
    }
}

// One matrix cell: "self", "-" (no peer path), or the link with hops and rank where known.
std::string cell(const tidal_peer_info &p)
{
    if (p.device == p.peer)
        return "self";
    if (!p.can_access)
        return "- (host)";
    std::string text = link_name(p.link);
    if (p.hops >= 0)
        text += fmt::format(" {}h", p.hops);
    if (p.performance_rank >= 0)
        text += fmt::format(" r{}", p.performance_rank);
    return text;
}

} // namespace

int run_probe(const ProbeOptions &o)
{
    tidal_context *ctx = open_context(o.config, o.runtime);
    if (!ctx)
        return 1;
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    if (tidal_system_info_get(ctx, &sys) != TIDAL_OK) {
        fmt::print(stderr, "tidal: {}\n", tidal_last_error());
        tidal_context_destroy(ctx);
        return 1;
    }
    std::vector<tidal_device_info> devices;
    for (int32_t d = 0; d < sys.device_count; ++d) {
        tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
        if (tidal_device_info_get(ctx, d, &info) != TIDAL_OK) {
            fmt::print(stderr, "tidal: {}\n", tidal_last_error());
            tidal_context_destroy(ctx);
            return 1;
        }
        devices.push_back(info);
    }
    // The peer matrix, row = the device that reaches, column = the memory it reaches.
    std::vector<tidal_peer_info> peers;
    for (int32_t a = 0; a < sys.device_count; ++a)
        for (int32_t b = 0; b < sys.device_count; ++b) {
            tidal_peer_info p = TIDAL_PEER_INFO_INIT;
            if (tidal_peer_info_get(ctx, a, b, &p) != TIDAL_OK) {
                fmt::print(stderr, "tidal: {}\n", tidal_last_error());
                tidal_context_destroy(ctx);
                return 1;
            }
            peers.push_back(p);
        }
    tidal_context_destroy(ctx);

    if (o.json) {
        nlohmann::json j;
        j["tidal_version"] = tidal_version_string();
        j["runtime"] = sys.runtime;
        j["runtime_detail"] = sys.runtime_detail;
        j["job"] = {{"rank", sys.rank},
                    {"local_rank", sys.local_rank},
                    {"local_rank_device", local_rank_device(sys)},
                    {"default_device", sys.default_device}};
        j["devices"] = nlohmann::json::array();
        for (const auto &d : devices) {
            j["devices"].push_back({
                {"index", d.index},
                {"name", d.name},
                {"arch", d.arch},
                {"simulated", (d.flags & TIDAL_DEVICE_FLAG_SIMULATED) != 0},
                {"total_memory", d.total_memory},
                {"free_memory", d.free_memory},
                {"page_size", d.page_size},
                {"l2_size", d.l2_size},
                {"managed", (d.flags & TIDAL_DEVICE_FLAG_MANAGED) != 0},
                {"concurrent_managed", (d.flags & TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED) != 0},
                {"pageable_access", (d.flags & TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS) != 0},
                {"migrates_on_fault", (d.flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT) != 0},
                {"host_native_atomics", (d.flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS) != 0},
                {"fine_grained_kinds", (d.flags & TIDAL_DEVICE_FLAG_FINE_GRAINED) != 0},
                {"xnack", xnack_name(d.xnack)},
                {"numa_node", d.numa_node},
                {"pci_bus_id", d.pci_bus_id},
                {"local_cpus", d.local_cpus},
                {"peer_mask", d.peer_mask},
            });
            if (o.batch_hint_sample)
                j["devices"].back()["batch_hint"] = {{"sample_bytes", o.batch_hint_sample},
                                                     {"batch", batch_hint(d.l2_size, o.batch_hint_sample)},
                                                     {"heuristic", "L2 size / (2 x sample size), from the ROCm guidance"}};
        }
        j["peers"] = nlohmann::json::array();
        for (const auto &p : peers)
            j["peers"].push_back({
                {"device", p.device},
                {"peer", p.peer},
                {"can_access", p.can_access != 0},
                {"link", link_name(p.link)},
                {"hops", p.hops},
                {"performance_rank", p.performance_rank},
                {"bandwidth_gbs", p.bandwidth},
                {"latency_us", p.latency_us},
            });
        fmt::print("{}\n", j.dump(2));
        return 0;
    }
    fmt::print("tidal {}\nruntime: {} ({})\ndevices: {}\n", tidal_version_string(), sys.runtime, sys.runtime_detail,
               sys.device_count);
    if (sys.local_rank >= 0 || sys.rank >= 0)
        fmt::print("job: rank {}, local rank {}: device_selection = \"local-rank\" picks device {}\n",
                   sys.rank >= 0 ? std::to_string(sys.rank) : "unknown",
                   sys.local_rank >= 0 ? std::to_string(sys.local_rank) : "unknown", local_rank_device(sys));
    else
        fmt::print("job: no rank in the environment (one process; device_selection = \"local-rank\" picks device 0)\n");
    fmt::print("default device: {}\n", sys.default_device >= 0
                                           ? fmt::format("{} (device_selection = \"local-rank\")", sys.default_device)
                                           : std::string("chosen by the policy chain (device_selection = \"first\"; "
                                                         "the core's default is device 0)"));
    for (const auto &d : devices) {
        const bool simulated = d.flags & TIDAL_DEVICE_FLAG_SIMULATED;
        fmt::print("\ndevice {}: {}{}\n", d.index, d.name, simulated ? "  [SIMULATED DEVICE: no GPU is used]" : "");
        fmt::print("  arch                 {}\n", d.arch);
        fmt::print("  memory               {} total, {} free\n", bytes(d.total_memory), bytes(d.free_memory));
        fmt::print("  migration page size  {}\n", bytes(d.page_size));
        fmt::print("  L2 cache             {}\n", d.l2_size ? bytes(d.l2_size) : "unknown");
        fmt::print("  managed memory       {} (concurrent access attribute: {})\n", yes(d.flags & TIDAL_DEVICE_FLAG_MANAGED),
                   yes(d.flags & TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED));
        fmt::print("  migrates on fault    {}\n", yes(d.flags & TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT));
        fmt::print("  pageable access      {}\n", yes(d.flags & TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS));
        fmt::print("  XNACK                {}\n", xnack_name(d.xnack));
        fmt::print("  fine/coarse kinds    {}\n", yes(d.flags & TIDAL_DEVICE_FLAG_FINE_GRAINED));
        fmt::print("  host native atomics  {}\n", yes(d.flags & TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS));
        fmt::print("  NUMA node            {}{}\n", d.numa_node >= 0 ? std::to_string(d.numa_node) : "unknown",
                   d.local_cpus[0] ? fmt::format(" (CPUs {})", d.local_cpus) : std::string());
        fmt::print("  PCI bus id           {}\n", d.pci_bus_id[0] ? d.pci_bus_id : "unknown");
        if (o.batch_hint_sample) {
            const uint64_t b = batch_hint(d.l2_size, o.batch_hint_sample);
            fmt::print("  batch hint           {} (heuristic: L2 {} / (2 x {} per sample), ROCm guidance)\n",
                       b ? std::to_string(b) : "unknown (no L2 size)", bytes(d.l2_size), bytes(o.batch_hint_sample));
        }
    }
    const int32_t n = sys.device_count;
    fmt::print("\npeer matrix (row reaches column's memory; link, hops h, rank r; - = through host memory):\n");
    fmt::print("{:>8}", "");
    for (int32_t b = 0; b < n; ++b)
        fmt::print("{:>16}", fmt::format("device {}", b));
    fmt::print("\n");
    for (int32_t a = 0; a < n; ++a) {
        fmt::print("{:>8}", fmt::format("device {}", a));
        for (int32_t b = 0; b < n; ++b)
            fmt::print("{:>16}", cell(peers[static_cast<size_t>(a * n + b)]));
        fmt::print("\n");
    }
    return 0;
}

} // namespace tidal_tool
