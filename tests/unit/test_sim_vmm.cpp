// The simulated device's virtual-memory group (vmm_*), driven through its tidal_rt_ops table as
// the core drives it: reservations, chunks, mappings, what kernels, copies and the CPU may touch,
// the memory it counts and the time it charges (make_settings()' round numbers).
#include <doctest/doctest.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/profile_loader.h"
#include "pattern.h"
#include "sim_fixture.h"
#include "status/error.h"

using namespace sim_fixture;
using tidal::sim::FaultRecord;

namespace {

constexpr uint64_t kGranule = 2 * kMiB; // the default granularity
constexpr int kIllegal = 700;           // hipErrorIllegalAddress

// What a forked child makes of one byte written at `p`: "segv" when the CPU may not touch it.
std::string cpu_write(void *p)
{
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // A handler of our own, so that a sanitizer's SEGV report does not stand in the way.
        struct sigaction action {};
        action.sa_handler = [](int) { ::_exit(42); };
        ::sigaction(SIGSEGV, &action, nullptr);
        ::sigaction(SIGBUS, &action, nullptr);
        *static_cast<volatile char *>(p) = 1;
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return "written";
    if ((WIFEXITED(status) && WEXITSTATUS(status) == 42) ||
        (WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS)))
        return "segv";
    return "status " + std::to_string(status);
}

// One reservation of `granules` granules, released (after unmapping what is left) at the end.
struct Elastic {
    Sim &s;
    uint64_t size;
    void *base = nullptr;
    std::vector<std::pair<void *, void *>> maps; // (address, chunk) still mapped

    Elastic(Sim &sim, uint64_t granules) : s(sim), size(granules * kGranule)
    {
        REQUIRE(s.ops->vmm_reserve(s.rt, 0, size, &base) == 0);
    }
    ~Elastic()
    {
        for (auto [at, chunk] : maps) {
            CHECK(s.ops->vmm_unmap(s.rt, at, kGranule) == 0);
            CHECK(s.ops->vmm_destroy(s.rt, chunk) == 0);
        }
        CHECK(s.ops->vmm_release(s.rt, base, size) == 0);
    }
    void *at(uint64_t granule) const { return sim_fixture::at(base, granule * kGranule); }
    // A new chunk mapped and made accessible at granule `g`.
    void *resident(uint64_t g)
    {
        void *chunk = nullptr;
        REQUIRE(s.ops->vmm_create(s.rt, 0, kGranule, &chunk) == 0);
        REQUIRE(s.ops->vmm_map(s.rt, at(g), kGranule, chunk) == 0);
        REQUIRE(s.ops->vmm_set_access(s.rt, 0, at(g), kGranule) == 0);
        maps.emplace_back(at(g), chunk);
        return chunk;
    }
};

} // namespace

