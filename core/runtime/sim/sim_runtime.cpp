#include "runtime/sim/sim_runtime.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <stdexcept>

#include "runtime/sim/sim_error_names.h"
#include "runtime/sim/tsan_annotations.h"

namespace tidal::sim {

namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMiB = 1ull << 20;

// hipMalloc/hipMallocManaged hand out at least 256-byte alignment, malloc-like kinds 64
// (the contract's promise; the core over-allocates for more).
constexpr std::size_t kDeviceAlignment = 256;
constexpr std::size_t kHostAlignment = 64;

bool is_managed_kind(int32_t kind)
{
    return kind == TIDAL_KIND_MANAGED || kind == TIDAL_KIND_MANAGED_COARSE;
}

bool is_device_kind(int32_t kind)
{
    return kind == TIDAL_KIND_DEVICE || kind == TIDAL_KIND_DEVICE_FINE;
}

std::string format_bytes(uint64_t bytes)
{
    char text[48];
    if (bytes >= kGiB && bytes % kGiB == 0)
        std::snprintf(text, sizeof text, "%llu GiB", static_cast<unsigned long long>(bytes / kGiB));
    else if (bytes >= kGiB)
        std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / kGiB);
    else if (bytes >= kMiB && bytes % kMiB == 0)
        std::snprintf(text, sizeof text, "%llu MiB", static_cast<unsigned long long>(bytes / kMiB));
    else if (bytes >= kMiB)
        std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / kMiB);
    else
        std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
    return text;
}

// gcnArchName carries the XNACK mode as a suffix, and code that checks for ":xnack+" should
// see the simulated mode, not whatever the profile was measured with.
std::string amd_arch(std::string arch, bool xnack)
{
    for (const char *suffix : {":xnack+", ":xnack-"})
        if (auto at = arch.find(suffix); at != std::string::npos)
            arch.erase(at, std::strlen(suffix));
    return arch + (xnack ? ":xnack+" : ":xnack-");
}

} // namespace

// ============================================================================ lifecycle

SimRuntime::SimRuntime(const SimSettings &settings)
    : profile_(settings.profile), devices_(settings.devices),
      capacity_(settings.capacity.value_or(settings.profile.capacity)),
      page_size_(settings.page_size.value_or(settings.profile.page_size)),
      xnack_(settings.xnack.value_or(settings.profile.xnack)),
      amd_(settings.profile.vendor == "amd"), cost_(settings.profile), faults_(settings.faults)
{
    const std::string where = "simulated device (profile " + profile_.name + "): ";
    if (profile_.vendor != "amd" && profile_.vendor != "nvidia")
        throw std::invalid_argument(where + "vendor must be \"nvidia\" or \"amd\", not \"" +
                                    profile_.vendor + "\"");
    if (devices_ < 1 || devices_ > PageMask::kMaxDevices)
        throw std::invalid_argument(where + "devices must be 1.." +
                                    std::to_string(PageMask::kMaxDevices) + ", not " +
                                    std::to_string(devices_));
    if (capacity_ == 0)
        throw std::invalid_argument(where + "capacity is 0");
    if (page_size_ < 4096 || !std::has_single_bit(page_size_))
        throw std::invalid_argument(where + "page size must be a power of two >= 4096, not " +
                                    std::to_string(page_size_));
    resident_.assign(static_cast<std::size_t>(devices_), 0);
    counters_.assign(static_cast<std::size_t>(devices_), SimCounters{});
    link_h2d_.assign(static_cast<std::size_t>(devices_), 0.0);
    link_d2h_.assign(static_cast<std::size_t>(devices_), 0.0);
    if (const char *v = std::getenv("TIDAL_SIM_SERIALIZE"); v != nullptr && std::strcmp(v, "0") == 0)
        serialize_ = false;
    if (const char *v = std::getenv("TIDAL_SIM_CALL_COUNTS"); v != nullptr && *v != '\0')
        call_counts_path_ = v;
}

SimRuntime::~SimRuntime()
{
    write_call_counts();
    for (SimStream *stream : streams_)
        delete stream;
    for (SimEvent *event : events_)
        delete event;
}

std::string SimRuntime::describe() const
{
    return "simulated: profile " + profile_.name + ", " + std::to_string(devices_) +
           " device(s), " + format_bytes(capacity_) + ", xnack " + (xnack_ ? "on" : "off");
}

