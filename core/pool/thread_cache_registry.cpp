#include "pool/thread_cache_registry.h"

#include <algorithm>

namespace tidal::pool {

uint64_t ThreadCacheRegistry::next_pool_id() noexcept
{
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

ThreadCacheRegistry::ThreadCacheRegistry(SizeClassPool &small, CoalescingPool &large, const PoolSettings &settings)
    : small_(small), large_(large),
      enabled_((settings.thread_cache_blocks > 0 && settings.small_max > 0) || settings.thread_cache_large_bytes > 0),
      large_budget_(settings.thread_cache_large_bytes), capacity_(SizeClasses::kCount),
      key_(next_pool_id() << ThreadCache::kEpochBits)
{
    for (unsigned cls = 0; cls < SizeClasses::kCount; ++cls) {
        const size_t by_bytes = settings.thread_cache_class_bytes / SizeClasses::size_of(cls);
        const bool used = settings.thread_cache_blocks > 0 && settings.small_max > 0 &&
                          cls <= SizeClasses::index(settings.small_max);
        capacity_[cls] = used ? static_cast<uint32_t>(std::clamp<size_t>(by_bytes, 1, settings.thread_cache_blocks)) : 0;
    }
}

ThreadCacheRegistry::~ThreadCacheRegistry()
{
    std::vector<std::shared_ptr<ThreadCache>> caches;
    {
        std::lock_guard lock(mutex_);
        caches.swap(caches_);
    }
    // Outside mutex_: a thread retiring its cache right now holds that cache's link and then
    // wants mutex_; detach() waits for it, and the pool is still whole meanwhile.
    for (const auto &c : caches)
        c->detach();
}

ThreadCache *ThreadCacheRegistry::attach_slow()
{
    const uint64_t k = key();
    if (!enabled_ || ThreadCache::thread_exited())
        return nullptr;
    ThreadCache *c = ThreadCache::find(k);
    if (!c) {
        auto owned = std::make_shared<ThreadCache>(*this, k, capacity_.data(), large_budget_);
        {
            std::lock_guard lock(mutex_);
            caches_.push_back(owned);
        }
        try {
            ThreadCache::adopt(owned);
        } catch (...) {
            std::lock_guard lock(mutex_);
            std::erase(caches_, owned);
            throw;
        }
        c = owned.get();
    }
    if (c->key() != k) { // a flush was requested since this thread last came by
        c->flush(small_, large_);
        c->set_key(k);
    }
    return c;
}

void ThreadCacheRegistry::request_flush() noexcept
{
    uint64_t k = key_.load(std::memory_order_relaxed);
    while (!key_.compare_exchange_weak(k, (k & ~ThreadCache::kEpochMask) | ((k + 1) & ThreadCache::kEpochMask),
                                       std::memory_order_relaxed)) {
    }
}

void ThreadCacheRegistry::flush_current_thread() noexcept
{
    if (!enabled_)
        return;
    const uint64_t k = key();
    if (ThreadCache *c = ThreadCache::find(k)) {
        c->flush(small_, large_);
        c->set_key(k);
    }
}

uint64_t ThreadCacheRegistry::reclaim_large() noexcept
{
    uint64_t bytes = 0;
    std::lock_guard lock(mutex_); // a cache leaves caches_ under it: none is retired meanwhile
    for (const auto &c : caches_)
        bytes += c->reclaim_large(large_);
    return bytes;
}

void ThreadCacheRegistry::retire(ThreadCache &cache) noexcept
{
    cache.flush(small_, large_);
    const ThreadCache::Counters &n = cache.counters();
    std::lock_guard lock(mutex_);
    retired_.hits += n.hits.load(std::memory_order_relaxed);
    retired_.misses += n.misses.load(std::memory_order_relaxed);
    retired_.frees += n.frees.load(std::memory_order_relaxed);
    retired_.allocated_bytes += n.allocated_bytes.load(std::memory_order_relaxed);
    retired_.freed_bytes += n.freed_bytes.load(std::memory_order_relaxed);
    std::erase_if(caches_, [&](const std::shared_ptr<ThreadCache> &c) { return c.get() == &cache; });
}

ThreadCacheRegistry::Totals ThreadCacheRegistry::totals() const
{
    std::lock_guard lock(mutex_);
    Totals t = retired_;
    for (const auto &c : caches_) {
        const ThreadCache::Counters &n = c->counters();
        t.hits += n.hits.load(std::memory_order_relaxed);
        t.misses += n.misses.load(std::memory_order_relaxed);
        t.frees += n.frees.load(std::memory_order_relaxed);
        t.allocated_bytes += n.allocated_bytes.load(std::memory_order_relaxed);
        t.freed_bytes += n.freed_bytes.load(std::memory_order_relaxed);
    }
    return t;
}

} // namespace tidal::pool
