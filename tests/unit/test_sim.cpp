// The simulated device, driven through its tidal_rt_ops table as the core drives it, with
// the C++ accessors of SimRuntime to look inside. Every expected figure is worked out by hand
// from the profile built in make_settings().
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "config/config_loader.h"
#include "config/fault_operations.h"
#include "pattern.h"
#include "runtime/runtime.h"
#include "runtime/sim/sim_module.h"
#include "runtime/sim/sim_runtime.h"
#include "sim_fixture.h"
#include "status/error.h"

using tidal::SimSettings;
using tidal::sim::FaultRecord;
using tidal::sim::Operation;
using tidal::sim::PageMask;
using tidal::sim::SimRuntime;
using tidal::sim::sim_create;
using tidal::sim::sim_ops;

using namespace sim_fixture;

TEST_CASE("sim_create describes the device; the table is the HIP-numbered 'sim' runtime")
{
    Sim s(make_settings());
    CHECK(s.detail == "simulated: profile test, 1 device(s), 64 MiB, xnack on");
    CHECK(std::string(s.ops->name) == "sim");
    CHECK(s.ops->family == TIDAL_RT_FAMILY_HIP);
    CHECK(s.ops->abi_version == TIDAL_RT_ABI_VERSION);
    CHECK(std::string(s.ops->error_name(700)) == "hipErrorIllegalAddress");
    CHECK(std::string(s.ops->error_name(2)) == "hipErrorOutOfMemory");
    CHECK(std::string(s.ops->error_name(123456)) == "hipErrorUnknown");

    char detail[128] = {};
    void *rt = nullptr;
    CHECK(s.ops->create(nullptr, nullptr, &rt, detail, sizeof detail) == 801);
    CHECK(rt == nullptr);

    SimSettings bad = make_settings();
    bad.profile.vendor = "intel";
    CHECK(sim_create(bad, &rt, detail, sizeof detail) == 1);
    CHECK(std::string(detail).find("intel") != std::string::npos);
    CHECK(rt == nullptr);

    SimSettings overridden = make_settings();
    overridden.devices = 2;
    overridden.capacity = 3ull << 30;
    overridden.xnack = false;
    Sim two(overridden);
    CHECK(two.detail == "simulated: profile test, 2 device(s), 3 GiB, xnack off");
    int32_t count = 0;
    CHECK(two.ops->device_count(two.rt, &count) == 0);
    CHECK(count == 2);
}

TEST_CASE("device memory counts against capacity; out of memory allocates nothing")
{
    Sim s(make_settings());
    void *a = s.alloc(TIDAL_KIND_DEVICE, 40 * kMiB);
    CHECK(s.free_bytes() == 24 * kMiB);
    CHECK(s.sim().resident_bytes(0) == 40 * kMiB);

    void *untouched = reinterpret_cast<void *>(0x1234);
    CHECK(s.ops->alloc(s.rt, TIDAL_KIND_DEVICE, 0, 40 * kMiB, &untouched) == 2);
    CHECK(untouched == reinterpret_cast<void *>(0x1234));
    CHECK(s.ops->alloc(s.rt, TIDAL_KIND_DEVICE, 0, 65 * kMiB, &untouched) == 2); // never fits
    CHECK(s.free_bytes() == 24 * kMiB);

    // Managed memory starts on the host and pinned memory never counts: neither touches the
    // device budget, even far beyond the capacity (and MAP_NORESERVE keeps it cheap).
    void *m = s.alloc(TIDAL_KIND_MANAGED, 200 * kMiB);
    void *h = s.alloc(TIDAL_KIND_PINNED, 1024 * kMiB);
    CHECK(s.free_bytes() == 24 * kMiB);

    CHECK(s.sim().counters(0).allocations == 2); // device + managed
    CHECK(s.sim().host_counters().allocations == 1);
    CHECK(s.sim().counters(0).peak_resident_bytes == 40 * kMiB);

    CHECK(s.ops->free(s.rt, TIDAL_KIND_DEVICE, 0, a, 40 * kMiB) == 0);
    CHECK(s.free_bytes() == 64 * kMiB);
    CHECK(s.ops->free(s.rt, TIDAL_KIND_DEVICE, 0, a, 40 * kMiB) == 1); // already freed
    CHECK(s.ops->free(s.rt, TIDAL_KIND_MANAGED, 0, m, 200 * kMiB) == 0);
    CHECK(s.ops->free(s.rt, TIDAL_KIND_PINNED, kHost, h, 1024 * kMiB) == 0);
    CHECK(s.sim().counters(0).frees == 2);
}

TEST_CASE("managed residency follows prefetch both ways")
{
    Sim s(make_settings());
    void *m = s.alloc(TIDAL_KIND_MANAGED, 8 * kPage);
    for (PageMask page : s.sim().page_residency(m))
        CHECK(page == PageMask::at(-1));
    CHECK(s.query(m, 8 * kPage, TIDAL_RT_ATTR_LAST_PREFETCH_LOCATION) == -2);

    double t0 = s.now();
    REQUIRE(s.ops->prefetch(s.rt, at(m, 2 * kPage), 4 * kPage, 0, nullptr) == 0);
    CHECK(s.now() - t0 == doctest::Approx(4.0 * kPage / 5e9 + 1e-5));
    const auto pages = s.sim().page_residency(at(m, 100)); // interior pointer
    REQUIRE(pages.size() == 8);
    for (std::size_t i = 0; i < 8; ++i) {
        const bool moved = i >= 2 && i < 6;
        CHECK(pages[i].on_device(0) == moved);
        CHECK(pages[i].on_host() == !moved);
    }
    CHECK(s.sim().resident_bytes(0) == 4 * kPage);
    CHECK(s.free_bytes() == 64 * kMiB - 4 * kPage);
    CHECK(s.sim().counters(0).bytes_migrated_h2d == 4 * kPage);
    CHECK(s.query(m, 8 * kPage, TIDAL_RT_ATTR_LAST_PREFETCH_LOCATION) == 0);

    // Pages already there cost nothing.
    t0 = s.now();
    REQUIRE(s.ops->prefetch(s.rt, at(m, 3 * kPage), kPage, 0, nullptr) == 0);
    CHECK(s.now() == t0);

    // A range that starts and ends inside pages moves the whole pages it touches.
    REQUIRE(s.ops->prefetch(s.rt, at(m, kPage + 10), 100, 0, nullptr) == 0);
    CHECK(s.sim().page_at(at(m, kPage))->on_device(0));
    CHECK(s.sim().resident_bytes(0) == 5 * kPage);

    t0 = s.now();
    REQUIRE(s.ops->prefetch(s.rt, m, 8 * kPage, TIDAL_RT_LOCATION_HOST, nullptr) == 0);
    CHECK(s.now() - t0 == doctest::Approx(5.0 * kPage / 2.5e9 + 1e-5));
    for (PageMask page : s.sim().page_residency(m))
        CHECK(page == PageMask::at(-1));
    CHECK(s.sim().resident_bytes(0) == 0);
    CHECK(s.sim().counters(0).bytes_migrated_d2h == 5 * kPage);
    CHECK(s.query(m, 8 * kPage, TIDAL_RT_ATTR_LAST_PREFETCH_LOCATION) == -1);

    // Only managed memory prefetches.
    void *d = s.alloc(TIDAL_KIND_DEVICE, kPage);
    CHECK(s.ops->prefetch(s.rt, d, kPage, 0, nullptr) == 1);
}

