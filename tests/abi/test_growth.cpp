// Proves now that a field can be appended to a growable struct later without breaking anyone:
// a struct as a later release might grow it (0.1's fields and one appended) goes through the
// very helpers the C API uses (core/abi/growable_struct.h), with a caller built against 0.1,
// one built against the grown header and one from a release after that.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "abi/growable_struct.h"

namespace {

// A later tidal_copy_item: 0.1's four fields and one appended.
struct grown_item {
    size_t struct_size;
    void *dst;
    const void *src;
    size_t size;
    uint64_t appended; // default 7: what an older caller gets
};
constexpr size_t kOldSize = TIDAL_END_OF(grown_item, size); // 0.1's sizeof(tidal_copy_item)
static_assert(kOldSize == sizeof(tidal_copy_item));

constexpr unsigned char kCanary = 0xA5;

} // namespace

template <> struct tidal::abi::Growable<grown_item> {
    static constexpr const char *name = "grown_item";
    static constexpr const char *init = "GROWN_ITEM_INIT";
    static constexpr size_t oldest = kOldSize;
    static grown_item defaults() noexcept { return grown_item{sizeof(grown_item), nullptr, nullptr, 0, 7}; }
};

using tidal::abi::read_array;
using tidal::abi::read_in;
using tidal::abi::size_accepted;
using tidal::abi::write_out;

TEST_CASE("a caller built against 0.1 is read over the defaults of the appended field")
{
    // The 0.1 caller's struct, followed by bytes that are not its own.
    unsigned char buffer[sizeof(grown_item) + 16];
    std::memset(buffer, kCanary, sizeof buffer);
    tidal_copy_item old = TIDAL_COPY_ITEM_INIT;
    old.size = 123;
    std::memcpy(buffer, &old, sizeof old);
    const auto *caller = reinterpret_cast<const grown_item *>(buffer);

    REQUIRE(size_accepted<grown_item>(kOldSize));
    grown_item scratch;
    const grown_item *read = read_in(caller, kOldSize, scratch);
    REQUIRE(read == &scratch);
    CHECK(read->size == 123);
    CHECK(read->appended == 7); // not the canary bytes past the caller's struct
    CHECK(read->struct_size == sizeof(grown_item));
}

TEST_CASE("callers at least as new as the library are read in place, trailing fields ignored")
{
    grown_item mine{sizeof(grown_item), nullptr, nullptr, 5, 9};
    grown_item scratch;
    CHECK(read_in(&mine, sizeof mine, scratch) == &mine);
    CHECK(read_in(&mine, sizeof mine + 64, scratch) == &mine); // a client from the future
}

TEST_CASE("below the oldest size is refused, naming the struct and both sizes")
{
    grown_item mine{};
    grown_item scratch;
    CHECK_FALSE(size_accepted<grown_item>(kOldSize - 1));
    CHECK(read_in(&mine, kOldSize - 1, scratch) == nullptr);
    const std::string message = tidal::abi::size_refused<grown_item>("items", kOldSize - 1);
    CHECK(message.find("grown_item") != std::string::npos);
    CHECK(message.find(std::to_string(kOldSize - 1)) != std::string::npos);
    CHECK(message.find(std::to_string(kOldSize)) != std::string::npos);
    CHECK(message.find("GROWN_ITEM_INIT") != std::string::npos);
}

TEST_CASE("outputs are written only as far as the caller's struct_size")
{
    const grown_item value{sizeof(grown_item), nullptr, nullptr, 42, 43};
    SUBCASE("a 0.1 caller: the appended field's bytes are not touched")
    {
        unsigned char buffer[sizeof(grown_item) + 16];
        std::memset(buffer, kCanary, sizeof buffer);
        auto *caller = reinterpret_cast<grown_item *>(buffer);
        write_out(caller, kOldSize, value);
        tidal_copy_item seen;
        std::memcpy(&seen, buffer, sizeof seen);
        CHECK(seen.struct_size == kOldSize); // the caller's own size stays
        CHECK(seen.size == 42);
        for (size_t i = kOldSize; i < sizeof buffer; ++i)
            CHECK(buffer[i] == kCanary);
    }
    SUBCASE("a client from the future: its fields past ours keep what it put there")
    {
        unsigned char buffer[sizeof(grown_item) + 32];
        std::memset(buffer, kCanary, sizeof buffer);
        auto *caller = reinterpret_cast<grown_item *>(buffer);
        write_out(caller, sizeof buffer, value);
        CHECK(caller->struct_size == sizeof buffer);
        CHECK(caller->appended == 43);
        for (size_t i = sizeof(grown_item); i < sizeof buffer; ++i)
            CHECK(buffer[i] == kCanary);
    }
}

TEST_CASE("arrays are stepped by the caller's struct_size, older and newer")
{
    for (size_t stride : {kOldSize, sizeof(grown_item), sizeof(grown_item) + 24}) {
        CAPTURE(stride);
        std::vector<unsigned char> bytes(3 * stride, kCanary);
        for (size_t i = 0; i < 3; ++i) {
            grown_item item{stride, nullptr, nullptr, 100 + i, 200 + i};
            std::memcpy(bytes.data() + i * stride, &item, std::min(stride, sizeof item));
        }
        const std::vector<grown_item> read = read_array(reinterpret_cast<const grown_item *>(bytes.data()), 3, "item");
        REQUIRE(read.size() == 3);
        for (size_t i = 0; i < 3; ++i) {
            CHECK(read[i].size == 100 + i);
            CHECK(read[i].appended == (stride == kOldSize ? 7 : 200 + i));
        }
    }
    std::vector<unsigned char> bytes(2 * kOldSize, 0);
    const size_t small = kOldSize - 8;
    std::memcpy(bytes.data(), &small, sizeof small);
    CHECK_THROWS_AS(read_array(reinterpret_cast<const grown_item *>(bytes.data()), 2, "item"), tidal::Error);
}

TEST_CASE("every growable struct of tidal.h accepts its 0.1 size")
{
    // The sizes of release 0.1 (x86-64 and every LP64 ABI), kept here as numbers: if one of
    // these fails, someone changed a 0.1 field instead of appending.
    CHECK(size_accepted<tidal_alloc_desc>(40));
    CHECK(size_accepted<tidal_copy_item>(32));
    CHECK(size_accepted<tidal_access>(32));
    CHECK(size_accepted<tidal_check>(offsetof(tidal_check, stream))); // before 0.1's stream, too
    CHECK(size_accepted<tidal_migration_stats>(112));
    CHECK(size_accepted<tidal_pool_stats>(88));
}
