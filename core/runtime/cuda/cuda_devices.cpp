/* What the CUDA runtime says about each device, translated into tidal's terms. */
#include <cstdio>
#include <cstring>

#include "cuda_instance.h"
#include "cuda_device_scope.h"
#include "cuda_entry_points.h"

namespace tidal::cuda {
namespace {

/* NVIDIA UVM migrates managed memory in 2 MiB virtual-address blocks (populated in 64 KiB
 * big pages): the block is what a prefetch or an eviction moves as a unit. */
constexpr uint64_t kUvmBlockSize = 2ull << 20;

/* An attribute the caller can do without: 0 when the runtime cannot say. */
int32_t attribute_or_zero(cudaDeviceAttr attr, int device)
{
    int value = 0;
    if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return value;
}

/* The host NUMA node closest to the GPU: where pinned staging buffers for it belong. (The
 * GPU's own node, cudaDevAttrNumaId, only exists when GPU memory is a NUMA node itself, as on
 * Grace Hopper.) -1 when unknown — a VM reports -1 — so the core can ask hwloc instead. */
int32_t host_numa_node(int device)
{
#if CUDART_VERSION >= 12020
    int node = -1;
    if (cudaDeviceGetAttribute(&node, cudaDevAttrHostNumaId, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return node >= 0 ? node : -1;
#else
    (void)device;
    return -1;
#endif
}

void copy_text(char *out, size_t capacity, const char *text)
{
    const size_t length = strnlen(text, capacity - 1); /* a longer name is cut, not overrun */
    std::memcpy(out, text, length);
    out[length] = '\0';
}

} // namespace

int rt_device_count(void *rt, int32_t *count) noexcept
{
    *count = instance(rt).device_count;
    return static_cast<int>(cudaSuccess);
}

int rt_device_props(void *, int32_t device, tidal_rt_device_props *props) noexcept
{
    cudaDeviceProp prop{};
    const cudaError_t status = cudaGetDeviceProperties(&prop, device);
    if (status != cudaSuccess)
        return settle(status);

    tidal_rt_device_props out{};
    out.struct_size = sizeof out;
    copy_text(out.name, sizeof out.name, prop.name);
    std::snprintf(out.arch, sizeof out.arch, "sm_%d%d", prop.major, prop.minor);
    if (cudaDeviceGetPCIBusId(out.pci_bus_id, static_cast<int>(sizeof out.pci_bus_id), device) != cudaSuccess) {
        (void)cudaGetLastError();
        out.pci_bus_id[0] = '\0';
    }
    out.total_memory = prop.totalGlobalMem;
    out.page_size = kUvmBlockSize;
    out.l2_size = prop.l2CacheSize > 0 ? static_cast<uint64_t>(prop.l2CacheSize) : 0;
    out.managed = attribute_or_zero(cudaDevAttrManagedMemory, device);
    out.concurrent_managed = attribute_or_zero(cudaDevAttrConcurrentManagedAccess, device);
    out.pageable_access = attribute_or_zero(cudaDevAttrPageableMemoryAccess, device);
    /* Unlike AMD's, NVIDIA's concurrentManagedAccess does mean fault-driven migration (Pascal
     * and later on Linux); without it managed memory is migrated wholesale at launch. */
    out.migrates_on_fault = out.concurrent_managed;
    out.host_native_atomics = attribute_or_zero(cudaDevAttrHostNativeAtomicSupported, device);
    out.fine_grained = 0;
    out.xnack = 0; /* TIDAL_XNACK_NOT_APPLICABLE */
    out.numa_node = host_numa_node(device);
    out.simulated = 0;

    /* Write only what the caller's struct holds (0 = the caller did not say: same tree, full size). */
    const size_t room = props->struct_size == 0 || props->struct_size > sizeof out ? sizeof out
                                                                                  : props->struct_size;
    std::memcpy(props, &out, room);
    props->struct_size = room;
    return static_cast<int>(cudaSuccess);
}

int rt_mem_info(void *, int32_t device, uint64_t *free_bytes, uint64_t *total_bytes) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    size_t free_now = 0;
    size_t total = 0;
    const cudaError_t status = cudaMemGetInfo(&free_now, &total);
    if (status != cudaSuccess)
        return settle(status);
    *free_bytes = free_now;
    *total_bytes = total;
    return static_cast<int>(cudaSuccess);
}

} // namespace tidal::cuda
