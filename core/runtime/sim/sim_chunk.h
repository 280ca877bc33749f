// One physical chunk of simulated device memory (vmm_create), owned RAII-style.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tidal::sim {

// Shared anonymous host memory, kept at a "home" address nobody may touch (PROT_NONE). Being
// shared, its pages can be mapped again at any fixed address (mremap with an old size of 0),
// unmapped there, and mapped elsewhere with the contents intact, which is what a GPU's
// physical allocation handle allows; unlike a memory file per chunk, this costs no file
// descriptor, so thousands of chunks stay within a process's limits. The pages are committed
// only where a program writes, so a chunk of a "141 GB device" costs little host memory.
class SimChunk {
public:
    // Throws std::bad_alloc when the host cannot map the memory.
    SimChunk(std::size_t size, int32_t device);
    ~SimChunk();
    SimChunk(const SimChunk &) = delete;
    SimChunk &operator=(const SimChunk &) = delete;

    void *home() const noexcept { return home_; }
    std::size_t size() const noexcept { return size_; }
    int32_t device() const noexcept { return device_; }
    // How many places it is mapped at: a mapped chunk cannot be destroyed.
    uint32_t mappings() const noexcept { return mappings_; }
    void mapped() noexcept { ++mappings_; }
    void unmapped() noexcept { --mappings_; }

private:
    void *home_ = nullptr;
    std::size_t size_ = 0;
    int32_t device_ = 0;
    uint32_t mappings_ = 0;
};

} // namespace tidal::sim