TEST_CASE("vmm: reserve, create, map, set access, unmap, destroy, release")
{
    Sim s(make_settings());
    const tidal_rt_ops &o = *s.ops;
    uint64_t granularity = 0;
    REQUIRE(o.vmm_granularity(s.rt, 0, &granularity) == 0);
    CHECK(granularity == kGranule);

    void *base = nullptr;
    REQUIRE(o.vmm_reserve(s.rt, 0, 4 * kGranule, &base) == 0);
    CHECK(reinterpret_cast<uintptr_t>(base) % kGranule == 0);
    const uint64_t free_before = s.free_bytes();
    CHECK(free_before == 64 * kMiB); // a reservation is address space only

    void *chunk = nullptr;
    double t = s.now();
    REQUIRE(o.vmm_create(s.rt, 0, 2 * kGranule, &chunk) == 0);
    CHECK(s.now() - t == doctest::Approx(1e-5));
    CHECK(s.free_bytes() == free_before - 2 * kGranule);
    CHECK(s.sim().counters(0).peak_resident_bytes == 2 * kGranule);

    void *at = sim_fixture::at(base, kGranule);
    t = s.now();
    REQUIRE(o.vmm_map(s.rt, at, 2 * kGranule, chunk) == 0);
    CHECK(s.now() - t == doctest::Approx(1e-6));
    int32_t kind = -1, device = -2;
    REQUIRE(o.pointer_kind(s.rt, at, &kind, &device) == 0);
    CHECK(kind == TIDAL_KIND_DEVICE);
    CHECK(device == 0);
    // Mapped, not yet accessible: still out of reach.
    CHECK(cpu_write(at) == "segv");
    CHECK(o.kernel_touch(s.rt, 0, at, 4096, 1, nullptr) == kIllegal);

    t = s.now();
    REQUIRE(o.vmm_set_access(s.rt, 0, at, 2 * kGranule) == 0);
    CHECK(s.now() - t == doctest::Approx(2e-6));
    std::memset(at, 0x5a, 2 * kGranule); // the CPU reaches it now
    CHECK(cpu_write(at) == "written");
    CHECK(o.kernel_touch(s.rt, 0, at, 2 * kGranule, 1, nullptr) == 0);

    // Whole mappings only, and nothing may go while something depends on it.
    CHECK(o.vmm_unmap(s.rt, at, kGranule) == 1);
    CHECK(o.vmm_destroy(s.rt, chunk) == 1);
    CHECK(o.vmm_release(s.rt, base, 4 * kGranule) == 1);

    t = s.now();
    REQUIRE(o.vmm_unmap(s.rt, at, 2 * kGranule) == 0);
    CHECK(s.now() - t == doctest::Approx(2e-5)); // one chunk
    CHECK(cpu_write(at) == "segv");
    CHECK(s.free_bytes() == free_before - 2 * kGranule); // unmapped, still held
    t = s.now();
    REQUIRE(o.vmm_destroy(s.rt, chunk) == 0);
    CHECK(s.now() - t == doctest::Approx(3e-5));
    CHECK(s.free_bytes() == free_before);
    CHECK(o.vmm_destroy(s.rt, chunk) == 400); // gone
    REQUIRE(o.vmm_release(s.rt, base, 4 * kGranule) == 0);
    REQUIRE(o.pointer_kind(s.rt, at, &kind, &device) == 0);
    CHECK(kind == TIDAL_KIND_PAGEABLE);
}

TEST_CASE("vmm: a chunk's data survive unmapping and mapping it elsewhere")
{
    Sim s(make_settings());
    const tidal_rt_ops &o = *s.ops;
    Elastic first(s, 2), second(s, 3);
    void *chunk = first.resident(1);
    REQUIRE(o.kernel_pattern_fill(s.rt, 0, first.at(1), kGranule, 99, nullptr) == 0);
    REQUIRE(o.vmm_unmap(s.rt, first.at(1), kGranule) == 0);
    first.maps.clear();

    REQUIRE(o.vmm_map(s.rt, second.at(2), kGranule, chunk) == 0);
    REQUIRE(o.vmm_set_access(s.rt, 0, second.at(2), kGranule) == 0);
    second.maps.emplace_back(second.at(2), chunk);
    uint64_t mismatches = 1;
    REQUIRE(o.kernel_pattern_check(s.rt, 0, second.at(2), kGranule, 99, &mismatches, nullptr) == 0);
    CHECK(mismatches == 0);
    // And back at its first address, at the same time (one chunk, two mappings).
    REQUIRE(o.vmm_map(s.rt, first.at(0), kGranule, chunk) == 0);
    REQUIRE(o.vmm_set_access(s.rt, 0, first.at(0), kGranule) == 0);
    first.maps.emplace_back(first.at(0), chunk);
    CHECK(std::memcmp(first.at(0), second.at(2), kGranule) == 0);
    // Elastic's destructors unmap both mappings; the chunk is destroyed by the one done last.
    first.maps.clear();
    REQUIRE(o.vmm_unmap(s.rt, first.at(0), kGranule) == 0);
}

