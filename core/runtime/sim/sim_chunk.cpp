#include "runtime/sim/sim_chunk.h"

#include <new>

#include <sys/mman.h>
#include <unistd.h>

namespace tidal::sim {

SimChunk::SimChunk(std::size_t size, int32_t device) : size_(size), device_(device)
{
    fd_ = ::memfd_create("tidal-sim-chunk", MFD_CLOEXEC);
    if (fd_ < 0)
        throw std::bad_alloc();
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
        ::close(fd_);
        throw std::bad_alloc();
    }
}

SimChunk::~SimChunk() { ::close(fd_); }

} // namespace tidal::sim