void SimRuntime::write_call_counts() const noexcept
{
    if (call_counts_path_.empty())
        return;
    try {
        std::ofstream out(call_counts_path_, std::ios::trunc);
        for (std::size_t op = 0; op < kOperationCount; ++op)
            out << FaultInjector::name(static_cast<Operation>(op)) << ' '
                << faults_.calls(static_cast<Operation>(op)) << '\n';
    } catch (...) {
        // A test hook: the sweep notices the missing file.
    }
}

// ============================================================================ locking

// Unserialised, the bookkeeping lock is invisible to ThreadSanitizer, and so is what it
// guards (see the file comment of sim_runtime.h): acquiring it must not order the core's
// threads, and the device's own structures are correct by this lock, not the core's.
void SimRuntime::lock_books() const
{
    if (serialize_) {
        mutex_.lock();
        return;
    }
    tsan_ignore_sync_begin();
    mutex_.lock();
    tsan_ignore_accesses_begin();
}

void SimRuntime::unlock_books() const
{
    if (serialize_) {
        mutex_.unlock();
        return;
    }
    tsan_ignore_accesses_end();
    mutex_.unlock();
    tsan_ignore_sync_end();
}

// The host waited for `address` (an event, or all work): ordered after it for ThreadSanitizer
// in the unserialised mode, where the bookkeeping lock hides synchronisation.
void SimRuntime::tsan_after_books(const void *address) const
{
    if (serialize_)
        return;
    tsan_ignore_accesses_end();
    tsan_ignore_sync_end();
    tsan_happens_after(address);
    tsan_ignore_sync_begin();
    tsan_ignore_accesses_begin();
}

// ============================================================================ helpers

SimAllocation *SimRuntime::find(const void *ptr) const
{
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    auto it = allocations_.upper_bound(p);
    if (it == allocations_.begin())
        return nullptr;
    --it;
    SimAllocation *a = it->second.get();
    return p < a->end() ? a : nullptr;
}

SimAllocation *SimRuntime::find_range(const void *ptr, uint64_t size) const
{
    SimAllocation *a = find(ptr);
    if (a == nullptr || size > a->end() - reinterpret_cast<uintptr_t>(ptr))
        return nullptr;
    return a;
}

bool SimRuntime::registered(const void *ptr, uint64_t size) const
{
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    auto it = registered_.upper_bound(p);
    if (it == registered_.begin())
        return false;
    --it;
    return p - it->first < it->second && size <= it->first + it->second - p;
}

int SimRuntime::lookup_stream(void *handle, SimStream **out) const
{
    *out = nullptr;
    if (handle == nullptr)
        return kSuccess;
    auto *stream = static_cast<SimStream *>(handle);
    if (!streams_.contains(stream))
        return kInvalidHandle;
    *out = stream;
    return kSuccess;
}

int SimRuntime::lookup_event(void *handle, SimEvent **out) const
{
    auto *event = static_cast<SimEvent *>(handle);
    if (event == nullptr || !events_.contains(event))
        return kInvalidHandle;
    *out = event;
    return kSuccess;
}

bool SimRuntime::valid_location(int32_t location) const
{
    return location == TIDAL_RT_LOCATION_HOST || (location >= 0 && location < devices_);
}

int SimRuntime::injected(Operation op) const
{
    const FaultInjector::Verdict verdict = faults_.check(op);
    if (verdict.native_error != 0) {
        FaultRecord record;
        record.type = FaultRecord::Type::injected;
        record.time = clock_.now();
        record.operation = FaultInjector::name(op);
        record.call = verdict.call;
        record.native_error = verdict.native_error;
        log_fault(std::move(record));
    }
    return verdict.native_error;
}

void SimRuntime::log_fault(FaultRecord record) const
{
    if (fault_log_.size() >= kFaultLogCapacity) {
        ++fault_log_dropped_;
        return;
    }
    fault_log_.push_back(std::move(record));
}

bool SimRuntime::fits(int32_t device, uint64_t bytes) const
{
    return bytes <= capacity_ - resident_[static_cast<std::size_t>(device)];
}