TEST_CASE("a prefetch that would overfill the device fails and moves nothing")
{
    Sim s(make_settings());
    void *d = s.alloc(TIDAL_KIND_DEVICE, 60 * kMiB);
    void *m = s.alloc(TIDAL_KIND_MANAGED, 8 * kMiB);
    const double t0 = s.now();
    CHECK(s.ops->prefetch(s.rt, m, 8 * kMiB, 0, nullptr) == 2);
    CHECK(s.now() == t0);
    CHECK(s.sim().resident_bytes(0) == 60 * kMiB);
    for (PageMask page : s.sim().page_residency(m))
        CHECK(page == PageMask::at(-1));
    CHECK(s.ops->prefetch(s.rt, m, 4 * kMiB, 0, nullptr) == 0); // exactly fills it
    CHECK(s.free_bytes() == 0);
    CHECK(s.ops->free(s.rt, TIDAL_KIND_DEVICE, 0, d, 60 * kMiB) == 0);
}

TEST_CASE("read-mostly advice duplicates pages, and prefetching home keeps the device copy")
{
    Sim s(make_settings());
    void *m = s.alloc(TIDAL_KIND_MANAGED, 4 * kPage);
    REQUIRE(s.ops->advise(s.rt, m, 4 * kPage, TIDAL_RT_ADVISE_SET_READ_MOSTLY, 0) == 0);
    CHECK(s.query(m, 4 * kPage, TIDAL_RT_ATTR_READ_MOSTLY) == 1);

    REQUIRE(s.ops->prefetch(s.rt, m, 4 * kPage, 0, nullptr) == 0);
    for (PageMask page : s.sim().page_residency(m)) {
        CHECK(page.on_host());
        CHECK(page.on_device(0));
        CHECK(page.copies() == 2);
    }
    CHECK(s.sim().resident_bytes(0) == 4 * kPage);

    // As measured on the H200: prefetching read-mostly pages to the host frees nothing.
    const double t0 = s.now();
    REQUIRE(s.ops->prefetch(s.rt, m, 4 * kPage, TIDAL_RT_LOCATION_HOST, nullptr) == 0);
    CHECK(s.now() == t0);
    CHECK(s.sim().resident_bytes(0) == 4 * kPage);

    // A device write invalidates the other copies of the page it writes.
    REQUIRE(s.ops->kernel_touch(s.rt, 0, m, kPage, 1, nullptr) == 0);
    CHECK(*s.sim().page_at(m) == PageMask::at(0));
    CHECK(s.sim().page_at(at(m, kPage))->copies() == 2);

    // Unsetting collapses the duplicates onto the preferred location: none -> host.
    REQUIRE(s.ops->advise(s.rt, m, 4 * kPage, TIDAL_RT_ADVISE_UNSET_READ_MOSTLY, 0) == 0);
    CHECK(s.query(m, 4 * kPage, TIDAL_RT_ATTR_READ_MOSTLY) == 0);
    const auto pages = s.sim().page_residency(m);
    CHECK(pages[0] == PageMask::at(0)); // it had a single copy already
    for (std::size_t i = 1; i < 4; ++i)
        CHECK(pages[i] == PageMask::at(-1));
    CHECK(s.sim().resident_bytes(0) == kPage);

    // With a preferred device, they collapse onto the device.
    void *w = s.alloc(TIDAL_KIND_MANAGED, 2 * kPage);
    REQUIRE(s.ops->advise(s.rt, w, 2 * kPage, TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION, 0) == 0);
    CHECK(s.query(w, 2 * kPage, TIDAL_RT_ATTR_PREFERRED_LOCATION) == 0);
    REQUIRE(s.ops->advise(s.rt, w, 2 * kPage, TIDAL_RT_ADVISE_SET_READ_MOSTLY, 0) == 0);
    REQUIRE(s.ops->prefetch(s.rt, w, 2 * kPage, 0, nullptr) == 0);
    REQUIRE(s.ops->advise(s.rt, w, 2 * kPage, TIDAL_RT_ADVISE_UNSET_READ_MOSTLY, 0) == 0);
    for (PageMask page : s.sim().page_residency(w))
        CHECK(page == PageMask::at(0));
    CHECK(s.sim().resident_bytes(0) == 3 * kPage);
    REQUIRE(s.ops->advise(s.rt, w, 2 * kPage, TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION, 0) == 0);
    CHECK(s.query(w, 2 * kPage, TIDAL_RT_ATTR_PREFERRED_LOCATION) == -2);
}

TEST_CASE("copy and fill costs follow the profile's bandwidth for each (source, destination)")
{
    Sim s(make_settings());
    const size_t n = kMiB;
    const double lat = 1e-5;
    double t0 = s.now();
    void *dev = s.alloc(TIDAL_KIND_DEVICE, n);
    CHECK(s.now() - t0 == doctest::Approx(1e-4)); // alloc_latency_device
    void *dev2 = s.alloc(TIDAL_KIND_DEVICE, n);
    t0 = s.now();
    void *pinned = s.alloc(TIDAL_KIND_PINNED, n);
    CHECK(s.now() - t0 == doctest::Approx(1e-3));
    void *pageable = s.alloc(TIDAL_KIND_PAGEABLE, n);
    void *managed = s.alloc(TIDAL_KIND_MANAGED, n);
    std::vector<unsigned char> outside(n, 0xAB); // memory the simulated device never saw

    const auto cost = [&](void *dst, const void *src) {
        const double before = s.now();
        REQUIRE(s.ops->memcpy(s.rt, dst, src, n, nullptr) == 0);
        return s.now() - before;
    };
    std::memset(pageable, 0x5A, n);
    CHECK(cost(dev, pageable) == doctest::Approx(n / 1e9 + lat));
    CHECK(static_cast<unsigned char *>(dev)[n - 1] == 0x5A); // real bytes moved
    CHECK(cost(dev, pinned) == doctest::Approx(n / 4e9 + lat));
    CHECK(cost(pageable, dev) == doctest::Approx(n / 2e9 + lat));
    CHECK(cost(pinned, dev) == doctest::Approx(n / 8e9 + lat));
    CHECK(cost(dev2, dev) == doctest::Approx(n / 100e9 + lat));
    CHECK(cost(pinned, pageable) == doctest::Approx(n / 10e9 + lat));
    CHECK(cost(dev, outside.data()) == doctest::Approx(n / 1e9 + lat)); // unknown = pageable
    CHECK(static_cast<unsigned char *>(dev)[0] == 0xAB);

    // Managed memory is costed where it lives.
    CHECK(cost(dev, managed) == doctest::Approx(n / 1e9 + lat));
    REQUIRE(s.ops->prefetch(s.rt, managed, n, 0, nullptr) == 0);
    CHECK(cost(pageable, managed) == doctest::Approx(n / 2e9 + lat));

    // Registered memory copies at the pinned rate.
    REQUIRE(s.ops->host_register(s.rt, outside.data(), n) == 0);
    CHECK(cost(dev, outside.data()) == doctest::Approx(n / 4e9 + lat));
    CHECK(s.ops->host_register(s.rt, outside.data() + 16, 64) == 712);
    REQUIRE(s.ops->host_unregister(s.rt, outside.data()) == 0);
    CHECK(s.ops->host_unregister(s.rt, outside.data()) == 713);

    t0 = s.now();
    REQUIRE(s.ops->memset(s.rt, dev, 0x11, n, nullptr) == 0);
    CHECK(s.now() - t0 == doctest::Approx(n / 100e9 + lat));
    CHECK(static_cast<unsigned char *>(dev)[n / 2] == 0x11);
    t0 = s.now();
    REQUIRE(s.ops->memset(s.rt, pinned, 0, n, nullptr) == 0);
    CHECK(s.now() - t0 == doctest::Approx(n / 10e9 + lat));

    // dev <- pageable, pinned, outside (x2), managed (host-resident)
    CHECK(s.sim().counters(0).copy_bytes_h2d == 5 * n);
    // pageable, pinned <- dev; pageable <- managed (device-resident)
    CHECK(s.sim().counters(0).copy_bytes_d2h == 3 * n);

    // A copy that runs off the end of a simulated allocation is refused.
    CHECK(s.ops->memcpy(s.rt, at(dev, 8), pinned, n, nullptr) == 1);
}

