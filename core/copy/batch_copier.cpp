#include "copy/batch_copier.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "copy/place_finder.h"
#include "runtime/profiler_range.h"
#include "status/error.h"

namespace tidal {
namespace {

// A batched item larger than this gains nothing from batching (its bytes, not the call, set its
// time) and would crowd a wave: it goes alone through tidal_copy's path.
constexpr size_t kLargeItem = size_t{1} << 20;
// Items per wave: the kernel's grid has one x-block per item.
constexpr size_t kMaxWaveItems = size_t{1} << 16;
// Below this a host packing thread costs more in wake-ups than it saves.
constexpr size_t kMinPackPerThread = size_t{256} << 10;
// Smallest staging buffer: pinned allocation costs milliseconds, so do not grow by crumbs.
constexpr size_t kMinStaging = size_t{1} << 20;
// Every staged item may take this much beyond its bytes: alignment to 16 plus the peer's
// offset modulo 16 (see slot_offset()).
constexpr size_t kItemSlack = 32;

uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }
size_t align_up(size_t n, size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// Staging bytes of a wave: the table, then the host->device payload, then the device->host one.
size_t layout_bytes(size_t count, size_t to_device, size_t to_host)
{
    return align_up(count * sizeof(tidal_rt_copy_item), 256) + align_up(to_device, 256) + to_host;
}

// The offset for `size` bytes at `cursor` whose address modulo 16 equals the peer's: the kernel
// then moves whole 16-byte vectors between staging and the peer whatever the caller's alignment.
size_t slot_offset(size_t &cursor, const void *peer, size_t size)
{
    const size_t offset = align_up(cursor, 16) + addr(peer) % 16;
    cursor = offset + size;
    return offset;
}

// Every range of the call, destinations and sources, must be apart from every destination:
// the items then run in any order, several at once, with one kernel. O(n log n).
void check_overlaps(std::span<const tidal_copy_item> items)
{
    struct Range {
        uintptr_t begin, end;
        size_t index;
    };
    std::vector<Range> dst;
    dst.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        const tidal_copy_item &it = items[i];
        if (it.size == 0)
            continue;
        for (const void *p : {static_cast<const void *>(it.dst), it.src})
            if (addr(p) + it.size < addr(p))
                throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                            fmt::format("item {}: {} bytes at {} wrap around the address space", i, it.size, p));
        dst.push_back({addr(it.dst), addr(it.dst) + it.size, i});
    }
    std::sort(dst.begin(), dst.end(), [](const Range &a, const Range &b) { return a.begin < b.begin; });
    for (size_t k = 1; k < dst.size(); ++k)
        if (dst[k].begin < dst[k - 1].end)
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                        fmt::format("items {} and {} have overlapping destinations", std::min(dst[k - 1].index, dst[k].index),
                                    std::max(dst[k - 1].index, dst[k].index)),
                        "every item of one batch writes its own bytes");
    for (size_t i = 0; i < items.size(); ++i) {
        const tidal_copy_item &it = items[i];
        if (it.size == 0)
            continue;
        const uintptr_t begin = addr(it.src), end = begin + it.size;
        // Destinations are disjoint and sorted: only the last one starting before `end` can reach it.
        auto after = std::partition_point(dst.begin(), dst.end(), [&](const Range &r) { return r.begin < end; });
        if (after != dst.begin() && std::prev(after)->end > begin)
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                        fmt::format("item {}'s source overlaps item {}'s destination", i, std::prev(after)->index),
                        "a batch reads nothing it writes; split it into two calls");
    }
}

} // namespace

BatchCopier::BatchCopier(Runtime &runtime, const AllocationRegistry &registry, CopyEngine &copies,
                         const CopySettings &settings)
    : runtime_(runtime), registry_(registry), copies_(copies), wave_limit_(settings.chunk_size),
      large_item_(std::min<size_t>(kLargeItem, settings.chunk_size / 4)), direct_(settings.batch_direct)
{
}

BatchCopier::~BatchCopier()
{
    for (size_t device = 0; device < rings_.size(); ++device)
        if (rings_[device])
            for (Slot &slot : rings_[device]->slots)
                release(static_cast<int32_t>(device), slot);
}

bool BatchCopier::can_batch() const noexcept
{
    for (RuntimeOp op : {RuntimeOp::kernel_batch_copy, RuntimeOp::event_create, RuntimeOp::event_record,
                         RuntimeOp::event_synchronize, RuntimeOp::stream_create, RuntimeOp::stream_synchronize})
        if (!runtime_.supports(op))
            return false;
    return true;
}

