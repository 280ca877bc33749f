// Real host memory behind one simulated allocation (of any kind), owned RAII-style.
#pragma once

#include <cstddef>

namespace tidal::sim {

// Large blocks are reserved with mmap(MAP_NORESERVE) so that the address space of a
// "141 GB device" costs nothing until a program actually writes to it: the capacity of a
// simulated device is accounting only, and CI machines have far less RAM than an H200.
// Small blocks come from aligned_alloc to keep many tiny allocations cheap.
class HostBlock {
public:
    // Throws std::bad_alloc when the host cannot reserve the bytes. `alignment` is a power
    // of two <= the system page size.
    HostBlock(std::size_t size, std::size_t alignment);
    ~HostBlock();
    HostBlock(const HostBlock &) = delete;
    HostBlock &operator=(const HostBlock &) = delete;
    HostBlock(HostBlock &&other) noexcept;
    HostBlock &operator=(HostBlock &&other) noexcept;

    void *data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    void release() noexcept;

    void *data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t mapped_ = 0; // bytes mmap'ed; 0 when the block came from aligned_alloc
};

} // namespace tidal::sim
