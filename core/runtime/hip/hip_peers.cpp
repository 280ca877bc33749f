// Peer access between two devices for the HIP module: link type and hops from
// hipExtGetLinkTypeAndHopCount (HSA's link types: XGMI or PCIe), access from
// hipDeviceCanAccessPeer, enabling and copies.
#include <hip/hip_runtime_api.h>

#include "hip_device_scope.h"
#include "hip_entry_points.h"
#include "hip_errors.h"

namespace tidal::hip {
namespace {

// hsa_amd_link_info_type_t (hsa_ext_amd.h) -> tidal_link_type.
int32_t link_type_of(uint32_t hsa)
{
    switch (hsa) {
    case 2: return TIDAL_LINK_PCIE; // HSA_AMD_LINK_INFO_TYPE_PCIE
    case 4: return TIDAL_LINK_XGMI; // HSA_AMD_LINK_INFO_TYPE_XGMI
    default: return TIDAL_LINK_UNKNOWN;
    }
}

} // namespace

int rt_peer_info(void *, int32_t device, int32_t peer, tidal_rt_peer_info *info) noexcept
{
    return guarded([&] {
        int can = 0;
        if (const hipError_t rc = hipDeviceCanAccessPeer(&can, device, peer); rc != hipSuccess)
            return rc;
        uint32_t type = 0, hops = 0;
        if (const hipError_t rc = hipExtGetLinkTypeAndHopCount(device, peer, &type, &hops); rc != hipSuccess)
            return rc;
        info->can_access = can != 0 ? 1 : 0;
        info->link_type = link_type_of(type);
        info->hops = static_cast<int32_t>(hops);
        info->performance_rank = -1; // HIP ranks no pair
        return hipSuccess;
    });
}

int rt_peer_enable(void *, int32_t device, int32_t peer) noexcept
{
    return guarded([&] {
        DeviceScope scope(device);
        if (scope.status() != hipSuccess)
            return scope.status();
        const hipError_t rc = hipDeviceEnablePeerAccess(peer, 0);
        if (rc == hipErrorPeerAccessAlreadyEnabled) { // the application did it first: fine
            (void)hipGetLastError();
            return hipSuccess;
        }
        return rc;
    });
}

int rt_memcpy_peer(void *, void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size,
                   void *stream) noexcept
{
    return guarded([&] {
        if (stream == nullptr)
            return hipMemcpyPeer(dst, dst_device, src, src_device, size);
        return hipMemcpyPeerAsync(dst, dst_device, src, src_device, size, static_cast<hipStream_t>(stream));
    });
}

} // namespace tidal::hip