TEST_CASE("host work the core reports costs host time: staging copies by thread count, collapsing duplicates")
{
    SimSettings settings = make_settings();
    settings.profile.staging_memcpy_bw = 20e9;
    settings.profile.host_memcpy_thread_bw = 4e9;
    settings.profile.readmostly_collapse_bw = 8e9;
    Sim s(settings);
    const size_t n = 8 * kMiB;
    // Staging: all threads at staging_memcpy, each at most host_memcpy_thread.
    double t0 = s.now();
    REQUIRE(s.ops->host_copy(s.rt, n, 16) == 0);
    CHECK(s.now() - t0 == doctest::Approx(n / 20e9));
    t0 = s.now();
    REQUIRE(s.ops->host_copy(s.rt, n, 2) == 0);
    CHECK(s.now() - t0 == doctest::Approx(n / 8e9));
    CHECK(s.ops->host_copy(s.rt, n, 0) == 1); // hipErrorInvalidValue

    // Collapsing read-mostly duplicates (no data moves) costs readmostly_collapse, and the
    // driver does it in turn with the device's migrations: it waits for the host->device link.
    void *m = s.alloc(TIDAL_KIND_MANAGED, 4 * kPage);
    void *next = s.alloc(TIDAL_KIND_MANAGED, 4 * kPage);
    REQUIRE(s.ops->advise(s.rt, m, 4 * kPage, TIDAL_RT_ADVISE_SET_READ_MOSTLY, 0) == 0);
    REQUIRE(s.ops->prefetch(s.rt, m, 4 * kPage, 0, nullptr) == 0);
    void *stream = nullptr;
    REQUIRE(s.ops->stream_create(s.rt, 0, &stream) == 0);
    t0 = s.now();
    REQUIRE(s.ops->prefetch(s.rt, next, 4 * kPage, 0, stream) == 0); // on the link, asynchronous
    REQUIRE(s.ops->advise(s.rt, m, 4 * kPage, TIDAL_RT_ADVISE_UNSET_READ_MOSTLY, 0) == 0);
    CHECK(s.now() - t0 == doctest::Approx(4.0 * kPage / 5e9 + 1e-5 + 4.0 * kPage / 8e9));
    // Nothing duplicated any more: unsetting again costs nothing.
    t0 = s.now();
    REQUIRE(s.ops->advise(s.rt, m, 4 * kPage, TIDAL_RT_ADVISE_UNSET_READ_MOSTLY, 0) == 0);
    CHECK(s.now() == t0);
    REQUIRE(s.ops->stream_destroy(s.rt, stream) == 0);
}

TEST_CASE("xnack on: a kernel touching host-resident managed pages migrates them on fault")
{
    Sim s(make_settings());
    tidal_rt_device_props props{};
    REQUIRE(s.ops->device_props(s.rt, 0, &props) == 0);
    CHECK(props.migrates_on_fault == 1);
    CHECK(props.pageable_access == 0); // the H200 has no HMM
    CHECK(props.xnack == TIDAL_XNACK_NOT_APPLICABLE);
    CHECK(props.simulated == 1);
    CHECK(props.total_memory == 64 * kMiB);
    CHECK(props.page_size == kPage);
    CHECK(std::string(props.name) == "Simulated NVIDIA H200");

    void *m = s.alloc(TIDAL_KIND_MANAGED, 4 * kPage);
    const double t0 = s.now();
    REQUIRE(s.ops->kernel_touch(s.rt, 0, m, 4 * kPage, 0, nullptr) == 0);
    // 4 faults of a full page each; the touch itself reads 8 bytes per 4 KiB.
    const double traffic = 4.0 * kPage * 8 / 4096;
    CHECK(s.now() - t0 ==
          doctest::Approx(5e-6 + 4 * (kPage / 1e9 + 2e-5) + traffic / 100e9));
    for (PageMask page : s.sim().page_residency(m))
        CHECK(page == PageMask::at(0));
    CHECK(s.sim().counters(0).faults == 4);
    CHECK(s.sim().counters(0).bytes_migrated_h2d == 4 * kPage);
    CHECK(s.sim().counters(0).zero_copy_bytes == 0);
    CHECK(s.sim().resident_bytes(0) == 4 * kPage);

    // Resident now: no more faults.
    REQUIRE(s.ops->kernel_touch(s.rt, 0, m, 4 * kPage, 1, nullptr) == 0);
    CHECK(s.sim().counters(0).faults == 4);

    // Accessed-by advice maps the pages: the device reads them over the link instead.
    void *mapped = s.alloc(TIDAL_KIND_MANAGED, 2 * kPage);
    REQUIRE(s.ops->advise(s.rt, mapped, 2 * kPage, TIDAL_RT_ADVISE_SET_ACCESSED_BY, 0) == 0);
    REQUIRE(s.ops->kernel_touch(s.rt, 0, mapped, 2 * kPage, 0, nullptr) == 0);
    CHECK(s.sim().page_at(mapped)->on_host());
    CHECK(s.sim().counters(0).zero_copy_bytes == 2 * kPage * 8 / 4096);

    // A full device serves the fault over the link rather than overfilling.
    SimSettings small = make_settings();
    small.capacity = 2 * kPage;
    Sim tight(small);
    void *big = tight.alloc(TIDAL_KIND_MANAGED, 4 * kPage);
    REQUIRE(tight.ops->kernel_touch(tight.rt, 0, big, 4 * kPage, 0, nullptr) == 0);
    CHECK(tight.sim().counters(0).faults == 2);
    CHECK(tight.sim().counters(0).oversubscribed == 2);
    CHECK(tight.sim().resident_bytes(0) == 2 * kPage);
}

TEST_CASE("paging counts: faults by origin, link reads and prefetch moves, per device and per page range")
{
    Sim s(make_settings());
    void *m = s.alloc(TIDAL_KIND_MANAGED, 4 * kPage);
    REQUIRE(s.ops->kernel_touch(s.rt, 0, m, 2 * kPage, 0, nullptr) == 0);          // 2 faults
    REQUIRE(s.ops->prefetch(s.rt, m, 4 * kPage, 0, nullptr) == 0);                  // 2 pages move in
    REQUIRE(s.ops->prefetch(s.rt, m, 4 * kPage, TIDAL_RT_LOCATION_HOST, nullptr) == 0); // 4 pages move out
    void *mapped = s.alloc(TIDAL_KIND_MANAGED, kPage);
    REQUIRE(s.ops->advise(s.rt, mapped, kPage, TIDAL_RT_ADVISE_SET_ACCESSED_BY, 0) == 0);
    REQUIRE(s.ops->kernel_touch(s.rt, 0, mapped, kPage, 0, nullptr) == 0);          // over the link

    tidal_rt_paging_stats d{};
    d.struct_size = sizeof d;
    REQUIRE(s.ops->paging_stats(s.rt, 0, &d) == 0);
    CHECK(d.struct_size == sizeof d);
    CHECK(d.faults_from_host == 2);
    CHECK(d.fault_bytes_from_host == 2 * kPage);
    CHECK(d.faults_from_peer == 0);
    CHECK(d.moved_to_device_bytes == 2 * kPage);
    CHECK(d.moved_to_host_bytes == 4 * kPage);
    CHECK(d.link_bytes == kPage * 8 / 4096);
    CHECK(d.link_page_bytes == kPage);
    CHECK(s.ops->paging_stats(s.rt, 1, &d) == 101); // hipErrorInvalidDevice

    tidal_rt_paging_stats r{};
    REQUIRE(s.ops->range_paging(s.rt, m, 4 * kPage, 0, &r) == 0);
    CHECK(r.fault_bytes_from_host == 2 * kPage);
    CHECK(r.moved_to_device_bytes == 2 * kPage);
    CHECK(r.moved_to_host_bytes == 4 * kPage);
    CHECK(r.link_page_bytes == 0);
    // One page of the range: its own counts only (a block of a pooled allocation).
    REQUIRE(s.ops->range_paging(s.rt, static_cast<char *>(m) + 3 * kPage, kPage, 0, &r) == 0);
    CHECK(r.faults_from_host == 0);
    CHECK(r.moved_to_host_bytes == kPage);
    // Read with reset, as the core does when a buffer is freed: the next owner starts from zero,
    // the device's totals keep everything.
    REQUIRE(s.ops->range_paging(s.rt, m, 4 * kPage, 1, &r) == 0);
    CHECK(r.faults_from_host == 2);
    REQUIRE(s.ops->range_paging(s.rt, m, 4 * kPage, 0, &r) == 0);
    CHECK(r.faults_from_host == 0);
    CHECK(r.moved_to_host_bytes == 0);
    REQUIRE(s.ops->paging_stats(s.rt, 0, &d) == 0);
    CHECK(d.faults_from_host == 2);
    REQUIRE(s.ops->range_paging(s.rt, mapped, kPage, 0, &r) == 0);
    CHECK(r.link_page_bytes == kPage);
    // Only managed memory has pages to count.
    void *dev = s.alloc(TIDAL_KIND_DEVICE, kPage);
    CHECK(s.ops->range_paging(s.rt, dev, kPage, 0, &r) == 1); // hipErrorInvalidValue
}