TEST_CASE("vmm: copies reach resident chunks at device rates and fault elsewhere")
{
    Sim s(make_settings());
    const tidal_rt_ops &o = *s.ops;
    Elastic e(s, 3);
    e.resident(0);
    void *pinned = s.alloc(TIDAL_KIND_PINNED, kGranule);
    void *device = s.alloc(TIDAL_KIND_DEVICE, kGranule);
    std::memset(pinned, 7, kGranule);

    double t = s.now();
    REQUIRE(o.memcpy(s.rt, e.at(0), pinned, kGranule, nullptr) == 0);
    CHECK(s.now() - t == doctest::Approx(1e-5 + double(kGranule) / 4e9)); // h2d pinned
    CHECK(static_cast<unsigned char *>(e.at(0))[kGranule - 1] == 7);
    CHECK(s.sim().counters(0).copy_bytes_h2d == kGranule);
    t = s.now();
    REQUIRE(o.memcpy(s.rt, pinned, e.at(0), kGranule, nullptr) == 0);
    CHECK(s.now() - t == doctest::Approx(1e-5 + double(kGranule) / 8e9)); // d2h pinned
    t = s.now();
    REQUIRE(o.memcpy(s.rt, device, e.at(0), kGranule, nullptr) == 0);
    CHECK(s.now() - t == doctest::Approx(1e-5 + 2.0 * kGranule / 100e9)); // d2d: read + write
    t = s.now();
    REQUIRE(o.memset(s.rt, e.at(0), 0, kGranule, nullptr) == 0);
    CHECK(s.now() - t == doctest::Approx(1e-5 + double(kGranule) / 100e9));

    // Into a granule with no chunk, and across the end of the resident one: nothing is
    // written, the time does not move, and the log says where.
    const uint64_t faults_before = s.sim().counters(0).fatal_faults;
    t = s.now();
    CHECK(o.memcpy(s.rt, e.at(1), pinned, 4096, nullptr) == kIllegal);
    CHECK(o.memcpy(s.rt, static_cast<char *>(e.at(1)) - 4096, pinned, 8192, nullptr) == kIllegal);
    CHECK(o.memcpy(s.rt, pinned, e.at(2), 4096, nullptr) == kIllegal);
    CHECK(o.memset(s.rt, e.at(1), 0, 4096, nullptr) == kIllegal);
    CHECK(s.now() == t);
    CHECK(s.sim().counters(0).fatal_faults == faults_before + 4);
    const auto log = s.sim().fault_log();
    REQUIRE(log.size() == 4);
    CHECK(log[0].type == FaultRecord::Type::illegal_address);
    CHECK(log[0].operation == "memcpy");
    CHECK(log[0].address == reinterpret_cast<uintptr_t>(e.at(1)));
    CHECK(log[3].operation == "memset");
    CHECK(static_cast<unsigned char *>(pinned)[0] == 7);
    // The core sees the illegal-access status (HIP's number, the CUDA naming alike).
    CHECK(std::string(tidal::sim::sim_ops(make_settings("nvidia"))->error_name(kIllegal)) ==
          "cudaErrorIllegalAddress");
    CHECK(o.free(s.rt, TIDAL_KIND_PINNED, 0, pinned, kGranule) == 0);
    CHECK(o.free(s.rt, TIDAL_KIND_DEVICE, 0, device, kGranule) == 0);
}

TEST_CASE("vmm: kernels on a non-resident chunk get the illegal-access code")
{
    Sim s(make_settings());
    const tidal_rt_ops &o = *s.ops;
    Elastic e(s, 2);
    void *chunk = e.resident(0);
    REQUIRE(o.kernel_pattern_fill(s.rt, 0, e.at(0), kGranule, 5, nullptr) == 0);
    CHECK(o.kernel_pattern_fill(s.rt, 0, e.at(1), kGranule, 5, nullptr) == kIllegal);
    CHECK(o.kernel_touch(s.rt, 0, e.at(0), 2 * kGranule, 0, nullptr) == kIllegal);
    uint64_t mismatches = 1;
    REQUIRE(o.kernel_pattern_check(s.rt, 0, e.at(0), kGranule, 5, &mismatches, nullptr) == 0);
    CHECK(mismatches == 0);

    // Offloaded: unmapped, the chunk kept.
    REQUIRE(o.vmm_unmap(s.rt, e.at(0), kGranule) == 0);
    e.maps.clear();
    CHECK(o.kernel_touch(s.rt, 0, e.at(0), 4096, 0, nullptr) == kIllegal);
    CHECK(o.kernel_pattern_fill(s.rt, 0, e.at(0), kGranule, 5, nullptr) == kIllegal);
    CHECK(o.kernel_copy(s.rt, 0, e.at(1), e.at(0), 4096, nullptr) == kIllegal);
    const auto log = s.sim().fault_log();
    REQUIRE(log.size() == 5);
    CHECK(log.back().operation == "kernel");
    CHECK(log.back().device == 0);
    CHECK(o.vmm_destroy(s.rt, chunk) == 0);
}

