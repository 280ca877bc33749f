// Runtime, the core's one face of a device runtime: which optional operations a table has
// (supports), the one NOT_SUPPORTED error for a missing one whichever call asks, noexcept
// twins that answer a native code instead, and native codes translated into tidal errors.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <string>

#include "runtime/runtime.h"
#include "status/error.h"

using namespace tidal;

namespace {

// What the fake's memcpy and query_range answer next (native codes, HIP's numbering).
int memcpy_answer = 0;
int query_answer = 0;

// One device; of the optional operations only memcpy, query_range, event_create, half the
// stream-ordered pool (alloc_async without free_async) and one call of the virtual-memory
// group.
const tidal_rt_ops *fake_ops()
{
    static const tidal_rt_ops ops = [] {
        tidal_rt_ops o{};
        o.abi_version = TIDAL_RT_ABI_VERSION;
        o.struct_size = sizeof o;
        o.name = "fake";
        o.family = TIDAL_RT_FAMILY_HIP;
        o.destroy = [](void *) {};
        o.error_name = [](int native) {
            return native == 2 ? "hipErrorOutOfMemory" : native == 801 ? "hipErrorNotSupported" : "fakeError";
        };
        o.error_string = [](int) { return "fake error"; };
        o.device_count = [](void *, int32_t *count) {
            *count = 1;
            return 0;
        };
        o.device_props = [](void *, int32_t, tidal_rt_device_props *p) {
            std::strcpy(p->name, "Fake GPU");
            return 0;
        };
        o.mem_info = [](void *, int32_t, uint64_t *free_bytes, uint64_t *total) {
            *free_bytes = *total = 1 << 20;
            return 0;
        };
        o.alloc = [](void *, int32_t, int32_t, size_t, void **) { return 2; };
        o.free = [](void *, int32_t, int32_t, void *, size_t) { return 0; };
        o.memcpy = [](void *, void *, const void *, size_t, void *) { return memcpy_answer; };
        o.query_range = [](void *, const void *, size_t, int32_t, int32_t *value) {
            *value = 7;
            return query_answer;
        };
        o.event_create = [](void *, int32_t, void **event) {
            *event = nullptr;
            return 0;
        };
        o.alloc_async = [](void *, int32_t, size_t, void *, void **) { return 0; };
        o.vmm_granularity = [](void *, int32_t, uint64_t *bytes) {
            *bytes = 2 << 20;
            return 0;
        };
        return o;
    }();
    return &ops;
}

Runtime fake_runtime()
{
    memcpy_answer = query_answer = 0;
    static int instance;
    return Runtime(fake_ops(), &instance, "fake");
}

// The error `call` throws; fails the test when it throws none.
Error thrown_by(const std::function<void()> &call)
{
    try {
        call();
    } catch (const Error &e) {
        return e;
    }
    FAIL("no error was thrown");
    return Error(TIDAL_OK, "");
}

} // namespace

TEST_CASE("runtime: supports() says which optional operations the table has, groups only when whole")
{
    Runtime rt = fake_runtime();
    CHECK(rt.supports(RuntimeOp::memcpy));
    CHECK(rt.supports(RuntimeOp::query_range));
    CHECK(rt.supports(RuntimeOp::event_create));
    CHECK_FALSE(rt.supports(RuntimeOp::prefetch));
    CHECK_FALSE(rt.supports(RuntimeOp::event_query));
    CHECK_FALSE(rt.supports(RuntimeOp::host_register));
    CHECK_FALSE(rt.supports(RuntimeOp::kernel_touch));
    CHECK_FALSE(rt.supports(RuntimeOp::stream_ordered_pool)); // alloc_async without free_async
    CHECK_FALSE(rt.supports(RuntimeOp::pool_trim));
    CHECK_FALSE(rt.supports(RuntimeOp::vmm)); // one call of eight
    CHECK(rt.device_count() == 1);
}

