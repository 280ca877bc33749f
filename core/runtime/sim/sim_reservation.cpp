#include "runtime/sim/sim_reservation.h"

#include <iterator>
#include <new>

#include <sys/mman.h>

namespace tidal::sim {

namespace {

void *address(uintptr_t p) { return reinterpret_cast<void *>(p); }

// Inaccessible anonymous memory at p, replacing whatever was mapped there; MAP_NORESERVE so a
// reservation of a whole device's memory costs no commit charge.
bool inaccessible(uintptr_t p, uint64_t size)
{
    return ::mmap(address(p), size, PROT_NONE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) != MAP_FAILED;
}

} // namespace

SimReservation::SimReservation(std::size_t size, std::size_t alignment, int32_t device)
    : size_(size), device_(device)
{
    // Reserve more and trim both ends: mmap only promises page alignment.
    if (size > SIZE_MAX - alignment)
        throw std::bad_alloc();
    void *p = ::mmap(nullptr, size + alignment, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
    const auto raw = reinterpret_cast<uintptr_t>(p);
    base_ = (raw + alignment - 1) / alignment * alignment;
    if (base_ > raw)
        ::munmap(p, base_ - raw);
    if (const uintptr_t tail = raw + size + alignment - end(); tail > 0)
        ::munmap(address(end()), tail);
}

SimReservation::~SimReservation() { ::munmap(address(base_), size_); }

std::map<uintptr_t, SimReservation::Mapping>::const_iterator
SimReservation::mapping_at(uintptr_t p) const
{
    auto it = mappings_.upper_bound(p);
    if (it == mappings_.begin())
        return mappings_.end();
    --it;
    return p - it->first < it->second.size ? it : mappings_.end();
}

bool SimReservation::unmapped(uintptr_t p, uint64_t size) const
{
    if (mapping_at(p) != mappings_.end())
        return false;
    auto next = mappings_.upper_bound(p);
    return next == mappings_.end() || next->first >= p + size;
}

bool SimReservation::whole_mappings(uintptr_t p, uint64_t size) const
{
    auto it = mappings_.find(p);
    uintptr_t at = p;
    for (; it != mappings_.end() && it->first == at && at < p + size; ++it)
        at += it->second.size;
    return at == p + size;
}

bool SimReservation::accessible(uintptr_t p, uint64_t size, int32_t device,
                                int32_t *chunk_device) const
{
    auto it = mapping_at(p);
    if (it == mappings_.end())
        return false;
    *chunk_device = it->second.chunk->device();
    const uint64_t bit = uint64_t{1} << device;
    for (uintptr_t at = it->first; at < p + size; ++it) {
        if (it == mappings_.end() || it->first != at || (it->second.access & bit) == 0)
            return false;
        at += it->second.size;
    }
    return true;
}

int32_t SimReservation::device_at(uintptr_t p) const
{
    auto it = mapping_at(p);
    return it == mappings_.end() ? device_ : it->second.chunk->device();
}

bool SimReservation::map(uintptr_t p, SimChunk &chunk)
{
    if (::mmap(address(p), chunk.size(), PROT_NONE, MAP_SHARED | MAP_FIXED, chunk.fd(), 0) ==
        MAP_FAILED) {
        inaccessible(p, chunk.size()); // MAP_FIXED may have dropped the reservation there
        return false;
    }
    mappings_.emplace(p, Mapping{&chunk, chunk.size(), 0});
    chunk.mapped();
    return true;
}

bool SimReservation::set_access(uintptr_t p, uint64_t size, int32_t device)
{
    if (::mprotect(address(p), size, PROT_READ | PROT_WRITE) != 0)
        return false;
    for (auto it = mappings_.find(p); it != mappings_.end() && it->first < p + size; ++it)
        it->second.access |= uint64_t{1} << device;
    return true;
}

bool SimReservation::unmap(uintptr_t p, uint64_t size, uint64_t *chunks)
{
    if (!inaccessible(p, size))
        return false;
    *chunks = 0;
    auto it = mappings_.find(p);
    while (it != mappings_.end() && it->first < p + size) {
        it->second.chunk->unmapped();
        it = mappings_.erase(it);
        ++*chunks;
    }
    return true;
}

} // namespace tidal::sim