TEST_CASE("xnack off: managed pages stay on the host and are read over the link")
{
    SimSettings settings = make_settings("amd", true);
    settings.xnack = false; // the settings override wins over the profile
    Sim s(settings);
    tidal_rt_device_props props{};
    REQUIRE(s.ops->device_props(s.rt, 0, &props) == 0);
    CHECK(props.migrates_on_fault == 0);
    CHECK(props.pageable_access == 0);
    CHECK(props.xnack == TIDAL_XNACK_OFF);
    CHECK(std::string(props.arch) == "gfx90a:sramecc+:xnack-");

    void *m = s.alloc(TIDAL_KIND_MANAGED, 4 * kPage);
    const double t0 = s.now();
    REQUIRE(s.ops->kernel_pattern_fill(s.rt, 0, m, 4 * kPage, 7, nullptr) == 0);
    CHECK(s.now() - t0 == doctest::Approx(5e-6 + 4.0 * kPage / 0.5e9));
    for (PageMask page : s.sim().page_residency(m))
        CHECK(page == PageMask::at(-1));
    CHECK(s.sim().counters(0).faults == 0);
    CHECK(s.sim().counters(0).zero_copy_bytes == 4 * kPage);
    CHECK(s.sim().resident_bytes(0) == 0);
    CHECK(static_cast<uint64_t *>(m)[3] == tidal_pattern_word(7, 3)); // the work was done
}

TEST_CASE("a kernel touching pageable memory without pageable access is an illegal address")
{
    Sim s(make_settings());
    std::vector<uint64_t> host(1024, 0);
    const double t0 = s.now();
    CHECK(s.ops->kernel_pattern_fill(s.rt, 0, host.data(), host.size() * 8, 1, nullptr) == 700);
    CHECK(host[5] == 0); // nothing ran
    CHECK(s.now() == t0);
    CHECK(s.sim().counters(0).fatal_faults == 1);
    const auto log = s.sim().fault_log();
    REQUIRE(log.size() == 1);
    CHECK(log[0].type == FaultRecord::Type::illegal_address);
    CHECK(log[0].address == reinterpret_cast<uintptr_t>(host.data()));
    CHECK(log[0].device == 0);
    CHECK(log[0].native_error == 700);

    void *pageable = s.alloc(TIDAL_KIND_PAGEABLE, 4096);
    CHECK(s.ops->kernel_touch(s.rt, 0, pageable, 4096, 0, nullptr) == 700);
    // A copy kernel with one legal and one illegal range does nothing either.
    void *dev = s.alloc(TIDAL_KIND_DEVICE, 4096);
    std::memset(dev, 0x77, 4096);
    CHECK(s.ops->kernel_copy(s.rt, 0, dev, pageable, 4096, nullptr) == 700);
    CHECK(static_cast<unsigned char *>(dev)[10] == 0x77);
    // Running off the end of device memory is illegal too.
    CHECK(s.ops->kernel_touch(s.rt, 0, dev, 8192, 0, nullptr) == 700);
    CHECK(s.sim().counters(0).fatal_faults == 4);

    // Pinned and registered memory are reachable, zero-copy.
    void *pinned = s.alloc(TIDAL_KIND_PINNED, 4096);
    CHECK(s.ops->kernel_pattern_fill(s.rt, 0, pinned, 4096, 1, nullptr) == 0);
    CHECK(s.sim().counters(0).zero_copy_bytes == 4096);
    REQUIRE(s.ops->host_register(s.rt, host.data(), host.size() * 8) == 0);
    CHECK(s.ops->kernel_pattern_fill(s.rt, 0, host.data(), host.size() * 8, 1, nullptr) == 0);
    CHECK(host[5] == tidal_pattern_word(1, 5));
    REQUIRE(s.ops->host_unregister(s.rt, host.data()) == 0);

    // AMD with XNACK on has pageable access (HMM): the same call works.
    Sim amd(make_settings("amd", true));
    tidal_rt_device_props props{};
    REQUIRE(amd.ops->device_props(amd.rt, 0, &props) == 0);
    CHECK(props.pageable_access == 1);
    CHECK(std::string(props.arch) == "gfx90a:sramecc+:xnack+");
    std::vector<uint64_t> other(512, 0);
    CHECK(amd.ops->kernel_pattern_fill(amd.rt, 0, other.data(), other.size() * 8, 3, nullptr) == 0);
    CHECK(other[511] == tidal_pattern_word(3, 511));
}

TEST_CASE("pattern fill and check agree, and a corrupted word is caught")
{
    Sim s(make_settings());
    const size_t n = 256 * 1024;
    void *a = s.alloc(TIDAL_KIND_DEVICE, n);
    void *b = s.alloc(TIDAL_KIND_DEVICE, n);
    REQUIRE(s.ops->kernel_pattern_fill(s.rt, 0, a, n, 42, nullptr) == 0);
    auto *words = static_cast<uint64_t *>(a);
    CHECK(words[0] == tidal_pattern_word(42, 0));
    CHECK(words[n / 8 - 1] == tidal_pattern_word(42, n / 8 - 1));

    uint64_t mismatches = 99;
    REQUIRE(s.ops->kernel_pattern_check(s.rt, 0, a, n, 42, &mismatches, nullptr) == 0);
    CHECK(mismatches == 0);
    words[1000] ^= 1; // one flipped bit
    REQUIRE(s.ops->kernel_pattern_check(s.rt, 0, a, n, 42, &mismatches, nullptr) == 0);
    CHECK(mismatches == 1);
    REQUIRE(s.ops->kernel_pattern_check(s.rt, 0, a, n, 43, &mismatches, nullptr) == 0);
    CHECK(mismatches == n / 8);

    REQUIRE(s.ops->kernel_copy(s.rt, 0, b, a, n, nullptr) == 0);
    REQUIRE(s.ops->kernel_pattern_check(s.rt, 0, b, n, 42, &mismatches, nullptr) == 0);
    CHECK(mismatches == 1);
    // Sizes must be whole words.
    CHECK(s.ops->kernel_pattern_check(s.rt, 0, a, 12, 42, &mismatches, nullptr) == 1);

    auto *x = static_cast<double *>(s.alloc(TIDAL_KIND_DEVICE, 1024 * sizeof(double)));
    auto *y = static_cast<double *>(s.alloc(TIDAL_KIND_DEVICE, 1024 * sizeof(double)));
    auto *z = static_cast<double *>(s.alloc(TIDAL_KIND_DEVICE, 1024 * sizeof(double)));
    for (int i = 0; i < 1024; ++i) {
        y[i] = 1.0 + i;
        z[i] = 2.0;
    }
    REQUIRE(s.ops->kernel_triad(s.rt, 0, x, y, z, 3.0, 1024 * sizeof(double), nullptr) == 0);
    CHECK(x[0] == 7.0);
    CHECK(x[1023] == 1030.0);

    auto *counters = static_cast<uint64_t *>(s.alloc(TIDAL_KIND_DEVICE, 4 * 8));
    REQUIRE(s.ops->memset(s.rt, counters, 0, 32, nullptr) == 0);
    REQUIRE(s.ops->kernel_atomic_add(s.rt, 0, counters, 4, 10, nullptr) == 0);
    REQUIRE(s.ops->kernel_atomic_add(s.rt, 0, counters, 4, 5, nullptr) == 0);
    CHECK(counters[0] == 15);
    CHECK(counters[3] == 15);
}