// Every residency change goes through here so the per-device totals the capacity check reads
// can never drift from the pages.
void SimRuntime::set_page(SimAllocation &a, std::size_t page, PageMask mask)
{
    const PageMask old = a.pages->mask(page);
    const uint64_t bytes = a.pages->page_bytes(page);
    for (int32_t d = 0; d < devices_; ++d) {
        if (old.on_device(d) == mask.on_device(d))
            continue;
        auto &resident = resident_[static_cast<std::size_t>(d)];
        if (mask.on_device(d)) {
            resident += bytes;
            auto &peak = counters_[static_cast<std::size_t>(d)].peak_resident_bytes;
            peak = std::max(peak, resident);
        } else {
            resident -= bytes;
        }
    }
    a.pages->set(page, mask);
}

// The single copy that survives when duplicates collapse: `keep` when it holds one, else the
// host, else the lowest device.
PageMask SimRuntime::collapse(PageMask mask, int32_t keep) const
{
    if (keep >= TIDAL_RT_LOCATION_HOST && mask.has(keep))
        return PageMask::at(keep);
    if (mask.on_host())
        return PageMask::at(TIDAL_RT_LOCATION_HOST);
    return PageMask::at(mask.first_device());
}

// ============================================================================ devices

int SimRuntime::device_count(int32_t *count) const
{
    Lock lock(*this);
    if (int e = injected(Operation::device_count))
        return e;
    if (count == nullptr)
        return kInvalidValue;
    *count = devices_;
    return kSuccess;
}

int SimRuntime::device_props(int32_t device, tidal_rt_device_props *props) const
{
    Lock lock(*this);
    if (int e = injected(Operation::device_props))
        return e;
    if (props == nullptr)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    tidal_rt_device_props p{};
    p.struct_size = sizeof p;
    std::snprintf(p.name, sizeof p.name, "%s", profile_.device_name.c_str());
    const std::string arch = amd_ ? amd_arch(profile_.arch, xnack_) : profile_.arch;
    std::snprintf(p.arch, sizeof p.arch, "%s", arch.c_str());
    p.total_memory = capacity_;
    p.page_size = page_size_;
    p.l2_size = profile_.l2_size;
    p.managed = 1;
    p.concurrent_managed = 1;
    // H200 has no HMM; on AMD pageable access is exactly the XNACK mode (hip-memory-facts).
    p.pageable_access = amd_ && xnack_ ? 1 : 0;
    p.migrates_on_fault = xnack_ ? 1 : 0;
    p.host_native_atomics = 1;
    p.fine_grained = amd_ ? 1 : 0;
    p.xnack = amd_ ? (xnack_ ? TIDAL_XNACK_ON : TIDAL_XNACK_OFF) : TIDAL_XNACK_NOT_APPLICABLE;
    p.numa_node = -1;
    p.simulated = 1;
    *props = p;
    return kSuccess;
}

int SimRuntime::mem_info(int32_t device, uint64_t *free_bytes, uint64_t *total_bytes) const
{
    Lock lock(*this);
    if (int e = injected(Operation::mem_info))
        return e;
    if (free_bytes == nullptr || total_bytes == nullptr)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    *free_bytes = capacity_ - resident_[static_cast<std::size_t>(device)];
    *total_bytes = capacity_;
    return kSuccess;
}

// ============================================================================ memory

