// MigrationWorker: the thread that issues the scheduler's runtime calls in order.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "migration/migration_worker.h"

using tidal::MigrationWorker;

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