TEST_CASE("runtime: a missing operation is one NOT_SUPPORTED error, the same whichever call asks")
{
    Runtime rt = fake_runtime();
    char buffer[64];
    struct Case {
        const char *operation;
        std::function<void()> call;
    };
    const Case cases[] = {
        {"prefetching managed memory", [&] { rt.prefetch(buffer, sizeof buffer, 0, nullptr); }},
        {"prefetching managed memory", [&] { rt.prefetch(buffer, sizeof buffer, 0, nullptr, "with a description"); }},
        {"registering host memory", [&] { rt.host_register(buffer, sizeof buffer); }},
        {"creating a stream", [&] { rt.stream_create(0); }},
        {"recording an event", [&] { rt.event_record(nullptr, nullptr); }},
        {"the touch kernel", [&] { rt.kernel_touch(0, buffer, sizeof buffer, true, nullptr); }},
        {"reading its own clock", [&] { rt.clock(); }},
        {"a stream-ordered pool (cudaMallocAsync / hipMallocAsync)", [&] { rt.alloc_async(0, 256, nullptr); }},
        {"virtual-memory mapping, so elastic memory is not available", [&] { rt.vmm_granularity(0); }},
        {"virtual-memory mapping, so elastic memory is not available", [&] { rt.vmm_reserve(0, 2 << 20); }},
        {"prefetching managed memory", [&] { rt.require(RuntimeOp::prefetch); }},
    };
    for (const Case &c : cases) {
        CAPTURE(c.operation);
        const Error e = thrown_by(c.call);
        CHECK(e.status() == TIDAL_ERROR_NOT_SUPPORTED);
        CHECK(e.message() == std::string("the fake runtime does not support ") + c.operation);
        CHECK(e.native().name.empty()); // no runtime call was made
    }
    CHECK(thrown_by([&] { rt.kernel_touch(0, buffer, sizeof buffer, true, nullptr); }).hint().find("hip_kernels") !=
          std::string::npos);
    // Every operation has its words, and the same sentence around them.
    for (unsigned op = 0; op < static_cast<unsigned>(RuntimeOp::count_); ++op) {
        CAPTURE(op);
        const Error e = thrown_by([&] { rt.unsupported(static_cast<RuntimeOp>(op)); });
        CHECK(e.status() == TIDAL_ERROR_NOT_SUPPORTED);
        CHECK(e.message().rfind("the fake runtime does not support ", 0) == 0);
        CHECK(e.message().size() > std::strlen("the fake runtime does not support "));
    }
}

TEST_CASE("runtime: a virtual-memory group whose driver has no API says so in the error, not in a later one")
{
    // The CUDA module over a driver without cuMem* has every vmm_* entry and answers 801 from
    // each: the error elastic memory gets must name the missing API itself.
    static const tidal_rt_ops ops = [] {
        tidal_rt_ops o = *fake_ops();
        o.vmm_granularity = [](void *, int32_t, uint64_t *) { return 801; };
        o.vmm_reserve = [](void *, int32_t, size_t, void **) { return 801; };
        o.vmm_release = [](void *, void *, size_t) { return 801; };
        o.vmm_create = [](void *, int32_t, size_t, void **) { return 801; };
        o.vmm_destroy = [](void *, void *) { return 801; };
        o.vmm_map = [](void *, void *, size_t, void *) { return 801; };
        o.vmm_set_access = [](void *, int32_t, void *, size_t) { return 801; };
        o.vmm_unmap = [](void *, void *, size_t) { return 801; };
        return o;
    }();
    static int instance;
    Runtime rt(&ops, &instance, "fake");
    REQUIRE(rt.supports(RuntimeOp::vmm));
    const Error e = thrown_by([&] { rt.vmm_granularity(0); });
    CHECK(e.status() == TIDAL_ERROR_NOT_SUPPORTED);
    CHECK(e.message() == "the fake runtime has no virtual-memory API on device 0 (hipErrorNotSupported), so elastic "
                         "memory is not available");
    CHECK_FALSE(e.hint().empty());
    // Another failure of the call is still the runtime's error, described as before.
    CHECK(thrown_by([&] { rt.vmm_reserve(0, 2 << 20); }).status() == TIDAL_ERROR_NOT_SUPPORTED);
}

