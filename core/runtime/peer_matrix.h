// Which device reaches which, read once when the context starts: per pair the runtime's answer
// (peer capable, link type, hops, rank; the simulated profile's bandwidth and latency), per
// device the PCI bus id, NUMA node and that node's CPUs. Peer access is enabled lazily, the
// first time a copy needs a pair, in both directions at once, and never disabled: the runtimes
// keep it for the process, and enabling costs a driver call worth keeping off the copy path.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/runtime.h"

namespace tidal {

class PeerMatrix {
public:
    // Throws the runtime's translated error when a pair cannot be read.
    explicit PeerMatrix(Runtime &runtime);

    int32_t devices() const noexcept { return devices_; }
    // Requires 0 <= a, b < devices(); a == b is the device itself (can_access, SAME, 0 hops).
    const tidal_rt_peer_info &link(int32_t a, int32_t b) const { return links_[index(a, b)]; }
    bool can_access(int32_t a, int32_t b) const { return link(a, b).can_access != 0; }
    // Bit p: `device` reaches device p's memory directly.
    uint64_t peer_mask(int32_t device) const;
    bool enabled(int32_t a, int32_t b) const
    {
        return a == b || enabled_[index(a, b)].load(std::memory_order_acquire);
    }
    // Enables peer access between a and b (each way the pair allows) unless done before. The
    // caller checked can_access(a, b). Throws the runtime's error, naming both devices.
    void enable(int32_t a, int32_t b);
    // The CPUs of the device's NUMA node ("0-15,32-47"), "" when unknown.
    const std::string &local_cpus(int32_t device) const { return local_cpus_.at(static_cast<size_t>(device)); }

private:
    size_t index(int32_t a, int32_t b) const
    {
        return static_cast<size_t>(a) * static_cast<size_t>(devices_) + static_cast<size_t>(b);
    }

    Runtime &runtime_;
    int32_t devices_;
    std::vector<tidal_rt_peer_info> links_;
    std::unique_ptr<std::atomic<bool>[]> enabled_;
    std::mutex enable_mutex_; // one enabling at a time: the pair's flag is set once it is done
    std::vector<std::string> local_cpus_;
};

} // namespace tidal
