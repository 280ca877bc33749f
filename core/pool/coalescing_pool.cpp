#include "pool/coalescing_pool.h"

#include <algorithm>

namespace tidal::pool {
namespace {
constexpr size_t kSpareNodes = 64;
// Over-aligned requests: how many best-fit candidates are tried before settling for the
// first range large enough to fit whatever padding the alignment needs.
constexpr int kAlignedCandidates = 16;

uintptr_t align_up(uintptr_t v, size_t a) { return (v + a - 1) & ~uintptr_t{a - 1}; }
uintptr_t align_down(uintptr_t v, size_t a) { return v & ~uintptr_t{a - 1}; }
} // namespace

CoalescingPool::CoalescingPool(BlockSource &source, PoolGauges &gauges, uint64_t growth)
    : source_(source), gauges_(gauges), growth_(growth)
{
    spare_addr_nodes_.reserve(kSpareNodes);
    spare_size_nodes_.reserve(kSpareNodes);
}

CoalescingPool::~CoalescingPool()
{
    for (const auto &[base, c] : chunks_) {
        source_.release(c.raw, c.raw_bytes);
        gauges_.sub_reserved(c.raw_bytes);
    }
}

void CoalescingPool::insert_free(uintptr_t start, size_t bytes, uintptr_t chunk)
{
    if (!spare_addr_nodes_.empty()) {
        AddrMap::node_type node = std::move(spare_addr_nodes_.back());
        spare_addr_nodes_.pop_back();
        node.key() = start;
        node.mapped() = FreeRange{bytes, chunk};
        free_by_addr_.insert(std::move(node));
    } else {
        free_by_addr_.emplace(start, FreeRange{bytes, chunk});
    }
    try {
        if (!spare_size_nodes_.empty()) {
            SizeSet::node_type node = std::move(spare_size_nodes_.back());
            spare_size_nodes_.pop_back();
            node.value() = {bytes, start};
            free_by_size_.insert(std::move(node));
        } else {
            free_by_size_.emplace(bytes, start);
        }
    } catch (...) {
        free_by_addr_.erase(start); // keep the two indexes in step
        throw;
    }
    free_bytes_ += bytes;
}

void CoalescingPool::erase_free(AddrMap::iterator it) noexcept
{
    const std::pair<size_t, uintptr_t> key{it->second.bytes, it->first};
    free_bytes_ -= it->second.bytes;
    auto size_node = free_by_size_.extract(key);
    auto addr_node = free_by_addr_.extract(it);
    if (spare_size_nodes_.size() < kSpareNodes) // within the reserved capacity: no allocation
        spare_size_nodes_.push_back(std::move(size_node));
    if (spare_addr_nodes_.size() < kSpareNodes)
        spare_addr_nodes_.push_back(std::move(addr_node));
}

CoalescingPool::SizeSet::iterator CoalescingPool::find_fit(size_t bytes, size_t alignment)
{
    auto it = free_by_size_.lower_bound({bytes, 0});
    if (alignment <= kBlockAlignment || it == free_by_size_.end())
        return it; // every range starts 256-aligned: the best fit always fits
    for (int tried = 0; it != free_by_size_.end() && tried < kAlignedCandidates; ++it, ++tried)
        if (align_up(it->second, alignment) + bytes <= it->second + it->first)
            return it;
    // A range this large fits whatever its start: padding is at most alignment - 256.
    return free_by_size_.lower_bound({bytes + alignment - kBlockAlignment, 0});
}

CoalescingPool::SizeSet::iterator CoalescingPool::grow(size_t bytes, size_t alignment)
{
    // With an upstream aligned below `alignment`, bytes + alignment always holds an aligned
    // block of `bytes` between the 256-aligned ends of the chunk: the padding in front plus
    // what rounding the end down to 256 cuts off never exceed `alignment`.
    const size_t need = source_.alignment() >= alignment ? bytes : bytes + alignment;
    const size_t ask = std::max<uint64_t>(need, growth_);
    Chunk c;
    try {
        c.raw_bytes = ask;
        c.raw = source_.acquire(ask);
    } catch (...) {
        if (ask == need)
            throw;
        c.raw_bytes = need; // the growth step did not fit: the request alone may
        c.raw = source_.acquire(need);
    }
    const uintptr_t raw = reinterpret_cast<uintptr_t>(c.raw);
    const uintptr_t base = align_up(raw, kBlockAlignment);
    c.end = align_down(raw + c.raw_bytes, kBlockAlignment);
    try {
        chunks_.emplace(base, c);
        insert_free(base, c.end - base, base);
    } catch (...) {
        chunks_.erase(base);
        source_.release(c.raw, c.raw_bytes);
        throw;
    }
    gauges_.add_reserved(c.raw_bytes);
    return free_by_size_.find({c.end - base, base});
}

void *CoalescingPool::allocate(size_t bytes, size_t alignment, bool *fresh, bool may_grow)
{
    std::lock_guard lock(mutex_);
    for (size_t i = deferred_count_; i-- > 0;) { // newest first
        const Deferred d = deferred_[i];
        if (d.bytes != bytes || d.p % alignment != 0)
            continue;
        std::copy(deferred_ + i + 1, deferred_ + deferred_count_, deferred_ + i);
        --deferred_count_;
        in_use_bytes_ += bytes;
        ++allocations_;
        allocated_bytes_ += bytes;
        gauges_.add_outstanding_single_writer(bytes);
        if (fresh)
            *fresh = false;
        return reinterpret_cast<void *>(d.p);
    }
    auto fit = find_fit(bytes, alignment);
    if (fit == free_by_size_.end() && deferred_count_ != 0) {
        merge_deferred();
        fit = find_fit(bytes, alignment);
    }
    const bool grown = fit == free_by_size_.end();
    if (grown && !may_grow)
        return nullptr;
    if (grown)
        fit = grow(bytes, alignment);
    void *p = carve(fit, bytes, alignment);
    in_use_bytes_ += bytes;
    ++allocations_;
    allocated_bytes_ += bytes;
    gauges_.add_outstanding_single_writer(bytes);
    if (fresh)
        *fresh = grown;
    return p;
}

void *CoalescingPool::carve(SizeSet::iterator fit, size_t bytes, size_t alignment)
{
    const auto [size, start] = *fit;
    auto range = free_by_addr_.find(start);
    const uintptr_t chunk = range->second.chunk;
    const uintptr_t p = align_up(start, alignment);
    const uintptr_t end = start + size;
    erase_free(range);
    // Node reuse means these two inserts normally allocate nothing; should the host allocator
    // fail, the range goes back whole.
    try {
        if (p > start)
            insert_free(start, p - start, chunk);
        if (p + bytes < end)
            insert_free(p + bytes, end - p - bytes, chunk);
    } catch (...) {
        if (p > start)
            if (auto it = free_by_addr_.find(start); it != free_by_addr_.end())
                erase_free(it);
        insert_free(start, size, chunk);
        throw;
    }
    return reinterpret_cast<void *>(p);
}

void CoalescingPool::deallocate(void *ptr, size_t bytes)
{
    std::lock_guard lock(mutex_);
    defer(reinterpret_cast<uintptr_t>(ptr), bytes);
    ++frees_;
    freed_bytes_ += bytes;
}

void CoalescingPool::take_back(void *ptr, size_t bytes)
{
    std::lock_guard lock(mutex_);
    defer(reinterpret_cast<uintptr_t>(ptr), bytes);
}

void CoalescingPool::defer(uintptr_t p, size_t bytes)
{
    if (deferred_count_ == kDeferred) {
        merge_free(deferred_[0].p, deferred_[0].bytes); // may throw: then nothing changed
        std::copy(deferred_ + 1, deferred_ + kDeferred, deferred_);
        --deferred_count_;
    }
    deferred_[deferred_count_++] = Deferred{p, bytes};
    in_use_bytes_ -= bytes;
    gauges_.sub_outstanding_single_writer(bytes);
}

void CoalescingPool::merge_deferred() noexcept
{
    size_t kept = 0;
    for (size_t i = 0; i < deferred_count_; ++i) {
        try {
            merge_free(deferred_[i].p, deferred_[i].bytes);
        } catch (...) {
            deferred_[kept++] = deferred_[i]; // host out of memory: stays deferred, still free
        }
    }
    deferred_count_ = kept;
}

void CoalescingPool::merge_free(uintptr_t start, size_t bytes)
{
    uintptr_t end = start + bytes;
    const uintptr_t chunk = std::prev(chunks_.upper_bound(start))->first;
    const auto next = free_by_addr_.lower_bound(start);
    const auto prev = next == free_by_addr_.begin() ? free_by_addr_.end() : std::prev(next);
    const bool merge_next = next != free_by_addr_.end() && next->first == end && next->second.chunk == chunk;
    const bool merge_prev = prev != free_by_addr_.end() && prev->first + prev->second.bytes == start &&
                            prev->second.chunk == chunk;
    if (merge_next) {
        end += next->second.bytes;
        erase_free(next);
    }
    if (merge_prev) {
        start = prev->first;
        erase_free(prev);
    }
    // After a merge a spare node is at hand, so this cannot fail half-way through; without one,
    // a host allocation failure throws before anything changed.
    insert_free(start, end - start, chunk);
}

uint64_t CoalescingPool::trim(uint64_t target, std::exception_ptr *failure) noexcept
{
    std::lock_guard lock(mutex_);
    merge_deferred();
    uint64_t released = 0;
    for (auto it = chunks_.begin(); it != chunks_.end() && released < target;) {
        const auto range = free_by_addr_.find(it->first);
        if (range == free_by_addr_.end() || range->second.bytes != it->second.end - it->first) {
            ++it;
            continue;
        }
        if (std::exception_ptr refused = source_.release(it->second.raw, it->second.raw_bytes)) {
            if (failure != nullptr && !*failure)
                *failure = refused;
            ++it;
            continue;
        }
        erase_free(range);
        gauges_.sub_reserved(it->second.raw_bytes);
        released += it->second.raw_bytes;
        it = chunks_.erase(it);
    }
    return released;
}

CoalescingPool::Usage CoalescingPool::usage()
{
    std::lock_guard lock(mutex_);
    merge_deferred();
    Usage u;
    u.allocations = allocations_;
    u.frees = frees_;
    u.allocated_bytes = allocated_bytes_;
    u.freed_bytes = freed_bytes_;
    u.in_use_bytes = in_use_bytes_;
    u.free_bytes = free_bytes_;
    u.largest_free = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
    u.chunks = chunks_.size();
    u.free_ranges = free_by_addr_.size();
    return u;
}

} // namespace tidal::pool