void BatchCopier::copy(std::span<const tidal_copy_item> items, void *stream)
{
    check_overlaps(items);
    std::vector<Planned> planned;
    const int32_t device = plan(items, planned); // checks every pointer before anything moves

    std::vector<HostJob> host;
    std::vector<Planned> batched;
    for (const Planned &p : planned) {
        if (p.route == Route::host)
            host.push_back({p.item->dst, p.item->src, p.item->size});
        else if (p.route != Route::single)
            batched.push_back(p);
    }
    run_host_jobs(host);
    if (!batched.empty()) {
        void *on = stream ? stream : copies_.stream_for(device);
        run_waves(device, batched, on);
        if (!stream)
            runtime_.stream_synchronize(on, "waiting for a batch of copies");
    }
    for (const Planned &p : planned)
        if (p.route == Route::single)
            copies_.copy(p.item->dst, p.item->src, p.item->size, stream);
}

int32_t BatchCopier::plan(std::span<const tidal_copy_item> items, std::vector<Planned> &out) const
{
    PlaceFinder places(runtime_, registry_);
    const bool batching = can_batch();
    int32_t primary = -1;
    out.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        const tidal_copy_item &it = items[i];
        if (it.size == 0)
            continue;
        const PlaceFinder::Place s = places.locate(it.src, it.size, i, false);
        const PlaceFinder::Place d = places.locate(it.dst, it.size, i, true);
        Route route = Route::single;
        if (!s.device && !d.device) {
            route = it.size > large_item_ ? Route::single : Route::host;
        } else if (batching && it.size <= large_item_) {
            // The kernel runs on one device: the first device-side item's. Items elsewhere, and
            // device->device items between two devices, go alone (the runtime copies across).
            const int32_t device = d.device ? d.index : s.index;
            if (primary < 0)
                primary = device;
            const bool same = device == primary && (!s.device || !d.device || s.index == d.index);
            // Pinned host memory is mapped for the devices (unified addressing): with
            // batch_direct the kernel reads or writes it in place, with no packing and no DMA.
            const bool s_reach = s.device || (direct_ && s.pinned), d_reach = d.device || (direct_ && d.pinned);
            if (same)
                route = !s_reach ? Route::to_device : !d_reach ? Route::to_host : Route::on_device;
        }
        out.push_back({&it, route});
    }
    return primary;
}

BatchCopier::Ring &BatchCopier::ring(int32_t device)
{
    std::lock_guard lock(rings_mutex_);
    if (rings_.size() <= static_cast<size_t>(device))
        rings_.resize(static_cast<size_t>(device) + 1);
    auto &r = rings_[static_cast<size_t>(device)];
    if (!r)
        r = std::make_unique<Ring>();
    return *r;
}

void BatchCopier::run_waves(int32_t device, const std::vector<Planned> &batched, void *stream)
{
    Ring &r = ring(device);
    std::lock_guard lock(r.mutex);
    const ProfilerRange range(runtime_, "tidal: batch copy");
    for (size_t first = 0; first < batched.size();) {
        Slot &slot = r.slots[r.next];
        r.next = (r.next + 1) % r.slots.size();
        first = issue_wave(device, slot, batched, first, stream);
    }
}

