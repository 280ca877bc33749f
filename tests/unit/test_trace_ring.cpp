#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <chrono>
#include <thread>
#include <vector>

#include "trace/trace_ring.h"

using tidal::trace::TraceEvent;
using tidal::trace::TraceRing;

namespace {

void push(TraceRing &ring, uint64_t n)
{
    TraceEvent &e = ring.claim();
    e.ptr = n;
    ring.commit();
}

} // namespace

TEST_CASE("a trace ring hands the writer every event once, in order, across many laps")
{
    TraceRing ring(7);
    constexpr uint64_t kEvents = 20 * TraceRing::kCapacity + 123;
    std::atomic<bool> done{false};
    std::thread producer([&] {
        for (uint64_t i = 0; i < kEvents; ++i)
            push(ring, i);
        done = true;
    });
    uint64_t next = 0;
    bool in_order = true;
    auto sink = [&](const TraceEvent &e) {
        in_order = in_order && e.ptr == next;
        ++next;
    };
    while (!done.load())
        ring.drain(sink);
    producer.join();
    ring.drain(sink);
    CHECK(in_order);
    CHECK(next == kEvents);
    CHECK(ring.thread() == 7);
}

TEST_CASE("a full trace ring makes its thread wait for the writer, counts the wait and loses nothing")
{
    TraceRing ring(0);
    for (uint64_t i = 0; i < TraceRing::kCapacity; ++i)
        push(ring, i);
    CHECK(ring.waits() == 0); // exactly full is not a wait

    std::atomic<bool> pushed{false};
    std::thread producer([&] {
        push(ring, TraceRing::kCapacity); // one more: no room until the writer drains
        pushed = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(pushed.load()); // still waiting: nothing was overwritten or dropped

    std::vector<uint64_t> seen;
    auto sink = [&](const TraceEvent &e) { seen.push_back(e.ptr); };
    CHECK(ring.drain(sink) == TraceRing::kCapacity);
    producer.join();
    CHECK(pushed.load());
    CHECK(ring.waits() == 1);
    CHECK(ring.drain(sink) == 1);
    REQUIRE(seen.size() == TraceRing::kCapacity + 1);
    bool in_order = true;
    for (uint64_t i = 0; i < seen.size(); ++i)
        in_order = in_order && seen[i] == i;
    CHECK(in_order);
}

TEST_CASE("a reused trace slot comes back reset, its tag left alone but marked empty")
{
    TraceRing ring(0);
    for (uint64_t i = 0; i < TraceRing::kCapacity; ++i) {
        TraceEvent &e = ring.claim();
        e.ptr = e.ptr2 = e.size = e.aux = ~uint64_t{0};
        e.device = e.kind = e.status = -1;
        e.hints = e.flags = e.index = e.count = 7;
        e.seconds = 1.5;
        e.placed_by = "rules";
        e.tag[0] = 'x';
        e.tag_length = 1;
        ring.commit();
    }
    ring.drain([](const TraceEvent &) {});
    TraceEvent &e = ring.claim(); // the first slot again
    const TraceEvent blank;
    CHECK(e.ptr == 0);
    CHECK(e.ptr2 == 0);
    CHECK(e.size == 0);
    CHECK(e.aux == 0);
    CHECK(e.device == 0);
    CHECK(e.kind == 0);
    CHECK(e.status == 0);
    CHECK(e.hints + e.flags + e.index + e.count == 0);
    CHECK(e.seconds == 0);
    CHECK(e.tag_length == 0);
    CHECK(std::string(e.placed_by) == blank.placed_by);
    ring.commit();
}
