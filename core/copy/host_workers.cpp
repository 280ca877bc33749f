#include "copy/host_workers.h"

#include <algorithm>
#include <cstring>

namespace tidal {
namespace {
// The [begin, end) share of `part` out of `parts`, cut on 4 KiB boundaries so no two threads
// write the same page.
std::pair<size_t, size_t> share(size_t size, unsigned part, unsigned parts)
{
    const size_t pages = (size + 4095) / 4096;
    const size_t begin = std::min(size, pages * part / parts * 4096);
    const size_t end = std::min(size, pages * (part + 1) / parts * 4096);
    return {begin, end};
}
} // namespace

HostWorkers::HostWorkers(unsigned threads, std::function<void()> on_start)
{
    const unsigned extra = threads > 1 ? threads - 1 : 0;
    workers_.reserve(extra);
    for (unsigned i = 0; i < extra; ++i)
        workers_.emplace_back([this, i, on_start] {
            if (on_start)
                on_start();
            serve(i + 1);
        });
}

HostWorkers::~HostWorkers()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto &t : workers_)
        t.join();
}

unsigned HostWorkers::threads_for(size_t size, size_t min_part) const noexcept
{
    return static_cast<unsigned>(std::min<size_t>(parallelism(), std::max<size_t>(1, size / std::max<size_t>(min_part, 1))));
}

void HostWorkers::copy(void *dst, const void *src, size_t size, size_t min_part)
{
    const unsigned parts = threads_for(size, min_part);
    auto *d = static_cast<char *>(dst);
    const auto *s = static_cast<const char *>(src);
    run(parts, [&](unsigned part) {
        auto [begin, end] = share(size, part, parts);
        std::memcpy(d + begin, s + begin, end - begin);
    });
}

void HostWorkers::run(unsigned parts, const std::function<void(unsigned)> &part)
{
    parts = std::min(parts, parallelism());
    if (parts <= 1) {
        part(0);
        return;
    }
    std::lock_guard call(call_mutex_);
    {
        std::lock_guard lock(mutex_);
        part_ = &part;
        parts_ = parts;
        pending_ = static_cast<unsigned>(workers_.size());
        ++generation_;
    }
    wake_.notify_all();
    part(0);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    part_ = nullptr;
}

void HostWorkers::serve(unsigned index)
{
    unsigned long seen = 0;
    for (;;) {
        const std::function<void(unsigned)> *part;
        unsigned parts;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_)
                return;
            seen = generation_;
            part = part_;
            parts = parts_;
        }
        if (index < parts) // workers beyond `parts` have nothing to do this time
            (*part)(index);
        std::lock_guard lock(mutex_);
        if (--pending_ == 0)
            done_.notify_one();
    }
}

} // namespace tidal
