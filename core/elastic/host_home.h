// Where an elastic allocation's contents live while its chunks are not resident: pinned host
// memory tidal owns. Page-aligned memory registered with the runtime where it can register
// (the earlier H200 probe: registering 57 ms/GiB against cudaHostAlloc's 0.5 s/GiB; in
// elastic-offload 16 GiB of fresh homes took 5.6 s, and advising them into huge pages first
// made it 6.9 s, so that was not kept), the runtime's pinned allocation otherwise. Either way on
// the NUMA node of the device it serves ([topology] numa_bind), where its copy engine reads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/runtime.h"

namespace tidal::elastic {

class HostHome {
public:
    // Throws TIDAL_ERROR_OUT_OF_MEMORY, with the runtime's reason, when it cannot be made.
    HostHome(Runtime &runtime, size_t size, int32_t device);
    ~HostHome();
    HostHome(const HostHome &) = delete;
    HostHome &operator=(const HostHome &) = delete;

    char *data() const noexcept { return data_; }

private:
    Runtime &runtime_;
    size_t size_;
    int32_t device_;
    char *data_ = nullptr;
    bool registered_ = false; // data_ is ours, registered; otherwise the runtime's pinned memory
};

} // namespace tidal::elastic
