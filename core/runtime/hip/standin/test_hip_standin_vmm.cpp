// The stand-in's virtual-memory group on its own, called as HIP documents it (the HIP module
// does not use it yet; elastic memory will, and is then tested through the stand-in): a
// reservation, two physical chunks, data that stays with its chunk across unmap and remap,
// and the HIP_STANDIN_VMM=0 switch. Linked against the stand-in directly.
#include <hip/hip_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hip_standin.h"

namespace {

int failures = 0;

void expect(bool ok, const char *what, int line)
{
    if (!ok) {
        std::fprintf(stderr, "line %d: %s\n", line, what);
        ++failures;
    }
}
#define EXPECT(cond) expect((cond), #cond, __LINE__)
#define EXPECT_OK(call) expect((call) == hipSuccess, #call " == hipSuccess", __LINE__)

hipMemAllocationProp device_prop()
{
    hipMemAllocationProp prop{};
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    return prop;
}

void test_map_remap()
{
    const hipMemAllocationProp prop = device_prop();
    size_t granularity = 0;
    EXPECT_OK(hipMemGetAllocationGranularity(&granularity, &prop, hipMemAllocationGranularityMinimum));
    EXPECT(granularity > 0 && granularity % 4096 == 0);

    const size_t chunk = granularity;
    void *base = nullptr;
    EXPECT_OK(hipMemAddressReserve(&base, 4 * chunk, 0, nullptr, 0));
    EXPECT(reinterpret_cast<uintptr_t>(base) % granularity == 0);
    auto *bytes = static_cast<unsigned char *>(base);

    hipMemGenericAllocationHandle_t a = nullptr, b = nullptr;
    EXPECT_OK(hipMemCreate(&a, chunk, &prop, 0));
    EXPECT_OK(hipMemCreate(&b, chunk, &prop, 0));
    // Sizes off the granularity are refused, as HIP documents.
    hipMemGenericAllocationHandle_t odd = nullptr;
    EXPECT(hipMemCreate(&odd, chunk + 1, &prop, 0) == hipErrorInvalidValue);

    hipMemAccessDesc access{};
    access.location = prop.location;
    access.flags = hipMemAccessFlagsProtReadWrite;

    EXPECT_OK(hipMemMap(bytes, chunk, 0, a, 0));
    EXPECT_OK(hipMemMap(bytes + chunk, chunk, 0, b, 0));
    EXPECT_OK(hipMemSetAccess(bytes, 2 * chunk, &access, 1));
    std::memset(bytes, 0xA5, chunk);
    std::memset(bytes + chunk, 0x5A, chunk);

    // Chunk a leaves its place and comes back at another address with its data.
    EXPECT_OK(hipMemUnmap(bytes, chunk));
    EXPECT_OK(hipMemMap(bytes + 3 * chunk, chunk, 0, a, 0));
    EXPECT_OK(hipMemSetAccess(bytes + 3 * chunk, chunk, &access, 1));
    EXPECT(bytes[3 * chunk] == 0xA5 && bytes[4 * chunk - 1] == 0xA5);
    EXPECT(bytes[chunk] == 0x5A);
    // Mapping over a mapped chunk is refused.
    EXPECT(hipMemMap(bytes + chunk, chunk, 0, a, 0) == hipErrorInvalidValue);
    // ... and reported as a breach, which this test caused on purpose.
    EXPECT(hip_standin_violations(nullptr, 0) == 1);
    hip_standin_reset();

    // Released while mapped: the memory stays until it is unmapped.
    EXPECT_OK(hipMemRelease(a));
    EXPECT(bytes[3 * chunk] == 0xA5);
    EXPECT_OK(hipMemUnmap(bytes + 3 * chunk, chunk));
    EXPECT_OK(hipMemRelease(b));

    // Two chunks side by side go in one hipMemUnmap; half a chunk does not.
    hipMemGenericAllocationHandle_t c = nullptr;
    EXPECT_OK(hipMemCreate(&c, chunk, &prop, 0));
    EXPECT_OK(hipMemMap(bytes + 2 * chunk, chunk, 0, c, 0));
    EXPECT_OK(hipMemRelease(c));
    EXPECT(hipMemUnmap(bytes + chunk, chunk / 2) == hipErrorInvalidValue);
    EXPECT(hip_standin_violations(nullptr, 0) == 1);
    hip_standin_reset();
    EXPECT_OK(hipMemUnmap(bytes + chunk, 2 * chunk));
    EXPECT(hip_standin_live(nullptr, 0) == 1); // the reservation alone
    EXPECT_OK(hipMemAddressFree(base, 4 * chunk));
}

void test_switched_off()
{
    setenv("HIP_STANDIN_VMM", "0", 1);
    const hipMemAllocationProp prop = device_prop();
    size_t granularity = 0;
    void *base = nullptr;
    hipMemGenericAllocationHandle_t h = nullptr;
    EXPECT(hipMemGetAllocationGranularity(&granularity, &prop, hipMemAllocationGranularityMinimum) ==
           hipErrorNotSupported);
    EXPECT(hipMemAddressReserve(&base, 2u << 20, 0, nullptr, 0) == hipErrorNotSupported);
    EXPECT(hipMemCreate(&h, 2u << 20, &prop, 0) == hipErrorNotSupported);
    EXPECT(hipGetLastError() == hipErrorNotSupported);
    unsetenv("HIP_STANDIN_VMM");
}

} // namespace

int main()
{
    unsetenv("HIP_STANDIN_VMM");
    test_map_remap();
    test_switched_off();
    char text[4096];
    if (hip_standin_violations(text, sizeof text) != 0) {
        std::fprintf(stderr, "violations:\n%s", text);
        ++failures;
    }
    if (hip_standin_live(text, sizeof text) != 0) {
        std::fprintf(stderr, "still alive:\n%s", text);
        ++failures;
    }
    if (failures == 0)
        std::printf("hip stand-in: virtual-memory group behaves as HIP documents\n");
    return failures == 0 ? 0 : 1;
}