int SimRuntime::alloc(int32_t kind, int32_t device, size_t size, void **out)
{
    Lock lock(*this);
    if (int e = injected(Operation::alloc))
        return e;
    if (out == nullptr || size == 0 || kind < TIDAL_KIND_DEVICE || kind > TIDAL_KIND_MANAGED_COARSE)
        return kInvalidValue;
    if ((kind == TIDAL_KIND_DEVICE_FINE || kind == TIDAL_KIND_MANAGED_COARSE) && !amd_)
        return kNotSupported;
    const bool on_device = is_device_kind(kind) || is_managed_kind(kind);
    if (on_device && (device < 0 || device >= devices_))
        return kInvalidDevice;
    // Device memory is charged in full up front, as hipMalloc reserves it; managed memory is
    // charged page by page only when pages become resident on a device.
    if (is_device_kind(kind) && !fits(device, size))
        return kOutOfMemory;

    void *data = nullptr;
    try {
        const std::size_t alignment = on_device ? kDeviceAlignment : kHostAlignment;
        std::unique_ptr<SimAllocation> a(
            new SimAllocation{HostBlock(size, alignment), size, kind,
                              on_device ? device : TIDAL_DEVICE_HOST, std::nullopt, {}});
        if (is_managed_kind(kind)) {
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
    if (size > UINTPTR_MAX - p)
        return kInvalidValue;
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
    // Registered memory is page-locked memory as far as the runtime is concerned.
    *kind = registered(ptr, 1) ? TIDAL_KIND_PINNED : TIDAL_KIND_PAGEABLE;
    *device = TIDAL_DEVICE_HOST;
    return kSuccess;
}

// ============================================================================ migration

int SimRuntime::prefetch(const void *ptr, size_t size, int32_t location, void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::prefetch))
        return e;
    SimAllocation *a = find_range(ptr, size);
    if (a == nullptr || !a->managed() || size == 0)
        return kInvalidValue;
    if (!valid_location(location))
        return location >= 0 ? kInvalidDevice : kInvalidValue;
    SimStream *s = nullptr;
    if (int e = lookup_stream(stream, &s))
        return e;

    PageResidency &pages = *a->pages;
    const auto range = pages.pages_covering(reinterpret_cast<uintptr_t>(ptr) - a->base(), size);
    uint64_t h2d = 0, d2h = 0, peer = 0;
    int32_t d2h_from = 0;
    uint64_t duplicated = 0;
    if (location >= 0) {
        uint64_t needed = 0;
        for (std::size_t page = range.first; page < range.last; ++page)
            if (!pages.mask(page).on_device(location))
                needed += pages.page_bytes(page);
        if (!fits(location, needed))
            return kOutOfMemory; // nothing moved: the caller may evict and retry
        auto &counters = counters_[static_cast<std::size_t>(location)];
        for (std::size_t page = range.first; page < range.last; ++page) {
            const PageMask mask = pages.mask(page);
            if (mask.on_device(location))
                continue;
            const uint64_t bytes = pages.page_bytes(page);
            if (mask.on_host()) {
                h2d += bytes;
                if (a->advice.read_mostly)
                    duplicated += bytes;
                counters.bytes_migrated_h2d += bytes;
            } else {
                peer += bytes;
                counters.bytes_migrated_peer += bytes;
            }
            // Read-mostly pages are duplicated, not moved.
            set_page(*a, page, a->advice.read_mostly ? mask.with(location) : PageMask::at(location));
        }
    } else {
        for (std::size_t page = range.first; page < range.last; ++page) {
            const PageMask mask = pages.mask(page);
            if (mask.on_host())
                continue; // read-mostly duplicates keep their device copy: it frees nothing
            const uint64_t bytes = pages.page_bytes(page);
            d2h += bytes;
            d2h_from = mask.first_device();
            counters_[static_cast<std::size_t>(mask.first_device())].bytes_migrated_d2h += bytes;
            set_page(*a, page,
                     a->advice.read_mostly ? mask.with(TIDAL_RT_LOCATION_HOST)
                                           : PageMask::at(TIDAL_RT_LOCATION_HOST));
        }
    }
    a->advice.last_prefetch = location;
    const double duration = cost_.prefetch(h2d, d2h, peer, duplicated);
    if (h2d > 0 && location >= 0)
        clock_.run_on_link(s, duration, &link_h2d_[static_cast<std::size_t>(location)]);
    else if (d2h > 0)
        clock_.run_on_link(s, duration, &link_d2h_[static_cast<std::size_t>(d2h_from)]);
    else
        clock_.run(s, duration);
    return kSuccess;
}

int SimRuntime::advise(const void *ptr, size_t size, int32_t advice, int32_t location)
{
    Lock lock(*this);
    if (int e = injected(Operation::advise))
        return e;
    SimAllocation *a = find_range(ptr, size);
    if (a == nullptr || !a->managed() || size == 0)
        return kInvalidValue;
    ManagedAdvice &m = a->advice;
    switch (advice) {
    case TIDAL_RT_ADVISE_SET_READ_MOSTLY:
        m.read_mostly = true;
        return kSuccess;
    case TIDAL_RT_ADVISE_UNSET_READ_MOSTLY: {
        m.read_mostly = false;
        // Duplicates collapse onto the preferred location (the host when there is none):
        // the one way, measured on the H200, to get read-mostly pages off a device cheaply.
        PageResidency &pages = *a->pages;
        const auto range = pages.pages_covering(reinterpret_cast<uintptr_t>(ptr) - a->base(), size);
        for (std::size_t page = range.first; page < range.last; ++page) {
            const PageMask mask = pages.mask(page);
            if (mask.copies() > 1)
                set_page(*a, page, collapse(mask, m.preferred));
        }
        return kSuccess;
    }
    case TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION:
        if (!valid_location(location))
            return kInvalidValue;
        m.preferred = location;
        return kSuccess;
    case TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION:
        m.preferred = kNoLocation;
        return kSuccess;
    case TIDAL_RT_ADVISE_SET_ACCESSED_BY:
    case TIDAL_RT_ADVISE_UNSET_ACCESSED_BY: {
        if (!valid_location(location))
            return kInvalidValue;
        m.accessed_by = advice == TIDAL_RT_ADVISE_SET_ACCESSED_BY ? m.accessed_by.with(location)
                                                                  : m.accessed_by.without(location);
        return kSuccess;
    }
    case TIDAL_RT_ADVISE_SET_COARSE_GRAIN:
    case TIDAL_RT_ADVISE_UNSET_COARSE_GRAIN:
        if (!amd_)
            return kNotSupported;
        m.coarse = advice == TIDAL_RT_ADVISE_SET_COARSE_GRAIN;
        return kSuccess;
    default:
        return kInvalidValue;
    }
}

