#include "pool/device_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "log/logger.h"
#include "status/error.h"

namespace tidal::pool {
namespace {

// Stream frees held beyond this many are checked for completion on the next stream free, so
// a program that frees on streams but rarely allocates does not pile them up.
constexpr size_t kCollectAbove = 64;

uintptr_t align_up(uintptr_t v, size_t a) { return (v + a - 1) & ~uintptr_t{a - 1}; }

void bump(std::atomic<uint64_t> &c, uint64_t v) { c.fetch_add(v, std::memory_order_relaxed); }

} // namespace

PoolSettings DevicePool::checked(PoolSettings s)
{
    if (s.small_max > SizeClasses::kMaxSize)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("pool small_max {} is above the largest size class ({} bytes)", s.small_max,
                                SizeClasses::kMaxSize),
                    "use at most 1 MiB; larger blocks go to the coalescing pool");
    if (s.thread_cache_blocks > 65536)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("pool thread_cache_blocks {} is more than 65536", s.thread_cache_blocks),
                    "a few dozen blocks per class is plenty");
    return s;
}

DevicePool::DevicePool(BlockSource &source, PoolSettings settings, EventOracle *events)
    : settings_(checked(settings)), source_(source), small_(source, gauges_),
      large_(source, gauges_, settings_.growth), caches_(small_, large_, settings_)
{
    small_cached_ = settings_.enabled && settings_.thread_cache_blocks > 0 && settings_.small_max > 0;
    large_cached_ = settings_.enabled && settings_.thread_cache_large_bytes > 0;
    fast_small_max_ = small_cached_ ? settings_.small_max : 0;
    if (events)
        pending_ = std::make_unique<StreamOrderedFree>(*events);
    events_ = events;
}

bool DevicePool::sole_stream(StreamHandle stream) noexcept
{
    if (!events_ || !settings_.enabled)
        return false;
    uint32_t m = mode_.load(std::memory_order_seq_cst);
    if (m == kUnused) {
        std::lock_guard lock(mode_mutex_);
        m = mode_.load(std::memory_order_seq_cst);
        if (m == kUnused) {
            sole_ = stream.native;
            mode_.store(kSingle, std::memory_order_seq_cst);
            return true;
        }
    }
    return m == kSingle && sole_ == stream.native;
}

void DevicePool::leave_single()
{
    std::lock_guard lock(mode_mutex_);
    if (mode_.load(std::memory_order_seq_cst) != kSingle)
        return;
    // Switch first, then wait: a free on the sole stream that still saw kSingle queued its
    // work before this store, so the wait below covers it; one that sees kMany is held.
    mode_.store(kMany, std::memory_order_seq_cst);
    events_->synchronize(StreamHandle{sole_});
}

DevicePool::~DevicePool()
{
    for (const auto &[p, raw] : passthrough_) // switched off: what callers never freed
        source_.release(raw.first, raw.second);
    // Members go in reverse order: pending_ retires its tokens, caches_ detaches every thread
    // cache, then the two halves give their slabs and chunks upstream.
}

void DevicePool::throw_bad_request(size_t size, size_t alignment)
{
    if (size == 0)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, "pool request of 0 bytes", "ask for at least one byte");
    if ((alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("alignment {} is not a power of two up to 1 GiB", alignment),
                    "use a power of two");
    throw Error(TIDAL_ERROR_OUT_OF_MEMORY, fmt::format("{} bytes aligned to {} can never be allocated", size, alignment),
                "ask for less memory");
}

void *DevicePool::allocate_slow(size_t size, size_t alignment, const StreamHandle *stream, bool *reused)
{
    if (!request_ok(size, alignment)) [[unlikely]]
        throw_bad_request(size, alignment);
    if (!settings_.enabled) [[unlikely]]
        return passthrough_allocate(size, alignment, reused);
    alignment = std::max(alignment, kBlockAlignment);
    const PooledBlock shape = route(size, alignment);
    if (!shape.small && large_cached_ && alignment == kBlockAlignment) {
        // A large block this thread freed at this size (safe on any stream). The synchronous
        // inline path tried this already; stream-ordered requests come here first.
        if (void *p = pop_large_cached(size)) {
            if (reused)
                *reused = true;
            return p;
        }
    }
    if (pending_ && pending_->count() != 0) [[unlikely]] {
        if (stream) {
            if (auto held = pending_->take(*stream, shape, alignment)) {
                bump(stream_reuses_, 1);
                bump(shared_allocations_, 1);
                bump(shared_allocated_bytes_, held->bytes);
                if (reused)
                    *reused = true;
                return held->p;
            }
        }
        release_completed();
    }
    try {
        return allocate_block(shape, alignment, reused);
    } catch (const Error &e) {
        if (e.status() != TIDAL_ERROR_OUT_OF_MEMORY)
            throw;
        // The upstream is full: what this pool keeps spare may be what the request needs
        // (free slabs of small classes can make room for a large chunk, and the other way).
        free_everything_spare();
        return allocate_block(shape, alignment, reused);
    }
}

