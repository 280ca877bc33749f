// Lifecycle of the HIP module: create() and destroy(). HIP's own state is process-wide; the
// instance only holds what create() learnt about the devices.
#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "hip_entry_points.h"
#include "hip_errors.h"
#include "hip_instance.h"

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
        HipInstance *created = nullptr;
        std::string text;
        const int rc = HipInstance::create(created, text);
        write_detail(text, detail, detail_capacity);
        if (rc == hipSuccess)
            *rt = created;
        return rc;
    });
}

void rt_destroy(void *rt) noexcept
{
    // No hipDeviceReset: HIP's state belongs to the whole process, the application included.
    delete static_cast<HipInstance *>(rt);
}

} // namespace tidal::hip