TEST_CASE("vmm: what the CPU may touch follows the mappings (a forked child writes)")
{
    Sim s(make_settings());
    Elastic e(s, 2);
    CHECK(cpu_write(e.at(0)) == "segv"); // reserved only
    e.resident(0);
    CHECK(cpu_write(e.at(0)) == "written");
    CHECK(cpu_write(at(e.at(0), kGranule - 1)) == "written");
    CHECK(cpu_write(e.at(1)) == "segv"); // the granule next to it
    REQUIRE(s.ops->vmm_unmap(s.rt, e.at(0), kGranule) == 0);
    CHECK(cpu_write(e.at(0)) == "segv"); // the program really lost it
    REQUIRE(s.ops->vmm_destroy(s.rt, e.maps[0].second) == 0);
    e.maps.clear();
}

TEST_CASE("vmm: chunks count against the device's memory")
{
    Sim s(make_settings()); // 64 MiB
    const tidal_rt_ops &o = *s.ops;
    void *device = s.alloc(TIDAL_KIND_DEVICE, 60 * kMiB);
    void *chunk = nullptr;
    CHECK(o.vmm_create(s.rt, 0, 3 * kGranule, &chunk) == 2);
    REQUIRE(o.vmm_create(s.rt, 0, kGranule, &chunk) == 0);
    CHECK(s.free_bytes() == 2 * kMiB);
    void *other = nullptr;
    CHECK(o.alloc(s.rt, TIDAL_KIND_DEVICE, 0, 4 * kMiB, &other) == 2);
    REQUIRE(o.vmm_destroy(s.rt, chunk) == 0);
    REQUIRE(o.alloc(s.rt, TIDAL_KIND_DEVICE, 0, 4 * kMiB, &other) == 0);
    CHECK(o.free(s.rt, TIDAL_KIND_DEVICE, 0, other, 4 * kMiB) == 0);
    CHECK(o.free(s.rt, TIDAL_KIND_DEVICE, 0, device, 60 * kMiB) == 0);
    CHECK(s.free_bytes() == 64 * kMiB);
}

TEST_CASE("vmm: bad arguments get a clear code and change nothing")
{
    SimSettings two = make_settings();
    two.devices = 2;
    Sim s(two);
    const tidal_rt_ops &o = *s.ops;
    void *p = nullptr, *chunk = nullptr, *big = nullptr;
    uint64_t g = 0;
    CHECK(o.vmm_granularity(s.rt, 2, &g) == 101);
    CHECK(o.vmm_granularity(s.rt, 0, nullptr) == 1);
    CHECK(o.vmm_reserve(s.rt, 0, kGranule + 4096, &p) == 1);
    CHECK(o.vmm_reserve(s.rt, 5, kGranule, &p) == 101);
    CHECK(o.vmm_create(s.rt, 0, 4096, &chunk) == 1);
    CHECK(o.vmm_create(s.rt, -1, kGranule, &chunk) == 101);
    CHECK(o.vmm_destroy(s.rt, &g) == 400);
    CHECK(o.vmm_release(s.rt, &g, kGranule) == 1);
    void *reserved = nullptr;
    REQUIRE(o.vmm_reserve(s.rt, 0, kGranule, &reserved) == 0);
    CHECK(o.host_register(s.rt, reserved, 4096) == 1);
    CHECK(o.vmm_release(s.rt, reserved, kGranule) == 0);

    Elastic e(s, 3);
    REQUIRE(o.vmm_create(s.rt, 0, kGranule, &chunk) == 0);
    REQUIRE(o.vmm_create(s.rt, 0, 2 * kGranule, &big) == 0);
    CHECK(o.vmm_map(s.rt, e.at(0), kGranule, &g) == 400);                // not a chunk
    CHECK(o.vmm_map(s.rt, at(e.at(0), 4096), kGranule, chunk) == 1);     // unaligned
    CHECK(o.vmm_map(s.rt, e.at(0), 2 * kGranule, chunk) == 1);           // not the chunk's size
    CHECK(o.vmm_map(s.rt, e.at(2), 2 * kGranule, big) == 1);             // past the end
    CHECK(o.vmm_map(s.rt, &g, kGranule, chunk) == 1);                    // no reservation
    REQUIRE(o.vmm_map(s.rt, e.at(1), 2 * kGranule, big) == 0);
    CHECK(o.vmm_map(s.rt, e.at(1), kGranule, chunk) == 1);               // already mapped
    CHECK(o.vmm_set_access(s.rt, 0, e.at(0), 3 * kGranule) == 1);        // a hole
    CHECK(o.vmm_set_access(s.rt, 3, e.at(1), 2 * kGranule) == 101);
    CHECK(o.vmm_unmap(s.rt, e.at(0), kGranule) == 1);                    // nothing there
    CHECK(o.vmm_release(s.rt, e.base, 2 * kGranule) == 1);               // not the whole
    // Access for device 1 only: device 0's kernels may not touch it; device 1's go to a peer.
    REQUIRE(o.vmm_set_access(s.rt, 1, e.at(1), 2 * kGranule) == 0);
    CHECK(o.kernel_touch(s.rt, 0, e.at(1), 4096, 0, nullptr) == kIllegal);
    CHECK(o.kernel_touch(s.rt, 1, e.at(1), 4096, 0, nullptr) == 0);
    CHECK(s.sim().counters(1).peer_bytes > 0);
    REQUIRE(o.vmm_unmap(s.rt, e.at(1), 2 * kGranule) == 0);
    CHECK(o.vmm_destroy(s.rt, big) == 0);
    CHECK(o.vmm_destroy(s.rt, chunk) == 0);
    CHECK(s.free_bytes(0) == 64 * kMiB);
}

