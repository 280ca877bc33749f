#include "copy/copy_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "copy/copy_bounds.h"
#include "copy/slot_stores.h"
#include "log/logger.h"
#include "runtime/numa_binder.h"
#include "runtime/profiler_range.h"
#include "status/error.h"
#include "sync/spin_wait.h"

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

CopyEngine::CopyEngine(Runtime &runtime, const AllocationRegistry &registry, const CopySettings &settings,
                       PeerMatrix &peers, const TopologySettings &topology)
    : runtime_(runtime), registry_(registry), settings_(settings),
      workers_(worker_count(settings.threads), {}, std::chrono::microseconds(settings.spin_us)),
      peers_(&peers), topology_(topology)
{
}

CopyEngine::CopyEngine(Runtime &runtime, const AllocationRegistry &registry, const CopySettings &settings)
    : runtime_(runtime), registry_(registry), settings_(settings),
      workers_(worker_count(settings.threads), {}, std::chrono::microseconds(settings.spin_us)),
      own_peers_(std::make_unique<PeerMatrix>(runtime)), peers_(own_peers_.get())
{
}

CopyEngine::~CopyEngine()
{
    for (auto &[node, ring] : rings_)
        for (Slot &s : ring.slots) {
            if (s.in_flight)
                runtime_.event_synchronize_noexcept(s.event);
            if (s.event)
                runtime_.event_destroy(s.event);
            if (s.buffer)
                runtime_.free(TIDAL_KIND_PINNED, ring.device, s.buffer, settings_.chunk_size);
        }
    for (void *s : streams_)
        if (s)
            runtime_.stream_destroy_noexcept(s);
    for (const auto &[base, size] : registrations_) {
        log_warn(fmt::format("context destroyed with {} bytes at {:#x} still registered; unregistering", size, base));
        runtime_.host_unregister_noexcept(reinterpret_cast<void *>(base));
    }
}

