#include "migration/migration_worker.h"

#include <algorithm>
#include <utility>

#include "sync/spin_wait.h"

namespace tidal {

MigrationWorker::MigrationWorker(bool threaded, std::chrono::microseconds spin) : spin_(spin), threaded_(threaded)
{
    if (threaded_)
        thread_ = std::thread([this] { run(); });
}

MigrationWorker::~MigrationWorker()
{
    if (!threaded_)
        return;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void MigrationWorker::rethrow_locked(std::unique_lock<std::mutex> &lock)
{
    if (!error_)
        return;
    std::exception_ptr e = std::exchange(error_, nullptr);
    lock.unlock();
    std::rethrow_exception(e);
}

std::exception_ptr MigrationWorker::run_caught(const std::function<void()> &job) noexcept
{
    try {
        job();
        return nullptr;
    } catch (...) {
        return std::current_exception();
    }
}

uint64_t MigrationWorker::submit(std::function<void()> job, std::vector<Range> ranges, std::chrono::microseconds hold)
{
    std::unique_lock lock(mutex_);
    rethrow_locked(lock);
    if (!threaded_) {
        const uint64_t seq = ++submitted_;
        lock.unlock();
        const std::exception_ptr failed = run_caught(job);
        lock.lock();
        ++completed_;
        if (failed && !error_)
            error_ = failed; // reported by the next wait(), as a threaded worker would
        return seq;
    }
    const auto now = std::chrono::steady_clock::now();
    queue_.push_back(Job{submitted_ + 1, std::move(job), std::move(ranges), hold.count() > 0, now + hold});
    if (hold.count() > 0)
        maybe_held_.store(true, std::memory_order_relaxed);
    const uint64_t seq = ++submitted_;
    if (submitted_ > 1) {
        previous_gap_ = gap_;
        gap_ = now - last_post_;
    }
    last_post_ = now;
    lock.unlock();
    wake_.notify_one();
    return seq;
}

void MigrationWorker::release_locked()
{
    bool any = false;
    for (Job &job : queue_)
        any |= std::exchange(job.held, false);
    maybe_held_.store(false, std::memory_order_relaxed);
    if (any)
        wake_.notify_all();
}

void MigrationWorker::release()
{
    if (!maybe_held_.load(std::memory_order_relaxed))
        return;
    std::lock_guard lock(mutex_);
    release_locked();
}

void MigrationWorker::wait(uint64_t seq)
{
    std::unique_lock lock(mutex_);
    if (completed_ < seq)
        release_locked(); // jobs run in order: what is waited for may sit behind a held one
    finished_.wait(lock, [&] { return completed_ >= seq; });
    rethrow_locked(lock);
}

void MigrationWorker::wait_overlapping(uintptr_t lo, uintptr_t hi)
{
    uint64_t seq = 0;
    {
        std::lock_guard lock(mutex_);
        auto overlaps = [&](const Job &job) {
            return std::any_of(job.ranges.begin(), job.ranges.end(), [&](const Range &r) { return r.lo < hi && lo < r.hi; });
        };
        if (overlaps(running_))
            seq = running_.seq;
        for (const Job &job : queue_)
            if (overlaps(job))
                seq = job.seq;
        if (seq > completed_)
            release_locked();
    }
    wait(seq); // jobs finish in order: the last overlapping one covers the others
}

bool MigrationWorker::extend(uint64_t seq, Range range)
{
    std::lock_guard lock(mutex_);
    if (running_.seq == seq && completed_ < seq) {
        running_.ranges.push_back(range);
        return true;
    }
    for (Job &job : queue_)
        if (job.seq == seq) {
            job.ranges.push_back(range);
            return true;
        }
    return false;
}

bool MigrationWorker::done(uint64_t seq) const
{
    std::lock_guard lock(mutex_);
    return completed_ >= seq;
}

uint64_t MigrationWorker::sleeps() const
{
    std::lock_guard lock(mutex_);
    return sleeps_;
}

uint64_t MigrationWorker::last_submitted() const
{
    std::lock_guard lock(mutex_);
    return submitted_;
}

std::chrono::nanoseconds MigrationWorker::spin_budget_locked() const
{
    const auto limit = std::chrono::duration_cast<std::chrono::nanoseconds>(spin_);
    if (limit.count() == 0 || gap_ > limit || previous_gap_ > limit || gap_.count() == 0 || previous_gap_.count() == 0)
        return std::chrono::nanoseconds{0};
    return std::min(limit, gap_ + gap_ / 4);
}

void MigrationWorker::run()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        if (queue_.empty() && !stop_) {
            // Jobs at a steady pace: look for the next one without sleeping, for a while.
            if (const auto budget = spin_budget_locked(); budget.count() > 0) {
                const uint64_t seen = submitted_;
                lock.unlock();
                spin_for(budget, [&] { return submitted_.load(std::memory_order_acquire) != seen || stop_.load(std::memory_order_relaxed); });
                lock.lock();
            }
        }
        if (!stop_ && queue_.empty()) {
            ++sleeps_;
            wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        }
        if (queue_.empty())
            return; // stopping, nothing left
        if (queue_.front().held && !stop_) {
            const auto until = queue_.front().hold_until;
            wake_.wait_until(lock, until, [&] { return stop_ || !queue_.front().held; });
        }
        running_ = std::move(queue_.front());
        queue_.pop_front();
        std::function<void()> job = std::move(running_.run);
        lock.unlock();
        const std::exception_ptr failed = run_caught(job);
        lock.lock();
        if (failed && !error_)
            error_ = failed;
        ++completed_;
        running_.ranges.clear();
        finished_.notify_all();
    }
}

} // namespace tidal