TEST_CASE("a batch copy kernel: one launch, the table and every item's traffic; any illegal item stops it all")
{
    Sim s(make_settings());
    auto *a = static_cast<unsigned char *>(s.alloc(TIDAL_KIND_DEVICE, 64 * 1024));
    auto *b = static_cast<unsigned char *>(s.alloc(TIDAL_KIND_DEVICE, 64 * 1024));
    auto *table = static_cast<tidal_rt_copy_item *>(s.alloc(TIDAL_KIND_DEVICE, 4 * sizeof(tidal_rt_copy_item)));
    for (size_t i = 0; i < 64 * 1024; ++i)
        a[i] = static_cast<unsigned char>(i * 7);
    std::memset(b, 0, 64 * 1024);
    table[0] = {b, a, 1000};
    table[1] = {b + 30000, a + 10001, 3000};
    table[2] = {b + 50000, a + 40000, 0};
    const double t0 = s.now();
    REQUIRE(s.ops->kernel_batch_copy(s.rt, 0, table, 3, 3000, nullptr) == 0);
    // 5 us launch + (72 table bytes + 2 x 4000 item bytes) at 100 GB/s.
    CHECK(s.now() - t0 == doctest::Approx(5e-6 + (72 + 8000) / 100e9));
    CHECK(std::memcmp(b, a, 1000) == 0);
    CHECK(std::memcmp(b + 30000, a + 10001, 3000) == 0);
    CHECK(b[29999] == 0);
    CHECK(b[1000] == 0);

    // An item larger than max_size is a bad argument; nothing runs.
    CHECK(s.ops->kernel_batch_copy(s.rt, 0, table, 3, 2999, nullptr) == 1);
    // An item the device cannot reach (pageable memory, no HMM): illegal, nothing copied.
    std::vector<unsigned char> pageable(4096, 0);
    std::memset(b, 0, 64 * 1024);
    table[2] = {pageable.data(), a, 4096};
    const double t1 = s.now();
    CHECK(s.ops->kernel_batch_copy(s.rt, 0, table, 3, 4096, nullptr) == 700);
    CHECK(s.now() == t1);
    CHECK(b[5] == 0);
    CHECK(pageable[5] == 0);
    // Nor may the table itself live where the device cannot read it.
    std::vector<tidal_rt_copy_item> host_table{{b, a, 8}};
    CHECK(s.ops->kernel_batch_copy(s.rt, 0, host_table.data(), 1, 8, nullptr) == 700);
    CHECK(s.sim().counters(0).fatal_faults == 2);
}

TEST_CASE("fault injection fails the nth call of an operation for count calls")
{
    SimSettings settings = make_settings();
    settings.faults = {{"alloc", 2, 2, 2}, {"memcpy", 2, 0, 801}, {"kernel", 1, 1, 700}};
    Sim s(settings);
    void *first = s.alloc(TIDAL_KIND_DEVICE, kPage);
    void *out = nullptr;
    CHECK(s.ops->alloc(s.rt, TIDAL_KIND_DEVICE, 0, kPage, &out) == 2);
    CHECK(s.ops->alloc(s.rt, TIDAL_KIND_PINNED, 0, kPage, &out) == 2);
    CHECK(out == nullptr);
    CHECK(s.sim().resident_bytes(0) == kPage); // the failed calls allocated nothing
    void *fourth = s.alloc(TIDAL_KIND_DEVICE, kPage);
    CHECK(s.sim().calls(Operation::alloc) == 4);

    std::vector<unsigned char> host(kPage, 1);
    CHECK(s.ops->memcpy(s.rt, first, host.data(), kPage, nullptr) == 0);
    std::memset(host.data(), 2, kPage);
    CHECK(s.ops->memcpy(s.rt, first, host.data(), kPage, nullptr) == 801); // count 0: all after
    CHECK(s.ops->memcpy(s.rt, fourth, host.data(), kPage, nullptr) == 801);
    CHECK(static_cast<unsigned char *>(first)[0] == 1);

    uint64_t mismatches = 0;
    CHECK(s.ops->kernel_pattern_fill(s.rt, 0, fourth, kPage, 5, nullptr) == 700);
    CHECK(s.sim().counters(0).fatal_faults == 0); // injected, not a real illegal access
    CHECK(s.ops->kernel_pattern_fill(s.rt, 0, fourth, kPage, 5, nullptr) == 0);
    CHECK(s.ops->kernel_pattern_check(s.rt, 0, fourth, kPage, 5, &mismatches, nullptr) == 0);
    CHECK(mismatches == 0);

    const auto log = s.sim().fault_log();
    REQUIRE(log.size() == 5);
    CHECK(log[0].type == FaultRecord::Type::injected);
    CHECK(log[0].operation == "alloc");
    CHECK(log[0].call == 2);
    CHECK(log[1].call == 3);
    CHECK(log[2].operation == "memcpy");
    CHECK(log[4].operation == "kernel");
    CHECK(log[4].native_error == 700);

    // "create" fails sim_create itself; nothing is handed out.
    SimSettings doomed = make_settings();
    doomed.faults = {{"create", 1, 1, 100}};
    void *rt = nullptr;
    char detail[160] = {};
    CHECK(sim_create(doomed, &rt, detail, sizeof detail) == 100);
    CHECK(rt == nullptr);
    CHECK(std::string(detail).find("cudaErrorNoDevice (100)") != std::string::npos); // an NVIDIA profile
    SimSettings doomed_amd = make_settings("amd");
    doomed_amd.faults = {{"create", 1, 1, 100}};
    CHECK(sim_create(doomed_amd, &rt, detail, sizeof detail) == 100);
    CHECK(std::string(detail).find("hipErrorNoDevice (100)") != std::string::npos);

    doomed.faults = {{"explode", 1, 1, 2}};
    CHECK(sim_create(doomed, &rt, detail, sizeof detail) == 1);
    CHECK(std::string(detail).find("explode") != std::string::npos);
}

TEST_CASE("a simulated device names its errors as its profile's vendor does; the numbers stay")
{
    const tidal_rt_ops *nvidia = tidal::sim::sim_ops(make_settings("nvidia"));
    CHECK(nvidia->family == TIDAL_RT_FAMILY_CUDA);
    CHECK(std::string(nvidia->error_name(2)) == "cudaErrorMemoryAllocation");
    CHECK(std::string(nvidia->error_name(700)) == "cudaErrorIllegalAddress");
    CHECK(std::string(nvidia->error_name(123456)) == "cudaErrorUnknown");
    const tidal_rt_ops *amd = tidal::sim::sim_ops(make_settings("amd"));
    CHECK(amd == sim_ops());
    CHECK(amd->family == TIDAL_RT_FAMILY_HIP);
    CHECK(std::string(amd->error_name(2)) == "hipErrorOutOfMemory");
    // Everything but the naming is the same table.
    CHECK(reinterpret_cast<const void *>(nvidia->alloc) == reinterpret_cast<const void *>(amd->alloc));
    CHECK(reinterpret_cast<const void *>(nvidia->kernel_batch_copy) ==
          reinterpret_cast<const void *>(amd->kernel_batch_copy));
}

