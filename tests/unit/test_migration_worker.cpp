// MigrationWorker: the thread that issues the scheduler's runtime calls in order.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "config/config_loader.h"
#include "config/settings_describer.h"
#include "gate.h"
#include "migration/migration_worker.h"
#include "status/error.h"

using tidal::MigrationWorker;
using namespace tidal::test;

TEST_CASE("migration worker: jobs run in order on another thread; wait covers earlier jobs")
{
    MigrationWorker w;
    std::vector<int> order;
    std::atomic<bool> release{false};
    const auto caller = std::this_thread::get_id();
    std::thread::id ran_on;
    const uint64_t first = w.submit([&] {
        ran_on = std::this_thread::get_id();
        while (!release.load())
            std::this_thread::yield();
        order.push_back(1);
    });
    uint64_t last = 0;
    for (int i = 2; i <= 5; ++i)
        last = w.submit([&order, i] { order.push_back(i); });
    CHECK(first == 1);
    CHECK(last == 5);
    CHECK_FALSE(w.done(first)); // submit returned while the first job still blocks
    release = true;
    w.wait(last);
    CHECK(w.done(first));
    CHECK(order == std::vector<int>{1, 2, 3, 4, 5});
    CHECK(ran_on != caller);
}

TEST_CASE("migration worker: a failed job is reported once, to the next caller")
{
    MigrationWorker w;
    const uint64_t bad = w.submit([] { throw std::runtime_error("prefetch failed"); });
    const uint64_t good = w.submit([] {});
    CHECK_THROWS_WITH_AS(w.wait(good), "prefetch failed", std::runtime_error);
    CHECK(w.done(bad));
    CHECK_NOTHROW(w.wait(good)); // reported once
    CHECK_NOTHROW(w.drain());
}

TEST_CASE("migration worker: unthreaded, jobs run at submit in the caller's thread")
{
    MigrationWorker w(false);
    const auto caller = std::this_thread::get_id();
    std::thread::id ran_on;
    const uint64_t seq = w.submit([&] { ran_on = std::this_thread::get_id(); });
    CHECK(w.done(seq));
    CHECK(ran_on == caller);
    w.submit([] { throw std::runtime_error("boom"); });
    CHECK_THROWS_AS(w.drain(), std::runtime_error);
}

TEST_CASE("migration worker: jobs at a steady pace find the thread spinning, not asleep; without a spin it sleeps")
{
    using namespace std::chrono_literals;
    for (auto spin : {0us, 100000us}) {
        CAPTURE(spin.count());
        uint64_t slept = 0;
        {
            MigrationWorker w(true, spin);
            for (int i = 0; i < 8; ++i) { // every 20 ms: the spin lasts 1.25 x 20 ms once the pace is known
                w.drain();
                if (i == 3)
                    slept = w.sleeps();
                std::this_thread::sleep_for(20ms);
                w.submit([] {});
            }
            w.drain();
            slept = w.sleeps() - slept;
        }
        if (spin.count() == 0)
            CHECK(slept >= 4); // each of the last jobs found it asleep
        else
            CHECK(slept <= 1); // at most one, on a badly delayed submission
    }
}

TEST_CASE("migration worker: a spinning thread does not hold up destruction")
{
    using namespace std::chrono_literals;
    std::chrono::steady_clock::time_point t0;
    {
        MigrationWorker w(true, 100000us);
        for (int i = 0; i < 4; ++i) {
            w.submit([] {});
            std::this_thread::sleep_for(40ms);
        }
        w.submit([] {});
        w.drain();
        t0 = std::chrono::steady_clock::now();
    } // it spins (up to 50 ms) for the next job when this ends: destruction must not wait that out
    CHECK(std::chrono::steady_clock::now() - t0 < 25ms);
}

TEST_CASE("migration worker: destruction runs what is queued")
{
    std::atomic<int> ran{0};
    {
        MigrationWorker w;
        for (int i = 0; i < 100; ++i)
            w.submit([&] { ran.fetch_add(1); });
    }
    CHECK(ran.load() == 100);
}

TEST_CASE("migration worker: wait_overlapping waits for the jobs touching the range, queued or running")
{
    MigrationWorker w;
    Gate gate; // after the worker: released before the worker joins
    std::atomic<int> ran{0};
    w.submit([&] { gate.pass(); ran.fetch_add(1); }, {{0x1000, 0x2000}});
    w.submit([&] { ran.fetch_add(1); }, {{0x8000, 0x9000}, {0xa000, 0xb000}}); // queued behind
    REQUIRE(gate.reached_within(kBound));
    uintptr_t lo = 0, hi = 0;
    int must_have_run = 0;
    SUBCASE("running") { lo = 0x1fff, hi = 0x3000, must_have_run = 1; }
    SUBCASE("queued") { lo = 0xa800, hi = 0xa900, must_have_run = 2; }
    auto waiter = std::async(std::launch::async, [&] {
        w.wait_overlapping(lo, hi);
        return ran.load();
    });
    CHECK(waiter.wait_for(kStillWaiting) == std::future_status::timeout);
    gate.release();
    CHECK(finish(waiter, "wait_overlapping after its job ran") >= must_have_run);
}

