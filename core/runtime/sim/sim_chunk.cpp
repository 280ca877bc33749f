#include "runtime/sim/sim_chunk.h"

#include <new>

#include <sys/mman.h>

namespace tidal::sim {

SimChunk::SimChunk(std::size_t size, int32_t device) : size_(size), device_(device)
{
    home_ = ::mmap(nullptr, size, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (home_ == MAP_FAILED)
        throw std::bad_alloc();
}

// The pages go once the last mapping of them does: the chunk is unmapped everywhere else first.
SimChunk::~SimChunk() { ::munmap(home_, size_); }

} // namespace tidal::sim
