// The public headers as a C++20 compiler with -Werror sees them: C linkage, types usable
// from C++ as plain aggregates, the *_INIT macros valid initialisers. Built and run as a test.
#include "tidal/policy.h"
#include "tidal/tidal.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace {

template <typename T> constexpr bool plain_c_struct()
{
    return std::is_standard_layout_v<T> && std::is_trivially_copyable_v<T> &&
           std::is_trivially_default_constructible_v<T>;
}

static_assert(plain_c_struct<tidal_alloc_desc>());
static_assert(plain_c_struct<tidal_pointer_info>());
static_assert(plain_c_struct<tidal_system_info>());
static_assert(plain_c_struct<tidal_device_info>());
static_assert(plain_c_struct<tidal_policy_hooks>());
static_assert(plain_c_struct<tidal_options_api>());
static_assert(plain_c_struct<tidal_place_request>());
static_assert(plain_c_struct<tidal_placement>());
static_assert(plain_c_struct<tidal_error_event>());
static_assert(plain_c_struct<tidal_recovery>());
static_assert(plain_c_struct<tidal_policy_init_args>());
static_assert(offsetof(tidal_alloc_desc, struct_size) == 0);
static_assert(offsetof(tidal_pointer_info, struct_size) == 0);
static_assert(offsetof(tidal_policy_hooks, struct_size) == 0);
// TIDAL_COVERS: a constant expression; a field is covered only when all of it is.
static_assert(TIDAL_COVERS(sizeof(tidal_placement), tidal_placement, reason));
static_assert(!TIDAL_COVERS(offsetof(tidal_placement, reason), tidal_placement, reason));
static_assert(!TIDAL_COVERS(offsetof(tidal_placement, reason) + sizeof(tidal_placement::reason) - 1,
                            tidal_placement, reason));

// Function types as C++ sees them through extern "C".
static_assert(std::is_same_v<decltype(&tidal_alloc),
                             tidal_status (*)(tidal_context *, size_t, const tidal_alloc_desc *,
                                              void **)>);
static_assert(std::is_same_v<decltype(&tidal_status_name), const char *(*)(tidal_status)>);
static_assert(std::is_same_v<tidal_policy_negotiate_fn,
                             tidal_status (*)(uint32_t, uint32_t *, tidal_policy_hooks *)>);
static_assert(std::is_enum_v<tidal_status> && std::is_enum_v<tidal_kind>);

extern "C" tidal_status plugin_entry(uint32_t, uint32_t *, tidal_policy_hooks *)
{
    return TIDAL_ERROR_NOT_SUPPORTED;
}

} // namespace

int main()
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
    tidal_system_info system = TIDAL_SYSTEM_INFO_INIT;
    tidal_device_info device = TIDAL_DEVICE_INFO_INIT;
    tidal_policy_negotiate_fn entry = plugin_entry;

    int failures = 0;
    if (desc.struct_size != sizeof desc || desc.device != TIDAL_DEVICE_DEFAULT)
        ++failures;
    if (info.struct_size != sizeof info || system.struct_size != sizeof system ||
        device.struct_size != sizeof device)
        ++failures;
    if (entry(TIDAL_POLICY_ABI_VERSION, nullptr, nullptr) != TIDAL_ERROR_NOT_SUPPORTED)
        ++failures;
    // Linked from C++: C linkage resolves against libtidal.so.
    if (tidal_version_number() != TIDAL_VERSION_NUMBER ||
        std::strcmp(tidal_version_string(), TIDAL_VERSION_STRING) != 0) {
        std::fprintf(stderr, "library version %u \"%s\", header %d \"%s\"\n",
                     tidal_version_number(), tidal_version_string(), TIDAL_VERSION_NUMBER,
                     TIDAL_VERSION_STRING);
        ++failures;
    }
    return failures == 0 ? 0 : 1;
}
