// The operation names a [[sim.fault]] may name: one list for the configuration reader, which
// refuses any other, and the simulated device's fault injector, whose Operation enum follows
// this order. Each is a tidal_rt_ops entry point of the simulated device (runtime_contract.h)
// by its member name (the vmm_* group too), except "register" and "unregister" (host_register, host_unregister),
// "create" (sim_create, so context creation fails) and "kernel" (every kernel_* entry point).
#pragma once

#include <array>
#include <string_view>

namespace tidal {

inline constexpr std::array<std::string_view, 43> kFaultOperations = {
    "alloc", "free", "prefetch", "advise", "memcpy", "memset", "register", "create", "kernel",
    "unregister", "device_count", "device_props", "mem_info", "pointer_kind", "query_range",
    "stream_create", "stream_destroy", "stream_synchronize", "event_create", "event_destroy",
    "event_record", "stream_wait_event", "event_synchronize", "event_query", "event_elapsed_ms",
    "device_synchronize", "clock", "vmm_granularity", "vmm_reserve", "vmm_release", "vmm_create",
    "vmm_destroy", "vmm_map", "vmm_set_access", "vmm_unmap", "host_copy", "peer_info", "peer_enable", "memcpy_peer", "range_push", "range_pop",
    "paging_stats", "range_paging",
};

} // namespace tidal
