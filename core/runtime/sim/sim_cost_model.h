// Simulated durations, in seconds, computed from a hardware profile's bandwidths and latencies.
#pragma once

#include <cstdint>

#include "config/settings.h"

namespace tidal::sim {

// How one end of a copy is reached: ordinary host memory, page-locked host memory (pinned
// allocations and registered ranges), or device memory (device kinds, and managed ranges that
// are resident on a device).
enum class Endpoint { pageable, pinned, device };

// Pure arithmetic: the model holds no state beyond the profile, so the runtime can call it
// under its lock and tests can predict every figure by hand. A bandwidth of 0 in a profile
// means "not measured" and costs no time (rather than dividing by zero); latencies are added
// once per operation.
class CostModel {
public:
    explicit CostModel(const SimProfile &profile) : p_(profile) {}

    // memcpy between the two endpoints: bandwidth by the (src, dst) pair, plus copy_latency.
    double copy(Endpoint src, Endpoint dst, uint64_t bytes) const;
    // The core's `threads` host threads copying `bytes` into or out of a pinned staging slot
    // (a staged pageable copy): all of them together at staging_memcpy_bw (else host_memcpy_bw),
    // each at most host_memcpy_thread_bw, so a host with few cores stages slower.
    double host_copy(uint64_t bytes, uint32_t threads) const;
    // memset of `bytes` at `dst`: device memory at d2d_bw, host memory at host_memcpy_bw.
    double fill(Endpoint dst, uint64_t bytes) const;
    // One prefetch call: bytes moved in each direction; zero bytes moved costs nothing.
    // `duplicated_bytes` of the host->device bytes were read-mostly pages copied rather than
    // moved (slower on the H200: 26 GB/s against 46).
    double prefetch(uint64_t h2d_bytes, uint64_t d2h_bytes, uint64_t peer_bytes, uint64_t duplicated_bytes = 0) const;
    // Collapsing `bytes` of read-mostly duplicates onto one copy (unsetting read-mostly advice):
    // host-synchronous driver work that copies nothing, at readmostly_collapse_bw.
    double collapse(uint64_t bytes) const { return transfer(bytes, p_.readmostly_collapse_bw); }
    // One serviced page fault that migrates (or duplicates) `bytes`.
    double fault(uint64_t bytes) const;
    // Kernel traffic to host memory the device reaches over the link (pinned, registered).
    double zero_copy(uint64_t bytes) const;
    // Kernel traffic to managed pages read over the link without migrating them (XNACK off,
    // or pages mapped remotely by advice): remote_managed, else zero_copy.
    double remote_managed(uint64_t bytes) const;
    // Kernel traffic to device memory (its own or a peer's).
    double device_traffic(uint64_t bytes) const;
    double kernel_launch() const { return p_.kernel_latency; }
    // Host-side latency of an allocation call of `kind` (tidal_kind).
    double alloc(int32_t kind) const;

    static double transfer(uint64_t bytes, double bandwidth)
    {
        return bandwidth > 0 ? static_cast<double>(bytes) / bandwidth : 0.0;
    }

private:
    SimProfile p_;
};

} // namespace tidal::sim