CopyEngine::Side CopyEngine::side_of(const void *p, size_t size, bool destination, int32_t *device,
                                     bool *resident) const
{
    *device = 0;
    auto stays = [&](int32_t kind) {
        if (resident)
            *resident = kind == TIDAL_KIND_DEVICE || kind == TIDAL_KIND_DEVICE_FINE;
    };
    AllocationRegistry::Vacancy vacancy;
    if (auto r = registry_.find(p, &vacancy)) {
        const uintptr_t base = reinterpret_cast<uintptr_t>(r->base);
        require_within(p, size, base, base + r->size, r->tag, destination);
        if (r->device >= 0)
            *device = r->device;
        switch (r->kind) {
        case TIDAL_KIND_PAGEABLE: break; // may still be registered: fall through to the map
        case TIDAL_KIND_PINNED: return Side::host_locked;
        default: stays(r->kind); return Side::device; // device, managed and fine/coarse kinds: the runtime copies them
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
        if (kind != TIDAL_KIND_PAGEABLE) {
            stays(kind);
            return Side::device;
        }
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
    bool dst_resident = false, src_resident = false;
    const Side d = side_of(dst, size, true, &dst_device, &dst_resident);
    const Side s = side_of(src, size, false, &src_device, &src_resident);
    auto what = [&] { return fmt::format("copying {} bytes from {} to {}", size, src, dst); };
    const bool overlap = ranges_overlap(dst, src, size);
    if (s != Side::device && d != Side::device) {
        if (overlap)
            std::memmove(dst, src, size); // in order, as memmove promises: never the parallel memcpy
        else
            workers_.copy(dst, src, size); // host to host: no runtime involved
        host_.add();
        return;
    }
    if (overlap) // the runtime's copies, like memcpy, leave overlapping ranges undefined
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("the source ({} bytes at {}) and the destination ({}) overlap; nothing was copied", size, src, dst),
                    "copy between disjoint ranges (device memory), or through a host buffer");
    if (src_resident && dst_resident && src_device != dst_device) [[unlikely]] {
        between_devices(dst, dst_device, src, src_device, size, stream);
        return;
    }
    if (s != Side::pageable && d != Side::pageable) {
        runtime_.memcpy(dst, src, size, stream, what);
        direct_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    std::lock_guard staging(staging_mutex_);
    const ProfilerRange range(runtime_, "tidal: staged copy");
    Ring &ring = ring_for(s == Side::pageable ? dst_device : src_device);
    if (s == Side::pageable)
        staged_to_device(ring, dst, static_cast<const char *>(src), size, stream ? stream : stream_for(dst_device));
    else
        staged_to_host(ring, static_cast<char *>(dst), src, size, stream ? stream : stream_for(src_device));
    if (!stream && s == Side::pageable) { // a synchronous copy is complete on return
        runtime_.stream_synchronize(stream_for(dst_device), what);
        for (Slot &slot : ring.slots) // so is every DMA from the ring: the next copy need not ask
            slot.in_flight = false;
    }
    (s == Side::pageable ? staged_h2d_ : staged_d2h_).fetch_add(1, std::memory_order_relaxed);
}

void CopyEngine::between_devices(void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size,
                                 void *stream)
{
    const bool reachable = peers_->can_access(dst_device, src_device) || peers_->can_access(src_device, dst_device);
    if (topology_.peer_access && reachable) {
        peers_->enable(src_device, dst_device);
        runtime_.memcpy_peer(dst, dst_device, src, src_device, size, stream, [&] {
            return fmt::format("copying {} bytes from device {} ({}) to device {} ({}) over the peer link", size,
                               src_device, src, dst_device, dst);
        });
        peer_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (!topology_.peer_fallback_stage)
        throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                    fmt::format("copying {} bytes from device {} ({}) to device {} ({}): {}, and [topology] "
                                "peer_fallback = \"error\" refuses to stage the copy through host memory",
                                size, src_device, src, dst_device, dst,
                                reachable ? "[topology] peer_access = \"off\""
                                          : fmt::format("the {} runtime reports no peer access between device {} "
                                                        "and device {}",
                                                        runtime_.name(), src_device, dst_device)),
                    "set [topology] peer_fallback = \"stage\", or copy between devices that reach each other "
                    "(`tidal probe` prints the peer matrix)");
    void *on = stream ? stream : stream_for(src_device);
    {
        std::lock_guard staging(staging_mutex_);
        staged_between(ring_for(src_device), dst, static_cast<const char *>(src), size, on);
    }
    if (!stream)
        runtime_.stream_synchronize(on, [&] {
            return fmt::format("waiting for a staged copy from device {} to device {}", src_device, dst_device);
        });
    staged_peer_.fetch_add(1, std::memory_order_relaxed);
}

void CopyEngine::staged_between(Ring &ring, void *dst, const char *src, size_t size, void *stream)
{
    const size_t chunk = settings_.chunk_size;
    for (size_t off = 0, i = 0; off < size; off += chunk, ++i) {
        Slot &slot = ring.slots[i % ring.slots.size()];
        const size_t len = std::min(chunk, size - off);
        wait(slot); // the slot's last copy up has read it
        runtime_.memcpy(slot.buffer, src + off, len, stream,
                        [&] { return fmt::format("staged copy of {} bytes from {} to host memory", len, src); });
        runtime_.memcpy(static_cast<char *>(dst) + off, slot.buffer, len, stream,
                        [&] { return fmt::format("staged copy of {} bytes from host memory to {}", len, dst); });
        runtime_.event_record(slot.event, stream, "recording a staging event");
        slot.in_flight = true;
    }
}

CopyEngine::Ring &CopyEngine::ring_for(int32_t device)
{
    const int node = runtime_.numa_node_for(TIDAL_KIND_PINNED, device);
    if (auto it = rings_.find(node); it != rings_.end())
        return it->second;
    // Staged copies need all of these: refuse before the pinned ring costs milliseconds.
    for (RuntimeOp op : {RuntimeOp::event_create, RuntimeOp::event_record, RuntimeOp::event_synchronize,
                         RuntimeOp::stream_create})
        runtime_.require(op);
    Ring ring;
    ring.device = device;
    ring.slots.resize(std::max<uint32_t>(2, settings_.ring_depth));
    try {
        for (Slot &slot : ring.slots) {
            // Pinned allocation costs milliseconds: the ring is made once and kept.
            slot.buffer = runtime_.alloc(TIDAL_KIND_PINNED, device, settings_.chunk_size);
            slot.event = runtime_.event_create(device, "creating a staging event");
        }
    } catch (...) {
        for (Slot &slot : ring.slots) {
            if (slot.event)
                runtime_.event_destroy(slot.event);
            if (slot.buffer)
                runtime_.free(TIDAL_KIND_PINNED, device, slot.buffer, settings_.chunk_size);
        }
        throw;
    }
    ring.fill = &workers_;
    if (node >= 0) {
        ring.workers = std::make_unique<HostWorkers>(
            workers_.parallelism(),
            [node, this] {
                if (std::string failed = NumaBinder::bind_thread(node); !failed.empty() && !bind_warned_.exchange(true))
                    log_warn(fmt::format("[topology] numa_bind: a staging thread stays unbound to NUMA node {}: {} "
                                         "(logged once)",
                                         node, failed));
            },
            workers_.spin());
        ring.fill = ring.workers.get();
    }
    return rings_.emplace(node, std::move(ring)).first->second;
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

std::vector<size_t> CopyEngine::staging_pieces(size_t size, size_t chunk)
{
    if (size == 0)
        return {};
    const double best = std::sqrt(static_cast<double>(size) * kPieceOverhead * kLinkRate);
    const size_t piece = std::clamp(static_cast<size_t>(best), std::min(kMinPiece, chunk), chunk);
    // The ramp: kMinPiece, twice that, ... up to `piece`, while what is left is more than
    // two of each step's size.
    std::vector<size_t> head;
    size_t left = size;
    for (size_t step = std::min(kMinPiece, chunk); step < piece && left > 2 * step; step *= 2) {
        head.push_back(step);
        left -= step;
    }
    // A ramp that ends above the pieces after it would start them late: drop its top.
    while (!head.empty() && head.back() > left / ((left + piece - 1) / piece)) {
        left += head.back();
        head.pop_back();
    }
    // Then pieces of whole pages (host threads split them by pages), equal to a page, the
    // bytes past the last page on the last of them, or after them where that would pass the
    // chunk.
    const size_t count = (left + piece - 1) / piece, pages = left / 4096;
    std::vector<size_t> pieces = head;
    for (size_t i = 0; i < count; ++i)
        if (const size_t n = pages * (i + 1) / count - pages * i / count)
            pieces.push_back(n * 4096);
    if (const size_t rest = left % 4096) {
        if (pieces.size() > head.size() && pieces.back() + rest <= chunk)
            pieces.back() += rest;
        else
            pieces.push_back(rest);
    }
    return pieces;
}

CopyEngine::Slicing CopyEngine::slicing(const std::vector<size_t> &pieces)
{
    Slicing sl;
    sl.pieces = &pieces;
    sl.offset.resize(pieces.size());
    sl.first.resize(pieces.size() + 1);
    for (size_t i = 0; i < pieces.size(); ++i) {
        sl.offset[i] = i ? sl.offset[i - 1] + pieces[i - 1] : 0;
        const size_t slices = (pieces[i] + kSlice - 1) / kSlice;
        sl.first[i + 1] = sl.first[i] + static_cast<unsigned>(slices);
        sl.piece_of.insert(sl.piece_of.end(), slices, static_cast<unsigned>(i));
    }
    return sl;
}

bool CopyEngine::slot_free(Slot &slot)
{
    if (!slot.in_flight)
        return true;
    if (clocked()) {
        wait(slot);
        return true;
    }
    int32_t complete = 0;
    if (runtime_.event_query(slot.event, &complete) != 0) {
        wait(slot); // the query failed: the wait says why, or waits
        return true;
    }
    if (complete)
        slot.in_flight = false;
    return complete != 0;
}

void CopyEngine::staged_to_device(Ring &ring, void *dst, const char *src, size_t size, void *stream)
{
    const std::vector<size_t> pieces = staging_pieces(size, settings_.chunk_size);
    const Slicing sl = slicing(pieces);
    const size_t n = pieces.size(), depth = ring.slots.size();
    std::vector<std::atomic<unsigned>> filled(n);
    const SlotStores stores = slot_stores_for(settings_.slot_stores, size);
    const std::function<void(unsigned)> part = [&](unsigned k) {
        const Slicing::Slice s = sl.slice(k);
        fill_slot(static_cast<char *>(ring.slots[s.piece % depth].buffer) + s.begin, src + sl.offset[s.piece] + s.begin,
                  s.end - s.begin, stores);
        slot_fence();
        filled[s.piece].fetch_add(1, std::memory_order_release);
    };
    HostWorkers::Job fill;
    ring.fill->begin_stream(fill, sl.first[n], part);
    const size_t ahead = clocked() ? 1 : depth;
    size_t published = 0, issued = 0;
    while (issued < n) {
        // Host threads fill every piece whose slot its last DMA has read, up to the ring's depth
        // ahead of the DMAs ...
        while (published < n && published < issued + ahead && slot_free(ring.slots[published % depth]))
            ring.fill->publish(fill, sl.first[++published]);
        // ... while this thread hands each filled piece to the device, in order, and fills a slice
        // itself when it has nothing to hand over.
        if (issued < published && filled[issued].load(std::memory_order_acquire) == sl.slices(issued)) {
            runtime_.host_copy(pieces[issued], ring.fill->threads_for(pieces[issued], kSlice), "staging a copy to the device");
            Slot &slot = ring.slots[issued % depth];
            runtime_.memcpy(static_cast<char *>(dst) + sl.offset[issued], slot.buffer, pieces[issued], stream,
                            [&] { return fmt::format("staged copy of {} bytes to {}", pieces[issued], dst); });
            runtime_.event_record(slot.event, stream, "recording a staging event");
            slot.in_flight = true;
            ++issued;
        } else if (published == issued) {
            wait(ring.slots[published % depth]); // nothing to fill until this DMA has read its slot
        } else if (!ring.fill->help_one(fill)) {
            cpu_pause();
        }
    }
    ring.fill->end(fill);
}

void CopyEngine::staged_to_host(Ring &ring, char *dst, const void *src, size_t size, void *stream)
{
    const std::vector<size_t> pieces = staging_pieces(size, settings_.chunk_size);
    const Slicing sl = slicing(pieces);
    const size_t n = pieces.size(), depth = ring.slots.size();
    std::vector<std::atomic<unsigned>> emptied(n);
    const std::function<void(unsigned)> part = [&](unsigned k) {
        const Slicing::Slice s = sl.slice(k);
        std::memcpy(dst + sl.offset[s.piece] + s.begin, static_cast<const char *>(ring.slots[s.piece % depth].buffer) + s.begin,
                    s.end - s.begin);
        emptied[s.piece].fetch_add(1, std::memory_order_release);
    };
    HostWorkers::Job empty;
    ring.fill->begin_stream(empty, sl.first[n], part);
    const size_t ahead = clocked() ? 1 : depth;
    size_t issued = 0, published = 0, finished = 0;
    while (finished < n) {
        // DMAs run up to the ring's depth ahead of the host threads ...
        while (issued < n && issued < finished + depth) {
            Slot &slot = ring.slots[issued % depth];
            wait(slot); // an earlier copy's DMA into it (this copy's pieces were emptied)
            runtime_.memcpy(slot.buffer, static_cast<const char *>(src) + sl.offset[issued], pieces[issued], stream,
                            [&] { return fmt::format("staged copy of {} bytes from {}", pieces[issued], src); });
            runtime_.event_record(slot.event, stream, "recording a staging event");
            slot.in_flight = true;
            ++issued;
        }
        // ... host threads empty each piece whose DMA has landed ...
        bool progress = false;
        while (published < issued && published < finished + ahead && slot_free(ring.slots[published % depth])) {
            ring.fill->publish(empty, sl.first[++published]);
            progress = true;
        }
        // ... and its slot takes the next DMA once they are done.
        while (finished < published && emptied[finished].load(std::memory_order_acquire) == sl.slices(finished)) {
            runtime_.host_copy(pieces[finished], ring.fill->threads_for(pieces[finished], kSlice), "staging a copy to the host");
            ++finished;
            progress = true;
        }
        if (progress)
            continue;
        if (published == finished)
            wait(ring.slots[published % depth]); // the host threads wait for this DMA
        else if (!ring.fill->help_one(empty))
            cpu_pause();
    }
    ring.fill->end(empty);
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
    c.host = host_.load();
    c.peer = peer_.load(std::memory_order_relaxed);
    c.staged_peer = staged_peer_.load(std::memory_order_relaxed);
    return c;
}

} // namespace tidal