void *DevicePool::pop_large_cached(size_t size) noexcept
{
    ThreadCache *c = ThreadCache::hot();
    return c && c->key() == caches_.key() ? c->pop_large(large_bytes(size)) : nullptr;
}

bool DevicePool::push_large_cached(void *p, size_t size) noexcept
{
    ThreadCache *c = ThreadCache::hot();
    try {
        return c && c->key() == caches_.key() && c->push_large(p, large_bytes(size), large_);
    } catch (const std::bad_alloc &) {
        return false; // no room to make room: deallocate_slow gives the block to the shared pool
    }
}

void *DevicePool::allocate_block(const PooledBlock &shape, size_t alignment, bool *reused)
{
    if (shape.small) {
        // Small blocks count as reused: a thread cache does not remember which were never used.
        if (reused)
            *reused = true;
        if (ThreadCache *c = small_cached_ ? caches_.attach() : nullptr) {
            if (void *p = c->pop(shape.size_class))
                return p;
            return c->refill(small_, shape.size_class);
        }
        void *p = nullptr;
        small_.take(shape.size_class, &p, 1);
        bump(shared_allocations_, 1);
        bump(shared_allocated_bytes_, shape.bytes);
        return p;
    }
    bool fresh = false;
    // Blocks kept by threads go back into the pool before it grows: keeping them never costs
    // an upstream allocation (or an out-of-memory error) the pool could have avoided.
    void *p = large_.allocate(shape.bytes, alignment, &fresh, !large_cached_); // counts it
    if (!p) {
        caches_.reclaim_large();
        p = large_.allocate(shape.bytes, alignment, &fresh);
    }
    if (reused)
        *reused = !fresh;
    return p;
}

void DevicePool::deallocate_slow(void *p, size_t size, size_t alignment, const StreamHandle *stream)
{
    if (!request_ok(size, alignment)) [[unlikely]]
        throw_bad_request(size, alignment);
    if (!settings_.enabled) [[unlikely]] {
        // The runtime's own free waits for the device, so a stream free needs nothing more.
        passthrough_deallocate(p, size);
        return;
    }
    alignment = std::max(alignment, kBlockAlignment);
    PooledBlock block = route(size, alignment);
    block.p = p;
    if (stream) {
        if (!pending_)
            throw Error(TIDAL_ERROR_NOT_SUPPORTED, "this pool was made without an event oracle: it cannot free on a stream",
                        "free synchronously, or give the pool an EventOracle");
        pending_->hold(block, *stream);
        bump(shared_frees_, 1);
        bump(shared_freed_bytes_, block.bytes);
        if (pending_->count() > kCollectAbove)
            release_completed();
        return;
    }
    const bool cached = block.small ? small_cached_ : large_cached_ && alignment == kBlockAlignment;
    ThreadCache *c = nullptr;
    if (cached) {
        try {
            c = caches_.attach();
        } catch (const std::bad_alloc &) {
            // No room for a new cache: the block goes straight to the shared lists below.
        }
    }
    if (block.small) {
        if (c) {
            if (!c->push(block.size_class, p))
                c->spill(small_, block.size_class, p);
            return;
        }
        small_.give(block.size_class, &p, 1);
        bump(shared_frees_, 1);
        bump(shared_freed_bytes_, block.bytes);
        return;
    }
    if (c) {
        try {
            if (c->push_large(p, block.bytes, large_))
                return;
        } catch (const std::bad_alloc &) {
            // Making room failed: the block goes to the shared pool below instead.
        }
    }
    large_.deallocate(p, block.bytes); // counts it
}

void DevicePool::release_completed() { take_back(pending_->collect()); }

void DevicePool::take_back(const std::vector<PooledBlock> &blocks) noexcept
{
    for (const PooledBlock &b : blocks) {
        if (b.small) {
            small_.give(b.size_class, &b.p, 1);
            continue;
        }
        try {
            large_.take_back(b.p, b.bytes);
        } catch (const std::bad_alloc &) {
            // No host memory for a map node: the range stays out of circulation until its
            // chunk goes upstream with the pool. Losing reuse beats losing the process.
        }
    }
}

void DevicePool::end_stream(StreamHandle stream)
{
    if (!events_ || !settings_.enabled)
        return;
    if (mode_.load(std::memory_order_seq_cst) == kSingle && sole_ == stream.native)
        leave_single(); // its blocks went straight to the free lists: wait while the handle is valid
    if (pending_)
        take_back(pending_->end_stream(stream));
}

void DevicePool::free_everything_spare() noexcept
{
    try {
        if (pending_)
            release_completed();
    } catch (...) {
        // Best effort: this runs only to make room before a retry.
    }
    caches_.flush_current_thread();
    caches_.reclaim_large();
    large_.trim(UINT64_MAX);
    small_.trim(UINT64_MAX);
}

