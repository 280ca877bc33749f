#include "pool/thread_cache.h"

#include <algorithm>

#include "pool/coalescing_pool.h"
#include "pool/size_class_pool.h"
#include "pool/thread_cache_registry.h"

namespace tidal::pool {

// The calling thread's caches, one per pool it has used. Its destructor runs at thread exit
// and hands every cache still linked back to its pool.
struct ThreadCacheList {
    std::vector<std::shared_ptr<ThreadCache>> caches;

    ~ThreadCacheList()
    {
        ThreadCache::hot_ = nullptr;
        ThreadCache::exited_ = true;
        for (const auto &c : caches)
            c->retire();
    }
};

namespace {
thread_local ThreadCacheList t_caches;
}

ThreadCache::ThreadCache(ThreadCacheRegistry &registry, uint64_t key, const uint32_t *capacity, uint64_t large_budget)
    : key_(key), large_budget_(large_budget), registry_(&registry)
{
    size_t slots = 0;
    for (unsigned cls = 0; cls < SizeClasses::kCount; ++cls)
        slots += capacity[cls];
    storage_ = std::make_unique<void *[]>(slots);
    void **next = storage_.get();
    for (unsigned cls = 0; cls < SizeClasses::kCount; ++cls) {
        bins_[cls].capacity = capacity[cls];
        bins_[cls].slots = next;
        next += capacity[cls];
    }
}

ThreadCache *ThreadCache::find(uint64_t key) noexcept
{
    if (exited_)
        return nullptr;
    for (const auto &c : t_caches.caches)
        if ((c->key_ >> kEpochBits) == (key >> kEpochBits)) {
            hot_ = c.get();
            return hot_;
        }
    return nullptr;
}

void ThreadCache::adopt(std::shared_ptr<ThreadCache> cache)
{
    auto &list = t_caches.caches;
    // Caches of destroyed pools are dead weight: drop them while we are here.
    std::erase_if(list, [](const std::shared_ptr<ThreadCache> &c) { return c->detached(); });
    list.push_back(std::move(cache));
    hot_ = list.back().get();
}

void *ThreadCache::refill(SizeClassPool &pool, unsigned cls)
{
    Bin &b = bins_[cls];
    const size_t want = std::max<size_t>(1, (b.capacity + 1) / 2);
    const size_t got = pool.take(cls, b.slots + b.count, std::min<size_t>(want, b.capacity - b.count));
    b.count += static_cast<uint32_t>(got);
    bump(counters_.misses, 1);
    bump(counters_.allocated_bytes, SizeClasses::size_of(cls));
    return b.slots[--b.count];
}

void ThreadCache::spill(SizeClassPool &pool, unsigned cls, void *p) noexcept
{
    Bin &b = bins_[cls];
    const uint32_t n = (b.count + 1) / 2;
    pool.give(cls, b.slots + b.count - n, n);
    b.count -= n;
    if (!push(cls, p)) { // capacity 0 cannot happen (every class keeps one), but stay correct
        pool.give(cls, &p, 1);
        bump(counters_.frees, 1);
        bump(counters_.freed_bytes, SizeClasses::size_of(cls));
    }
}

bool ThreadCache::push_large(void *p, size_t bytes, CoalescingPool &pool)
{
    if (bytes > large_budget_)
        return false;
    std::lock_guard lock(large_lock_);
    while (large_count_ == kLargeSlots || large_bytes_ + bytes > large_budget_) {
        pool.take_back(large_[0].p, large_[0].bytes); // its free was counted when it came here
        large_bytes_ -= large_[0].bytes;
        for (unsigned j = 1; j < large_count_; ++j)
            large_[j - 1] = large_[j];
        --large_count_;
    }
    large_[large_count_++] = LargeSlot{p, bytes};
    large_bytes_ += bytes;
    bump(counters_.frees, 1);
    bump(counters_.freed_bytes, bytes);
    return true;
}

void ThreadCache::flush(SizeClassPool &small, CoalescingPool &large) noexcept
{
    for (unsigned cls = 0; cls < SizeClasses::kCount; ++cls) {
        Bin &b = bins_[cls];
        if (b.count != 0)
            small.give(cls, b.slots, b.count);
        b.count = 0;
    }
    reclaim_large(large);
}

uint64_t ThreadCache::reclaim_large(CoalescingPool &large) noexcept
{
    std::lock_guard lock(large_lock_);
    const uint64_t bytes = large_bytes_;
    for (unsigned i = 0; i < large_count_; ++i) {
        try {
            large.take_back(large_[i].p, large_[i].bytes);
        } catch (...) {
            // No host memory for a map node: the range stays out of circulation until its chunk
            // goes upstream with the pool.
        }
    }
    large_count_ = 0;
    large_bytes_ = 0;
    return bytes;
}

void ThreadCache::detach() noexcept
{
    std::lock_guard lock(link_mutex_);
    registry_ = nullptr;
    detached_.store(true, std::memory_order_release);
}

void ThreadCache::retire() noexcept
{
    std::lock_guard lock(link_mutex_);
    if (registry_)
        registry_->retire(*this);
    registry_ = nullptr;
}

} // namespace tidal::pool
