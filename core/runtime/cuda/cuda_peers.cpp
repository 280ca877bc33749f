/* Peer access between two devices: what links them, enabling access, and copies. CUDA's
 * runtime names no link type or hop count (NVML would, and the module links nothing else):
 * those stay unknown, and the P2P attributes give access and the performance rank. */
#include "cuda_device_scope.h"
#include "cuda_entry_points.h"

namespace tidal::cuda {

int rt_peer_info(void *, int32_t device, int32_t peer, tidal_rt_peer_info *info) noexcept
{
    int can = 0;
    cudaError_t status = cudaDeviceCanAccessPeer(&can, device, peer);
    if (status != cudaSuccess)
        return settle(status);
    info->can_access = can != 0 ? 1 : 0;
    info->link_type = can != 0 ? TIDAL_LINK_UNKNOWN : TIDAL_LINK_NONE;
    info->hops = -1;
    info->performance_rank = -1;
    if (can != 0) {
        int rank = -1;
        status = cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, device, peer);
        if (status != cudaSuccess)
            return settle(status);
        info->performance_rank = rank;
    }
    return static_cast<int>(cudaSuccess);
}

int rt_peer_enable(void *, int32_t device, int32_t peer) noexcept
{
    DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
    if (status == cudaErrorPeerAccessAlreadyEnabled) { /* the application did it first: fine */
        (void)cudaGetLastError();
        return static_cast<int>(cudaSuccess);
    }
    return settle(status);
}

int rt_memcpy_peer(void *, void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size,
                   void *stream) noexcept
{
    if (stream == nullptr)
        return settle(cudaMemcpyPeer(dst, dst_device, src, src_device, size));
    return settle(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, size, as_stream(stream)));
}

} // namespace tidal::cuda
