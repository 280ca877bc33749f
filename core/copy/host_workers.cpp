#include "copy/host_workers.h"

#include "sync/spin_wait.h"

#include <algorithm>
#include <cstring>

namespace tidal {
namespace {

// The [begin, end) share of `part` out of `parts`, cut on 4 KiB boundaries so no two threads
// write the same page.
std::pair<size_t, size_t> share(size_t size, size_t part, size_t parts)
{
    const size_t pages = (size + 4095) / 4096;
    const size_t begin = std::min(size, pages * part / parts * 4096);
    const size_t end = std::min(size, pages * (part + 1) / parts * 4096);
    return {begin, end};
}

// Until `ready()`: spins for `spin` (spin_for), then yields the CPU between looks (a thread we
// wait on may have been preempted; on a machine with fewer cores than threads, spinning would
// keep it off).
template <class Ready> void spin_until(std::chrono::microseconds spin, Ready ready)
{
    if (spin_for(spin, ready))
        return;
    while (!ready())
        std::this_thread::yield();
}
} // namespace

HostWorkers::HostWorkers(unsigned threads, std::function<void()> on_start, std::chrono::microseconds spin)
    : spin_(spin)
{
    const unsigned extra = threads > 1 ? threads - 1 : 0;
    workers_.reserve(extra);
    for (unsigned i = 0; i < extra; ++i)
        workers_.emplace_back([this, on_start] {
            if (on_start)
                on_start();
            serve();
        });
}

HostWorkers::~HostWorkers()
{
    stopping_.store(true);
    epoch_.fetch_add(1);
    epoch_.notify_all();
    for (auto &t : workers_)
        t.join();
}

unsigned HostWorkers::threads_for(size_t size, size_t min_part) const noexcept
{
    return static_cast<unsigned>(std::min<size_t>(parallelism(), std::max<size_t>(1, size / std::max<size_t>(min_part, 1))));
}

void HostWorkers::begin_copy(Job &job, void *dst, const void *src, size_t size, size_t min_part)
{
    auto *d = static_cast<char *>(dst);
    const auto *s = static_cast<const char *>(src);
    const size_t slices = std::min<size_t>(kIndexMask, std::max<size_t>(1, size / std::max<size_t>(min_part, 1)));
    job.copy_ = [d, s, size, slices](unsigned slice) {
        auto [begin, end] = share(size, slice, slices);
        std::memcpy(d + begin, s + begin, end - begin);
    };
    begin(job, static_cast<unsigned>(slices), job.copy_);
}

void HostWorkers::copy(void *dst, const void *src, size_t size, size_t min_part)
{
    if (size < 2 * min_part || workers_.empty()) {
        std::memcpy(dst, src, size); // one slice: no thread to hand it to
        return;
    }
    Job job;
    begin_copy(job, dst, src, size, min_part);
    end(job);
}

void HostWorkers::run(unsigned parts, const std::function<void(unsigned)> &part)
{
    Job job;
    begin(job, parts, part);
    end(job);
}

HostWorkers::Job::~Job()
{
    if (owner_)
        owner_->end(*this);
}

void HostWorkers::begin(Job &job, unsigned parts, const std::function<void(unsigned)> &part)
{
    job.owner_ = this;
    job.part_ = &part;
    job.parts_ = parts;
    job.published_ = parts;
    job.pooled_ = parts > 1 && !workers_.empty() && parts <= kIndexMask;
    if (!job.pooled_)
        return; // end() runs the parts on the caller, taking no lock: there is no thread to wake
    start(job);
}

void HostWorkers::begin_stream(Job &job, unsigned parts, const std::function<void(unsigned)> &part)
{
    job.owner_ = this;
    job.part_ = &part;
    job.parts_ = parts;
    job.published_ = 0;
    job.streaming_ = true;
    job.pooled_ = parts > 0 && !workers_.empty() && parts <= kIndexMask;
    if (job.pooled_)
        start(job);
}

void HostWorkers::publish(Job &job, unsigned parts)
{
    parts = std::min(parts, job.parts_);
    if (parts <= job.published_)
        return;
    if (job.pooled_) {
        parts_.store(parts, std::memory_order_release);
    } else {
        for (unsigned i = job.published_; i < parts; ++i)
            (*job.part_)(i);
    }
    job.published_ = parts;
}

bool HostWorkers::help_one(Job &job)
{
    if (!job.pooled_)
        return false;
    uint64_t t = ticket_.load(std::memory_order_acquire);
    if ((t >> kIndexBits) != generation_ || (t & kIndexMask) >= parts_.load(std::memory_order_acquire))
        return false;
    return take(t, job.part_);
}

bool HostWorkers::take(uint64_t &t, const std::function<void(unsigned)> *part) noexcept
{
    if (!ticket_.compare_exchange_strong(t, t + 1, std::memory_order_acquire, std::memory_order_acquire))
        return false;
    (*part)(static_cast<unsigned>(t & kIndexMask)); // t is still the ticket this thread took
    done_.fetch_add(1, std::memory_order_release);
    return true;
}

void HostWorkers::start(Job &job)
{
    call_mutex_.lock();
    const uint64_t generation = ++generation_;
    part_.store(job.part_, std::memory_order_relaxed);
    parts_.store(job.published_, std::memory_order_relaxed);
    total_.store(job.parts_, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    // seq_cst with the sleepers_ check: a worker about to sleep either sees this call or is
    // counted in sleepers_ (it increments it before its last look at the epoch and ticket).
    ticket_.store(generation << kIndexBits);
    epoch_.fetch_add(1);
    runs_.fetch_add(1, std::memory_order_relaxed);
    if (sleepers_.load() > 0) { // one futex call wakes them all; none when all are spinning
        wakes_.fetch_add(1, std::memory_order_relaxed);
        epoch_.notify_all();
    }
}

void HostWorkers::end(Job &job)
{
    job.owner_ = nullptr;
    if (!job.pooled_) {
        if (!job.streaming_) // a stream's published parts ran in publish()
            for (unsigned i = 0; i < job.parts_; ++i)
                (*job.part_)(i);
        return;
    }
    std::lock_guard call(call_mutex_, std::adopt_lock);
    // A stream that stopped early: what was never published is not waited for.
    const uint64_t parts = job.published_;
    total_.store(parts, std::memory_order_release);
    help(ticket_.load(std::memory_order_acquire), generation_);
    // The parts still running are on workers already under way: done within one slice.
    spin_until(spin_, [&] { return done_.load(std::memory_order_acquire) == parts; });
    part_.store(nullptr, std::memory_order_relaxed);
}

void HostWorkers::help(uint64_t t, uint64_t generation) noexcept
{
    while ((t >> kIndexBits) == generation) {
        // parts_ and part_ may already be a later call's when this one has ended; then the
        // ticket has moved on and the exchange fails, so they are never used.
        const uint64_t index = t & kIndexMask;
        if (index >= parts_.load(std::memory_order_acquire)) {
            if (index >= total_.load(std::memory_order_acquire))
                return;
            cpu_pause(); // a stream's next part is not published yet
            t = ticket_.load(std::memory_order_acquire);
            continue;
        }
        if (take(t, part_.load(std::memory_order_relaxed)))
            t = ticket_.load(std::memory_order_acquire);
    }
}

uint64_t HostWorkers::await(uint64_t seen)
{
    uint64_t t = 0;
    auto fresh = [&] {
        t = ticket_.load();
        return (t >> kIndexBits) != seen || stopping_.load(std::memory_order_relaxed);
    };
    if (spin_.count() > 0 && spin_for(spin_, fresh))
        return t;
    sleepers_.fetch_add(1);
    for (;;) {
        const uint32_t epoch = epoch_.load();
        if (fresh())
            break;
        sleeps_.fetch_add(1, std::memory_order_relaxed);
        epoch_.wait(epoch); // returns once a call (or the destructor) has moved it on
    }
    sleepers_.fetch_sub(1);
    return t;
}

void HostWorkers::serve()
{
    uint64_t seen = 0;
    for (;;) {
        const uint64_t t = await(seen);
        if (stopping_.load(std::memory_order_relaxed))
            return;
        seen = t >> kIndexBits;
        help(t, seen);
    }
}

HostWorkers::Stats HostWorkers::stats() const noexcept
{
    Stats s;
    s.runs = runs_.load(std::memory_order_relaxed);
    s.sleeps = sleeps_.load(std::memory_order_relaxed);
    s.wakes = wakes_.load(std::memory_order_relaxed);
    return s;
}

} // namespace tidal