TEST_CASE("migration worker: wait_overlapping does not wait for jobs touching other addresses")
{
    MigrationWorker w;
    Gate gate;
    w.submit([&] { gate.pass(); }, {{0x1000, 0x2000}});
    w.submit([] {}, {{0x4000, 0x5000}});
    w.submit([] {}); // touches no memory (an event record)
    REQUIRE(gate.reached_within(kBound));
    auto waiter = std::async(std::launch::async, [&] { w.wait_overlapping(0x2000, 0x4000); }); // half-open ranges
    CHECK(waiter.wait_for(kBound) == std::future_status::ready);
    CHECK_FALSE(w.done(1));
    gate.release(); // a waiter that blocked by mistake ends here, after the check above failed
    finish(waiter, "wait_overlapping once the gate opened");
    w.drain();
}

TEST_CASE("migration worker: a held job waits for release(), a wait or its hold to run out")
{
    using namespace std::chrono;
    MigrationWorker w;
    std::atomic<int> ran{0};
    SUBCASE("release() starts it")
    {
        const uint64_t seq = w.submit([&] { ran = 1; }, {}, seconds{30});
        std::this_thread::sleep_for(milliseconds{50});
        CHECK(ran.load() == 0); // held
        CHECK_FALSE(w.done(seq));
        const auto t0 = steady_clock::now();
        w.release();
        w.wait(seq);
        CHECK(ran.load() == 1);
        CHECK(steady_clock::now() - t0 < seconds{10});
    }
    SUBCASE("waiting for it starts it")
    {
        const uint64_t seq = w.submit([&] { ran = 1; }, {}, seconds{30});
        const auto t0 = steady_clock::now();
        w.wait(seq);
        CHECK(ran.load() == 1);
        CHECK(steady_clock::now() - t0 < seconds{10});
    }
    SUBCASE("waiting for a later job starts the held one before it, in order")
    {
        std::vector<int> order;
        w.submit([&] { order.push_back(1); }, {}, seconds{30});
        const uint64_t last = w.submit([&] { order.push_back(2); });
        w.wait(last);
        CHECK(order == std::vector<int>{1, 2});
    }
    SUBCASE("wait_overlapping starts a held job on the range")
    {
        w.submit([&] { ran = 1; }, {MigrationWorker::Range{0x1000, 0x2000}}, seconds{30});
        const auto t0 = steady_clock::now();
        w.wait_overlapping(0x1800, 0x1900);
        CHECK(ran.load() == 1);
        CHECK(steady_clock::now() - t0 < seconds{10});
    }
    SUBCASE("the hold runs out")
    {
        const auto t0 = steady_clock::now();
        w.submit([&] { ran = 1; }, {}, milliseconds{20});
        while (ran.load() == 0 && steady_clock::now() - t0 < seconds{20})
            std::this_thread::sleep_for(milliseconds{1});
        CHECK(ran.load() == 1);
        CHECK(steady_clock::now() - t0 >= milliseconds{20});
    }
    SUBCASE("destruction runs a held job at once")
    {
        const auto t0 = steady_clock::now();
        {
            MigrationWorker v;
            v.submit([&] { ran = 1; }, {}, seconds{30});
        }
        CHECK(ran.load() == 1);
        CHECK(steady_clock::now() - t0 < seconds{10});
    }
}

TEST_CASE("migration worker: [migration] worker_spin_us is read, described, and bounded")
{
    CHECK(tidal::ConfigLoader::from_string("runtime = \"sim\"\n").migration.worker_spin_us == 2000);
    const tidal::Settings off = tidal::ConfigLoader::from_string("runtime = \"sim\"\n[migration]\nworker_spin_us = 0\n");
    CHECK(off.migration.worker_spin_us == 0);
    CHECK(tidal::describe_settings(off).find("worker_spin_us = 0\n") != std::string::npos);
    for (const char *bad : {"[migration]\nworker_spin_us = -1\n", "[migration]\nworker_spin_us = 100001\n",
                            "[migration]\nworker_spin_us = \"fast\"\n"}) {
        CAPTURE(bad);
        std::string why;
        try {
            (void)tidal::ConfigLoader::from_string(bad);
        } catch (const tidal::Error &e) {
            CHECK(e.status() == TIDAL_ERROR_CONFIG);
            why = e.message();
        }
        CHECK(why.find("migration.worker_spin_us") != std::string::npos);
        CHECK(why.find("<string>:2:") != std::string::npos);
    }
}
