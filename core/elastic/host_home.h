// Where an elastic allocation's contents live while its chunks are not resident: pinned host
// memory tidal owns. Anonymous memory advised into huge pages and registered with the runtime
// where it can register (on the H200 registering cost 57 ms/GiB against cudaHostAlloc's
// 0.5 s/GiB; 4 KiB pages registered at 0.35 s/GiB in elastic-offload), the runtime's pinned
// allocation otherwise.
#pragma once

#include <cstddef>

#include "runtime/runtime.h"

namespace tidal::elastic {

class HostHome {
public:
    // Throws TIDAL_ERROR_OUT_OF_MEMORY, with the runtime's reason, when it cannot be made.
    HostHome(Runtime &runtime, size_t size);
    ~HostHome();
    HostHome(const HostHome &) = delete;
    HostHome &operator=(const HostHome &) = delete;

    char *data() const noexcept { return data_; }

private:
    Runtime &runtime_;
    size_t size_;
    char *data_ = nullptr;
    bool registered_ = false; // data_ is ours, registered; otherwise the runtime's pinned memory
    size_t mapped_ = 0;       // bytes of our mapping (size_ rounded up to a huge page)
};

} // namespace tidal::elastic