size_t BatchCopier::issue_wave(int32_t device, Slot &slot, const std::vector<Planned> &batched, size_t first,
                               void *stream)
{
    // As many items as the staging limit holds (at least one: no batched item exceeds a quarter of it).
    size_t last = first, to_device = 0, to_host = 0, max_size = 0;
    for (; last < batched.size() && last - first < kMaxWaveItems; ++last) {
        const Planned &p = batched[last];
        const size_t need = p.item->size + kItemSlack;
        const size_t d = to_device + (p.route == Route::to_device ? need : 0);
        const size_t h = to_host + (p.route == Route::to_host ? need : 0);
        if (last > first && layout_bytes(last - first + 1, d, h) > wave_limit_)
            break;
        to_device = d;
        to_host = h;
        max_size = std::max(max_size, p.item->size);
    }
    const size_t count = last - first;
    wait(slot); // the DMA and kernel of its previous wave have read it
    reserve(device, slot, layout_bytes(count, to_device, to_host));

    // The table goes first; host->device bytes follow it so one DMA carries both.
    auto *table = reinterpret_cast<tidal_rt_copy_item *>(slot.host);
    const size_t table_bytes = align_up(count * sizeof(tidal_rt_copy_item), 256);
    const size_t download_begin = table_bytes + align_up(to_device, 256);
    size_t upload_end = table_bytes, download_end = download_begin;
    std::vector<HostJob> pack, unpack;
    for (size_t k = 0; k < count; ++k) {
        const tidal_copy_item &it = *batched[first + k].item;
        switch (batched[first + k].route) {
        case Route::to_device: {
            const size_t at = slot_offset(upload_end, it.dst, it.size);
            table[k] = {it.dst, slot.device + at, it.size};
            pack.push_back({slot.host + at, it.src, it.size});
            break;
        }
        case Route::to_host: {
            const size_t at = slot_offset(download_end, it.src, it.size);
            table[k] = {slot.device + at, it.src, it.size};
            unpack.push_back({it.dst, slot.host + at, it.size});
            break;
        }
        default:
            table[k] = {it.dst, it.src, it.size};
        }
    }
    run_host_jobs(pack);

    try {
        runtime_.memcpy(slot.device, slot.host, upload_end, stream,
                        [&] { return fmt::format("copying a batch of {} items to device {}", count, device); });
        slot.in_flight = true; // from here the device may be reading the slot
        runtime_.kernel_batch_copy(device, reinterpret_cast<const tidal_rt_copy_item *>(slot.device),
                                   static_cast<uint32_t>(count), max_size, stream, [&] {
                                       return fmt::format("launching the batch copy kernel for {} items on device {}",
                                                          count, device);
                                   });
        if (download_end > download_begin)
            runtime_.memcpy(slot.host + download_begin, slot.device + download_begin, download_end - download_begin,
                            stream, [&] { return fmt::format("copying a batch of {} items from device {}", count, device); });
        runtime_.event_record(slot.event, stream, "recording a batch staging event");
    } catch (...) {
        // The slot may be reused only once the device is done with what was issued.
        if (slot.in_flight)
            runtime_.stream_synchronize_noexcept(stream);
        slot.in_flight = false;
        throw;
    }
    if (!unpack.empty()) { // host destinations are written by the host, after the DMA
        wait(slot);
        run_host_jobs(unpack);
    }
    return last;
}

void BatchCopier::run_host_jobs(const std::vector<HostJob> &jobs)
{
    if (jobs.empty())
        return;
    // Parts of about equal bytes, each a run of whole jobs (no job exceeds large_item_).
    std::vector<size_t> starts(jobs.size() + 1, 0);
    for (size_t i = 0; i < jobs.size(); ++i)
        starts[i + 1] = starts[i] + jobs[i].size;
    const size_t total = starts.back();
    HostWorkers &workers = copies_.workers();
    const unsigned parts =
        static_cast<unsigned>(std::min<size_t>(workers.parallelism(), std::max<size_t>(1, total / kMinPackPerThread)));
    workers.run(parts, [&](unsigned part) {
        auto first_at = [&](size_t bytes) {
            return static_cast<size_t>(std::lower_bound(starts.begin(), starts.end() - 1, bytes) - starts.begin());
        };
        const size_t begin = first_at(total * part / parts), end = first_at(total * (part + 1) / parts);
        for (size_t i = begin; i < end; ++i)
            std::memcpy(jobs[i].dst, jobs[i].src, jobs[i].size);
    });
}

void BatchCopier::wait(Slot &slot)
{
    if (slot.in_flight) {
        runtime_.event_synchronize(slot.event, "waiting for a batch staging slot");
        slot.in_flight = false;
    }
}

void BatchCopier::reserve(int32_t device, Slot &slot, size_t bytes)
{
    if (!slot.event)
        slot.event = runtime_.event_create(device, "creating a batch staging event");
    if (slot.capacity >= bytes)
        return;
    free_buffers(device, slot); // idle: the caller waited for it
    const size_t capacity = std::min(std::max(std::bit_ceil(bytes), kMinStaging), std::max(wave_limit_, bytes));
    // Both or neither: a slot with one buffer would be half a slot.
    void *host = runtime_.alloc(TIDAL_KIND_PINNED, device, capacity); // on the device's NUMA node
    try {
        slot.device = static_cast<char *>(runtime_.alloc(TIDAL_KIND_DEVICE, device, capacity));
    } catch (...) {
        runtime_.free(TIDAL_KIND_PINNED, device, host, capacity);
        throw;
    }
    slot.host = static_cast<char *>(host);
    slot.capacity = capacity;
}

void BatchCopier::free_buffers(int32_t device, Slot &slot) noexcept
{
    if (slot.host)
        runtime_.free(TIDAL_KIND_PINNED, device, slot.host, slot.capacity);
    if (slot.device)
        runtime_.free(TIDAL_KIND_DEVICE, device, slot.device, slot.capacity);
    slot.host = slot.device = nullptr;
    slot.capacity = 0;
}

void BatchCopier::release(int32_t device, Slot &slot) noexcept
{
    if (slot.in_flight)
        runtime_.event_synchronize_noexcept(slot.event);
    slot.in_flight = false;
    if (slot.event)
        runtime_.event_destroy(slot.event);
    slot.event = nullptr;
    free_buffers(device, slot);
}

} // namespace tidal
