// Physical chunks an offload with TIDAL_OFFLOAD_KEEP_PHYSICAL kept for tidal's own elastic
// allocations and restores, so that they map again without going back to the runtime. Not
// thread-safe: the ElasticSpace calls it under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "runtime/runtime.h"

namespace tidal::elastic {

class ChunkPool {
public:
    explicit ChunkPool(Runtime &runtime) : runtime_(runtime) {}
    ~ChunkPool() { trim(nullptr); }
    ChunkPool(const ChunkPool &) = delete;
    ChunkPool &operator=(const ChunkPool &) = delete;

    // A kept chunk of exactly `size` bytes of `device`, or nullptr.
    void *take(int32_t device, size_t size);
    void put(int32_t device, size_t size, void *chunk);
    uint64_t bytes() const noexcept { return bytes_; }
    // Gives every kept chunk back to the runtime; returns the bytes that went back. A chunk the
    // runtime refuses stays kept for the next trim; *first_error (may be NULL) gets the first
    // refusal's native code, or is left alone.
    uint64_t trim(int *first_error) noexcept;

private:
    Runtime &runtime_;
    std::map<std::pair<int32_t, size_t>, std::vector<void *>> kept_;
    uint64_t bytes_ = 0;
};

} // namespace tidal::elastic
