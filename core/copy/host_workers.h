// A persistent pool of host threads for parallel memcpy. A pageable<->device copy is bounded
// by how fast the host can move bytes into pinned memory, and one thread moves ~8.5 GB/s where
// 16 move ~31 GB/s on the H200 machine. Threads are started once: spawning them per chunk was
// what held a naive staged copy to 13.5 GB/s.
//
// A staged copy of 16-32 MiB lasts under a millisecond and hands the threads a piece every
// 50-100 us, so waking them is what it pays for: a condition variable woke all 15 workers
// through one mutex, one after another (5-50 us each), and the piece was done only when the
// last had woken. So the hot path takes no lock: work is cut into slices that whoever is
// awake takes from one atomic ticket (the caller too, so a late thread only takes fewer), the
// caller spins until the slices are done, and idle workers spin `spin` before they sleep, so
// the next piece, or the next copy, finds them awake.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tidal {

class HostWorkers {
public:
    static constexpr std::chrono::microseconds kDefaultSpin{200};
    // `threads`: total parallelism, the caller included. Each worker thread runs `on_start`
    // (if given) first: a staging ring's workers bind themselves to its NUMA node there.
    // `spin`: how long an idle worker keeps looking for work before it sleeps.
    explicit HostWorkers(unsigned threads, std::function<void()> on_start = {},
                         std::chrono::microseconds spin = kDefaultSpin);
    ~HostWorkers();
    HostWorkers(const HostWorkers &) = delete;
    HostWorkers &operator=(const HostWorkers &) = delete;

    unsigned parallelism() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }
    std::chrono::microseconds spin() const noexcept { return spin_; }
    // memcpy split into slices of at least `min_part` bytes (waking a thread costs more than
    // copying less), shared by the workers and the calling thread; returns when all bytes are
    // copied.
    static constexpr size_t kMinPart = size_t{1} << 20;
    // The threads copy() uses for `size` bytes in parts of at least `min_part`.
    unsigned threads_for(size_t size, size_t min_part = kMinPart) const noexcept;
    void copy(void *dst, const void *src, size_t size, size_t min_part = kMinPart);
    // Calls part(i) exactly once for every i in [0, parts), on the workers and the calling
    // thread, whichever is free, and returns when all have returned. `part` must not throw.
    // Callers on several threads take turns: the workers serve one call at a time.
    void run(unsigned parts, const std::function<void(unsigned)> &part);
    // run() and copy() in two halves, so the caller can do other work while the workers
    // start: begin() hands the parts out and returns at once; end() takes the caller's share
    // of what is left and returns when all parts have returned. `part` and the Job must live
    // until end(); every begin() needs its end() on the same thread.
    class Job {
    public:
        Job() = default;
        Job(const Job &) = delete;
        Job &operator=(const Job &) = delete;
        ~Job(); // ends the job if it was begun and not ended (a throw between the two)

    private:
        friend class HostWorkers;
        HostWorkers *owner_ = nullptr; // begun and not yet ended
        const std::function<void(unsigned)> *part_ = nullptr;
        std::function<void(unsigned)> copy_; // begin_copy()'s part
        unsigned parts_ = 0;
        unsigned published_ = 0; // begin_stream()'s jobs: parts made available so far
        bool streaming_ = false;
        bool pooled_ = false; // on the workers, call_mutex_ held; else end() runs it inline
    };
    void begin(Job &job, unsigned parts, const std::function<void(unsigned)> &part);
    void begin_copy(Job &job, void *dst, const void *src, size_t size, size_t min_part = kMinPart);
    void end(Job &job);
    // A job whose parts are handed out as the caller publishes them, in order: begin_stream()
    // starts it with none; publish(job, n) makes parts [0, n) available (n only grows; with no
    // worker threads the caller runs the new ones there and then). Workers that have taken
    // every published part wait for more instead of leaving, so a staged copy's host threads
    // run from one piece into the next with no hand-off between pieces. end() returns once
    // every published part has returned; parts never published are dropped (a caller that
    // stops early, on an error).
    void begin_stream(Job &job, unsigned parts, const std::function<void(unsigned)> &part);
    void publish(Job &job, unsigned parts);
    // The caller takes one published part that no thread has taken and runs it: false when
    // there is none. A stream's caller that has nothing else to do helps so, one part at a
    // time (on a machine with few cores its thread is one of the few).
    bool help_one(Job &job);

    // What waking the threads cost so far (tests and benchmarks count it per copy).
    struct Stats {
        uint64_t runs = 0;   // run() calls that used the workers
        uint64_t sleeps = 0; // times a worker found no work within `spin` and slept
        uint64_t wakes = 0;  // run() calls that had to wake sleeping workers (a futex call)
    };
    Stats stats() const noexcept;

private:
    // The ticket holds the call's generation above kIndexBits and the next part below: taking
    // a part is one compare-and-swap, which fails for a call that has ended.
    static constexpr unsigned kIndexBits = 24;
    static constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;

    void serve();
    // Hands `job` to the workers (call_mutex_ taken, held until end()).
    void start(Job &job);
    // Takes parts of call `generation` from ticket `t` on until none are left.
    void help(uint64_t t, uint64_t generation) noexcept;
    // Runs `part` for the part ticket `t` names if this thread takes it (one compare-and-swap,
    // which fails when another thread took it or the call ended: `t` then holds the ticket as
    // it is now, and `part`, which may be a later call's or null then, is not touched). The
    // caller checked that the part is published. help() and help_one() both.
    bool take(uint64_t &t, const std::function<void(unsigned)> *part) noexcept;
    // Spins, then sleeps, until a call newer than `seen` starts or the pool stops.
    uint64_t await(uint64_t seen);

    std::chrono::microseconds spin_;
    std::vector<std::thread> workers_;
    std::mutex call_mutex_; // one run() at a time owns the workers
    uint64_t generation_ = 0; // call_mutex_'s
    std::atomic<uint64_t> ticket_{0};
    std::atomic<const std::function<void(unsigned)> *> part_{nullptr};
    std::atomic<uint64_t> parts_{0}; // parts available (a stream's published ones)
    std::atomic<uint64_t> total_{0}; // parts the call will have: workers wait while parts_ < total_
    std::atomic<uint64_t> done_{0};
    std::atomic<bool> stopping_{false};
    // Sleeping workers only: the hot path touches none of these. They sleep on epoch_ (a
    // futex of its own, C++20 atomic wait), not a condition variable: woken together, they
    // would queue on its mutex one after another.
    std::atomic<uint32_t> epoch_{0}; // bumped by every call and by the destructor
    std::atomic<unsigned> sleepers_{0};
    std::atomic<uint64_t> runs_{0}, sleeps_{0}, wakes_{0};
};

} // namespace tidal
