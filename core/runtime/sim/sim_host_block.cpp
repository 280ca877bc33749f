#include "runtime/sim/sim_host_block.h"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

namespace tidal::sim {

namespace {

// Below this, a syscall per allocation would dominate; above it, lazily committed pages
// matter more than the syscall.
constexpr std::size_t kMmapThreshold = 64 * 1024;

std::size_t round_up(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

} // namespace

HostBlock::HostBlock(std::size_t size, std::size_t alignment) : size_(size)
{
    if (size >= kMmapThreshold) {
        const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        if (size > SIZE_MAX - page)
            throw std::bad_alloc();
        const std::size_t length = round_up(size, page);
        void *p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            throw std::bad_alloc();
        data_ = p;
        mapped_ = length;
    } else {
        // aligned_alloc wants the size to be a multiple of the alignment.
        data_ = std::aligned_alloc(alignment, round_up(size, alignment));
        if (data_ == nullptr)
            throw std::bad_alloc();
    }
}

HostBlock::~HostBlock() { release(); }

HostBlock::HostBlock(HostBlock &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0))
{
}

HostBlock &HostBlock::operator=(HostBlock &&other) noexcept
{
    if (this != &other) {
        release();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
        mapped_ = std::exchange(other.mapped_, 0);
    }
    return *this;
}

void HostBlock::release() noexcept
{
    if (data_ == nullptr)
        return;
    if (mapped_ != 0)
        ::munmap(data_, mapped_);
    else
        std::free(data_);
    data_ = nullptr;
}

} // namespace tidal::sim