// Every name a [[sim.fault]] may give is accepted by the configuration reader and fails the
// first call of its own entry point, once: the second call, with the same arguments, works,
// so the failed one changed nothing (a destroy that failed left the handle alive).
TEST_CASE("every fault operation parses and fails its entry point")
{
    for (const std::string_view name : tidal::kFaultOperations) {
        CAPTURE(name);
        const tidal::Settings parsed = tidal::ConfigLoader::from_string(
            "runtime = \"sim\"\n[[sim.fault]]\noperation = \"" + std::string(name) +
            "\"\nnth = 1\ncount = 1\nerror = \"hipErrorNotReady\"\n");
        REQUIRE(parsed.sim.faults.size() == 1);
        CHECK(parsed.sim.faults[0].operation == name);
        const auto op = tidal::sim::FaultInjector::parse(name);
        REQUIRE(op.has_value());
        CHECK(tidal::sim::FaultInjector::name(*op) == name);
        const int injected = parsed.sim.faults[0].native_error;
        CHECK(injected == 600);

        SimSettings settings = make_settings();
        settings.faults = parsed.sim.faults;
        const bool peer = name.starts_with("peer_") || name == "memcpy_peer";
        if (peer) { // two linked devices
            settings.devices = 2;
            settings.profile.machine_devices = 2;
            settings.profile.links.push_back({0, 1, TIDAL_LINK_XGMI, 1, true, 50e9, 1e-6});
        }
        if (name == "create") {
            void *rt = nullptr;
            char detail[160] = {};
            CHECK(sim_create(settings, &rt, detail, sizeof detail) == injected);
            CHECK(rt == nullptr);
            continue;
        }
        Sim s(settings);
        const tidal_rt_ops &o = *s.ops;
        void *const rt = s.rt;
        std::vector<unsigned char> host(kPage, 3);
        // Arguments, made with operations other than the one under test.
        void *managed = name == "alloc" ? nullptr : s.alloc(TIDAL_KIND_MANAGED, kPage);
        void *device = name == "alloc" ? nullptr : s.alloc(TIDAL_KIND_DEVICE, kPage);
        void *device1 = nullptr; // on device 1, for the peer operations
        if (peer)
            REQUIRE(o.alloc(rt, TIDAL_KIND_DEVICE, 1, kPage, &device1) == 0);
        tidal_rt_peer_info link{};
        link.struct_size = sizeof link;
        void *stream = nullptr, *event = nullptr, *later = nullptr;
        if (name != "stream_create")
            REQUIRE(o.stream_create(rt, 0, &stream) == 0);
        if (name != "event_create") {
            REQUIRE(o.event_create(rt, 0, &event) == 0);
            REQUIRE(o.event_create(rt, 0, &later) == 0);
            if (name != "event_record") {
                REQUIRE(o.event_record(rt, event, stream) == 0);
                REQUIRE(o.event_record(rt, later, stream) == 0);
            }
        }
        if (name == "unregister")
            REQUIRE(o.host_register(rt, host.data(), host.size()) == 0);
        // Elastic memory: a reservation of two granules with chunk `mapped` at its start, a
        // spare chunk, and an empty reservation, each made unless it is the call under test.
        const uint64_t g = s.sim().vmm_granularity();
        void *range = nullptr, *empty = nullptr, *mapped = nullptr, *spare = nullptr;
        if (name.starts_with("vmm_") && name != "vmm_reserve") {
            REQUIRE(o.vmm_reserve(rt, 0, 2 * g, &range) == 0);
            REQUIRE(o.vmm_reserve(rt, 0, g, &empty) == 0);
            if (name != "vmm_create") {
                REQUIRE(o.vmm_create(rt, 0, g, &mapped) == 0);
                REQUIRE(o.vmm_create(rt, 0, g, &spare) == 0);
                if (name != "vmm_map")
                    REQUIRE(o.vmm_map(rt, range, g, mapped) == 0);
            }
        }
        void *made = nullptr; // what an alloc or create under test made
        int32_t i1 = 0, i2 = 0;
        uint64_t u1 = 0, u2 = 0;
        float ms = 0;
        double seconds = 0;
        tidal_rt_device_props props{};
        tidal_rt_paging_stats paging{};
        const std::map<std::string_view, std::function<int()>> call = {
            {"alloc", [&] { return o.alloc(rt, TIDAL_KIND_DEVICE, 0, kPage, &made); }},
            {"free", [&] { return o.free(rt, TIDAL_KIND_DEVICE, 0, device, kPage); }},
            {"prefetch", [&] { return o.prefetch(rt, managed, kPage, 0, stream); }},
            {"advise", [&] {
                 return o.advise(rt, managed, kPage, TIDAL_RT_ADVISE_SET_READ_MOSTLY, 0);
             }},
            {"memcpy", [&] { return o.memcpy(rt, device, host.data(), kPage, stream); }},
            {"memset", [&] { return o.memset(rt, device, 0, kPage, stream); }},
            {"register", [&] { return o.host_register(rt, host.data(), host.size()); }},
            {"kernel", [&] { return o.kernel_spin(rt, 0, 1000, stream); }},
            {"unregister", [&] { return o.host_unregister(rt, host.data()); }},
            {"device_count", [&] { return o.device_count(rt, &i1); }},
            {"device_props", [&] { return o.device_props(rt, 0, &props); }},
            {"mem_info", [&] { return o.mem_info(rt, 0, &u1, &u2); }},
            {"pointer_kind", [&] { return o.pointer_kind(rt, device, &i1, &i2); }},
            {"query_range", [&] {
                 return o.query_range(rt, managed, kPage, TIDAL_RT_ATTR_READ_MOSTLY, &i1);
             }},
            {"stream_create", [&] { return o.stream_create(rt, 0, &made); }},
            {"stream_destroy", [&] { return o.stream_destroy(rt, stream); }},
            {"stream_synchronize", [&] { return o.stream_synchronize(rt, stream); }},
            {"event_create", [&] { return o.event_create(rt, 0, &made); }},
            {"event_destroy", [&] { return o.event_destroy(rt, event); }},
            {"event_record", [&] { return o.event_record(rt, made, stream); }},
            {"stream_wait_event", [&] { return o.stream_wait_event(rt, stream, event); }},
            {"event_synchronize", [&] { return o.event_synchronize(rt, event); }},
            {"event_query", [&] { return o.event_query(rt, event, &i1); }},
            {"event_elapsed_ms", [&] { return o.event_elapsed_ms(rt, event, later, &ms); }},
            {"device_synchronize", [&] { return o.device_synchronize(rt, 0); }},
            {"clock", [&] { return o.clock(rt, &seconds); }},
            {"vmm_granularity", [&] { return o.vmm_granularity(rt, 0, &u1); }},
            {"vmm_reserve", [&] { return o.vmm_reserve(rt, 0, g, &made); }},
            {"vmm_release", [&] { return o.vmm_release(rt, empty, g); }},
            {"vmm_create", [&] { return o.vmm_create(rt, 0, g, &made); }},
            {"vmm_destroy", [&] { return o.vmm_destroy(rt, spare); }},
            {"vmm_map", [&] { return o.vmm_map(rt, range, g, mapped); }},
            {"vmm_set_access", [&] { return o.vmm_set_access(rt, 0, range, g); }},
            {"vmm_unmap", [&] { return o.vmm_unmap(rt, range, g); }},
            {"host_copy", [&] { return o.host_copy(rt, 4096, 1); }},
            {"peer_info", [&] { return o.peer_info(rt, 0, 1, &link); }},
            {"peer_enable", [&] { return o.peer_enable(rt, 0, 1); }},
            {"memcpy_peer", [&] { return o.memcpy_peer(rt, device1, 1, device, 0, kPage, stream); }},
            {"range_push", [&] { return o.range_push(rt, "test"); }},
            {"range_pop", [&] { return o.range_pop(rt); }},
            {"paging_stats", [&] { return o.paging_stats(rt, 0, &paging); }},
            {"range_paging", [&] { return o.range_paging(rt, managed, kPage, 0, &paging); }},
        };
        const auto it = call.find(name);
        REQUIRE_MESSAGE(it != call.end(), "no call for this operation in the test");
        if (name == "event_record")
            REQUIRE(o.event_create(rt, 0, &made) == 0);
        CHECK(it->second() == injected);
        CHECK(s.sim().calls(*op) == 1);
        const auto log = s.sim().fault_log();
        REQUIRE(log.size() == 1);
        CHECK(log[0].operation == name);
        CHECK(log[0].native_error == injected);
        CHECK(it->second() == 0); // count = 1: the next call goes through
        CHECK(s.sim().calls(*op) == 2);
        if (name == "alloc")
            CHECK(o.free(rt, TIDAL_KIND_DEVICE, 0, made, kPage) == 0);
    }
}

