// SimRuntime's virtual-memory API (the vmm_* group): reservations of inaccessible host address
// space, physical chunks in memory files, and mappings between them, charged at the profile's
// per-call costs. See SimReservation and SimChunk for how the host memory behaves.
#include "runtime/sim/sim_runtime.h"

#include <algorithm>
#include <new>

#include "runtime/sim/sim_errors.h"

namespace tidal::sim {

// The reservation holding all of [ptr, ptr + size) when both are multiples of the granularity.
SimReservation *SimRuntime::vmm_range(const void *ptr, uint64_t size) const
{
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    if (ptr == nullptr || size == 0 || p % vmm_granularity_ != 0 || size % vmm_granularity_ != 0)
        return nullptr;
    SimReservation *r = find_reservation(ptr);
    return r != nullptr && r->contains(p, size) ? r : nullptr;
}

bool SimRuntime::vmm_resident(const void *ptr, uint64_t size, int32_t device, int32_t *owner) const
{
    const SimReservation *r = find_reservation(ptr);
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    if (r == nullptr || !r->contains(p, size))
        return false;
    return r->accessible(p, size, device >= 0 ? device : r->device_at(p), owner);
}

int SimRuntime::vmm_granularity(int32_t device, uint64_t *bytes) const
{
    Lock lock(*this);
    if (int e = injected(Operation::vmm_granularity))
        return e;
    if (bytes == nullptr)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    *bytes = vmm_granularity_;
    return kSuccess;
}

int SimRuntime::vmm_reserve(int32_t device, size_t size, void **ptr)
{
    Lock lock(*this);
    if (int e = injected(Operation::vmm_reserve))
        return e;
    if (ptr == nullptr || size == 0 || size % vmm_granularity_ != 0)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    try {
        auto r = std::make_unique<SimReservation>(size, vmm_granularity_, device);
        const uintptr_t base = r->base();
        reservations_.emplace(base, std::move(r));
        *ptr = reinterpret_cast<void *>(base);
    } catch (const std::bad_alloc &) {
        return kOutOfMemory; // the host's address space
    }
    return kSuccess;
}

int SimRuntime::vmm_release(void *ptr, size_t size)
{
    std::unique_ptr<SimReservation> released; // unmapped after the lock, as freed memory is
    Lock lock(*this);
    if (int e = injected(Operation::vmm_release))
        return e;
    auto it = reservations_.find(reinterpret_cast<uintptr_t>(ptr));
    // The whole reservation, as cuMemAddressFree wants, and nothing left mapped in it.
    if (it == reservations_.end() || it->second->size() != size || !it->second->empty())
        return kInvalidValue;
    released = std::move(it->second);
    reservations_.erase(it);
    return kSuccess;
}

int SimRuntime::vmm_create(int32_t device, size_t size, void **chunk)
{
    Lock lock(*this);
    if (int e = injected(Operation::vmm_create))
        return e;
    if (chunk == nullptr || size == 0 || size % vmm_granularity_ != 0)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    if (!fits(device, size))
        return kOutOfMemory;
    try {
        auto c = std::make_unique<SimChunk>(size, device);
        void *handle = c.get();
        chunks_.emplace(handle, std::move(c));
        *chunk = handle;
    } catch (const std::bad_alloc &) {
        return kOutOfMemory;
    }
    auto &resident = resident_[static_cast<std::size_t>(device)];
    resident += size;
    auto &peak = counters_[static_cast<std::size_t>(device)].peak_resident_bytes;
    peak = std::max(peak, resident);
    clock_.run(nullptr, profile_.vmm_create_latency);
    return kSuccess;
}

int SimRuntime::vmm_destroy(void *chunk)
{
    std::unique_ptr<SimChunk> released;
    Lock lock(*this);
    if (int e = injected(Operation::vmm_destroy))
        return e;
    auto it = chunks_.find(chunk);
    if (it == chunks_.end())
        return kInvalidHandle;
    if (it->second->mappings() != 0)
        return kInvalidValue; // still mapped: unmap first
    resident_[static_cast<std::size_t>(it->second->device())] -= it->second->size();
    released = std::move(it->second);
    chunks_.erase(it);
    clock_.run(nullptr, profile_.vmm_destroy_latency);
    return kSuccess;
}

int SimRuntime::vmm_map(void *ptr, size_t size, void *chunk)
{
    Lock lock(*this);
    if (int e = injected(Operation::vmm_map))
        return e;
    auto it = chunks_.find(chunk);
    if (it == chunks_.end())
        return kInvalidHandle;
    SimChunk &c = *it->second;
    SimReservation *r = vmm_range(ptr, size);
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    if (r == nullptr || size != c.size() || !r->unmapped(p, size))
        return kInvalidValue;
    if (!r->map(p, c))
        return kOutOfMemory;
    clock_.run(nullptr, profile_.vmm_map_latency);
    return kSuccess;
}

int SimRuntime::vmm_set_access(int32_t device, void *ptr, size_t size)
{
    Lock lock(*this);
    if (int e = injected(Operation::vmm_set_access))
        return e;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    SimReservation *r = vmm_range(ptr, size);
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    if (r == nullptr || !r->whole_mappings(p, size))
        return kInvalidValue;
    if (!r->set_access(p, size, device))
        return kOutOfMemory;
    // One call for a whole range, as the H200 measured it (chunk by chunk is the caller's
    // choice, and costs a call each).
    clock_.run(nullptr, profile_.vmm_set_access_latency);
    return kSuccess;
}

int SimRuntime::vmm_unmap(void *ptr, size_t size)
{
    Lock lock(*this);
    if (int e = injected(Operation::vmm_unmap))
        return e;
    SimReservation *r = vmm_range(ptr, size);
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    if (r == nullptr || !r->whole_mappings(p, size))
        return kInvalidValue;
    uint64_t chunks = 0;
    if (!r->unmap(p, size, &chunks))
        return kOutOfMemory;
    // The H200 pays per chunk unmapped, however many one call spans.
    clock_.run(nullptr, profile_.vmm_unmap_latency * static_cast<double>(chunks));
    return kSuccess;
}

} // namespace tidal::sim
