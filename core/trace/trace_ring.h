// The per-thread buffer between one calling thread (the only producer) and the trace writer
// (the only consumer): a single-producer single-consumer ring, lock-free, so that recording
// never takes a lock another thread holds. The producer fills its event in place (claim, then
// commit): no event is built on the stack and copied in.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#include "trace/trace_event.h"

namespace tidal::trace {

class TraceRing {
public:
    static constexpr size_t kCapacity = 4096; // a power of two

    explicit TraceRing(uint32_t thread) : thread_(thread), slots_(new TraceEvent[kCapacity]) {}

    uint32_t thread() const noexcept { return thread_; }

    // Producer: the next slot, reset, for the caller to fill and then commit(). While the ring
    // is full it waits (yielding) for the writer rather than drop an event -- a trace with a
    // hole would replay to a different program -- and counts the wait.
    TraceEvent &claim() noexcept
    {
        TraceEvent &e = next();
        e.reset();
        return e;
    }
    // As claim(), with only the event's first line reset: for the calls (frees) whose fields
    // all lie there (TraceEvent).
    TraceEvent &claim_first_line() noexcept
    {
        TraceEvent &e = next();
        e.reset_first_line();
        return e;
    }
    // Producer: hands the claimed slot to the writer.
    void commit() noexcept { head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

    // Events that found the ring full and waited for the writer (any thread may read it).
    uint64_t waits() const noexcept { return waits_.load(std::memory_order_relaxed); }

    // Consumer: hands every waiting event to `sink`, oldest first; returns how many.
    template <typename Sink> size_t drain(Sink &&sink)
    {
        const size_t tail = tail_.load(std::memory_order_relaxed);
        const size_t head = head_.load(std::memory_order_acquire);
        for (size_t i = tail; i != head; ++i)
            sink(slots_[i & (kCapacity - 1)]);
        tail_.store(head, std::memory_order_release);
        return head - tail;
    }

private:
    TraceEvent &next() noexcept
    {
        const size_t head = head_.load(std::memory_order_relaxed);
        // The writer's position as last seen: read again only when the ring looks full, so that
        // the producer does not touch the writer's cache line on every event.
        if (head - tail_seen_ >= kCapacity) [[unlikely]]
            wait_for_room(head);
        return slots_[head & (kCapacity - 1)];
    }
    [[gnu::noinline, gnu::cold]] void wait_for_room(size_t head) noexcept
    {
        tail_seen_ = tail_.load(std::memory_order_acquire);
        if (head - tail_seen_ < kCapacity)
            return;
        waits_.fetch_add(1, std::memory_order_relaxed);
        do {
            std::this_thread::yield();
            tail_seen_ = tail_.load(std::memory_order_acquire);
        } while (head - tail_seen_ >= kCapacity);
    }

    const uint32_t thread_;
    std::unique_ptr<TraceEvent[]> slots_;
    alignas(64) std::atomic<size_t> head_{0}; // written by the producer
    size_t tail_seen_ = 0;                    // the producer's: tail_ when it last read it
    std::atomic<uint64_t> waits_{0};          // the producer's, read by the writer at the end
    alignas(64) std::atomic<size_t> tail_{0}; // written by the consumer

public:
    // The writer's: the time of the last event it wrote from this ring. On the writer's line: it
    // is written per event, and beside thread_ and slots_ (read by the producer per event) it
    // would take that line away from the producer each time.
    uint64_t last_ns = 0;
};

} // namespace tidal::trace
