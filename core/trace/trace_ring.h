// The per-thread buffer between one calling thread (the only producer) and the trace writer
// (the only consumer): a single-producer single-consumer ring, lock-free, so that recording
// never takes a lock another thread holds.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>

#include "trace/trace_event.h"

namespace tidal::trace {

class TraceRing {
public:
    static constexpr size_t kCapacity = 4096; // a power of two

    explicit TraceRing(uint32_t thread) : thread_(thread), slots_(new TraceEvent[kCapacity]) {}

    uint32_t thread() const noexcept { return thread_; }

    uint64_t last_ns = 0; // the writer's: the time of the last event it wrote from this ring

    // Producer: waits (yielding) while the ring is full rather than drop an event: a trace
    // with a hole would replay to a different program.
    void push(const TraceEvent &e) noexcept
    {
        const size_t head = head_.load(std::memory_order_relaxed);
        while (head - tail_.load(std::memory_order_acquire) >= kCapacity) [[unlikely]]
            std::this_thread::yield();
        slots_[head & (kCapacity - 1)] = e;
        head_.store(head + 1, std::memory_order_release);
    }

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
    const uint32_t thread_;
    std::unique_ptr<TraceEvent[]> slots_;
    alignas(64) std::atomic<size_t> head_{0}; // written by the producer
    alignas(64) std::atomic<size_t> tail_{0}; // written by the consumer
};

} // namespace tidal::trace
