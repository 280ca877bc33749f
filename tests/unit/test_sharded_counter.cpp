#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "copy/sharded_counter.h"

TEST_CASE("a sharded counter bumped by more threads than it has stripes reads exactly every bump")
{
    tidal::ShardedCounter counter;
    constexpr int kThreads = 24, kBumps = 20000; // more threads than stripes: some share one
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < kBumps; ++i)
                counter.add();
        });
    for (auto &th : threads)
        th.join();
    CHECK(counter.load() == uint64_t{kThreads} * kBumps);
    counter.add(5);
    CHECK(counter.load() == uint64_t{kThreads} * kBumps + 5);
}