int SimRuntime::query_range(const void *ptr, size_t size, int32_t attr, int32_t *value) const
{
    Lock lock(*this);
    if (int e = injected(Operation::query_range))
        return e;
    if (value == nullptr)
        return kInvalidValue;
    const SimAllocation *a = find_range(ptr, size);
    if (a == nullptr || size == 0)
        return kInvalidValue;
    if (attr == TIDAL_RT_ATTR_COHERENCY_MODE) {
        if (!amd_)
            return kNotSupported;
        switch (a->kind) {
        case TIDAL_KIND_DEVICE: *value = 1; return kSuccess; // hipMalloc memory is coarse
        case TIDAL_KIND_DEVICE_FINE:
        case TIDAL_KIND_PINNED: *value = 0; return kSuccess;
        case TIDAL_KIND_MANAGED:
        case TIDAL_KIND_MANAGED_COARSE: *value = a->advice.coarse ? 1 : 0; return kSuccess;
        default: return kInvalidValue;
        }
    }
    if (!a->managed())
        return kInvalidValue;
    switch (attr) {
    case TIDAL_RT_ATTR_LAST_PREFETCH_LOCATION: *value = a->advice.last_prefetch; return kSuccess;
    case TIDAL_RT_ATTR_PREFERRED_LOCATION: *value = a->advice.preferred; return kSuccess;
    case TIDAL_RT_ATTR_READ_MOSTLY: *value = a->advice.read_mostly ? 1 : 0; return kSuccess;
    default: return kInvalidValue;
    }
}

// ============================================================================ copies

// A managed range counts as device memory when most of its bytes are resident on one device
// (bandwidth by the majority, rather than splitting one copy into per-page pieces).
int SimRuntime::classify_copy_end(const void *ptr, uint64_t size, CopyEnd *out) const
{
    const SimAllocation *a = find(ptr);
    if (a == nullptr) {
        *out = {registered(ptr, size) ? Endpoint::pinned : Endpoint::pageable, -1};
        return kSuccess;
    }
    if (size > a->end() - reinterpret_cast<uintptr_t>(ptr))
        return kInvalidValue; // runs off the end of a simulated allocation
    if (a->device_kind()) {
        *out = {Endpoint::device, a->device};
    } else if (a->managed()) {
        const PageResidency &pages = *a->pages;
        const uint64_t offset = reinterpret_cast<uintptr_t>(ptr) - a->base();
        const auto range = pages.pages_covering(offset, size);
        std::vector<uint64_t> on_device(static_cast<std::size_t>(devices_), 0);
        for (std::size_t page = range.first; page < range.last; ++page) {
            const PageMask mask = pages.mask(page);
            for (int32_t d = 0; d < devices_; ++d)
                if (mask.on_device(d))
                    on_device[static_cast<std::size_t>(d)] += pages.overlap(page, offset, size);
        }
        const auto best = std::max_element(on_device.begin(), on_device.end());
        if (*best * 2 > size)
            *out = {Endpoint::device, static_cast<int32_t>(best - on_device.begin())};
        else
            *out = {Endpoint::pageable, -1};
    } else if (a->kind == TIDAL_KIND_PINNED || registered(ptr, size)) {
        *out = {Endpoint::pinned, -1};
    } else {
        *out = {Endpoint::pageable, -1};
    }
    return kSuccess;
}

