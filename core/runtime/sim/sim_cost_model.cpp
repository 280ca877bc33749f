#include "runtime/sim/sim_cost_model.h"

#include <algorithm>

#include "tidal/tidal.h"

namespace tidal::sim {

double CostModel::copy(Endpoint src, Endpoint dst, uint64_t bytes) const
{
    // d2d_bw counts read and write traffic (as the H200's 4200 GB/s figure does), so a
    // device-to-device copy of N bytes moves 2N through it, like the copy kernel does.
    if (src == Endpoint::device && dst == Endpoint::device)
        return transfer(2 * bytes, p_.d2d_bw) + p_.copy_latency;
    double bandwidth = p_.host_memcpy_bw;
    if (dst == Endpoint::device)
        bandwidth = src == Endpoint::pinned ? p_.h2d_pinned_bw : p_.h2d_pageable_bw;
    else if (src == Endpoint::device)
        bandwidth = dst == Endpoint::pinned ? p_.d2h_pinned_bw : p_.d2h_pageable_bw;
    return transfer(bytes, bandwidth) + p_.copy_latency;
}

double CostModel::host_copy(uint64_t bytes, uint32_t threads) const
{
    double bandwidth = p_.staging_memcpy_bw > 0 ? p_.staging_memcpy_bw : p_.host_memcpy_bw;
    if (p_.host_memcpy_thread_bw > 0)
        bandwidth = std::min(bandwidth, p_.host_memcpy_thread_bw * std::max<uint32_t>(1, threads));
    return transfer(bytes, bandwidth);
}

double CostModel::fill(Endpoint dst, uint64_t bytes) const
{
    const double bandwidth = dst == Endpoint::device ? p_.d2d_bw : p_.host_memcpy_bw;
    return transfer(bytes, bandwidth) + p_.copy_latency;
}

double CostModel::prefetch(uint64_t h2d_bytes, uint64_t d2h_bytes, uint64_t peer_bytes, uint64_t duplicated_bytes) const
{
    if (h2d_bytes + d2h_bytes + peer_bytes == 0)
        return 0.0;
    const double duplicate_bw = p_.prefetch_h2d_duplicate_bw > 0 ? p_.prefetch_h2d_duplicate_bw : p_.prefetch_h2d_bw;
    duplicated_bytes = std::min(duplicated_bytes, h2d_bytes);
    return transfer(h2d_bytes - duplicated_bytes, p_.prefetch_h2d_bw) + transfer(duplicated_bytes, duplicate_bw) +
           transfer(d2h_bytes, p_.prefetch_d2h_bw) +
           transfer(peer_bytes, p_.d2d_bw) + p_.copy_latency;
}

double CostModel::fault(uint64_t bytes) const
{
    return transfer(bytes, p_.fault_bw) + p_.fault_latency;
}

double CostModel::zero_copy(uint64_t bytes) const { return transfer(bytes, p_.zero_copy_bw); }

double CostModel::remote_managed(uint64_t bytes) const
{
    return transfer(bytes, p_.remote_managed_bw > 0 ? p_.remote_managed_bw : p_.zero_copy_bw);
}

double CostModel::device_traffic(uint64_t bytes) const { return transfer(bytes, p_.d2d_bw); }

double CostModel::alloc(int32_t kind) const
{
    switch (kind) {
    case TIDAL_KIND_DEVICE:
    case TIDAL_KIND_DEVICE_FINE:
        return p_.alloc_latency_device;
    case TIDAL_KIND_PINNED:
        return p_.alloc_latency_pinned;
    case TIDAL_KIND_MANAGED:
    case TIDAL_KIND_MANAGED_COARSE:
        return p_.alloc_latency_managed;
    default:
        return 0.0; // malloc: not what the profile measures
    }
}

} // namespace tidal::sim
