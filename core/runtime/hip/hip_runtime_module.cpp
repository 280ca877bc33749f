// tidal-runtime-hip.so: the ops table and the one exported symbol, tidal_runtime_negotiate.
// Everything else in the module has hidden visibility (and the version script makes sure).
#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "hip_entry_points.h"
#include "hip_errors.h"
#include "hip_runtime.h"

namespace tidal::hip {

namespace {

void write_detail(const std::string &text, char *detail, size_t capacity) noexcept
{
    if (detail == nullptr || capacity == 0)
        return;
    const size_t length = std::min(text.size(), capacity - 1);
    std::memcpy(detail, text.data(), length);
    detail[length] = '\0';
}

// The module takes no options yet; a key in [hip] is a typo or meant for another
// runtime, and the house rule is that an unknown key is an error, never ignored.
bool options_valid(const tidal_options *options, const tidal_options_api *api) noexcept
{
    if (options == nullptr || api == nullptr ||
        api->struct_size < offsetof(tidal_options_api, error) + sizeof api->error ||
        api->key_count == nullptr || api->key_at == nullptr || api->error == nullptr)
        return true;
    const size_t count = api->key_count(options);
    for (size_t i = 0; i < count; ++i)
        api->error(options, api->key_at(options, i), "unknown key: the hip runtime takes no options");
    return count == 0;
}

} // namespace

int rt_create(const tidal_options *options, const tidal_options_api *api, void **rt,
              char *detail, size_t detail_capacity) noexcept
{
    return guarded([&] {
        if (!options_valid(options, api))
            return static_cast<int>(hipErrorInvalidValue);
        HipRuntime *created = nullptr;
        std::string text;
        const int rc = HipRuntime::create(created, text);
        write_detail(text, detail, detail_capacity);
        if (rc == hipSuccess)
            *rt = created;
        return rc;
    });
}

void rt_destroy(void *rt) noexcept
{
    // No hipDeviceReset: HIP's state belongs to the whole process, the application included.
    delete static_cast<HipRuntime *>(rt);
}

namespace {

const char *table_error_name(int native) noexcept { return error_name(native); }
const char *table_error_string(int native) noexcept { return error_string(native); }

constexpr tidal_rt_ops kHipOps = {
    .abi_version = TIDAL_RT_ABI_VERSION,
    .struct_size = sizeof(tidal_rt_ops),
    .name = "hip",
    .family = TIDAL_RT_FAMILY_HIP,
    .create = rt_create,
    .destroy = rt_destroy,
    .error_name = table_error_name,
    .error_string = table_error_string,
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
#ifdef TIDAL_HAVE_HIP_KERNELS
    .kernel_touch = rt_kernel_touch,
    .kernel_pattern_fill = rt_kernel_pattern_fill,
    .kernel_pattern_check = rt_kernel_pattern_check,
    .kernel_copy = rt_kernel_copy,
    .kernel_triad = rt_kernel_triad,
    .kernel_atomic_add = rt_kernel_atomic_add,
    .event_query = rt_event_query,
    .kernel_spin = rt_kernel_spin,
    .clock = nullptr,
    .alloc_async = rt_alloc_async,
    .free_async = rt_free_async,
    .kernel_batch_copy = rt_kernel_batch_copy,
    .pool_trim = rt_pool_trim,
    .pool_usage = rt_pool_usage,
#else
    // No hipcc-built kernels in this build: the core reports TIDAL_ERROR_NOT_SUPPORTED.
    .kernel_touch = nullptr,
    .kernel_pattern_fill = nullptr,
    .kernel_pattern_check = nullptr,
    .kernel_copy = nullptr,
    .kernel_triad = nullptr,
    .kernel_atomic_add = nullptr,
    .event_query = rt_event_query,
    .kernel_spin = nullptr,
    .clock = nullptr,
    .alloc_async = rt_alloc_async,
    .free_async = rt_free_async,
    .kernel_batch_copy = nullptr,
    .pool_trim = rt_pool_trim,
    .pool_usage = rt_pool_usage,
#endif
};

} // namespace

} // namespace tidal::hip

extern "C" __attribute__((visibility("default"))) int
tidal_runtime_negotiate(uint32_t core_abi, uint32_t *chosen_abi, const tidal_rt_ops **ops)
{
    // This module speaks ABI 1 only; a core offering less cannot use it.
    if (chosen_abi == nullptr || ops == nullptr || core_abi < TIDAL_RT_ABI_VERSION)
        return 1;
    *chosen_abi = TIDAL_RT_ABI_VERSION;
    *ops = &tidal::hip::kHipOps;
    return 0;
}