namespace {
int destroyed_instances = 0;
void counting_destroy(void *rt)
{
    ++destroyed_instances;
    sim_ops()->destroy(rt);
}
} // namespace

// Runtime takes the instance when constructed; when reading the devices fails there, it must
// still destroy it (a throwing constructor runs no destructor).
TEST_CASE("a runtime whose devices cannot be read destroys its instance")
{
    tidal_rt_ops ops = *sim_ops();
    ops.destroy = counting_destroy;
    for (const char *op : {"device_count", "device_props"}) {
        CAPTURE(op);
        SimSettings settings = make_settings();
        settings.faults = {{op, 1, 1, 2}};
        void *rt = nullptr;
        char detail[160] = {};
        REQUIRE(sim_create(settings, &rt, detail, sizeof detail) == 0);
        destroyed_instances = 0;
        CHECK_THROWS_AS(tidal::Runtime(&ops, rt, detail), tidal::Error);
        CHECK(destroyed_instances == 1);
    }
}

TEST_CASE("pointer_kind classifies interior pointers and unknown memory")
{
    SimSettings settings = make_settings();
    settings.devices = 2;
    Sim s(settings);
    const auto kind_of = [&](const void *p, int32_t want_kind, int32_t want_device) {
        int32_t kind = -1, device = -1;
        REQUIRE(s.ops->pointer_kind(s.rt, p, &kind, &device) == 0);
        CHECK(kind == want_kind);
        CHECK(device == want_device);
    };
    void *d = s.alloc(TIDAL_KIND_DEVICE, 1000, 1);
    CHECK(reinterpret_cast<uintptr_t>(d) % 256 == 0);
    kind_of(d, TIDAL_KIND_DEVICE, 1);
    kind_of(at(d, 999), TIDAL_KIND_DEVICE, 1);
    kind_of(at(d, 1000), TIDAL_KIND_PAGEABLE, kHost); // one past the end is not inside

    void *m = s.alloc(TIDAL_KIND_MANAGED, 3 * kPage, 0);
    CHECK(reinterpret_cast<uintptr_t>(m) % 256 == 0);
    kind_of(at(m, 2 * kPage + 5), TIDAL_KIND_MANAGED, 0);
    void *p = s.alloc(TIDAL_KIND_PINNED, 100, kHost);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    kind_of(at(p, 50), TIDAL_KIND_PINNED, kHost);
    void *g = s.alloc(TIDAL_KIND_PAGEABLE, 100, kHost);
    kind_of(at(g, 99), TIDAL_KIND_PAGEABLE, kHost);

    alignas(64) static unsigned char stack_like[256];
    kind_of(stack_like + 3, TIDAL_KIND_PAGEABLE, kHost);
    REQUIRE(s.ops->host_register(s.rt, stack_like, sizeof stack_like) == 0);
    kind_of(stack_like + 3, TIDAL_KIND_PINNED, kHost);
    REQUIRE(s.ops->host_unregister(s.rt, stack_like) == 0);
    kind_of(stack_like + 3, TIDAL_KIND_PAGEABLE, kHost);

    REQUIRE(s.ops->free(s.rt, TIDAL_KIND_DEVICE, 1, d, 1000) == 0);
    kind_of(d, TIDAL_KIND_PAGEABLE, kHost); // freed memory is unknown again
}

TEST_CASE("fine-grained kinds and coarse-grain advice exist only on AMD profiles")
{
    Sim nv(make_settings());
    void *out = nullptr;
    CHECK(nv.ops->alloc(nv.rt, TIDAL_KIND_DEVICE_FINE, 0, kPage, &out) == 801);
    CHECK(nv.ops->alloc(nv.rt, TIDAL_KIND_MANAGED_COARSE, 0, kPage, &out) == 801);
    CHECK(out == nullptr);
    void *m = nv.alloc(TIDAL_KIND_MANAGED, kPage);
    CHECK(nv.ops->advise(nv.rt, m, kPage, TIDAL_RT_ADVISE_SET_COARSE_GRAIN, 0) == 801);
    int32_t value = 0;
    CHECK(nv.ops->query_range(nv.rt, m, kPage, TIDAL_RT_ATTR_COHERENCY_MODE, &value) == 801);
    tidal_rt_device_props props{};
    REQUIRE(nv.ops->device_props(nv.rt, 0, &props) == 0);
    CHECK(props.fine_grained == 0);

    Sim amd(make_settings("amd", true));
    REQUIRE(amd.ops->device_props(amd.rt, 0, &props) == 0);
    CHECK(props.fine_grained == 1);
    CHECK(props.xnack == TIDAL_XNACK_ON);
    void *fine = amd.alloc(TIDAL_KIND_DEVICE_FINE, kPage);
    CHECK(amd.sim().resident_bytes(0) == kPage); // fine-grained device memory counts too
    CHECK(amd.query(fine, kPage, TIDAL_RT_ATTR_COHERENCY_MODE) == 0);
    void *coarse = amd.alloc(TIDAL_KIND_MANAGED_COARSE, kPage);
    CHECK(amd.query(coarse, kPage, TIDAL_RT_ATTR_COHERENCY_MODE) == 1);
    void *managed = amd.alloc(TIDAL_KIND_MANAGED, kPage);
    CHECK(amd.query(managed, kPage, TIDAL_RT_ATTR_COHERENCY_MODE) == 0);
    REQUIRE(amd.ops->advise(amd.rt, managed, kPage, TIDAL_RT_ADVISE_SET_COARSE_GRAIN, 0) == 0);
    CHECK(amd.query(managed, kPage, TIDAL_RT_ATTR_COHERENCY_MODE) == 1);
    REQUIRE(amd.ops->advise(amd.rt, managed, kPage, TIDAL_RT_ADVISE_UNSET_COARSE_GRAIN, 0) == 0);
    CHECK(amd.query(managed, kPage, TIDAL_RT_ATTR_COHERENCY_MODE) == 0);
}

