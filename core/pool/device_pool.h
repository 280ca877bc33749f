// One memory pool per kind x device: the facade the context allocates through. Small requests
// (up to settings.small_max, alignment up to 256) go to size classes behind per-thread caches;
// everything else to the coalescing best-fit pool, with the last few large blocks each thread
// freed kept by that thread for reuse at the same size. Frees may be stream-ordered. The
// pinned host pool and the managed pool are this same class over another BlockSource.
//
// Contract (as for RMM's device_memory_resource): deallocate() gets exactly the size and
// alignment allocate() got -- the route and the rounded block size are recomputed from them,
// so no per-block record is kept. Every member may be called from many threads at once; a
// thread-cache hit takes no lock. The pool must not be destroyed while another thread is
// inside one of its calls; threads that still hold caches of it may live on (their caches are
// detached). Destruction gives all memory back upstream, including blocks still handed out.
//
// One stream only: while every stream-ordered call a pool has seen named the same stream S
// (PyTorch's usual case), a block freed on S goes straight back to the free lists -- reusable
// at once by any allocation on S, whatever its size, as in PyTorch's caching allocator. The
// first call that could hand such a block to other work (another stream, or a synchronous
// allocation) first waits for S once; from then on frees on streams are held per stream
// until an event says they are safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "pool/block_source.h"
#include "pool/coalescing_pool.h"
#include "pool/event_oracle.h"
#include "pool/pool_gauges.h"
#include "pool/pool_settings.h"
#include "pool/pool_stats.h"
#include "pool/pooled_block.h"
#include "pool/size_class_pool.h"
#include "pool/size_classes.h"
#include "pool/stream_handle.h"
#include "pool/stream_ordered_free.h"
#include "pool/thread_cache.h"
#include "pool/thread_cache_registry.h"

namespace tidal::pool {

class DevicePool {
public:
    static constexpr size_t kMaxAlignment = size_t{1} << 30;
    // Beyond this nothing can be allocated, and sizes cannot overflow once aligned.
    static constexpr size_t kMaxRequest = SIZE_MAX - 4 * kMaxAlignment;

    // `source` and `events` (when given) must outlive the pool. Without `events` the pool
    // refuses stream-ordered frees. Throws tidal::Error (INVALID_ARGUMENT) for settings out
    // of range.
    DevicePool(BlockSource &source, PoolSettings settings = {}, EventOracle *events = nullptr);
    ~DevicePool();
    DevicePool(const DevicePool &) = delete;
    DevicePool &operator=(const DevicePool &) = delete;

    // A block of at least `size` bytes aligned to `alignment` (0 = 256; a power of two up to
    // 1 GiB), usable at once on any stream. `*reused` is false only when the block is memory
    // never handed out before; true means a previous owner's state (e.g. memory advice) may
    // still be set on it. Throws tidal::Error: INVALID_ARGUMENT (size 0, bad alignment),
    // OUT_OF_MEMORY or the upstream's error once freeing what the pool holds did not help.
    void *allocate(size_t size, size_t alignment = kBlockAlignment, bool *reused = nullptr);
    // The same, for work on `stream`: may also hand out a block freed on `stream` whose event
    // has not completed yet (the stream's own order makes that safe).
    void *allocate(size_t size, size_t alignment, StreamHandle stream, bool *reused = nullptr);
    // Gives a block back: free for anyone at once (the caller guarantees no work still uses it).
    [[gnu::always_inline]] void deallocate(void *p, size_t size, size_t alignment = kBlockAlignment);
    // Gives a block back once the work enqueued on `stream` so far has finished; until then only
    // allocations on `stream` may reuse it. Throws tidal::Error (NOT_SUPPORTED without an
    // EventOracle): the block then stays the caller's.
    void deallocate(void *p, size_t size, size_t alignment, StreamHandle stream);

    // Returns completed stream frees to the pool, asks every thread to flush its cache at its
    // next call (the calling thread's is flushed now) and gives wholly free chunks and slabs
    // upstream until reserved - outstanding <= release_threshold. Returns the bytes released.
    // What the upstream refuses stays reserved for the next trim; `failure` (may be null: the
    // source logs it) gets the first refusal.
    uint64_t trim(std::exception_ptr *failure = nullptr);

