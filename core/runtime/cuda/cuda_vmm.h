/* The driver's virtual-memory API (cuMemAddressReserve, cuMemCreate, cuMemMap, ...), reached
 * through the runtime's cudaGetDriverEntryPointByVersion so that the module links only
 * cudart: <cudaTypedefs.h> gives the function-pointer types, and no libcuda symbol is ever
 * referenced. Resolved once at create(); a driver that lacks any of them leaves the group
 * incomplete, and every vmm entry point then answers cudaErrorNotSupported. */
#ifndef TIDAL_RUNTIME_CUDA_CUDA_VMM_H
#define TIDAL_RUNTIME_CUDA_CUDA_VMM_H

#include <cudaTypedefs.h>

namespace tidal::cuda {

struct DriverVmm {
    PFN_cuMemGetAllocationGranularity_v10020 get_granularity = nullptr;
    PFN_cuMemAddressReserve_v10020 address_reserve = nullptr;
    PFN_cuMemAddressFree_v10020 address_free = nullptr;
    PFN_cuMemCreate_v10020 create = nullptr;
    PFN_cuMemRelease_v10020 release = nullptr;
    PFN_cuMemMap_v10020 map = nullptr;
    PFN_cuMemUnmap_v10020 unmap = nullptr;
    PFN_cuMemSetAccess_v10020 set_access = nullptr;

    /* Every entry point was found: the group works (or fails per call with the driver's code). */
    bool complete() const noexcept
    {
        return get_granularity && address_reserve && address_free && create && release && map && unmap &&
               set_access;
    }

    /* Looks the entry points up in the driver the runtime loaded. Never fails: what is
     * missing stays NULL. */
    static DriverVmm resolve() noexcept;
};

} // namespace tidal::cuda

#endif /* TIDAL_RUNTIME_CUDA_CUDA_VMM_H */
