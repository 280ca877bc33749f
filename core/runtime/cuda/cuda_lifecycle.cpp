/* Lifecycle of the CUDA runtime module: create and destroy. */
#include <cstdio>
#include <new>

#include "cuda_instance.h"
#include "cuda_entry_points.h"

namespace tidal::cuda {
namespace {

/* "13.0" from CUDA's 1000 * major + 10 * minor encoding. */
void format_version(char *out, size_t capacity, int version)
{
    std::snprintf(out, capacity, "%d.%d", version / 1000, (version % 1000) / 10);
}

/* [cuda] takes no keys yet; a key there is a typo or a setting meant for another
 * runtime, and silently ignoring it would hide that. */
bool options_are_empty(const tidal_options *options, const tidal_options_api *api)
{
    if (options == nullptr || api == nullptr || api->key_count == nullptr)
        return true;
    const size_t keys = api->key_count(options);
    for (size_t i = 0; i < keys && api->error != nullptr; ++i) {
        const char *key = api->key_at != nullptr ? api->key_at(options, i) : nullptr;
        api->error(options, key, "unknown key: the cuda runtime takes no options");
    }
    return keys == 0;
}

} // namespace

int rt_create(const tidal_options *options, const tidal_options_api *api, void **rt, char *detail,
              size_t detail_capacity) noexcept
{
    if (!options_are_empty(options, api))
        return static_cast<int>(cudaErrorInvalidValue);

    /* Without a driver this is cudaErrorInsufficientDriver (35), not cudaErrorNoDevice: the
     * core maps both to "no device". */
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess)
        return settle(status);
    if (count <= 0)
        return static_cast<int>(cudaErrorNoDevice);

    auto *created = new (std::nothrow) CudaInstance{};
    if (created == nullptr)
        return static_cast<int>(cudaErrorMemoryAllocation);
    created->device_count = count;
    created->vmm = DriverVmm::resolve();

    if (detail != nullptr && detail_capacity > 0) {
        int runtime_version = 0;
        int driver_version = 0;
        (void)cudaRuntimeGetVersion(&runtime_version);
        (void)cudaDriverGetVersion(&driver_version);
        char runtime_text[16];
        char driver_text[16];
        format_version(runtime_text, sizeof runtime_text, runtime_version);
        format_version(driver_text, sizeof driver_text, driver_version);
        std::snprintf(detail, detail_capacity, "CUDA runtime %s, driver %s", runtime_text, driver_text);
    }
    *rt = created;
    return static_cast<int>(cudaSuccess);
}

/* Leaves the CUDA contexts alone: the application may still be using them. */
void rt_destroy(void *rt) noexcept
{
    delete static_cast<CudaInstance *>(rt);
}

} // namespace tidal::cuda
