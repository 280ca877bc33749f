/* The virtual-memory group (runtime_contract.h, vmm_*) over the driver's cuMem* calls, from
 * which the core builds elastic device memory. A physical chunk is a
 * CUmemGenericAllocationHandle (a 64-bit integer) carried in the void* of the contract. */
#include <cstdint>

#include "cuda_device_scope.h"
#include "cuda_entry_points.h"
#include "cuda_instance.h"
#include "cuda_vmm.h"

namespace tidal::cuda {
namespace {

/* The ABI of the cuMem* calls has not changed since CUDA 10.2 (the _v10020 types); asking as
 * of CUDA 12.0 is what every driver that runs a CUDA 12 or 13 runtime answers for. */
constexpr unsigned int kDriverApiVersion = 12000;


static_assert(sizeof(CUmemGenericAllocationHandle) <= sizeof(void *),
              "a chunk handle must fit in the contract's void*");

template <typename Fn>
void look_up(const char *symbol, Fn &out) noexcept
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, kDriverApiVersion, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return;
    }
    out = reinterpret_cast<Fn>(fn);
}

/* The driver's CUresult as the module's native code. */
int settled(CUresult result) noexcept { return settle(from_driver(result)); }

void *as_chunk(CUmemGenericAllocationHandle handle) noexcept
{
    return reinterpret_cast<void *>(static_cast<uintptr_t>(handle));
}

CUmemGenericAllocationHandle as_handle(void *chunk) noexcept
{
    return static_cast<CUmemGenericAllocationHandle>(reinterpret_cast<uintptr_t>(chunk));
}

CUdeviceptr as_address(void *ptr) noexcept { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr)); }

/* Device-local memory the process alone can reach (no shareable handle): what cudaMalloc
 * gives, and what the granularity is asked for, so chunks and reservations agree. */
CUmemAllocationProp device_local(int32_t device) noexcept
{
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    return prop;
}

int granularity_of(const DriverVmm &vmm, int32_t device, size_t *bytes) noexcept
{
    const CUmemAllocationProp prop = device_local(device);
    return settled(vmm.get_granularity(bytes, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
}

/* Runs `body` with the driver's entry points, or answers cudaErrorNotSupported where this
 * driver has none (the core's vmm_granularity says so in its error: Runtime::vmm_granularity). */
template <typename Body>
int with_vmm(void *rt, Body &&body) noexcept
{
    const DriverVmm &vmm = instance(rt).vmm;
    if (!vmm.complete())
        return static_cast<int>(cudaErrorNotSupported);
    return body(vmm);
}

/* The same, with `device` current for the call. */
template <typename Body>
int with_vmm_on(void *rt, int32_t device, Body &&body) noexcept
{
    return with_vmm(rt, [&](const DriverVmm &vmm) {
        const DeviceScope scope(device);
        if (scope.status() != cudaSuccess)
            return settle(scope.status());
        return body(vmm);
    });
}

} // namespace

DriverVmm DriverVmm::resolve() noexcept
{
    DriverVmm vmm;
    look_up("cuMemGetAllocationGranularity", vmm.get_granularity);
    look_up("cuMemAddressReserve", vmm.address_reserve);
    look_up("cuMemAddressFree", vmm.address_free);
    look_up("cuMemCreate", vmm.create);
    look_up("cuMemRelease", vmm.release);
    look_up("cuMemMap", vmm.map);
    look_up("cuMemUnmap", vmm.unmap);
    look_up("cuMemSetAccess", vmm.set_access);
    return vmm;
}

int rt_vmm_granularity(void *rt, int32_t device, uint64_t *bytes) noexcept
{
    return with_vmm_on(rt, device, [&](const DriverVmm &vmm) {
        size_t granularity = 0;
        const int status = granularity_of(vmm, device, &granularity);
        if (status == cudaSuccess)
            *bytes = granularity;
        return status;
    });
}

int rt_vmm_reserve(void *rt, int32_t device, size_t size, void **ptr) noexcept
{
    return with_vmm_on(rt, device, [&](const DriverVmm &vmm) {
        /* Aligned to the granularity explicitly: alignment 0 means the driver's default,
         * which the documentation does not promise to be the chunk size. */
        size_t alignment = 0;
        if (const int status = granularity_of(vmm, device, &alignment); status != cudaSuccess)
            return status;
        CUdeviceptr address = 0;
        if (const CUresult result = vmm.address_reserve(&address, size, alignment, 0, 0); result != CUDA_SUCCESS)
            return settled(result);
        *ptr = reinterpret_cast<void *>(static_cast<uintptr_t>(address));
        return static_cast<int>(cudaSuccess);
    });
}

int rt_vmm_release(void *rt, void *ptr, size_t size) noexcept
{
    return with_vmm(rt, [&](const DriverVmm &vmm) { return settled(vmm.address_free(as_address(ptr), size)); });
}

int rt_vmm_create(void *rt, int32_t device, size_t size, void **chunk) noexcept
{
    return with_vmm_on(rt, device, [&](const DriverVmm &vmm) {
        const CUmemAllocationProp prop = device_local(device);
        CUmemGenericAllocationHandle handle = 0;
        if (const CUresult result = vmm.create(&handle, size, &prop, 0); result != CUDA_SUCCESS)
            return settled(result);
        *chunk = as_chunk(handle);
        return static_cast<int>(cudaSuccess);
    });
}

int rt_vmm_destroy(void *rt, void *chunk) noexcept
{
    return with_vmm(rt, [&](const DriverVmm &vmm) { return settled(vmm.release(as_handle(chunk))); });
}

int rt_vmm_map(void *rt, void *ptr, size_t size, void *chunk) noexcept
{
    return with_vmm(rt, [&](const DriverVmm &vmm) {
        return settled(vmm.map(as_address(ptr), size, 0, as_handle(chunk), 0));
    });
}

int rt_vmm_set_access(void *rt, int32_t device, void *ptr, size_t size) noexcept
{
    return with_vmm_on(rt, device, [&](const DriverVmm &vmm) {
        /* One call for the whole span, however many chunks it covers: on the H200 that took
         * 1.8 us, against about 25 us per chunk when set chunk by chunk. */
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        return settled(vmm.set_access(as_address(ptr), size, &access, 1));
    });
}

int rt_vmm_unmap(void *rt, void *ptr, size_t size) noexcept
{
    return with_vmm(rt, [&](const DriverVmm &vmm) { return settled(vmm.unmap(as_address(ptr), size)); });
}

} // namespace tidal::cuda
