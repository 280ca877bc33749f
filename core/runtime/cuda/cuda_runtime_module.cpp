/* tidal-runtime-cuda.so: the device-runtime contract (core/runtime/runtime_contract.h) over
 * the CUDA runtime. The module's one exported symbol is the negotiation function; everything
 * else is reached through the table it hands back. Each entry lives in the file of its
 * concern (lifecycle, devices, memory, migration, transfers, streams, kernels). */
#include "cuda_module.h"

namespace tidal::cuda {
namespace {

constexpr tidal_rt_ops make_ops()
{
    tidal_rt_ops ops{};
    ops.abi_version = TIDAL_RT_ABI_VERSION;
    ops.struct_size = sizeof(tidal_rt_ops);
    ops.name = "cuda";
    ops.family = TIDAL_RT_FAMILY_CUDA;

    ops.create = create;
    ops.destroy = destroy;
    ops.error_name = error_name;
    ops.error_string = error_string;

    ops.device_count = device_count;
    ops.device_props = device_props;
    ops.mem_info = mem_info;

    ops.alloc = allocate;
    ops.free = release;
    ops.alloc_async = allocate_async;
    ops.free_async = release_async;
    ops.pool_trim = pool_trim;
    ops.pool_usage = pool_usage;
    ops.host_register = host_register;
    ops.host_unregister = host_unregister;
    ops.pointer_kind = pointer_kind;

    ops.prefetch = prefetch;
    ops.advise = advise;
    ops.query_range = query_range;

    ops.memcpy = copy;
    ops.memset = fill;

    ops.stream_create = stream_create;
    ops.stream_destroy = stream_destroy;
    ops.stream_synchronize = stream_synchronize;
    ops.event_create = event_create;
    ops.event_destroy = event_destroy;
    ops.event_record = event_record;
    ops.stream_wait_event = stream_wait_event;
    ops.event_synchronize = event_synchronize;
    ops.event_elapsed_ms = event_elapsed_ms;
    ops.device_synchronize = device_synchronize;
    ops.event_query = event_query;

#if defined(TIDAL_HAVE_CUDA_KERNELS)
    ops.kernel_touch = kernel_touch;
    ops.kernel_pattern_fill = kernel_pattern_fill;
    ops.kernel_pattern_check = kernel_pattern_check;
    ops.kernel_copy = kernel_copy;
    ops.kernel_triad = kernel_triad;
    ops.kernel_atomic_add = kernel_atomic_add;
    ops.kernel_spin = kernel_spin;
    ops.kernel_batch_copy = kernel_batch_copy;
#endif
    return ops;
}

constexpr tidal_rt_ops kOps = make_ops();

} // namespace
} // namespace tidal::cuda

/* The module speaks exactly one contract version: the tree it was built from. */
extern "C" __attribute__((visibility("default"))) int tidal_runtime_negotiate(uint32_t core_abi,
                                                                              uint32_t *chosen_abi,
                                                                              const tidal_rt_ops **ops)
{
    if (chosen_abi == nullptr || ops == nullptr || core_abi < TIDAL_RT_ABI_VERSION)
        return 1;
    *chosen_abi = TIDAL_RT_ABI_VERSION;
    *ops = &tidal::cuda::kOps;
    return 0;
}