    // `stream` is about to be destroyed. Blocks freed on it return to the pool once the work
    // queued on it so far has finished (an event recorded now says when); one-stream mode on
    // it ends with a wait for it. Throws the oracle's error (the stream must then not be
    // destroyed yet: its blocks are still tied to it).
    void end_stream(StreamHandle stream);

    PoolStats stats() const;
    const PoolSettings &settings() const noexcept { return settings_; }
    // Where a request goes and how many bytes it really takes (the size class or a multiple
    // of 256). `p` is left null.
    PooledBlock route(size_t size, size_t alignment) const noexcept;

private:
    bool fast_eligible(size_t size, size_t alignment) const noexcept
    {
        // Free for the compiler to know (the constructor enforces it), and it keeps the class
        // index of a constant large size from looking like an out-of-bounds access.
        if (fast_small_max_ > SizeClasses::kMaxSize)
            __builtin_unreachable();
        return size - 1 < fast_small_max_ && alignment <= kBlockAlignment;
    }
    // A request beyond the size classes that a thread cache's large slots may serve (routed as
    // allocate_slow routes it); its block size is large_bytes(size).
    bool large_fast_eligible(size_t size, size_t alignment) const noexcept
    {
        return large_cached_ && alignment <= kBlockAlignment && size - 1 >= settings_.small_max && size <= kMaxRequest;
    }
    static size_t large_bytes(size_t size) noexcept { return (size + kBlockAlignment - 1) & ~(kBlockAlignment - 1); }
    // The calling thread's large slots, without allocate_slow's checks (out of line: the size
    // class path stays small enough to inline). nullptr / false: go the slow way.
    void *pop_large_cached(size_t size) noexcept;
    bool push_large_cached(void *p, size_t size) noexcept;
    void *allocate_slow(size_t size, size_t alignment, const StreamHandle *stream, bool *reused);
    void deallocate_slow(void *p, size_t size, size_t alignment, const StreamHandle *stream);
    void *allocate_block(const PooledBlock &shape, size_t alignment, bool *reused);
    void release_completed();
    // Blocks whose stream-ordered free has completed, back to the free lists (counted when held).
    void take_back(const std::vector<PooledBlock> &blocks) noexcept;
    void free_everything_spare() noexcept;
    void *passthrough_allocate(size_t size, size_t alignment, bool *reused);
    void passthrough_deallocate(void *p, size_t size) noexcept;
    // A request the pool can take: size > 0 and not absurd, alignment 0 or a power of two up
    // to 1 GiB. Inline and branch-light: the large-block path runs it on every call.
    static bool request_ok(size_t size, size_t alignment) noexcept
    {
        return size - 1 < kMaxRequest && (alignment & (alignment - 1)) == 0 && alignment <= kMaxAlignment;
    }
    // The error for a request that is not ok (kept out of line: it formats a message).
    [[noreturn, gnu::cold, gnu::noinline]] static void throw_bad_request(size_t size, size_t alignment);
    static PoolSettings checked(PoolSettings settings);

    // Read by every fast-path call (with caches_.key()).
    size_t fast_small_max_; // small_max when small blocks are cached, else 0: the fast path never matches
    bool small_cached_;
    bool large_cached_;
    const PoolSettings settings_;
    BlockSource &source_;
    PoolGauges gauges_;
    SizeClassPool small_;
    mutable CoalescingPool large_; // stats() merges its deferred frees: nothing a caller can observe
    ThreadCacheRegistry caches_; // after both halves: detaches every cache before they go
    std::unique_ptr<StreamOrderedFree> pending_;
    EventOracle *events_;

