#include "policy/decision_cache.h"

#include <atomic>
#include <memory>

namespace tidal {

uint64_t DecisionCache::next_generation() noexcept
{
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

DecisionCache::Entry *DecisionCache::table() noexcept
{
    // Frees the table at thread exit and clears the fast path's pointer, so a later call on
    // the exiting thread (another thread_local's destructor) finds no table and caches nothing.
    // `exited` is trivially destructible: still readable after the owner is gone.
    static thread_local bool exited = false;
    struct Owner {
        std::unique_ptr<Entry[]> entries;
        ~Owner()
        {
            exited = true;
            entries_ = nullptr;
        }
    };
    if (exited)
        return nullptr;
    thread_local Owner owner;
    owner.entries.reset(new (std::nothrow) Entry[kEntries]);
    entries_ = owner.entries.get();
    return entries_;
}

} // namespace tidal
