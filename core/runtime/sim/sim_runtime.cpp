// SimRuntime's own bookkeeping: its locks, the lookups every entry point shares, and the
// snapshots tests and telemetry read. The entry points live in the sim_<concern> files.
#include "runtime/sim/sim_runtime.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "runtime/sim/sim_errors.h"
#include "runtime/sim/sim_tsan_annotations.h"

namespace tidal::sim {

// ---- locking
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

// ---- helpers
namespace {

// The entry of a map by base address whose [base, end()) holds ptr, or nullptr.
template <typename T>
T *containing(const std::map<uintptr_t, std::unique_ptr<T>> &by_base, const void *ptr)
{
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    auto it = by_base.upper_bound(p);
    if (it == by_base.begin())
        return nullptr;
    T *entry = std::prev(it)->second.get();
    return p < entry->end() ? entry : nullptr;
}

} // namespace

SimAllocation *SimRuntime::find(const void *ptr) const { return containing(allocations_, ptr); }

SimReservation *SimRuntime::find_reservation(const void *ptr) const
{
    return containing(reservations_, ptr);
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

// ---- introspection
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
