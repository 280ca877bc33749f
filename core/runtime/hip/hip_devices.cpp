#include "hip_devices.h"

#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "hip_device_scope.h"
#include "hip_entry_points.h"
#include "hip_errors.h"
#include "hip_instance.h"

namespace tidal::hip {

namespace {

// Copies a fixed-size, possibly unterminated C field into another, always terminating.
template <std::size_t N, std::size_t M>
void copy_field(char (&dst)[N], const char (&src)[M]) noexcept
{
    const std::size_t length = std::min(strnlen(src, M), N - 1);
    std::memcpy(dst, src, length);
    dst[length] = '\0';
}

// An attribute's value, or `fallback` when this HIP does not answer for it (several are
// "CUDA only" on AMD and fail with hipErrorInvalidValue). The failure is not an error of the
// device, so it is cleared from the thread's last error.
int attribute_or(hipDeviceAttribute_t attribute, int device, int fallback) noexcept
{
    int value = 0;
    if (hipDeviceGetAttribute(&value, attribute, device) != hipSuccess) {
        (void)hipGetLastError();
        return fallback;
    }
    return value;
}

} // namespace

int query_device(int32_t device, const char *hsa_xnack_env, DeviceRecord &out)
{
    hipDeviceProp_t hp{};
    if (const hipError_t rc = hipGetDeviceProperties(&hp, device); rc != hipSuccess)
        return rc;

    tidal_rt_device_props &p = out.props;
    p = tidal_rt_device_props{};
    p.struct_size = sizeof(tidal_rt_device_props);
    copy_field(p.name, hp.name);
    copy_field(p.arch, hp.gcnArchName);

    char bus_id[sizeof p.pci_bus_id] = {};
    if (hipDeviceGetPCIBusId(bus_id, static_cast<int>(sizeof bus_id), device) == hipSuccess)
        copy_field(p.pci_bus_id, bus_id);
    else
        (void)hipGetLastError(); // "" = unknown; the core then leaves the NUMA node at -1

    p.total_memory = hp.totalGlobalMem;
    p.page_size = kSvmGranularity;
    p.l2_size = hp.l2CacheSize > 0 ? static_cast<uint64_t>(hp.l2CacheSize) : 0u;

    // Reported as HIP reports them; on AMD they read 1 with XNACK off, so nothing below uses
    // managed / concurrent_managed to decide migration.
    p.managed = attribute_or(hipDeviceAttributeManagedMemory, device, 0);
    p.concurrent_managed = attribute_or(hipDeviceAttributeConcurrentManagedAccess, device, 0);
    const int pageable = attribute_or(hipDeviceAttributePageableMemoryAccess, device, -1);
    p.pageable_access = pageable > 0 ? 1 : 0;
    // The enum exists in HIP 5.2.3 but is documented "CUDA only": AMD answers 0 or fails.
    p.host_native_atomics =
        attribute_or(hipDeviceAttributeHostNativeAtomicSupported, device, 0) > 0 ? 1 : 0;
    // Every AMD device with HIP has fine-grained and coarse-grained memory pools.
    p.fine_grained = 1;

    out.xnack = classify_xnack(std::string_view(p.arch), pageable, hsa_xnack_env);
    p.xnack = static_cast<int32_t>(out.xnack.state);
    p.migrates_on_fault = out.xnack.state == XnackState::on ? 1 : 0;
    p.numa_node = -1; // no HIP attribute; the core finds it from pci_bus_id with hwloc
    p.simulated = 0;
    return hipSuccess;
}

int rt_device_count(void *rt, int32_t *count) noexcept
{
    return guarded([&] {
        *count = HipInstance::of(rt).device_count();
        return hipSuccess;
    });
}

int rt_device_props(void *rt, int32_t device, tidal_rt_device_props *props) noexcept
{
    return guarded([&] {
        // Honour the caller's struct_size: write only the fields both sides know.
        const std::size_t asked = props->struct_size;
        if (asked != 0 && asked < sizeof props->struct_size)
            return hipErrorInvalidValue;
        const std::size_t size =
            asked == 0 ? sizeof(tidal_rt_device_props) : std::min(asked, sizeof(tidal_rt_device_props));
        tidal_rt_device_props copy = HipInstance::of(rt).device(device).props;
        copy.struct_size = size;
        std::memcpy(props, &copy, size);
        return hipSuccess;
    });
}

int rt_mem_info(void *, int32_t device, uint64_t *free_bytes, uint64_t *total_bytes) noexcept
{
    return guarded([&] {
        const DeviceScope scope(device); // hipMemGetInfo answers for the current device
        if (scope.status() != hipSuccess)
            return scope.status();
        size_t free_now = 0;
        size_t total = 0;
        const hipError_t rc = hipMemGetInfo(&free_now, &total);
        if (rc == hipSuccess) {
            *free_bytes = free_now;
            *total_bytes = total;
        }
        return rc;
    });
}

int rt_device_synchronize(void *, int32_t device) noexcept
{
    return guarded([&] {
        const DeviceScope scope(device);
        if (scope.status() != hipSuccess)
            return scope.status();
        return hipDeviceSynchronize();
    });
}

} // namespace tidal::hip
