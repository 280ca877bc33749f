// The simulated device as the unit tests drive it: a profile of round numbers, so that each
// expected time is a one-line sum, and an instance made with sim_create and reached through
// its tidal_rt_ops table. Shared by test_sim.cpp and test_sim_vmm.cpp.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "config/settings.h"
#include "runtime/sim/sim_module.h"
#include "runtime/sim/sim_runtime.h"
#include "tidal/tidal.h"

namespace sim_fixture {

using tidal::SimSettings;
using tidal::sim::SimRuntime;
using tidal::sim::sim_create;
using tidal::sim::sim_ops;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kPage = 64 * 1024;
constexpr int32_t kHost = TIDAL_DEVICE_HOST;

// Round numbers so each expected time is a one-line sum.
inline SimSettings make_settings(const std::string &vendor = "nvidia", bool xnack = true)
{
    SimSettings s;
    s.devices = 1;
    tidal::SimProfile &p = s.profile;
    p.name = "test";
    p.vendor = vendor;
    p.device_name = vendor == "amd" ? "Simulated AMD MI250X" : "Simulated NVIDIA H200";
    p.arch = vendor == "amd" ? "gfx90a:sramecc+:xnack-" : "sm_90";
    p.capacity = 64 * kMiB;
    p.page_size = kPage;
    p.l2_size = 4 * kMiB;
    p.xnack = xnack;
    p.h2d_pageable_bw = 1e9;
    p.h2d_pinned_bw = 4e9;
    p.d2h_pageable_bw = 2e9;
    p.d2h_pinned_bw = 8e9;
    p.d2d_bw = 100e9;
    p.prefetch_h2d_bw = 5e9;
    p.prefetch_d2h_bw = 2.5e9;
    p.fault_bw = 1e9;
    p.zero_copy_bw = 0.5e9;
    p.host_memcpy_bw = 10e9;
    p.copy_latency = 1e-5;
    p.kernel_latency = 5e-6;
    p.fault_latency = 2e-5;
    p.alloc_latency_device = 1e-4;
    p.alloc_latency_pinned = 1e-3;
    p.alloc_latency_managed = 2e-5;
    p.vmm_create_latency = 1e-5;
    p.vmm_map_latency = 1e-6;
    p.vmm_unmap_latency = 2e-5;
    p.vmm_set_access_latency = 2e-6;
    p.vmm_destroy_latency = 3e-5;
    return s;
}

struct Sim {
    const tidal_rt_ops *ops = sim_ops();
    void *rt = nullptr;
    std::string detail;

    explicit Sim(const SimSettings &settings)
    {
        char text[160] = {};
        const int rc = sim_create(settings, &rt, text, sizeof text);
        detail = text;
        REQUIRE_MESSAGE(rc == 0, detail);
    }
    ~Sim() { ops->destroy(rt); }
    Sim(const Sim &) = delete;
    Sim &operator=(const Sim &) = delete;

    SimRuntime &sim() const { return *static_cast<SimRuntime *>(rt); }
    double now() const { return sim().clock_seconds(); }

    void *alloc(int32_t kind, size_t size, int32_t device = 0)
    {
        void *p = nullptr;
        REQUIRE(ops->alloc(rt, kind, device, size, &p) == 0);
        REQUIRE(p != nullptr);
        return p;
    }
    uint64_t free_bytes(int32_t device = 0)
    {
        uint64_t free = 0, total = 0;
        REQUIRE(ops->mem_info(rt, device, &free, &total) == 0);
        CHECK(total == sim().capacity());
        return free;
    }
    int32_t query(const void *p, size_t size, int32_t attr)
    {
        int32_t value = -99;
        REQUIRE(ops->query_range(rt, p, size, attr, &value) == 0);
        return value;
    }
};

inline char *at(void *p, size_t offset) { return static_cast<char *>(p) + offset; }

} // namespace sim_fixture
