// How one DevicePool behaves. The lead maps the TOML [pool] tables and the API onto this.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tidal::pool {

struct PoolSettings {
    // false: every allocate/deallocate goes straight to the BlockSource (no reuse, no caches),
    // so a pool can be switched off without changing the caller.
    bool enabled = true;
    // trim() gives whole free slabs/chunks back upstream until reserved - in use is at most
    // this many bytes. 0 = trim() releases everything free.
    uint64_t release_threshold = 0;
    // Minimum size of one upstream chunk of the large-block pool: few, big upstream calls.
    uint64_t growth = uint64_t{64} << 20;
    // Requests up to this size (and at most 256-byte alignment) use the size classes; larger
    // ones the coalescing best-fit pool. At most SizeClasses::kMaxSize (1 MiB); 0 = no classes.
    size_t small_max = size_t{1} << 20;
    // Blocks each thread may keep per size class for the lock-free fast path; 0 = no caches.
    size_t thread_cache_blocks = 32;
    // ... and at most this many bytes per class, so a thread cannot sit on 32 MiB of 1 MiB
    // blocks. Every class may keep at least one block.
    size_t thread_cache_class_bytes = size_t{1} << 20;
    // Large blocks (beyond the size classes) each thread may keep, at most four of them, for
    // reuse at the same size without the coalescing pool's lock. Without it, threads
    // allocating large blocks at once queue on that one lock (measured on 16 cores: 16
    // threads together got an eighth of one thread's throughput), and a 256 MiB pair took
    // 123 ns instead of 76 through the C API on the H200. The pool takes them back before it
    // grows, on trim(), when the upstream is full and at thread exit, so what threads keep
    // is never memory the process lacks. 0 = never.
    uint64_t thread_cache_large_bytes = uint64_t{1} << 30;
};

} // namespace tidal::pool