TEST_CASE("runtime: the noexcept twins of a missing operation answer the native not-supported code")
{
    Runtime rt = fake_runtime();
    int32_t complete = 0, kind = -5, device = -5;
    CHECK(rt.event_query(nullptr, &complete) == Runtime::kNativeNotSupported);
    CHECK(rt.pointer_kind(&complete, &kind, &device) == Runtime::kNativeNotSupported);
    CHECK(kind == -5); // untouched
    CHECK(rt.stream_synchronize_noexcept(nullptr) == Runtime::kNativeNotSupported);
    CHECK(rt.event_destroy(nullptr) == Runtime::kNativeNotSupported);
    CHECK(rt.vmm_destroy(nullptr) == Runtime::kNativeNotSupported);
    CHECK(rt.free_async(0, nullptr, nullptr) == Runtime::kNativeNotSupported);
    uint64_t reserved = 9, used = 9;
    CHECK(rt.pool_usage(0, &reserved, &used) == Runtime::kNativeNotSupported);
    CHECK(reserved == 9);
    // And the code translates to the same status.
    CHECK(thrown_by([&] { rt.check(Runtime::kNativeNotSupported, "x"); }).status() == TIDAL_ERROR_NOT_SUPPORTED);
}

TEST_CASE("runtime: a failing native code is translated, described by the caller or by the operation")
{
    Runtime rt = fake_runtime();
    char a[16], b[16];
    int described = 0;
    auto describe = [&] {
        ++described;
        return std::string("copying 16 bytes for the test");
    };
    rt.memcpy(a, b, sizeof a, nullptr, describe);
    CHECK(described == 0); // formatted only on failure

    memcpy_answer = 2;
    Error e = thrown_by([&] { rt.memcpy(a, b, sizeof a, nullptr, describe); });
    CHECK(described == 1);
    CHECK(e.status() == TIDAL_ERROR_OUT_OF_MEMORY);
    CHECK(e.message() == "copying 16 bytes for the test failed on the fake runtime");
    CHECK(e.native().code == 2);
    CHECK(e.native().name == "hipErrorOutOfMemory");
    CHECK_FALSE(e.hint().empty());

    e = thrown_by([&] { rt.memcpy(a, b, sizeof a, nullptr); });
    CHECK(e.message() == "copying memory failed on the fake runtime");
    e = thrown_by([&] { rt.memcpy(a, b, sizeof a, nullptr, std::string("a string description")); });
    CHECK(e.message() == "a string description failed on the fake runtime");

    memcpy_answer = 12345; // a code the table does not know
    CHECK(thrown_by([&] { rt.memcpy(a, b, sizeof a, nullptr); }).status() == TIDAL_ERROR_RUNTIME);

    e = thrown_by([&] { rt.alloc(TIDAL_KIND_DEVICE, 0, 4096); }); // a mandatory operation
    CHECK(e.status() == TIDAL_ERROR_OUT_OF_MEMORY);
    CHECK(e.message().find("allocating 4096 bytes") != std::string::npos);
}

TEST_CASE("runtime: a range attribute the runtime cannot tell is no answer, any other failure an error")
{
    Runtime rt = fake_runtime();
    char range[64];
    CHECK(rt.query_range(range, sizeof range, TIDAL_RT_ATTR_READ_MOSTLY) == 7);
    query_answer = Runtime::kNativeNotSupported;
    CHECK_FALSE(rt.query_range(range, sizeof range, TIDAL_RT_ATTR_COHERENCY_MODE).has_value());
    query_answer = 1;
    const Error e = thrown_by([&] { rt.query_range(range, sizeof range, TIDAL_RT_ATTR_READ_MOSTLY); });
    CHECK(e.status() == TIDAL_ERROR_INVALID_ARGUMENT);
    CHECK(e.message().find("reading range attribute 3") != std::string::npos);
}
