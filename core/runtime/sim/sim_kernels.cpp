// SimRuntime's validation kernels: the XNACK rules of device access, then the real work on
// the CPU. Split from sim_runtime.cpp by concern; same class.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "atomic_set.h"
#include "pattern.h"
#include "runtime/sim/sim_errors.h"
#include "runtime/sim/sim_runtime.h"

namespace tidal::sim {

namespace {

// The touch kernel reads one word per 4 KiB: that, not the range size, is its traffic.
constexpr double kTouchTrafficPerByte = 8.0 / 4096.0;

uint64_t round_traffic(double traffic) { return static_cast<uint64_t>(std::llround(traffic)); }

bool word_aligned(const void *ptr, size_t size)
{
    return ptr != nullptr && reinterpret_cast<uintptr_t>(ptr) % 8 == 0 && size % 8 == 0;
}

} // namespace

SimRuntime::Target SimRuntime::classify_access(int32_t device, const Access &access) const
{
    // Pageable (malloc) memory is reachable only with HMM, which on AMD means XNACK on; the
    // H200 has none. This is the crash applications hit when they hand malloc memory to a
    // kernel on an XNACK-off machine.
    const bool pageable_access = amd_ && xnack_;
    SimAllocation *a = find(access.ptr);
    if (a == nullptr && find_reservation(access.ptr) != nullptr) {
        // Elastic memory: device memory where a chunk is mapped with access set for this
        // device; a non-resident chunk is what crashes a GPU kernel.
        int32_t owner = -1;
        return {vmm_resident(access.ptr, access.size, device, &owner)
                    ? (owner == device ? Reach::own_device : Reach::peer_device)
                    : Reach::illegal,
                nullptr};
    }
    if (a == nullptr)
        return {registered(access.ptr, access.size) || pageable_access ? Reach::link
                                                                       : Reach::illegal,
                nullptr};
    if (access.size > a->end() - reinterpret_cast<uintptr_t>(access.ptr))
        return {Reach::illegal, a}; // runs off the end of the allocation
    if (a->device_kind())
        return {a->device == device ? Reach::own_device : Reach::peer_device, a};
    if (a->managed())
        return {Reach::managed, a};
    if (a->kind == TIDAL_KIND_PINNED || registered(access.ptr, access.size) || pageable_access)
        return {Reach::link, a};
    return {Reach::illegal, a};
}

double SimRuntime::apply_access(int32_t device, const Access &access, const Target &target)
{
    const double traffic = static_cast<double>(access.size) * access.traffic_per_byte;
    auto &counters = counters_[static_cast<std::size_t>(device)];
    switch (target.reach) {
    case Reach::own_device:
        return cost_.device_traffic(round_traffic(traffic));
    case Reach::peer_device:
        counters.peer_bytes += round_traffic(traffic);
        return cost_.device_traffic(round_traffic(traffic));
    case Reach::link:
        counters.zero_copy_bytes += round_traffic(traffic);
        return cost_.zero_copy(round_traffic(traffic));
    case Reach::managed:
        return apply_managed_access(device, *target.allocation, access);
    case Reach::illegal:
        break;
    }
    return 0.0;
}

// The XNACK rules, page by page. A page the device holds is device memory. Otherwise, with
// migration on fault (XNACK on / NVIDIA), the page migrates — or is duplicated, for a read of
// read-mostly memory — unless the device has it mapped (accessed-by advice, or the page sits
// at a preferred location elsewhere), in which case it is read over the link as the vendors
// document. Without migration on fault, managed memory is host memory read zero-copy.
double SimRuntime::apply_managed_access(int32_t device, SimAllocation &a, const Access &access)
{
    PageResidency &pages = *a.pages;
    const ManagedAdvice &advice = a.advice;
    auto &counters = counters_[static_cast<std::size_t>(device)];
    const uint64_t offset = reinterpret_cast<uintptr_t>(access.ptr) - a.base();
    const auto range = pages.pages_covering(offset, access.size);
    double seconds = 0.0;
    for (std::size_t page = range.first; page < range.last; ++page) {
        const uint64_t traffic =
            round_traffic(static_cast<double>(pages.overlap(page, offset, access.size)) *
                          access.traffic_per_byte);
        const PageMask mask = pages.mask(page);
        if (mask.on_device(device)) {
            if (access.write && mask.copies() > 1)
                set_page(a, page, PageMask::at(device)); // a write invalidates the duplicates
            seconds += cost_.device_traffic(traffic);
            continue;
        }
        const bool duplicate = advice.read_mostly && !access.write;
        const ManagedAdvice::PageAdvice here = advice.at(page);
        const bool mapped = here.accessed_by.has(device) ||
                            (here.preferred != kNoLocation && here.preferred != device && mask.has(here.preferred));
        if (xnack_ && (duplicate || !mapped)) {
            const uint64_t bytes = pages.page_bytes(page);
            if (fits(device, bytes)) {
                // Paging counts, per device and per page, by where the page came from.
                PageCounts &page_counts = a.counts(page);
                if (mask.on_host()) {
                    counters.bytes_migrated_h2d += bytes;
                    ++counters.paging.faults_from_host;
                    counters.paging.fault_bytes_from_host += bytes;
                    ++page_counts.faults_from_host;
                } else {
                    counters.bytes_migrated_peer += bytes;
                    ++counters.paging.faults_from_peer;
                    counters.paging.fault_bytes_from_peer += bytes;
                    ++page_counts.faults_from_peer;
                }
                ++counters.faults;
                set_page(a, page, duplicate ? mask.with(device) : PageMask::at(device));
                seconds += cost_.fault(bytes) + cost_.device_traffic(traffic);
                continue;
            }
            // A full device: a real driver would evict; the simulated one leaves eviction to
            // the core's scheduler and serves the access over the link instead.
            ++counters.oversubscribed;
        }
        counters.zero_copy_bytes += traffic;
        counters.paging.link_bytes += traffic;
        counters.paging.link_page_bytes += pages.page_bytes(page);
        a.counts(page).link_bytes += traffic;
        ++a.counts(page).link_accesses;
        seconds += cost_.remote_managed(traffic);
        if (access.write && mask.copies() > 1)
            set_page(a, page, collapse(mask, kNoLocation));
    }
    return seconds;
}

// Checks every range before anything happens, so an illegal access leaves memory, residency
// and the clock exactly as they were (a deterministic stand-in for a crashed kernel).
template <typename Work>
int SimRuntime::run_kernel(int32_t device, SimStream *stream, std::span<const Access> accesses,
                           bool synchronous, Work &&work)
{
    std::vector<Target> targets(accesses.size());
    std::size_t i = 0;
    for (const Access &access : accesses) {
        targets[i] = classify_access(device, access);
        if (targets[i].reach == Reach::illegal) {
            ++counters_[static_cast<std::size_t>(device)].fatal_faults;
            FaultRecord record;
            record.type = FaultRecord::Type::illegal_address;
            record.time = clock_.now();
            record.device = device;
            record.address = reinterpret_cast<uintptr_t>(access.ptr);
            record.operation = "kernel";
            record.native_error = kIllegalAddress;
            log_fault(std::move(record));
            return kIllegalAddress;
        }
        ++i;
    }
    double seconds = cost_.kernel_launch();
    i = 0;
    for (const Access &access : accesses)
        seconds += apply_access(device, access, targets[i++]);
    do_work(stream, std::forward<Work>(work));
    const double end = clock_.run(stream, seconds);
    if (synchronous)
        clock_.host_wait(end);
    return kSuccess;
}

// Every kernel call counts for fault injection, even one with bad arguments.
int SimRuntime::kernel_prologue(int32_t device, void *stream, bool arguments_ok, SimStream **out)
{
    if (int e = injected(Operation::kernel))
        return e;
    if (!arguments_ok)
        return kInvalidValue;
    if (device < 0 || device >= devices_)
        return kInvalidDevice;
    return lookup_stream(stream, out);
}

int SimRuntime::kernel_touch(int32_t device, void *ptr, size_t size, int32_t write, void *stream)
{
    Lock lock(*this);
    SimStream *s = nullptr;
    if (int e = kernel_prologue(device, stream, ptr != nullptr && size > 0, &s))
        return e;
    const bool writes = write != 0;
    return run_kernel(device, s, {{ptr, size, writes, kTouchTrafficPerByte}}, false, [&] {
        // One byte per 4 KiB is enough to commit the host page, as the GPU's word would.
        auto *bytes = static_cast<volatile unsigned char *>(ptr);
        for (size_t offset = 0; offset < size; offset += 4096) {
            const unsigned char value = bytes[offset];
            if (writes)
                bytes[offset] = value;
        }
    });
}

int SimRuntime::kernel_pattern_fill(int32_t device, void *ptr, size_t size, uint64_t seed,
                                    void *stream)
{
    Lock lock(*this);
    SimStream *s = nullptr;
    if (int e = kernel_prologue(device, stream, word_aligned(ptr, size) && size > 0, &s))
        return e;
    return run_kernel(device, s, {{ptr, size, true, 1.0}}, false, [&] {
        auto *words = static_cast<uint64_t *>(ptr);
        for (size_t i = 0; i < size / 8; ++i)
            words[i] = tidal_pattern_word(seed, i);
    });
}

int SimRuntime::kernel_pattern_check(int32_t device, const void *ptr, size_t size, uint64_t seed,
                                     uint64_t *mismatches, void *stream)
{
    Lock lock(*this);
    SimStream *s = nullptr;
    const bool ok = word_aligned(ptr, size) && size > 0 && mismatches != nullptr;
    if (int e = kernel_prologue(device, stream, ok, &s))
        return e;
    return run_kernel(device, s, {{ptr, size, false, 1.0}}, true, [&] {
        const auto *words = static_cast<const uint64_t *>(ptr);
        uint64_t bad = 0;
        for (size_t i = 0; i < size / 8; ++i)
            bad += words[i] != tidal_pattern_word(seed, i) ? 1 : 0;
        *mismatches = bad;
    });
}

int SimRuntime::kernel_copy(int32_t device, void *dst, const void *src, size_t size, void *stream)
{
    Lock lock(*this);
    SimStream *s = nullptr;
    const bool ok = word_aligned(dst, size) && word_aligned(src, size) && size > 0;
    if (int e = kernel_prologue(device, stream, ok, &s))
        return e;
    return run_kernel(device, s, {{src, size, false, 1.0}, {dst, size, true, 1.0}}, false,
                      [&] { std::memmove(dst, src, size); });
}

int SimRuntime::kernel_triad(int32_t device, double *a, const double *b, const double *c,
                             double scalar, size_t size, void *stream)
{
    Lock lock(*this);
    SimStream *s = nullptr;
    const bool ok = word_aligned(a, size) && word_aligned(b, size) && word_aligned(c, size) &&
                    size > 0;
    if (int e = kernel_prologue(device, stream, ok, &s))
        return e;
    return run_kernel(device, s,
                      {{b, size, false, 1.0}, {c, size, false, 1.0}, {a, size, true, 1.0}}, false,
                      [&] {
                          for (size_t i = 0; i < size / sizeof(double); ++i)
                              a[i] = b[i] + scalar * c[i];
                      });
}

int SimRuntime::kernel_spin(int32_t device, uint64_t ns, void *stream)
{
    Lock lock(*this);
    SimStream *s = nullptr;
    if (int e = kernel_prologue(device, stream, true, &s))
        return e;
    clock_.run(s, cost_.kernel_launch() + static_cast<double>(ns) * 1e-9);
    return kSuccess;
}

int SimRuntime::kernel_atomic_add(int32_t device, uint64_t *counters, size_t count,
                                  uint32_t iterations, void *stream)
{
    Lock lock(*this);
    SimStream *s = nullptr;
    const bool ok = count > 0 && count <= SIZE_MAX / 8 && word_aligned(counters, count * 8);
    if (int e = kernel_prologue(device, stream, ok, &s))
        return e;
    // Each round is a read-modify-write of every counter: `iterations` times the bytes.
    return run_kernel(device, s, {{counters, count * 8, true, static_cast<double>(iterations)}},
                      false, [&] {
                          for (size_t i = 0; i < count; ++i)
                              counters[i] += iterations;
                      });
}

namespace {

namespace as = tidal::atomic_set;

} // namespace

bool SimRuntime::fine_grained(const Target &target) const
{
    if (!amd_)
        return false; // the fine/coarse distinction is AMD's
    const SimAllocation *a = target.allocation;
    if (a == nullptr) // registered or pageable host memory (elastic memory is device memory)
        return target.reach == Reach::link;
    if (a->kind == TIDAL_KIND_DEVICE_FINE || a->kind == TIDAL_KIND_PINNED || a->kind == TIDAL_KIND_PAGEABLE)
        return true;
    return a->managed() && !a->advice.coarse;
}

int SimRuntime::kernel_atomic_set(int32_t device, void *words, uint32_t ops, uint32_t rounds, void *stream)
{
    Lock lock(*this);
    SimStream *s = nullptr;
    const bool ok = words != nullptr && reinterpret_cast<uintptr_t>(words) % 16 == 0 && rounds > 0 &&
                    (ops & ~as::kAllOps) == 0;
    if (int e = kernel_prologue(device, stream, ok, &s))
        return e;
    // MI200 (gfx90a) float atomics in hardware do nothing on fine-grained memory (AMD's MI200
    // guide, "unsafe" FP atomics); the kernel uses them there, so the model drops those adds.
    const Access access{words, as::kBytes, true, static_cast<double>(rounds) * as::kDeviceThreads / 8.0};
    const bool mi200 = amd_ && profile_.arch.rfind("gfx90a", 0) == 0;
    const bool float_adds = !(mi200 && fine_grained(classify_access(device, access)));
    auto *bytes = static_cast<unsigned char *>(words);
    return run_kernel(device, s, {access}, false, [&] {
        for (uint32_t r = 0; r < rounds; ++r)
            for (uint32_t t = 0; t < as::kDeviceThreads; ++t)
                as::cpu_round(bytes, ops, t, r, float_adds);
    });
}

int SimRuntime::kernel_batch_copy(int32_t device, const tidal_rt_copy_item *items, uint32_t count,
                                  uint64_t max_size, void *stream)
{
    Lock lock(*this);
    SimStream *s = nullptr;
    if (int e = kernel_prologue(device, stream, items != nullptr, &s))
        return e;
    // The table is read by the device too: it must be memory the device reaches.
    std::vector<Access> accesses{{items, uint64_t{count} * sizeof(tidal_rt_copy_item), false, 1.0}};
    const Target table = classify_access(device, accesses.front());
    if (table.reach == Reach::illegal)
        return run_kernel(device, s, std::span<const Access>(accesses), false, [] {});
    accesses.reserve(1 + size_t{count} * 2);
    for (uint32_t i = 0; i < count; ++i) {
        const tidal_rt_copy_item &item = items[i];
        if (item.dst == nullptr || item.src == nullptr || item.size > max_size)
            return kInvalidValue;
        if (item.size == 0)
            continue;
        accesses.push_back({item.src, item.size, false, 1.0});
        accesses.push_back({item.dst, item.size, true, 1.0});
    }
    return run_kernel(device, s, std::span<const Access>(accesses), false, [&] {
        for (uint32_t i = 0; i < count; ++i)
            std::memmove(items[i].dst, items[i].src, items[i].size);
    });
}

} // namespace tidal::sim
