#include "copy/copy_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "copy/copy_bounds.h"
#include "log/logger.h"
#include "runtime/profiler_range.h"
#include "status/error.h"

namespace tidal {
namespace {
unsigned worker_count(uint32_t configured)
{
    if (configured)
        return configured;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    return std::min(hw, 16u); // 16 threads reached the host's ~31 GB/s on the H200 machine
}
} // namespace

CopyEngine::CopyEngine(Runtime &runtime, const AllocationRegistry &registry, const CopySettings &settings)
    : runtime_(runtime), registry_(registry), settings_(settings), workers_(worker_count(settings.threads))
{
}

CopyEngine::~CopyEngine()
{
    for (Slot &s : ring_) {
        if (s.in_flight)
            runtime_.event_synchronize_noexcept(s.event);
        if (s.event)
            runtime_.event_destroy(s.event);
        if (s.buffer)
            runtime_.free(TIDAL_KIND_PINNED, 0, s.buffer, settings_.chunk_size);
    }
    for (void *s : streams_)
        if (s)
            runtime_.stream_destroy_noexcept(s);
    for (const auto &[base, size] : registrations_) {
        log_warn(fmt::format("context destroyed with {} bytes at {:#x} still registered; unregistering", size, base));
        runtime_.host_unregister_noexcept(reinterpret_cast<void *>(base));
    }
}

CopyEngine::Side CopyEngine::side_of(const void *p, size_t size, bool destination, int32_t *device) const
{
    *device = 0;
    AllocationRegistry::Vacancy vacancy;
    if (auto r = registry_.find(p, &vacancy)) {
        const uintptr_t base = reinterpret_cast<uintptr_t>(r->base);
        require_within(p, size, base, base + r->size, r->tag, destination);
        if (r->device >= 0)
            *device = r->device;
        switch (r->kind) {
        case TIDAL_KIND_PAGEABLE: break; // may still be registered: fall through to the map
        case TIDAL_KIND_PINNED: return Side::host_locked;
        default: return Side::device; // device, managed and fine/coarse kinds: the runtime copies them
        }
    } else {
        require_clear(p, size, vacancy.end, destination);
    }
    {
        std::shared_lock lock(registrations_mutex_);
        const uintptr_t a = reinterpret_cast<uintptr_t>(p);
        auto it = registrations_.upper_bound(a);
        if (it != registrations_.begin()) {
            --it;
            if (a - it->first < it->second && size <= it->second - (a - it->first))
                return Side::host_locked;
        }
    }
    int32_t kind = TIDAL_KIND_PAGEABLE, dev = TIDAL_DEVICE_HOST;
    if (runtime_.pointer_kind(p, &kind, &dev) == 0) {
        if (dev >= 0)
            *device = dev;
        if (kind == TIDAL_KIND_PINNED)
            return Side::host_locked;
        if (kind != TIDAL_KIND_PAGEABLE)
            return Side::device;
    }
    return Side::pageable;
}

void CopyEngine::copy(void *dst, const void *src, size_t size, void *stream)
{
    if (size == 0)
        return;
    if (reinterpret_cast<uintptr_t>(dst) + size < reinterpret_cast<uintptr_t>(dst) ||
        reinterpret_cast<uintptr_t>(src) + size < reinterpret_cast<uintptr_t>(src))
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("{} bytes from {} to {} wrap around the address space", size, src, dst));
    int32_t dst_device = 0, src_device = 0;
    const Side d = side_of(dst, size, true, &dst_device);
    const Side s = side_of(src, size, false, &src_device);
    auto what = [&] { return fmt::format("copying {} bytes from {} to {}", size, src, dst); };
    const bool overlap = ranges_overlap(dst, src, size);
    if (s != Side::device && d != Side::device) {
        if (overlap)
            std::memmove(dst, src, size); // in order, as memmove promises: never the parallel memcpy
        else
            workers_.copy(dst, src, size); // host to host: no runtime involved
        host_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (overlap) // the runtime's copies, like memcpy, leave overlapping ranges undefined
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("the source ({} bytes at {}) and the destination ({}) overlap; nothing was copied", size, src, dst),
                    "copy between disjoint ranges (device memory), or through a host buffer");
    if (s != Side::pageable && d != Side::pageable) {
        runtime_.memcpy(dst, src, size, stream, what);
        direct_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    std::lock_guard staging(staging_mutex_);
    const ProfilerRange range(runtime_, "tidal: staged copy");
    if (s == Side::pageable)
        staged_to_device(dst, static_cast<const char *>(src), size, stream ? stream : stream_for(dst_device));
    else
        staged_to_host(static_cast<char *>(dst), src, size, stream ? stream : stream_for(src_device));
    if (!stream && s == Side::pageable) // a synchronous copy is complete on return
        runtime_.stream_synchronize(stream_for(dst_device), what);
    (s == Side::pageable ? staged_h2d_ : staged_d2h_).fetch_add(1, std::memory_order_relaxed);
}

void CopyEngine::ensure_ring()
{
    if (!ring_.empty())
        return;
    // Staged copies need all of these: refuse before the pinned ring costs milliseconds.
    for (RuntimeOp op : {RuntimeOp::event_create, RuntimeOp::event_record, RuntimeOp::event_synchronize,
                         RuntimeOp::stream_create})
        runtime_.require(op);
    std::vector<Slot> ring(std::max<uint32_t>(2, settings_.ring_depth));
    try {
        for (Slot &slot : ring) {
            // Pinned allocation costs milliseconds: the ring is made once and kept.
            slot.buffer = runtime_.alloc(TIDAL_KIND_PINNED, 0, settings_.chunk_size);
            slot.event = runtime_.event_create(0, "creating a staging event");
        }
    } catch (...) {
        for (Slot &slot : ring) {
            if (slot.event)
                runtime_.event_destroy(slot.event);
            if (slot.buffer)
                runtime_.free(TIDAL_KIND_PINNED, 0, slot.buffer, settings_.chunk_size);
        }
        throw;
    }
    ring_ = std::move(ring);
}

void *CopyEngine::stream_for(int32_t device)
{
    std::lock_guard lock(streams_mutex_);
    if (streams_.size() <= static_cast<size_t>(device))
        streams_.resize(static_cast<size_t>(device) + 1, nullptr);
    void *&s = streams_[static_cast<size_t>(device)];
    if (!s)
        s = runtime_.stream_create(device, [&] { return fmt::format("creating a copy stream on device {}", device); });
    return s;
}

void CopyEngine::wait(Slot &slot)
{
    if (slot.in_flight) {
        runtime_.event_synchronize(slot.event, "waiting for a staging slot");
        slot.in_flight = false;
    }
}

void CopyEngine::staged_to_device(void *dst, const char *src, size_t size, void *stream)
{
    ensure_ring();
    const size_t chunk = settings_.chunk_size;
    for (size_t off = 0, i = 0; off < size; off += chunk, ++i) {
        Slot &slot = ring_[i % ring_.size()];
        const size_t len = std::min(chunk, size - off);
        wait(slot);                              // its previous DMA has read the slot
        workers_.copy(slot.buffer, src + off, len); // host threads fill it ...
        runtime_.memcpy(static_cast<char *>(dst) + off, slot.buffer, len, stream,
                        [&] { return fmt::format("staged copy of {} bytes to {}", len, dst); });
        runtime_.event_record(slot.event, stream, "recording a staging event");
        slot.in_flight = true;                   // ... while the DMA of the last slot runs
    }
}

void CopyEngine::staged_to_host(char *dst, const void *src, size_t size, void *stream)
{
    ensure_ring();
    const size_t chunk = settings_.chunk_size;
    const size_t chunks = (size + chunk - 1) / chunk;
    auto issue = [&](size_t i) {
        Slot &slot = ring_[i % ring_.size()];
        const size_t off = i * chunk, len = std::min(chunk, size - off);
        runtime_.memcpy(slot.buffer, static_cast<const char *>(src) + off, len, stream,
                        [&] { return fmt::format("staged copy of {} bytes from {}", len, src); });
        runtime_.event_record(slot.event, stream, "recording a staging event");
        slot.in_flight = true;
    };
    for (size_t i = 0; i < std::min(chunks, ring_.size()); ++i) { // DMAs run ahead of the host by the ring's depth
        wait(ring_[i]);
        issue(i);
    }
    for (size_t i = 0; i < chunks; ++i) {
        Slot &slot = ring_[i % ring_.size()];
        const size_t off = i * chunk, len = std::min(chunk, size - off);
        wait(slot);
        workers_.copy(dst + off, slot.buffer, len);
        if (i + ring_.size() < chunks)
            issue(i + ring_.size());
    }
}

void CopyEngine::register_host(void *ptr, size_t size)
{
    if (size == 0)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, "size is 0", "register at least one byte");
    if (auto r = registry_.find(ptr); r && r->kind != TIDAL_KIND_PAGEABLE)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("{} is tidal {} memory, which needs no registration", ptr, tidal_kind_name(r->kind)),
                    "register ordinary host memory (malloc, new, mmap) or pageable tidal memory");
    const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
    std::unique_lock lock(registrations_mutex_);
    auto next = registrations_.lower_bound(a);
    bool overlaps = next != registrations_.end() && next->first < a + size;
    if (!overlaps && next != registrations_.begin()) {
        auto prev = std::prev(next);
        overlaps = prev->first + prev->second > a;
    }
    if (overlaps)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("{} bytes at {} overlap a registered range", size, ptr),
                    "unregister the other range first");
    runtime_.host_register(ptr, size, [&] { return fmt::format("registering {} bytes at {}", size, ptr); });
    registrations_.emplace(a, size);
}

void CopyEngine::unregister_host(void *ptr)
{
    std::unique_lock lock(registrations_mutex_);
    auto it = registrations_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == registrations_.end())
        throw Error(TIDAL_ERROR_UNKNOWN_POINTER, fmt::format("{} is not the start of a registered range", ptr),
                    "unregister the pointer that was registered");
    // A runtime that registers nothing has nothing to undo: the range was only tidal's.
    if (runtime_.supports(RuntimeOp::host_unregister))
        runtime_.host_unregister(ptr, [&] { return fmt::format("unregistering {}", ptr); });
    registrations_.erase(it);
}

CopyEngine::Counters CopyEngine::counters() const
{
    Counters c;
    c.direct = direct_.load(std::memory_order_relaxed);
    c.staged_h2d = staged_h2d_.load(std::memory_order_relaxed);
    c.staged_d2h = staged_d2h_.load(std::memory_order_relaxed);
    c.host = host_.load(std::memory_order_relaxed);
    return c;
}

} // namespace tidal
