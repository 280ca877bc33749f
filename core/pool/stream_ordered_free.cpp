#include "pool/stream_ordered_free.h"

namespace tidal::pool {

// Blocks sealed together share one token: the oracle retires it with the last of them.
void StreamOrderedFree::release_token(const Held &h) noexcept
{
    if (!h.sealed)
        return;
    const auto found = token_refs_.find(h.token);
    if (found == token_refs_.end() || --found->second == 0) {
        if (found != token_refs_.end())
            token_refs_.erase(found);
        oracle_.retire(h.token);
    }
}

void StreamOrderedFree::seal(StreamHandle stream, std::deque<Held> &queue)
{
    if (queue.empty() || queue.back().sealed)
        return; // unsealed blocks are always the newest
    EventOracle::Token token = 0;
    try {
        token = oracle_.record(stream);
    } catch (...) {
        return; // held until a later record succeeds
    }
    uint32_t covered = 0;
    for (auto it = queue.rbegin(); it != queue.rend() && !it->sealed; ++it) {
        it->token = token;
        it->sealed = true;
        ++covered;
    }
    try {
        token_refs_[token] = covered;
    } catch (...) {
        // No host memory for the count: each block then retires the token on its own, which
        // the oracle tolerates only once -- so undo the seal and try again later.
        for (auto it = queue.rbegin(); it != queue.rend() && covered > 0; ++it, --covered)
            it->sealed = false;
        oracle_.retire(token);
    }
}

StreamOrderedFree::StreamOrderedFree(EventOracle &oracle) : oracle_(oracle) {}

StreamOrderedFree::~StreamOrderedFree() { drain(); }

void StreamOrderedFree::hold(const PooledBlock &block, StreamHandle stream)
{
    {
        std::lock_guard lock(mutex_);
        held_[stream].push_back(Held{block, 0, false});
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
        release_token(h);
        count_.fetch_sub(1, std::memory_order_relaxed);
        bytes_.fetch_sub(h.block.bytes, std::memory_order_relaxed);
        return h.block;
    }
    return std::nullopt;
}

void StreamOrderedFree::pop_completed(std::deque<Held> &queue, std::vector<PooledBlock> &done)
{
    while (!queue.empty() && queue.front().sealed && oracle_.complete(queue.front().token)) {
        done.push_back(queue.front().block);
        release_token(queue.front());
        bytes_.fetch_sub(queue.front().block.bytes, std::memory_order_relaxed);
        count_.fetch_sub(1, std::memory_order_relaxed);
        queue.pop_front();
    }
}

std::vector<PooledBlock> StreamOrderedFree::collect()
{
    std::vector<PooledBlock> done;
    std::lock_guard lock(mutex_);
    for (auto it = held_.begin(); it != held_.end();) {
        std::deque<Held> &queue = it->second;
        seal(it->first, queue);
        pop_completed(queue, done);
        it = queue.empty() ? held_.erase(it) : std::next(it);
    }
    for (auto it = ended_.begin(); it != ended_.end();) {
        pop_completed(*it, done);
        it = it->empty() ? ended_.erase(it) : std::next(it);
    }
    return done;
}

std::vector<PooledBlock> StreamOrderedFree::end_stream(StreamHandle stream)
{
    std::vector<PooledBlock> done;
    std::lock_guard lock(mutex_);
    const auto found = held_.find(stream);
    if (found == held_.end())
        return done;
    std::deque<Held> &queue = found->second;
    seal(stream, queue);
    if (queue.empty() || queue.back().sealed) {
        if (!queue.empty())
            ended_.push_back(std::move(queue));
        held_.erase(found);
        return done;
    }
    // No event could be recorded: the stream's work must be over before anyone else reuses
    // these blocks, and after the handle is gone nothing could wait for it.
    oracle_.synchronize(stream);
    done.reserve(queue.size());
    for (const Held &h : queue) {
        done.push_back(h.block);
        release_token(h);
        bytes_.fetch_sub(h.block.bytes, std::memory_order_relaxed);
        count_.fetch_sub(1, std::memory_order_relaxed);
    }
    held_.erase(found);
    return done;
}

std::vector<PooledBlock> StreamOrderedFree::drain() noexcept
{
    std::vector<PooledBlock> all;
    std::lock_guard lock(mutex_);
    auto take_all = [&](const std::deque<Held> &queue) {
        for (const Held &h : queue) {
            try {
                all.push_back(h.block);
            } catch (...) {
                // Host out of memory at teardown: the block's memory still goes upstream with
                // its slab or chunk; only the accounting misses it.
            }
            release_token(h);
        }
    };
    for (const auto &[stream, queue] : held_)
        take_all(queue);
    for (const std::deque<Held> &queue : ended_)
        take_all(queue);
    held_.clear();
    ended_.clear();
    token_refs_.clear();
    count_.store(0, std::memory_order_relaxed);
    bytes_.store(0, std::memory_order_relaxed);
    return all;
}

} // namespace tidal::pool