// A failed call leaves memory, mappings and access exactly as they were: what the core's
// "nothing left half-mapped" rests on.
TEST_CASE("vmm: an injected fault changes nothing")
{
    SimSettings settings = make_settings();
    settings.faults = {{"vmm_create", 2, 1, 2}, {"vmm_map", 2, 1, 2}, {"vmm_set_access", 2, 1, 2},
                       {"vmm_unmap", 1, 1, 2}, {"vmm_destroy", 1, 1, 2}};
    Sim s(settings);
    const tidal_rt_ops &o = *s.ops;
    Elastic e(s, 2);
    void *chunk = e.resident(0); // the first call of each
    const uint64_t free_bytes = s.free_bytes();
    const double time = s.now();
    void *other = nullptr;
    CHECK(o.vmm_create(s.rt, 0, kGranule, &other) == 2);
    CHECK(other == nullptr);
    CHECK(s.free_bytes() == free_bytes);
    CHECK(o.vmm_map(s.rt, e.at(1), kGranule, chunk) == 2);
    CHECK(o.vmm_set_access(s.rt, 0, e.at(0), kGranule) == 2);
    CHECK(cpu_write(e.at(0)) == "written"); // still accessible
    CHECK(o.vmm_unmap(s.rt, e.at(0), kGranule) == 2);
    CHECK(cpu_write(e.at(0)) == "written"); // still mapped
    CHECK(cpu_write(e.at(1)) == "segv");    // the failed map left nothing there
    CHECK(s.now() == time);                 // and failed calls take no simulated time
    REQUIRE(o.vmm_unmap(s.rt, e.at(0), kGranule) == 0);
    CHECK(o.vmm_destroy(s.rt, chunk) == 2);
    CHECK(s.free_bytes() == free_bytes);
    REQUIRE(o.vmm_map(s.rt, e.at(1), kGranule, chunk) == 0); // the chunk is intact
    REQUIRE(o.vmm_set_access(s.rt, 0, e.at(1), kGranule) == 0);
    e.maps = {{e.at(1), chunk}};
}

