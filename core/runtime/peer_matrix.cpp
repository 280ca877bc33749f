#include "runtime/peer_matrix.h"

#include <fmt/format.h>

#include "runtime/topology.h"

namespace tidal {

PeerMatrix::PeerMatrix(Runtime &runtime)
    : runtime_(runtime), devices_(runtime.device_count()),
      links_(static_cast<size_t>(devices_) * static_cast<size_t>(devices_)),
      enabled_(std::make_unique<std::atomic<bool>[]>(links_.size()))
{
    const bool peer = runtime_.supports(RuntimeOp::peer);
    for (int32_t a = 0; a < devices_; ++a) {
        for (int32_t b = 0; b < devices_; ++b) {
            tidal_rt_peer_info &l = links_[index(a, b)];
            l = {};
            l.struct_size = sizeof l;
            l.hops = -1;
            l.performance_rank = -1;
            l.link_type = TIDAL_LINK_NONE;
            if (a == b) {
                l.can_access = 1;
                l.link_type = TIDAL_LINK_SAME;
                l.hops = 0;
                l.performance_rank = 0;
            } else if (peer) {
                l = runtime_.peer_info(a, b, [&] { return fmt::format("reading how device {} reaches device {}", a, b); });
            }
        }
        local_cpus_.push_back(Topology::cpus_of_numa_node(runtime_.props(a).numa_node));
    }
}

uint64_t PeerMatrix::peer_mask(int32_t device) const
{
    uint64_t mask = 0;
    for (int32_t p = 0; p < devices_ && p < 64; ++p)
        if (can_access(device, p))
            mask |= uint64_t{1} << p;
    return mask;
}

void PeerMatrix::enable(int32_t a, int32_t b)
{
    if (enabled(a, b))
        return;
    std::lock_guard lock(enable_mutex_);
    if (enabled(a, b))
        return;
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}})
        if (can_access(from, to))
            runtime_.peer_enable(from, to, [&, from = from, to = to] {
                return fmt::format("enabling peer access from device {} to device {}", from, to);
            });
    enabled_[index(a, b)].store(true, std::memory_order_release);
    enabled_[index(b, a)].store(true, std::memory_order_release);
}

} // namespace tidal