TEST_CASE("streams keep their own timelines; events measure simulated time")
{
    Sim s(make_settings());
    const size_t n = kMiB;
    void *pinned = s.alloc(TIDAL_KIND_PINNED, n);
    void *d1 = s.alloc(TIDAL_KIND_DEVICE, n);
    void *d2 = s.alloc(TIDAL_KIND_DEVICE, n);
    const double copy = n / 4e9 + 1e-5;

    void *s1 = nullptr, *s2 = nullptr, *e0 = nullptr, *e1 = nullptr, *e2 = nullptr;
    REQUIRE(s.ops->stream_create(s.rt, 0, &s1) == 0);
    REQUIRE(s.ops->stream_create(s.rt, 0, &s2) == 0);
    REQUIRE(s.ops->event_create(s.rt, 0, &e0) == 0);
    REQUIRE(s.ops->event_create(s.rt, 0, &e1) == 0);
    REQUIRE(s.ops->event_create(s.rt, 0, &e2) == 0);

    float ms = -1;
    CHECK(s.ops->event_elapsed_ms(s.rt, e0, e1, &ms) == 400); // not recorded yet

    // Copies in opposite directions on two streams overlap: the clock moves by the longer one.
    void *pinned2 = s.alloc(TIDAL_KIND_PINNED, n);
    const double t0 = s.now();
    REQUIRE(s.ops->event_record(s.rt, e0, s1) == 0);
    REQUIRE(s.ops->memcpy(s.rt, d1, pinned, n, s1) == 0);
    REQUIRE(s.ops->memcpy(s.rt, pinned2, d2, n, s2) == 0); // device->host: 8 GB/s, shorter
    REQUIRE(s.ops->event_record(s.rt, e1, s1) == 0);
    CHECK(s.now() - t0 == doctest::Approx(copy));
    REQUIRE(s.ops->event_elapsed_ms(s.rt, e0, e1, &ms) == 0);
    CHECK(ms == doctest::Approx(copy * 1000).epsilon(1e-5));

    // s2 waits for e1 (which it has not passed: its copy was shorter), then runs another
    // copy; s1 then waits for that.
    REQUIRE(s.ops->stream_wait_event(s.rt, s2, e1) == 0);
    REQUIRE(s.ops->memcpy(s.rt, d2, pinned, n, s2) == 0);
    REQUIRE(s.ops->event_record(s.rt, e2, s2) == 0);
    REQUIRE(s.ops->stream_wait_event(s.rt, s1, e2) == 0);
    REQUIRE(s.ops->kernel_touch(s.rt, 0, d1, n, 0, s1) == 0);
    REQUIRE(s.ops->event_record(s.rt, e1, s1) == 0);
    REQUIRE(s.ops->event_elapsed_ms(s.rt, e0, e1, &ms) == 0);
    const double touch = 5e-6 + (n * 8.0 / 4096) / 100e9;
    CHECK(ms == doctest::Approx((2 * copy + touch) * 1000).epsilon(1e-5));

    // The host timeline only catches up when it synchronizes.
    CHECK(s.sim().clock_seconds() == doctest::Approx(t0 + 2 * copy + touch));
    REQUIRE(s.ops->stream_synchronize(s.rt, s1) == 0);
    REQUIRE(s.ops->device_synchronize(s.rt, 0) == 0);
    REQUIRE(s.ops->event_synchronize(s.rt, e2) == 0);
    // ... after which a NULL-stream copy starts at the end of everything.
    REQUIRE(s.ops->memcpy(s.rt, d1, pinned, n, nullptr) == 0);
    CHECK(s.now() == doctest::Approx(t0 + 3 * copy + touch));

    CHECK(s.ops->event_destroy(s.rt, e0) == 0);
    CHECK(s.ops->event_destroy(s.rt, e0) == 400);
    CHECK(s.ops->stream_destroy(s.rt, s1) == 0);
    CHECK(s.ops->memcpy(s.rt, d1, pinned, n, s1) == 400); // destroyed stream
    CHECK(s.ops->stream_destroy(s.rt, s2) == 0);
    CHECK(s.ops->event_destroy(s.rt, e1) == 0);
    CHECK(s.ops->event_destroy(s.rt, e2) == 0);
}

TEST_CASE("copies in one direction share the host link; opposite directions overlap")
{
    Sim s(make_settings());
    const size_t n = kMiB;
    void *pinned = s.alloc(TIDAL_KIND_PINNED, n);
    void *d1 = s.alloc(TIDAL_KIND_DEVICE, n);
    void *d2 = s.alloc(TIDAL_KIND_DEVICE, n);
    const double h2d = n / 4e9 + 1e-5, d2h = n / 8e9 + 1e-5;
    void *s1 = nullptr, *s2 = nullptr;
    REQUIRE(s.ops->stream_create(s.rt, 0, &s1) == 0);
    REQUIRE(s.ops->stream_create(s.rt, 0, &s2) == 0);
    const double t0 = s.now();
    REQUIRE(s.ops->memcpy(s.rt, d1, pinned, n, s1) == 0);
    REQUIRE(s.ops->memcpy(s.rt, d2, pinned, n, s2) == 0);
    CHECK(s.now() - t0 == doctest::Approx(2 * h2d)); // one after the other on the link
    REQUIRE(s.ops->stream_synchronize(s.rt, s1) == 0);
    REQUIRE(s.ops->stream_synchronize(s.rt, s2) == 0);
    const double t1 = s.now();
    REQUIRE(s.ops->memcpy(s.rt, pinned, d1, n, s1) == 0);
    REQUIRE(s.ops->memcpy(s.rt, pinned, d2, n, s2) == 0);
    CHECK(s.now() - t1 == doctest::Approx(2 * d2h));
    CHECK(s.ops->stream_destroy(s.rt, s1) == 0);
    CHECK(s.ops->stream_destroy(s.rt, s2) == 0);
}

TEST_CASE("two devices: peer migration and peer access")
{
    SimSettings settings = make_settings();
    settings.devices = 2;
    Sim s(settings);
    void *m = s.alloc(TIDAL_KIND_MANAGED, 2 * kPage);
    REQUIRE(s.ops->prefetch(s.rt, m, 2 * kPage, 0, nullptr) == 0);
    const double t0 = s.now();
    REQUIRE(s.ops->prefetch(s.rt, m, 2 * kPage, 1, nullptr) == 0);
    CHECK(s.now() - t0 == doctest::Approx(2.0 * kPage / 100e9 + 1e-5));
    for (PageMask page : s.sim().page_residency(m))
        CHECK(page == PageMask::at(1));
    CHECK(s.sim().resident_bytes(0) == 0);
    CHECK(s.sim().resident_bytes(1) == 2 * kPage);
    CHECK(s.sim().counters(1).bytes_migrated_peer == 2 * kPage);

    void *d1 = s.alloc(TIDAL_KIND_DEVICE, kPage, 1);
    REQUIRE(s.ops->kernel_pattern_fill(s.rt, 0, d1, kPage, 9, nullptr) == 0);
    CHECK(s.sim().counters(0).peer_bytes == kPage);
    CHECK(s.sim().counters(1).peer_bytes == 0);
}

TEST_CASE("concurrent calls keep the accounting consistent")
{
    Sim s(make_settings());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&s] {
            for (int i = 0; i < 200; ++i) {
                void *p = nullptr;
                if (s.ops->alloc(s.rt, TIDAL_KIND_DEVICE, 0, kPage, &p) != 0)
                    continue;
                uint64_t free = 0, total = 0;
                s.ops->mem_info(s.rt, 0, &free, &total);
                s.ops->memset(s.rt, p, i, 64, nullptr);
                s.ops->free(s.rt, TIDAL_KIND_DEVICE, 0, p, kPage);
            }
        });
    }
    for (auto &thread : threads)
        thread.join();
    CHECK(s.sim().resident_bytes(0) == 0);
    CHECK(s.sim().counters(0).allocations == 800);
    CHECK(s.sim().counters(0).frees == 800);
    CHECK(s.sim().calls(Operation::alloc) == 800);
}
