// SimRuntime's device queries: how many, what each is, and how much memory is free.
#include "runtime/sim/sim_runtime.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/sim/sim_errors.h"

namespace tidal::sim {

namespace {

// gcnArchName carries the XNACK mode as a suffix, and code that checks for ":xnack+" should
// see the simulated mode, not whatever the profile was measured with.
std::string amd_arch(std::string arch, bool xnack)
{
    for (const char *suffix : {":xnack+", ":xnack-"})
        if (auto at = arch.find(suffix); at != std::string::npos)
            arch.erase(at, std::strlen(suffix));
    return arch + (xnack ? ":xnack+" : ":xnack-");
}

// hostNativeAtomicSupported as the profile says ([device] host_native_atomics; the H200
// reports 0, an absent flag reads false). The one reading of it.
bool host_native_atomics(const SimProfile &profile)
{
    return profile.host_native_atomics;
}

} // namespace

int SimRuntime::device_count(int32_t *count) const
{
    Lock lock(*this);
    if (int e = injected(Operation::device_count))
        return e;
    if (count == nullptr)
        return kInvalidValue;
    *count = devices_;
    return kSuccess;
}

int SimRuntime::device_props(int32_t device, tidal_rt_device_props *props) const
{
    Lock lock(*this);
    if (int e = injected(Operation::device_props))
        return e;
    if (props == nullptr)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    tidal_rt_device_props p{};
    p.struct_size = sizeof p;
    std::snprintf(p.name, sizeof p.name, "%s", profile_.device_name.c_str());
    const std::string arch = amd_ ? amd_arch(profile_.arch, xnack_) : profile_.arch;
    std::snprintf(p.arch, sizeof p.arch, "%s", arch.c_str());
    p.total_memory = capacity_;
    p.page_size = page_size_;
    p.l2_size = profile_.l2_size;
    p.managed = 1;
    p.concurrent_managed = 1;
    // H200 has no HMM; on AMD pageable access is exactly the XNACK mode (hip-memory-facts).
    p.pageable_access = amd_ && xnack_ ? 1 : 0;
    p.migrates_on_fault = xnack_ ? 1 : 0;
    p.host_native_atomics = host_native_atomics(profile_) ? 1 : 0;
    p.fine_grained = amd_ ? 1 : 0;
    p.xnack = amd_ ? (xnack_ ? TIDAL_XNACK_ON : TIDAL_XNACK_OFF) : TIDAL_XNACK_NOT_APPLICABLE;
    // The profile's host NUMA node for the device: real host nodes, so that binding staging
    // memory to them can be tested on the simulated device.
    p.numa_node = static_cast<std::size_t>(device) < profile_.numa_nodes.size()
                      ? profile_.numa_nodes[static_cast<std::size_t>(device)]
                      : -1;
    p.simulated = 1;
    // Domain ffff holds no real device, so hwloc finds no NUMA node for it on the host.
    std::snprintf(p.pci_bus_id, sizeof p.pci_bus_id, "ffff:%02x:00.0", static_cast<unsigned>(device));
    *props = p;
    return kSuccess;
}

int SimRuntime::mem_info(int32_t device, uint64_t *free_bytes, uint64_t *total_bytes) const
{
    Lock lock(*this);
    if (int e = injected(Operation::mem_info))
        return e;
    if (free_bytes == nullptr || total_bytes == nullptr)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    *free_bytes = capacity_ - resident_[static_cast<std::size_t>(device)];
    *total_bytes = capacity_;
    return kSuccess;
}

} // namespace tidal::sim