void SimRuntime::count_copy(const CopyEnd &src, const CopyEnd &dst, uint64_t bytes)
{
    const bool src_device = src.endpoint == Endpoint::device;
    const bool dst_device = dst.endpoint == Endpoint::device;
    if (dst_device && !src_device)
        counters_[static_cast<std::size_t>(dst.device)].copy_bytes_h2d += bytes;
    if (src_device && !dst_device)
        counters_[static_cast<std::size_t>(src.device)].copy_bytes_d2h += bytes;
}

int SimRuntime::memcpy(void *dst, const void *src, size_t size, void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::memcpy))
        return e;
    if (dst == nullptr || src == nullptr)
        return kInvalidValue;
    SimStream *s = nullptr;
    if (int e = lookup_stream(stream, &s))
        return e;
    CopyEnd from, to;
    if (int e = classify_copy_end(src, size, &from))
        return e;
    if (int e = classify_copy_end(dst, size, &to))
        return e;
    count_copy(from, to, size);
    do_work(s, [&] { std::memmove(dst, src, size); });
    const double duration = cost_.copy(from.endpoint, to.endpoint, size);
    const bool src_device = from.endpoint == Endpoint::device, dst_device = to.endpoint == Endpoint::device;
    if (dst_device && !src_device)
        clock_.run_on_link(s, duration, &link_h2d_[static_cast<std::size_t>(to.device)]);
    else if (src_device && !dst_device)
        clock_.run_on_link(s, duration, &link_d2h_[static_cast<std::size_t>(from.device)]);
    else
        clock_.run(s, duration);
    return kSuccess;
}

int SimRuntime::memset(void *dst, int value, size_t size, void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::memset))
        return e;
    if (dst == nullptr)
        return kInvalidValue;
    SimStream *s = nullptr;
    if (int e = lookup_stream(stream, &s))
        return e;
    CopyEnd to;
    if (int e = classify_copy_end(dst, size, &to))
        return e;
    do_work(s, [&] { std::memset(dst, value, size); });
    clock_.run(s, cost_.fill(to.endpoint, size));
    return kSuccess;
}

// ============================================================================ streams, events

int SimRuntime::stream_create(int32_t device, void **stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::stream_create))
        return e;
    if (stream == nullptr)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    auto s = std::make_unique<SimStream>();
    s->device = device;
    s->time = clock_.host(); // a new stream has nothing queued before "now"
    streams_.insert(s.get());
    *stream = s.release();
    return kSuccess;
}

int SimRuntime::stream_destroy(void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::stream_destroy))
        return e;
    auto *s = static_cast<SimStream *>(stream);
    if (s == nullptr || streams_.erase(s) == 0)
        return kInvalidHandle;
    // Destroying a stream with work queued lets that work finish; the clock already holds it.
    delete s;
    return kSuccess;
}

int SimRuntime::stream_synchronize(void *stream)
{
    Lock lock(*this);
    if (int e = injected(Operation::stream_synchronize))
        return e;
    SimStream *s = nullptr;
    if (int e = lookup_stream(stream, &s))
        return e;
    if (s != nullptr)
        clock_.host_wait(s->time);
    do_work(s, [] {}); // the host now comes after the stream's work
    return kSuccess;
}

int SimRuntime::event_create(int32_t device, void **event)
{
    Lock lock(*this);
    if (int e = injected(Operation::event_create))
        return e;
    if (event == nullptr)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    auto e = std::make_unique<SimEvent>();
    e->device = device;
    events_.insert(e.get());
    *event = e.release();
    return kSuccess;
}

int SimRuntime::event_destroy(void *event)
{
    Lock lock(*this);
    if (int e = injected(Operation::event_destroy))
        return e;
    auto *e = static_cast<SimEvent *>(event);
    if (e == nullptr || events_.erase(e) == 0)
        return kInvalidHandle;
    delete e;
    return kSuccess;
}

int SimRuntime::event_record(void *event, void *stream)
{
    Lock lock(*this);
    if (int rc = injected(Operation::event_record))
        return rc;
    SimEvent *e = nullptr;
    SimStream *s = nullptr;
    if (int rc = lookup_event(event, &e))
        return rc;
    if (int rc = lookup_stream(stream, &s))
        return rc;
    clock_.record(*e, s);
    do_work(s, [e] { tsan_happens_before(e); });
    return kSuccess;
}

