// Puts host memory, and the threads that fill it, on one NUMA node (hwloc): pinned staging
// buffers and host allocations made for a device go on that device's node, so the DMA engine
// reads memory local to its PCIe root. Binding is best effort: a failure is the caller's
// warning, never an error, and without hwloc nothing is bound.
#pragma once

#include <cstddef>
#include <string>

namespace tidal {

class NumaBinder {
public:
    // Binds the calling thread's memory policy to `node` for the scope (what it allocates and
    // touches, and what a runtime pins on its behalf, comes from that node), and restores the
    // previous policy after. `node` < 0 binds nothing. failed() says why binding did not happen.
    class MemoryScope {
    public:
        explicit MemoryScope(int node) noexcept;
        ~MemoryScope();
        MemoryScope(const MemoryScope &) = delete;
        MemoryScope &operator=(const MemoryScope &) = delete;
        const std::string &failed() const noexcept { return failed_; }

    private:
        void *saved_ = nullptr; // hwloc_nodeset_t of the previous policy
        int saved_policy_ = 0;
        bool bound_ = false;
        std::string failed_;
    };

    // Sets the policy of [ptr, ptr + size) to `node`, moving pages already there. Returns ""
    // or why it could not.
    static std::string bind_area(void *ptr, size_t size, int node) noexcept;
    // Binds the calling thread to the CPUs of `node`. Returns "" or why it could not.
    static std::string bind_thread(int node) noexcept;
};

} // namespace tidal
