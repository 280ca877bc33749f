#include "pool/stream_ordered_free.h"

namespace tidal::pool {

StreamOrderedFree::StreamOrderedFree(EventOracle &oracle) : oracle_(oracle) {}

StreamOrderedFree::~StreamOrderedFree() { drain(); }

void StreamOrderedFree::hold(const PooledBlock &block, StreamHandle stream)
{
    const EventOracle::Token token = oracle_.record(stream);
    try {
        std::lock_guard lock(mutex_);
        held_[stream].push_back(Held{block, token});
    } catch (...) {
        oracle_.retire(token);
        throw;
    }
    count_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(block.bytes, std::memory_order_relaxed);
}

std::optional<PooledBlock> StreamOrderedFree::take(StreamHandle stream, const PooledBlock &like, size_t alignment)
{
    std::lock_guard lock(mutex_);
    const auto found = held_.find(stream);
    if (found == held_.end())
        return std::nullopt;
    std::deque<Held> &queue = found->second;
    for (auto it = queue.rbegin(); it != queue.rend(); ++it) {
        if (!it->block.same_shape(like) || reinterpret_cast<uintptr_t>(it->block.p) % alignment != 0)
            continue;
        const Held h = *it;
        queue.erase(std::next(it).base());
        oracle_.retire(h.token);
        count_.fetch_sub(1, std::memory_order_relaxed);
        bytes_.fetch_sub(h.block.bytes, std::memory_order_relaxed);
        return h.block;
    }
    return std::nullopt;
}

std::vector<PooledBlock> StreamOrderedFree::collect()
{
    std::vector<PooledBlock> done;
    std::lock_guard lock(mutex_);
    for (auto it = held_.begin(); it != held_.end();) {
        std::deque<Held> &queue = it->second;
        while (!queue.empty() && oracle_.complete(queue.front().token)) {
            done.push_back(queue.front().block);
            oracle_.retire(queue.front().token);
            bytes_.fetch_sub(queue.front().block.bytes, std::memory_order_relaxed);
            count_.fetch_sub(1, std::memory_order_relaxed);
            queue.pop_front();
        }
        it = queue.empty() ? held_.erase(it) : std::next(it);
    }
    return done;
}

std::vector<PooledBlock> StreamOrderedFree::drain() noexcept
{
    std::vector<PooledBlock> all;
    std::lock_guard lock(mutex_);
    for (auto &[stream, queue] : held_)
        for (const Held &h : queue) {
            try {
                all.push_back(h.block);
            } catch (...) {
                // Host out of memory at teardown: the block's memory still goes upstream with
                // its slab or chunk; only the accounting misses it.
            }
            oracle_.retire(h.token);
        }
    held_.clear();
    count_.store(0, std::memory_order_relaxed);
    bytes_.store(0, std::memory_order_relaxed);
    return all;
}

} // namespace tidal::pool