int SimRuntime::stream_wait_event(void *stream, void *event)
{
    Lock lock(*this);
    if (int rc = injected(Operation::stream_wait_event))
        return rc;
    SimEvent *e = nullptr;
    SimStream *s = nullptr;
    if (int rc = lookup_event(event, &e))
        return rc;
    if (int rc = lookup_stream(stream, &s))
        return rc;
    clock_.wait(s, *e);
    do_work(s, [e] { tsan_happens_after(e); });
    return kSuccess;
}

int SimRuntime::event_synchronize(void *event)
{
    Lock lock(*this);
    if (int rc = injected(Operation::event_synchronize))
        return rc;
    SimEvent *e = nullptr;
    if (int rc = lookup_event(event, &e))
        return rc;
    clock_.wait(nullptr, *e);
    tsan_after_books(e);
    return kSuccess;
}

int SimRuntime::event_query(void *event, int32_t *complete)
{
    Lock lock(*this);
    if (int rc = injected(Operation::event_query))
        return rc;
    if (complete == nullptr)
        return kInvalidValue;
    SimEvent *e = nullptr;
    if (int rc = lookup_event(event, &e))
        return rc;
    *complete = 1;
    tsan_after_books(e);
    return kSuccess;
}

int SimRuntime::event_elapsed_ms(void *start, void *end, float *ms) const
{
    Lock lock(*this);
    if (int rc = injected(Operation::event_elapsed_ms))
        return rc;
    if (ms == nullptr)
        return kInvalidValue;
    SimEvent *a = nullptr;
    SimEvent *b = nullptr;
    if (int rc = lookup_event(start, &a))
        return rc;
    if (int rc = lookup_event(end, &b))
        return rc;
    if (!a->recorded || !b->recorded)
        return kInvalidHandle; // what hipEventElapsedTime says for an unrecorded event
    *ms = static_cast<float>((b->time - a->time) * 1000.0);
    return kSuccess;
}

// Work already ran when it was issued; synchronizing only brings the host timeline up to the
// device's streams, so what follows on the host starts after them.
int SimRuntime::device_synchronize(int32_t device)
{
    Lock lock(*this);
    if (int e = injected(Operation::device_synchronize))
        return e;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    for (const SimStream *s : streams_)
        if (s->device == device)
            clock_.host_wait(s->time);
    tsan_after_books(&all_work_);
    return kSuccess;
}

int SimRuntime::clock(double *seconds) const
{
    Lock lock(*this);
    if (int e = injected(Operation::clock))
        return e;
    if (seconds == nullptr)
        return kInvalidValue;
    *seconds = clock_.now();
    return kSuccess;
}

// ============================================================================ introspection

double SimRuntime::clock_seconds() const
{
    Lock lock(*this);
    return clock_.now();
}

SimCounters SimRuntime::counters(int32_t device) const
{
    Lock lock(*this);
    if (device < 0 || device >= devices_)
        throw std::out_of_range("no simulated device " + std::to_string(device));
    return counters_[static_cast<std::size_t>(device)];
}

SimCounters SimRuntime::host_counters() const
{
    Lock lock(*this);
    return host_counters_;
}

uint64_t SimRuntime::resident_bytes(int32_t device) const
{
    Lock lock(*this);
    if (device < 0 || device >= devices_)
        throw std::out_of_range("no simulated device " + std::to_string(device));
    return resident_[static_cast<std::size_t>(device)];
}

std::vector<PageMask> SimRuntime::page_residency(const void *ptr) const
{
    Lock lock(*this);
    const SimAllocation *a = find(ptr);
    std::vector<PageMask> masks;
    if (a == nullptr || !a->managed())
        return masks;
    masks.reserve(a->pages->page_count());
    for (std::size_t page = 0; page < a->pages->page_count(); ++page)
        masks.push_back(a->pages->mask(page));
    return masks;
}

std::optional<PageMask> SimRuntime::page_at(const void *ptr) const
{
    Lock lock(*this);
    const SimAllocation *a = find(ptr);
    if (a == nullptr || !a->managed())
        return std::nullopt;
    return a->pages->mask((reinterpret_cast<uintptr_t>(ptr) - a->base()) / page_size_);
}

std::vector<FaultRecord> SimRuntime::fault_log() const
{
    Lock lock(*this);
    return fault_log_;
}

uint64_t SimRuntime::fault_log_dropped() const
{
    Lock lock(*this);
    return fault_log_dropped_;
}

} // namespace tidal::sim
