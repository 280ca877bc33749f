// Where a pool gets its memory from: one upstream per kind x device (device memory, pinned
// host memory, managed memory ...). Pools never touch the bytes they manage -- device memory
// is not host-accessible -- so a source only hands out and takes back address ranges.
#pragma once

#include <cstddef>
#include <exception>

#include "runtime/runtime_contract.h"

namespace tidal::pool {

// Every block a pool hands out is aligned to this, whatever its source guarantees (pools pad
// when it is less): the device kinds' alignment, so a pooled block of any kind is aligned at
// least as well as one straight from the runtime.
inline constexpr size_t kBlockAlignment = TIDAL_RT_DEVICE_ALIGNMENT;

class BlockSource {
public:
    virtual ~BlockSource() = default;

    // `bytes` > 0. Returns memory aligned to at least alignment(). Throws tidal::Error on
    // failure (TIDAL_ERROR_OUT_OF_MEMORY when the upstream is exhausted); nothing is then
    // allocated. May be called from several threads at once.
    virtual void *acquire(size_t bytes) = 0;
    // Gives back exactly what one acquire() returned, with the same `bytes`. Never throws:
    // pools release on teardown paths that must go on. Returns null, or the upstream's error
    // (a tidal::Error) when it refused: the memory is then still held, so a trim keeps it
    // reserved and tries again next time, and teardown, which cannot, only lets it go.
    virtual std::exception_ptr release(void *p, size_t bytes) noexcept = 0;
    // The alignment every acquire() guarantees (a power of two). Pools pad when it is below
    // kBlockAlignment.
    virtual size_t alignment() const noexcept = 0;
};

} // namespace tidal::pool