TEST_CASE("vmm: the granularity comes from the profile")
{
    SimSettings settings = make_settings();
    settings.profile.vmm_granularity = 64 * 1024;
    Sim s(settings);
    uint64_t g = 0;
    REQUIRE(s.ops->vmm_granularity(s.rt, 0, &g) == 0);
    CHECK(g == 64 * 1024);
    void *p = nullptr;
    REQUIRE(s.ops->vmm_reserve(s.rt, 0, 3 * g, &p) == 0);
    CHECK(reinterpret_cast<uintptr_t>(p) % g == 0);
    CHECK(s.ops->vmm_release(s.rt, p, 3 * g) == 0);

    settings.profile.vmm_granularity = 3 * kMiB;
    void *rt = nullptr;
    char detail[200] = {};
    CHECK(sim_create(settings, &rt, detail, sizeof detail) == 1);
    CHECK(std::string(detail).find("vmm granularity") != std::string::npos);

    const tidal::SimProfile h200 = tidal::load_profile("h200", ".");
    CHECK(h200.vmm_granularity == kGranule);
    CHECK(h200.vmm_create_latency == doctest::Approx(12.4e-6));
    CHECK(h200.vmm_map_latency == doctest::Approx(1.1e-6));
    CHECK(h200.vmm_unmap_latency == doctest::Approx(22.1e-6));
    CHECK(h200.vmm_set_access_latency == doctest::Approx(1.8e-6));
    CHECK(h200.vmm_destroy_latency == doctest::Approx(46.2e-6));
    std::string text(tidal::builtin_profile_text("h200"));
    text.replace(text.find("vmm_granularity = \"2MiB\""), 24, "vmm_granularity = \"3MiB\"");
    try {
        tidal::parse_profile(text, "bad.toml", "bad", {});
        FAIL("a granularity of 3 MiB was accepted");
    } catch (const tidal::Error &e) {
        CHECK(e.status() == TIDAL_ERROR_CONFIG);
        CHECK(e.message().find("device.vmm_granularity = 3145728 must be a power of two") !=
              std::string::npos);
    }
}

// Elastic memory of a few GiB is thousands of chunks: a chunk must not hold a file descriptor,
// or a process with the usual limit of 1024 runs out (the first version used a memfd each).
TEST_CASE("vmm: chunks cost no file descriptors")
{
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const rlimit few{32, 32};
        SimSettings settings = make_settings();
        settings.profile.vmm_granularity = 64 * 1024;
        void *rt = nullptr, *base = nullptr;
        if (::setrlimit(RLIMIT_NOFILE, &few) != 0 || sim_create(settings, &rt, nullptr, 0) != 0)
            ::_exit(2);
        const tidal_rt_ops &o = *sim_ops();
        constexpr uint64_t kChunks = 256, kSize = 64 * 1024;
        if (o.vmm_reserve(rt, 0, kChunks * kSize, &base) != 0)
            ::_exit(3);
        for (uint64_t i = 0; i < kChunks; ++i) {
            void *chunk = nullptr;
            void *at = sim_fixture::at(base, i * kSize);
            if (o.vmm_create(rt, 0, kSize, &chunk) != 0 || o.vmm_map(rt, at, kSize, chunk) != 0 ||
                o.vmm_set_access(rt, 0, at, kSize) != 0)
                ::_exit(4);
        }
        o.destroy(rt);
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("vmm: several threads map and unmap at once")
{
    Sim s(make_settings());
    const tidal_rt_ops &o = *s.ops;
    std::vector<std::thread> threads;
    std::vector<int> failures(4, 0);
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
            void *base = nullptr, *chunk = nullptr;
            if (o.vmm_reserve(s.rt, 0, kGranule, &base) != 0 ||
                o.vmm_create(s.rt, 0, kGranule, &chunk) != 0) {
                ++failures[i];
                return;
            }
            for (int round = 0; round < 50; ++round) {
                failures[i] += o.vmm_map(s.rt, base, kGranule, chunk) != 0;
                failures[i] += o.vmm_set_access(s.rt, 0, base, kGranule) != 0;
                failures[i] += o.kernel_pattern_fill(s.rt, 0, base, 4096, round, nullptr) != 0;
                failures[i] += o.vmm_unmap(s.rt, base, kGranule) != 0;
            }
            failures[i] += o.vmm_destroy(s.rt, chunk) != 0;
            failures[i] += o.vmm_release(s.rt, base, kGranule) != 0;
        });
    for (std::thread &t : threads)
        t.join();
    CHECK(failures == std::vector<int>(4, 0));
    CHECK(s.free_bytes() == 64 * kMiB);
}
