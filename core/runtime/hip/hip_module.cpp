// tidal-runtime-hip.so: the ops table and the one exported symbol, tidal_runtime_negotiate.
// Everything else in the module has hidden visibility (and the version script makes sure).
// Each entry lives in the file of its concern (hip_lifecycle, hip_devices, hip_memory, ...).
#include "hip_entry_points.h"
#include "hip_errors.h"

// The validation kernels exist only when kernels/ built them with hipcc; otherwise their
// fields stay NULL and the core reports TIDAL_ERROR_NOT_SUPPORTED.
#ifdef TIDAL_HAVE_HIP_KERNELS
#define TIDAL_HIP_KERNEL(entry) entry
#else
#define TIDAL_HIP_KERNEL(entry) nullptr
#endif

namespace tidal::hip {

namespace {

constexpr tidal_rt_ops kHipOps = {
    .abi_version = TIDAL_RT_ABI_VERSION,
    .struct_size = sizeof(tidal_rt_ops),
    .name = "hip",
    .family = TIDAL_RT_FAMILY_HIP,
    .traits = 0,
    .create = rt_create,
    .destroy = rt_destroy,
    .error_name = rt_error_name,
    .error_string = rt_error_string,
    .device_count = rt_device_count,
    .device_props = rt_device_props,
    .mem_info = rt_mem_info,
    .alloc = rt_alloc,
    .free = rt_free,
    .host_register = rt_host_register,
    .host_unregister = rt_host_unregister,
    .pointer_kind = rt_pointer_kind,
    .prefetch = rt_prefetch,
    .advise = rt_advise,
    .query_range = rt_query_range,
    .memcpy = rt_memcpy,
    .memset = rt_memset,
    .stream_create = rt_stream_create,
    .stream_destroy = rt_stream_destroy,
    .stream_synchronize = rt_stream_synchronize,
    .event_create = rt_event_create,
    .event_destroy = rt_event_destroy,
    .event_record = rt_event_record,
    .stream_wait_event = rt_stream_wait_event,
    .event_synchronize = rt_event_synchronize,
    .event_elapsed_ms = rt_event_elapsed_ms,
    .device_synchronize = rt_device_synchronize,
    .kernel_touch = TIDAL_HIP_KERNEL(rt_kernel_touch),
    .kernel_pattern_fill = TIDAL_HIP_KERNEL(rt_kernel_pattern_fill),
    .kernel_pattern_check = TIDAL_HIP_KERNEL(rt_kernel_pattern_check),
    .kernel_copy = TIDAL_HIP_KERNEL(rt_kernel_copy),
    .kernel_triad = TIDAL_HIP_KERNEL(rt_kernel_triad),
    .kernel_atomic_add = TIDAL_HIP_KERNEL(rt_kernel_atomic_add),
    .event_query = rt_event_query,
    .kernel_spin = TIDAL_HIP_KERNEL(rt_kernel_spin),
    .clock = nullptr, // the host's monotonic clock
    .alloc_async = rt_alloc_async,
    .free_async = rt_free_async,
    .kernel_batch_copy = TIDAL_HIP_KERNEL(rt_kernel_batch_copy),
    .pool_trim = rt_pool_trim,
    .pool_usage = rt_pool_usage,
    .vmm_granularity = rt_vmm_granularity,
    .vmm_reserve = rt_vmm_reserve,
    .vmm_release = rt_vmm_release,
    .vmm_create = rt_vmm_create,
    .vmm_destroy = rt_vmm_destroy,
    .vmm_map = rt_vmm_map,
    .vmm_set_access = rt_vmm_set_access,
    .vmm_unmap = rt_vmm_unmap,
    .host_copy = nullptr, // host copies take real time: nothing to account
    .peer_info = rt_peer_info,
    .peer_enable = rt_peer_enable,
    .memcpy_peer = rt_memcpy_peer,
    .kernel_atomic_set = TIDAL_HIP_KERNEL(rt_kernel_atomic_set),
    .range_push = rt_range_push,
    .range_pop = rt_range_pop,
    .paging_stats = nullptr, /* the simulated device's page-fault counts: no GPU runtime reports them */
    .range_paging = nullptr,
};

} // namespace
} // namespace tidal::hip

extern "C" __attribute__((visibility("default"))) int
tidal_runtime_negotiate(uint32_t core_abi, uint32_t *chosen_abi, const tidal_rt_ops **ops)
{
    // The module speaks exactly one contract version: the tree it was built from.
    if (chosen_abi == nullptr || ops == nullptr || core_abi < TIDAL_RT_ABI_VERSION)
        return 1;
    *chosen_abi = TIDAL_RT_ABI_VERSION;
    *ops = &tidal::hip::kHipOps;
    return 0;
}
