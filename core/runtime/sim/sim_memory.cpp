// SimRuntime's memory: allocations of every kind, host registration, and what a pointer is.
#include "runtime/sim/sim_runtime.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <new>

#include "runtime/sim/sim_errors.h"

namespace tidal::sim {

namespace {

bool is_device_kind(int32_t kind)
{
    return kind == TIDAL_KIND_DEVICE || kind == TIDAL_KIND_DEVICE_FINE;
}

} // namespace

int SimRuntime::alloc(int32_t kind, int32_t device, size_t size, void **out)
{
    Lock lock(*this);
    if (int e = injected(Operation::alloc))
        return e;
    if (out == nullptr || size == 0 || kind < TIDAL_KIND_DEVICE || kind > TIDAL_KIND_MANAGED_COARSE)
        return kInvalidValue;
    if ((kind == TIDAL_KIND_DEVICE_FINE || kind == TIDAL_KIND_MANAGED_COARSE) && !amd_)
        return kNotSupported;
    const bool on_device = is_device_kind(kind) || TIDAL_KIND_IS_MANAGED(kind);
    if (on_device && (device < 0 || device >= devices_))
        return kInvalidDevice;
    // Device memory is charged in full up front, as hipMalloc reserves it; managed memory is
    // charged page by page only when pages become resident on a device.
    if (is_device_kind(kind) && !fits(device, size))
        return kOutOfMemory;

    void *data = nullptr;
    try {
        const std::size_t alignment = TIDAL_RT_ALLOC_ALIGNMENT(kind); // the contract's promise
        std::unique_ptr<SimAllocation> a(
            new SimAllocation{HostBlock(size, alignment), size, kind,
                              on_device ? device : TIDAL_DEVICE_HOST, std::nullopt, {}, {}});
        if (TIDAL_KIND_IS_MANAGED(kind)) {
            a->pages.emplace(size, page_size_, devices_);
            a->advice.coarse = kind == TIDAL_KIND_MANAGED_COARSE;
        }
        data = a->block.data();
        const uintptr_t base = a->base();
        allocations_.emplace(base, std::move(a)); // the last step that can throw
    } catch (const std::bad_alloc &) {
        return kOutOfMemory; // the host itself is out of address space or memory
    }

    if (is_device_kind(kind)) {
        auto &resident = resident_[static_cast<std::size_t>(device)];
        resident += size;
        auto &peak = counters_[static_cast<std::size_t>(device)].peak_resident_bytes;
        peak = std::max(peak, resident);
    }
    ++(on_device ? counters_[static_cast<std::size_t>(device)] : host_counters_).allocations;
    clock_.run(nullptr, cost_.alloc(kind));
    *out = data;
    return kSuccess;
}

int SimRuntime::free(int32_t kind, int32_t device, void *ptr, size_t /*size*/)
{
    std::unique_ptr<SimAllocation> released; // its host memory goes after the lock: see Lock
    Lock lock(*this);
    if (int e = injected(Operation::free))
        return e;
    auto it = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == allocations_.end())
        return kInvalidValue;
    SimAllocation &a = *it->second;
    if (a.kind != kind || (is_device_kind(kind) && a.device != device))
        return kInvalidValue;

    if (a.device_kind()) {
        resident_[static_cast<std::size_t>(a.device)] -= a.size;
    } else if (a.managed()) {
        for (int32_t d = 0; d < devices_; ++d)
            resident_[static_cast<std::size_t>(d)] -= a.pages->device_bytes(d);
    }
    ++(a.device >= 0 ? counters_[static_cast<std::size_t>(a.device)] : host_counters_).frees;
    // A registration cannot outlive the memory it covers (a later allocation at the same
    // address must not inherit it).
    registered_.erase(registered_.lower_bound(a.base()), registered_.lower_bound(a.end()));
    released = std::move(it->second);
    allocations_.erase(it);
    return kSuccess;
}

int SimRuntime::host_register(void *ptr, size_t size)
{
    Lock lock(*this);
    if (int e = injected(Operation::host_register))
        return e;
    if (ptr == nullptr || size == 0)
        return kInvalidValue;
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    if (size > UINTPTR_MAX - p || find_reservation(ptr) != nullptr)
        return kInvalidValue; // elastic memory is device memory, never host memory to register
    if (SimAllocation *a = find(ptr)) {
        if (a->kind == TIDAL_KIND_PINNED)
            return kHostMemoryAlreadyRegistered;
        if (a->kind != TIDAL_KIND_PAGEABLE || find_range(ptr, size) == nullptr)
            return kInvalidValue;
    }
    auto next = registered_.lower_bound(p);
    if (next != registered_.end() && next->first < p + size)
        return kHostMemoryAlreadyRegistered;
    if (next != registered_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second > p)
            return kHostMemoryAlreadyRegistered;
    }
    registered_.emplace(p, size);
    return kSuccess;
}

int SimRuntime::host_unregister(void *ptr)
{
    Lock lock(*this);
    if (int e = injected(Operation::host_unregister))
        return e;
    auto it = registered_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == registered_.end())
        return kHostMemoryNotRegistered;
    registered_.erase(it);
    return kSuccess;
}

int SimRuntime::pointer_kind(const void *ptr, int32_t *kind, int32_t *device) const
{
    Lock lock(*this);
    if (int e = injected(Operation::pointer_kind))
        return e;
    if (kind == nullptr || device == nullptr)
        return kInvalidValue;
    const SimAllocation *a = find(ptr);
    if (a != nullptr && a->kind != TIDAL_KIND_PAGEABLE) {
        *kind = a->kind;
        *device = a->device;
        return kSuccess;
    }
    if (const SimReservation *r = find_reservation(ptr)) {
        // Elastic memory is device memory, resident or not: a caller that took a non-resident
        // part for host memory would touch PROT_NONE pages.
        *kind = TIDAL_KIND_DEVICE;
        *device = r->device_at(reinterpret_cast<uintptr_t>(ptr));
        return kSuccess;
    }
    // Registered memory is page-locked memory as far as the runtime is concerned.
    *kind = registered(ptr, 1) ? TIDAL_KIND_PINNED : TIDAL_KIND_PAGEABLE;
    *device = TIDAL_DEVICE_HOST;
    return kSuccess;
}

} // namespace tidal::sim
