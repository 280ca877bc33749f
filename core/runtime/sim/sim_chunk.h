// One physical chunk of simulated device memory (vmm_create), owned RAII-style.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tidal::sim {

// Host memory in an anonymous memory file (memfd), not in the address space: only a file can
// be mapped at a fixed address, unmapped, and mapped again elsewhere with its contents intact,
// which is what a GPU's physical allocation handle allows. The file is sparse, so a chunk of a
// "141 GB device" costs host memory only where a program writes.
class SimChunk {
public:
    // Throws std::bad_alloc when the host cannot make the file.
    SimChunk(std::size_t size, int32_t device);
    ~SimChunk();
    SimChunk(const SimChunk &) = delete;
    SimChunk &operator=(const SimChunk &) = delete;

    int fd() const noexcept { return fd_; }
    std::size_t size() const noexcept { return size_; }
    int32_t device() const noexcept { return device_; }
    // How many places it is mapped at: a mapped chunk cannot be destroyed.
    uint32_t mappings() const noexcept { return mappings_; }
    void mapped() noexcept { ++mappings_; }
    void unmapped() noexcept { --mappings_; }

private:
    int fd_ = -1;
    std::size_t size_ = 0;
    int32_t device_ = 0;
    uint32_t mappings_ = 0;
};

} // namespace tidal::sim
