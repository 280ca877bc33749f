// One host thread per device that issues the scheduler's runtime calls in order.
//
// On CUDA, cudaMemPrefetchAsync does much of a migration's work in the calling thread before
// it returns (measured on the H200: a lookahead prefetch issued from the application's thread
// kept its next kernel launch waiting, so transfer and compute did not overlap). Issuing the
// moves from a thread of tidal's own keeps the application's thread free to launch work.
// Jobs run one at a time in submission order; the first error a job throws is kept and
// rethrown to the next caller of submit() or wait(), once.
//
// A job may be held back for a while after it is queued (a lookahead's moves): the driver's
// prefetch call also holds up the application's kernel launches while it runs (H200: an
// overlapped pipeline's median ran 1.17-1.29x max(transfer, compute), its best 1.03x, as the
// launch or the prefetch won the race). Held, it starts when the application comes back to
// tidal (release()), when something waits for it, or when the hold runs out.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tidal {

class MigrationWorker {
public:
    // `threaded` false: submit() runs each job at once in the caller's thread (the simulated
    // device, whose calls never block and whose clock must see them in program order).
    // `spin`: once jobs come at a steady pace, the thread waits for the next one spinning, up to
    // 1.25x the last gap between submissions and at most `spin`, instead of sleeping (a sleeping
    // thread took ~0.2 ms to wake on the H200's host, which delayed every lookahead's copy).
    explicit MigrationWorker(bool threaded = true, std::chrono::microseconds spin = std::chrono::microseconds{0});
    // Runs what is queued, then joins.
    ~MigrationWorker();
    MigrationWorker(const MigrationWorker &) = delete;
    MigrationWorker &operator=(const MigrationWorker &) = delete;

    // Addresses [lo, hi) a job's runtime calls touch.
    struct Range {
        uintptr_t lo, hi;
    };

    // Queues `job`, which touches `ranges`; returns its sequence number (1, 2, ...). Rethrows
    // a kept error first.
    // `hold`: the job starts no sooner than this after being queued, unless released first.
    uint64_t submit(std::function<void()> job, std::vector<Range> ranges = {},
                    std::chrono::microseconds hold = std::chrono::microseconds{0});
    // Held jobs may start now. Takes no lock when none was held since the last release (a
    // declaration calls it every time); a job submitted by another thread at the same moment
    // may then stay held until its hold runs out.
    void release();
    // Waits until job `seq` (and all before it) has run. Rethrows a kept error.
    void wait(uint64_t seq);
    // Waits until no job queued or running touches [lo, hi). Rethrows a kept error.
    void wait_overlapping(uintptr_t lo, uintptr_t hi);
    // Job `seq` touches `range` too (a queued prefetch the scheduler extended). False when the
    // job has already finished.
    bool extend(uint64_t seq, Range range);
    // Waits for everything queued so far.
    void drain() { wait(last_submitted()); }
    bool done(uint64_t seq) const;
    // Times the thread found nothing to do and slept (tests watch the spin with it).
    uint64_t sleeps() const;
    uint64_t last_submitted() const;

private:
    void run();
    // Runs `job`; what it threw, or nullptr.
    static std::exception_ptr run_caught(const std::function<void()> &job) noexcept;
    void rethrow_locked(std::unique_lock<std::mutex> &lock);

    mutable std::mutex mutex_;
    std::condition_variable wake_, finished_;
    struct Job {
        uint64_t seq = 0;
        std::function<void()> run;
        std::vector<Range> ranges;
        bool held = false;
        std::chrono::steady_clock::time_point hold_until{};
    };
    void release_locked();
    std::deque<Job> queue_;
    std::atomic<bool> maybe_held_{false}; // a held job was queued since the last release (set under mutex_)
    Job running_; // its ranges, while the thread runs it
    // The thread's spin (see the constructor) and the pace submissions came at.
    std::chrono::microseconds spin_{0};
    std::chrono::steady_clock::time_point last_post_{};
    std::chrono::nanoseconds gap_{0}, previous_gap_{0};
    uint64_t sleeps_ = 0;
    // How long the thread should spin for the next job now (mutex_ held): none unless the last
    // two gaps between submissions were both within `spin`.
    std::chrono::nanoseconds spin_budget_locked() const;
    // Written under mutex_; atomic so the spinning thread can watch them without it.
    std::atomic<uint64_t> submitted_{0};
    uint64_t completed_ = 0;
    std::exception_ptr error_;
    std::atomic<bool> stop_{false};
    bool threaded_;
    std::thread thread_; // last: starts once the rest is ready
};

} // namespace tidal
