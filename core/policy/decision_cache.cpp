#include "policy/decision_cache.h"

#include <atomic>

namespace tidal {

uint64_t DecisionCache::next_generation() noexcept
{
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

} // namespace tidal
