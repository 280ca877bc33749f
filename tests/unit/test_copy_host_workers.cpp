// The host memcpy threads (HostWorkers) that fill and empty the staging ring: every part runs
// exactly once whoever takes it, copies arrive intact at any size and offset, callers on
// several threads take turns, and threads that are still spinning from the last call are not
// woken again (a futex wake is 5-50 us, much of a 16 MiB staged copy's piece).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "config/config_loader.h"
#include "config/settings_describer.h"
#include "copy/host_workers.h"
#include "status/error.h"

using tidal::ConfigLoader;
using tidal::HostWorkers;
using namespace std::chrono_literals;

namespace {

std::vector<unsigned char> pattern(size_t size, unsigned seed)
{
    std::vector<unsigned char> v(size);
    for (size_t i = 0; i < size; ++i)
        v[i] = static_cast<unsigned char>(i * 131 + seed * 17 + (i >> 12));
    return v;
}

} // namespace

TEST_CASE("host workers: every part runs exactly once, any count of parts and threads")
{
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
        for (auto spin : {0us, 200us}) {
            HostWorkers workers(threads, {}, spin);
            for (unsigned parts : {0u, 1u, 2u, 3u, 7u, 16u, 100u, 5000u}) {
                CAPTURE(threads);
                CAPTURE(parts);
                std::vector<std::atomic<int>> ran(parts);
                for (int round = 0; round < 3; ++round) {
                    for (auto &r : ran)
                        r.store(0);
                    workers.run(parts, [&](unsigned i) { ran[i].fetch_add(1); });
                    bool once = true;
                    for (auto &r : ran)
                        once = once && r.load() == 1;
                    CHECK(once);
                }
            }
        }
    }
}

TEST_CASE("host workers: a stream's parts run once each, as they are published, and the unpublished are dropped")
{
    for (unsigned threads : {1u, 2u, 4u}) {
        HostWorkers workers(threads, {}, 50us);
        CAPTURE(threads);
        constexpr unsigned kParts = 300;
        std::vector<std::atomic<int>> runs(kParts);
        std::atomic<unsigned> published_max{0}, beyond{0};
        const std::function<void(unsigned)> part = [&](unsigned i) {
            if (i >= published_max.load())
                beyond.fetch_add(1); // ran before it was published
            runs[i].fetch_add(1);
        };
        {
            HostWorkers::Job job;
            workers.begin_stream(job, kParts, part);
            for (unsigned n = 7; n <= 200; n += 7) { // published in steps; the workers wait between them
                published_max.store(n);
                workers.publish(job, n);
                std::this_thread::sleep_for(20us);
            }
            published_max.store(203);
            workers.publish(job, 203);
            workers.publish(job, 100); // never shrinks
            workers.end(job);          // parts 203.. were never published: dropped
        }
        CHECK(beyond.load() == 0);
        for (unsigned i = 0; i < kParts; ++i) {
            CAPTURE(i);
            CHECK(runs[i].load() == (i < 203 ? 1 : 0));
        }
        // The workers serve the next call as usual.
        std::atomic<int> count{0};
        workers.run(50, [&](unsigned) { count.fetch_add(1); });
        CHECK(count.load() == 50);
    }
}

TEST_CASE("host workers: copies intact at sizes around the slice and page boundaries, unaligned")
{
    HostWorkers workers(4, {}, 100us);
    constexpr size_t kSlice = size_t{128} << 10;
    const std::vector<unsigned char> src = pattern(4 * kSlice + 3 * 4096 + 64, 1);
    for (size_t size : {size_t{1}, size_t{4095}, size_t{4097}, kSlice - 1, kSlice, kSlice + 1, 2 * kSlice - 4096,
                        2 * kSlice + 4097, 3 * kSlice + 5, 4 * kSlice}) {
        for (size_t offset : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096 + 7}}) {
            CAPTURE(size);
            CAPTURE(offset);
            std::vector<unsigned char> dst(size + 2 * 4096 + 64, 0xee);
            workers.copy(dst.data() + 3, src.data() + offset, size, kSlice);
            CHECK(std::memcmp(dst.data() + 3, src.data() + offset, size) == 0);
            CHECK((dst[2] == 0xee && dst[3 + size] == 0xee)); // nothing written outside
        }
    }
}

TEST_CASE("host workers: callers on several threads at once each get their own bytes")
{
    HostWorkers workers(3, {}, 50us);
    constexpr size_t kSize = (size_t{1} << 20) + 4099;
    std::vector<std::thread> callers;
    std::atomic<int> bad{0};
    for (unsigned c = 0; c < 4; ++c)
        callers.emplace_back([&, c] {
            const std::vector<unsigned char> src = pattern(kSize, c);
            std::vector<unsigned char> dst(kSize);
            for (int round = 0; round < 50; ++round) {
                std::memset(dst.data(), 0, kSize);
                workers.copy(dst.data(), src.data(), kSize, 64 << 10);
                if (std::memcmp(dst.data(), src.data(), kSize) != 0)
                    bad.fetch_add(1);
            }
        });
    for (auto &t : callers)
        t.join();
    CHECK(bad.load() == 0);
}

TEST_CASE("host workers: threads still spinning from the last call are not woken again")
{
    constexpr size_t kSize = size_t{4} << 20;
    const std::vector<unsigned char> src = pattern(kSize, 3);
    std::vector<unsigned char> dst(kSize);
    auto copies = [&](HostWorkers &workers) {
        for (int i = 0; i < 20; ++i)
            workers.copy(dst.data(), src.data(), kSize, size_t{128} << 10);
        return workers.stats();
    };
    SUBCASE("spinning (the default): one staged copy's pieces follow each other within the spin")
    {
        HostWorkers workers(2, {}, 10s); // long enough for a loaded test machine
        const HostWorkers::Stats s = copies(workers);
        CHECK(s.runs == 20);
        CHECK(s.wakes == 0);
        CHECK(s.sleeps == 0);
    }
    SUBCASE("spin_us = 0: every call finds the worker asleep and wakes it")
    {
        HostWorkers workers(2, {}, 0us);
        // On a loaded machine the worker may not have run at all before the copies end (the
        // caller takes every slice): wait until it has gone to sleep once, so a copy must wake it.
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (workers.stats().sleeps == 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(1ms);
        const HostWorkers::Stats s = copies(workers);
        CHECK(s.runs == 20);
        CHECK(s.wakes >= 1);
        CHECK(s.sleeps >= 1);
    }
    CHECK(std::memcmp(dst.data(), src.data(), kSize) == 0);
}

TEST_CASE("host workers: [copy] spin_us is read, described, and bounded")
{
    CHECK(ConfigLoader::from_string("runtime = \"sim\"\n").copy.spin_us == 200);
    const tidal::Settings off = ConfigLoader::from_string("runtime = \"sim\"\n[copy]\nspin_us = 0\n");
    CHECK(off.copy.spin_us == 0);
    CHECK(tidal::describe_settings(off).find("spin_us = 0\n") != std::string::npos);
    for (const char *bad : {"[copy]\nspin_us = -1\n", "[copy]\nspin_us = 100001\n", "[copy]\nspin_us = \"fast\"\n"}) {
        CAPTURE(bad);
        std::string why;
        try {
            (void)ConfigLoader::from_string(bad);
        } catch (const tidal::Error &e) {
            CHECK(e.status() == TIDAL_ERROR_CONFIG);
            why = e.message();
        }
        CHECK(why.find("copy.spin_us") != std::string::npos);
        CHECK(why.find("<string>:2:") != std::string::npos); // where, as every config error says
    }
}
