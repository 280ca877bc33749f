// A persistent pool of host threads for parallel memcpy. A pageable<->device copy is bounded
// by how fast the host can move bytes into pinned memory, and one thread moves ~8.5 GB/s where
// 16 move ~31 GB/s on the H200 machine. Threads are started once: spawning them per chunk was
// what held a naive staged copy to 13.5 GB/s.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tidal {

class HostWorkers {
public:
    // `threads`: total parallelism, the caller included. Each worker thread runs `on_start`
    // (if given) first: a staging ring's workers bind themselves to its NUMA node there.
    explicit HostWorkers(unsigned threads, std::function<void()> on_start = {});
    ~HostWorkers();
    HostWorkers(const HostWorkers &) = delete;
    HostWorkers &operator=(const HostWorkers &) = delete;

    unsigned parallelism() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }
    // memcpy split across the workers and the calling thread, at least `min_part` bytes each
    // (waking a thread costs more than copying less); returns when all bytes are copied.
    static constexpr size_t kMinPart = size_t{1} << 20;
    // The threads copy() uses for `size` bytes in parts of at least `min_part`.
    unsigned threads_for(size_t size, size_t min_part = kMinPart) const noexcept;
    void copy(void *dst, const void *src, size_t size, size_t min_part = kMinPart);
    // Calls part(i) for every i in [0, parts) (parts <= parallelism()), the caller taking part 0,
    // and returns when all have returned. `part` must not throw. Callers on several threads
    // take turns: the workers serve one call at a time.
    void run(unsigned parts, const std::function<void(unsigned)> &part);

private:
    void serve(unsigned index);

    std::vector<std::thread> workers_;
    std::mutex call_mutex_; // one run() at a time owns the workers
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    unsigned long generation_ = 0;
    unsigned pending_ = 0;
    bool stopping_ = false;
    unsigned parts_ = 0;
    const std::function<void(unsigned)> *part_ = nullptr;
};

} // namespace tidal
