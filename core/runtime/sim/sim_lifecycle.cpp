// SimRuntime's lifecycle: checking the settings, describing the device, and the call-count
// file the fault sweep reads when an instance goes.
#include "runtime/sim/sim_runtime.h"

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

namespace tidal::sim {

namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMiB = 1ull << 20;

std::string format_bytes(uint64_t bytes)
{
    char text[48];
    if (bytes >= kGiB && bytes % kGiB == 0)
        std::snprintf(text, sizeof text, "%llu GiB", static_cast<unsigned long long>(bytes / kGiB));
    else if (bytes >= kGiB)
        std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / kGiB);
    else if (bytes >= kMiB && bytes % kMiB == 0)
        std::snprintf(text, sizeof text, "%llu MiB", static_cast<unsigned long long>(bytes / kMiB));
    else if (bytes >= kMiB)
        std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / kMiB);
    else
        std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
    return text;
}

} // namespace

SimRuntime::SimRuntime(const SimSettings &settings)
    : profile_(settings.profile), devices_(settings.devices),
      capacity_(settings.capacity.value_or(settings.profile.capacity)),
      page_size_(settings.page_size.value_or(settings.profile.page_size)),
      xnack_(settings.xnack.value_or(settings.profile.xnack)),
      amd_(settings.profile.vendor == "amd"), vmm_granularity_(settings.profile.vmm_granularity),
      cost_(settings.profile), faults_(settings.faults)
{
    const std::string where = "simulated device (profile " + profile_.name + "): ";
    if (profile_.vendor != "amd" && profile_.vendor != "nvidia")
        throw std::invalid_argument(where + "vendor must be \"nvidia\" or \"amd\", not \"" +
                                    profile_.vendor + "\"");
    if (devices_ < 1 || devices_ > PageMask::kMaxDevices)
        throw std::invalid_argument(where + "devices must be 1.." +
                                    std::to_string(PageMask::kMaxDevices) + ", not " +
                                    std::to_string(devices_));
    if (capacity_ == 0)
        throw std::invalid_argument(where + "capacity is 0");
    if (page_size_ < 4096 || !std::has_single_bit(page_size_))
        throw std::invalid_argument(where + "page size must be a power of two >= 4096, not " +
                                    std::to_string(page_size_));
    // Chunks are mapped by the host's mmap, which works in whole host pages.
    const auto host_page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    if (vmm_granularity_ < host_page || !std::has_single_bit(vmm_granularity_))
        throw std::invalid_argument(where + "vmm granularity must be a power of two >= " +
                                    std::to_string(host_page) + ", not " +
                                    std::to_string(vmm_granularity_));
    resident_.assign(static_cast<std::size_t>(devices_), 0);
    counters_.assign(static_cast<std::size_t>(devices_), SimCounters{});
    link_h2d_.assign(static_cast<std::size_t>(devices_), 0.0);
    link_d2h_.assign(static_cast<std::size_t>(devices_), 0.0);
    peer_enabled_.assign(static_cast<std::size_t>(devices_) * static_cast<std::size_t>(devices_), 0);
    if (const char *v = std::getenv("TIDAL_SIM_SERIALIZE"); v != nullptr && std::strcmp(v, "0") == 0)
        serialize_ = false;
    if (const char *v = std::getenv("TIDAL_SIM_CALL_COUNTS"); v != nullptr && *v != '\0')
        call_counts_path_ = v;
}

SimRuntime::~SimRuntime()
{
    write_call_counts();
    for (SimStream *stream : streams_)
        delete stream;
    for (SimEvent *event : events_)
        delete event;
}

std::string SimRuntime::describe() const
{
    return "simulated: profile " + profile_.name + ", " + std::to_string(devices_) +
           " device(s), " + format_bytes(capacity_) + ", xnack " + (xnack_ ? "on" : "off");
}

void SimRuntime::write_call_counts() const noexcept
{
    if (call_counts_path_.empty())
        return;
    try {
        std::ofstream out(call_counts_path_, std::ios::trunc);
        for (std::size_t op = 0; op < kOperationCount; ++op)
            out << FaultInjector::name(static_cast<Operation>(op)) << ' '
                << faults_.calls(static_cast<Operation>(op)) << '\n';
    } catch (...) {
        // A test hook: the sweep notices the missing file.
    }
}

} // namespace tidal::sim