    // One-stream mode (see the top of the file). `mode_` is read on every call, so it is an
    // atomic apart from the mutex that guards the switch; `sole_` is written before mode_
    // becomes single and never changes after.
    enum Mode : uint32_t { kUnused = 0, kSingle = 1, kMany = 2 };
    std::atomic<uint32_t> mode_{kUnused};
    void *sole_ = nullptr;
    std::mutex mode_mutex_;
    // True when a free on `stream` may go straight to the free lists.
    bool sole_stream(StreamHandle stream) noexcept;
    // Before synchronous use or use on another stream: leave one-stream mode, waiting for
    // the sole stream once. Throws the oracle's error.
    void leave_single() ;
    void check_mode_for(const StreamHandle *stream)
    {
        const uint32_t m = mode_.load(std::memory_order_seq_cst);
        if (m == kSingle) [[unlikely]] {
            if (!stream || stream->native != sole_)
                leave_single();
        } else if (m == kUnused && stream && events_) [[unlikely]] {
            sole_stream(*stream);
        }
    }

    // Counters of what neither a thread cache nor the coalescing pool counts: small blocks
    // without a cache, stream-ordered frees and reuses, pass-through blocks.
    std::atomic<uint64_t> shared_allocations_{0};
    std::atomic<uint64_t> shared_frees_{0};
    std::atomic<uint64_t> shared_allocated_bytes_{0};
    std::atomic<uint64_t> shared_freed_bytes_{0};
    std::atomic<uint64_t> stream_reuses_{0};

    // Pool switched off: every pass-through block (its upstream start and size), by the
    // pointer handed out.
    std::mutex passthrough_mutex_;
    std::unordered_map<void *, std::pair<void *, size_t>> passthrough_;
};

inline void *DevicePool::allocate(size_t size, size_t alignment, bool *reused)
{
    check_mode_for(nullptr);
    if (fast_eligible(size, alignment)) [[likely]] {
        ThreadCache *c = ThreadCache::hot();
        if (c && c->key() == caches_.key()) [[likely]] {
            if (void *p = c->pop(SizeClasses::index(size))) [[likely]] {
                if (reused)
                    *reused = true;
                return p;
            }
        }
    } else if (large_fast_eligible(size, alignment)) {
        if (void *p = pop_large_cached(size)) {
            if (reused)
                *reused = true;
            return p;
        }
    }
    return allocate_slow(size, alignment, nullptr, reused);
}

inline void *DevicePool::allocate(size_t size, size_t alignment, StreamHandle stream, bool *reused)
{
    check_mode_for(&stream);
    // A cached block has no pending work (or, in one-stream mode, only work on `stream`): it
    // is as good on `stream` as anywhere.
    if (fast_eligible(size, alignment)) [[likely]] {
        ThreadCache *c = ThreadCache::hot();
        if (c && c->key() == caches_.key()) [[likely]] {
            if (void *p = c->pop(SizeClasses::index(size))) [[likely]] {
                if (reused)
                    *reused = true;
                return p;
            }
        }
    }
    return allocate_slow(size, alignment, &stream, reused);
}

inline void DevicePool::deallocate(void *p, size_t size, size_t alignment)
{
    if (fast_eligible(size, alignment)) [[likely]] {
        ThreadCache *c = ThreadCache::hot();
        if (c && c->key() == caches_.key() && c->push(SizeClasses::index(size), p)) [[likely]]
            return;
    } else if (large_fast_eligible(size, alignment) && push_large_cached(p, size)) {
        return;
    }
    deallocate_slow(p, size, alignment, nullptr);
}

inline void DevicePool::deallocate(void *p, size_t size, size_t alignment, StreamHandle stream)
{
    if (mode_.load(std::memory_order_seq_cst) != kMany && sole_stream(stream)) [[likely]] {
        deallocate(p, size, alignment); // only work on the sole stream can follow: free it now
        return;
    }
    deallocate_slow(p, size, alignment, &stream);
}

inline PooledBlock DevicePool::route(size_t size, size_t alignment) const noexcept
{
    PooledBlock b;
    if (size - 1 < settings_.small_max && alignment <= kBlockAlignment) {
        b.small = true;
        b.size_class = SizeClasses::index(size);
        b.bytes = SizeClasses::size_of(b.size_class);
    } else {
        b.bytes = (size + kBlockAlignment - 1) & ~(kBlockAlignment - 1);
    }
    return b;
}

} // namespace tidal::pool
