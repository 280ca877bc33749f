// The small-block half of a DevicePool: one free list per size class (SizeClasses), filled
// by carving slabs from the BlockSource. Each class owns its slabs and its lock, so threads
// working on different classes never meet. Free lists hold addresses in host memory: the
// blocks themselves may be device memory and are never read or written.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

#include "pool/block_source.h"
#include "pool/pool_gauges.h"
#include "pool/size_classes.h"

namespace tidal::pool {

class SizeClassPool {
public:
    // A slab holds at least kMinBlocksPerSlab blocks and is about kSlabBytes for classes up to
    // kSlabBytes / kMinBlocksPerSlab: few upstream calls, and no slab wastes a tail.
    static constexpr size_t kSlabBytes = size_t{2} << 20;
    static constexpr size_t kMinBlocksPerSlab = 8;

    SizeClassPool(BlockSource &source, PoolGauges &gauges);
    // Gives every slab back upstream, whether or not its blocks were returned.
    ~SizeClassPool();
    SizeClassPool(const SizeClassPool &) = delete;
    SizeClassPool &operator=(const SizeClassPool &) = delete;

    // Moves between 1 and `want` blocks of class `cls` into `out` and returns how many. Carves
    // a new slab only when the class has nothing free. Throws tidal::Error when the upstream
    // fails; nothing is taken then.
    size_t take(unsigned cls, void **out, size_t want);
    // Takes back `n` blocks of class `cls`. Never allocates: each class reserves free-list
    // room for every block its slabs hold.
    void give(unsigned cls, void *const *blocks, size_t n) noexcept;
    // Gives wholly free slabs back upstream, largest classes first, until at least `target`
    // bytes went back or no wholly free slab is left. Returns the bytes released. A slab the
    // upstream refuses stays, its blocks free, for the next trim; `failure` (may be null) gets
    // the first refusal.
    uint64_t trim(uint64_t target, std::exception_ptr *failure = nullptr) noexcept;

    static size_t slab_blocks(unsigned cls) noexcept;

private:
    struct Slab {
        void *raw = nullptr;    // what the source returned
        size_t raw_bytes = 0;
        uintptr_t base = 0;     // first block, 256-aligned
        uint32_t carved = 0;    // blocks handed out of this slab so far (from the front)
        uint32_t capacity = 0;
    };
    // Per class; on its own cache line so that two classes' locks do not share one.
    struct alignas(64) SizeClass {
        std::mutex mutex;
        std::vector<void *> free;
        std::vector<Slab> slabs; // only the last one can still have uncarved blocks
        size_t blocks = 0;       // capacity of all slabs: the most `free` can ever hold
    };

    void add_slab(SizeClass &c, unsigned cls);
    uint64_t trim_class(SizeClass &c, unsigned cls, uint64_t target, std::exception_ptr *failure) noexcept;

    BlockSource &source_;
    PoolGauges &gauges_;
    std::array<SizeClass, SizeClasses::kCount> classes_;
};

} // namespace tidal::pool
