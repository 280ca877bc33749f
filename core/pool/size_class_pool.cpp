#include "pool/size_class_pool.h"

#include <algorithm>
#include <functional>

#include "status/error.h"

namespace tidal::pool {

SizeClassPool::SizeClassPool(BlockSource &source, PoolGauges &gauges) : source_(source), gauges_(gauges) {}

SizeClassPool::~SizeClassPool()
{
    for (SizeClass &c : classes_)
        for (const Slab &s : c.slabs) {
            source_.release(s.raw, s.raw_bytes);
            gauges_.sub_reserved(s.raw_bytes);
        }
}

size_t SizeClassPool::slab_blocks(unsigned cls) noexcept
{
    return std::max(kMinBlocksPerSlab, kSlabBytes / SizeClasses::size_of(cls));
}

void SizeClassPool::add_slab(SizeClass &c, unsigned cls)
{
    size_t blocks = slab_blocks(cls);
    // Host kinds only promise 64-byte alignment upstream: pad so the first block is 256-aligned.
    const size_t pad = source_.alignment() < kBlockAlignment ? kBlockAlignment - source_.alignment() : 0;
    // Room first, so that give() never allocates and a failure below leaves nothing behind.
    c.free.reserve(c.blocks + blocks);
    c.slabs.reserve(c.slabs.size() + 1);
    Slab s;
    for (;;) {
        s.raw_bytes = blocks * SizeClasses::size_of(cls) + pad;
        try {
            s.raw = source_.acquire(s.raw_bytes);
            break;
        } catch (const Error &e) {
            // A nearly full device may still hold a smaller slab: halve down to one block.
            if (e.status() != TIDAL_ERROR_OUT_OF_MEMORY || blocks == 1)
                throw;
            blocks = (blocks + 1) / 2;
        }
    }
    s.base = (reinterpret_cast<uintptr_t>(s.raw) + kBlockAlignment - 1) & ~uintptr_t{kBlockAlignment - 1};
    s.capacity = static_cast<uint32_t>(blocks);
    c.slabs.push_back(s);
    c.blocks += blocks;
    gauges_.add_reserved(s.raw_bytes);
}

size_t SizeClassPool::take(unsigned cls, void **out, size_t want)
{
    SizeClass &c = classes_[cls];
    const size_t size = SizeClasses::size_of(cls);
    size_t n = 0;
    std::lock_guard lock(c.mutex);
    while (n < want && !c.free.empty()) {
        out[n++] = c.free.back();
        c.free.pop_back();
    }
    if (n == 0 && (c.slabs.empty() || c.slabs.back().carved == c.slabs.back().capacity))
        add_slab(c, cls);
    if (n < want && !c.slabs.empty()) {
        Slab &s = c.slabs.back();
        while (n < want && s.carved < s.capacity)
            out[n++] = reinterpret_cast<void *>(s.base + size_t{s.carved++} * size);
    }
    gauges_.add_outstanding(n * size);
    return n;
}

void SizeClassPool::give(unsigned cls, void *const *blocks, size_t n) noexcept
{
    SizeClass &c = classes_[cls];
    {
        std::lock_guard lock(c.mutex);
        c.free.insert(c.free.end(), blocks, blocks + n); // within the reserved capacity
    }
    gauges_.sub_outstanding(n * SizeClasses::size_of(cls));
}

uint64_t SizeClassPool::trim(uint64_t target, std::exception_ptr *failure) noexcept
{
    uint64_t released = 0;
    for (unsigned cls = SizeClasses::kCount; cls-- > 0 && released < target;)
        released += trim_class(classes_[cls], cls, target - released, failure);
    return released;
}

// Rare (trim and out-of-memory recovery), so it sorts the free list instead of keeping a
// per-slab count on every give(): the hot paths stay a push and a pop. Allocates nothing.
uint64_t SizeClassPool::trim_class(SizeClass &c, unsigned cls, uint64_t target, std::exception_ptr *failure) noexcept
{
    std::lock_guard lock(c.mutex);
    const size_t size = SizeClasses::size_of(cls);
    const std::less<void *> before;
    std::sort(c.free.begin(), c.free.end(), before);
    uint64_t released = 0;
    for (Slab &s : c.slabs) {
        if (released >= target)
            break;
        auto *lo = reinterpret_cast<void *>(s.base);
        auto *hi = reinterpret_cast<void *>(s.base + size_t{s.carved} * size);
        auto first = std::lower_bound(c.free.begin(), c.free.end(), lo, before);
        auto last = std::lower_bound(first, c.free.end(), hi, before);
        if (static_cast<size_t>(last - first) != s.carved)
            continue; // some block of this slab is still out
        if (std::exception_ptr refused = source_.release(s.raw, s.raw_bytes)) {
            if (failure != nullptr && !*failure)
                *failure = refused;
            continue;
        }
        c.free.erase(first, last);
        gauges_.sub_reserved(s.raw_bytes);
        released += s.raw_bytes;
        c.blocks -= s.capacity;
        s.raw = nullptr;
    }
    // Order is kept, so the last slab is still the only one that may have uncarved blocks.
    std::erase_if(c.slabs, [](const Slab &s) { return s.raw == nullptr; });
    return released;
}

} // namespace tidal::pool