uint64_t DevicePool::trim(std::exception_ptr *failure)
{
    if (!settings_.enabled)
        return 0;
    if (pending_)
        release_completed();
    caches_.request_flush();
    caches_.flush_current_thread();
    caches_.reclaim_large(); // the size classes of other threads flush at their next call
    const uint64_t reserved = gauges_.reserved();
    const uint64_t outstanding = gauges_.outstanding();
    const uint64_t spare = reserved > outstanding ? reserved - outstanding : 0;
    uint64_t released = 0;
    if (spare > settings_.release_threshold) {
        const uint64_t target = spare - settings_.release_threshold;
        released = large_.trim(target, failure);
        if (released < target)
            released += small_.trim(target - released, failure);
    }
    // Exited threads gave their caches back as they ended; a live thread's size classes can
    // only be emptied by that thread (taking them here would cost every allocation a lock).
    // Say so, since reserved memory with nothing in use is otherwise a puzzle.
    if (Logger::enabled(LogLevel::info))
        if (const uint64_t kept = stats().cached_bytes)
            log_info(fmt::format("pool trim: {} bytes stay in the caches of threads still running; each gives "
                                 "them back at its next call into the pool, its own tidal_pool_trim or its exit",
                                 kept));
    return released;
}

PoolStats DevicePool::stats() const
{
    const ThreadCacheRegistry::Totals t = caches_.totals();
    const CoalescingPool::Usage u = large_.usage();
    const auto load = [](const std::atomic<uint64_t> &a) { return a.load(std::memory_order_relaxed); };
    PoolStats s;
    s.reserved_bytes = gauges_.reserved();
    s.reserved_high_water = gauges_.reserved_high_water();
    const uint64_t allocated = t.allocated_bytes + load(shared_allocated_bytes_) + u.allocated_bytes;
    const uint64_t freed = t.freed_bytes + load(shared_freed_bytes_) + u.freed_bytes;
    s.in_use_bytes = allocated > freed ? allocated - freed : 0;
    s.in_use_high_water = gauges_.outstanding_high_water();
    s.pending_bytes = pending_ ? pending_->bytes() : 0;
    const uint64_t outstanding = gauges_.outstanding();
    const uint64_t held = s.in_use_bytes + s.pending_bytes;
    s.cached_bytes = outstanding > held ? outstanding - held : 0;
    s.allocations = t.hits + t.misses + load(shared_allocations_) + u.allocations;
    s.frees = t.frees + load(shared_frees_) + u.frees;
    s.cache_hits = t.hits;
    s.cache_misses = t.misses;
    s.stream_reuses = load(stream_reuses_);
    s.upstream_acquires = gauges_.upstream_acquires();
    s.upstream_releases = gauges_.upstream_releases();
    s.large_free_bytes = u.free_bytes;
    s.large_largest_free = u.largest_free;
    s.fragmentation = u.free_bytes ? 1.0 - static_cast<double>(u.largest_free) / static_cast<double>(u.free_bytes) : 0.0;
    return s;
}

// Switched off, the pool still records each block (upstream calls cost microseconds to
// milliseconds; a map insert does not matter), so that over-aligned blocks find their real
// start again and destruction can give back what callers never freed, as the pool would.
void *DevicePool::passthrough_allocate(size_t size, size_t alignment, bool *reused)
{
    if (reused)
        *reused = false;
    const size_t raw_bytes = alignment <= source_.alignment() ? size : size + alignment;
    void *raw = source_.acquire(raw_bytes);
    void *p = reinterpret_cast<void *>(align_up(reinterpret_cast<uintptr_t>(raw), std::max<size_t>(alignment, 1)));
    try {
        std::lock_guard lock(passthrough_mutex_);
        passthrough_.emplace(p, std::pair{raw, raw_bytes});
    } catch (...) {
        source_.release(raw, raw_bytes);
        throw;
    }
    gauges_.add_reserved(raw_bytes);
    gauges_.add_outstanding(size);
    bump(shared_allocations_, 1);
    bump(shared_allocated_bytes_, size);
    return p;
}

void DevicePool::passthrough_deallocate(void *p, size_t size) noexcept
{
    std::pair<void *, size_t> raw;
    {
        std::lock_guard lock(passthrough_mutex_);
        const auto it = passthrough_.find(p);
        if (it == passthrough_.end())
            return; // not ours: the caller broke the contract; better a leak than a bad free
        raw = it->second;
        passthrough_.erase(it);
    }
    source_.release(raw.first, raw.second);
    gauges_.sub_reserved(raw.second);
    gauges_.sub_outstanding(size);
    bump(shared_frees_, 1);
    bump(shared_freed_bytes_, size);
}

} // namespace tidal::pool
