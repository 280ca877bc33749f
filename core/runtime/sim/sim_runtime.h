// The simulated device: one instance behind the `void *rt` of the "sim" runtime.
//
// Memory is real host memory, so programs read and write what they allocate; everything a
// GPU would add on top — capacity, page residency of managed memory, migration on fault,
// XNACK, link bandwidths, streams — is modelled, deterministically, from a SimProfile.
// Kernels run on the calling thread; time is simulated (see SimClock for the stream model).
//
// Thread safety: every public member may be called from several threads at once. One mutex
// per instance serialises them, real copies and kernels included: simple to reason about,
// and the simulated clock, not wall time, is what the simulated device is judged by.
//
// TIDAL_SIM_SERIALIZE=0 (read when an instance is created) is the mode for ThreadSanitizer
// runs: the mutex then guards the device's own bookkeeping only, and the real work — copies,
// fills, kernel bodies, allocating and releasing host blocks — runs outside it, ordered only
// by a lock per stream (a stream runs its work in order, as a GPU's does) and by events. In a
// ThreadSanitizer build the bookkeeping mutex is also hidden from the race detector, so that
// the only happens-before edges it sees between the core's threads are the core's own (and
// the device's stream and event order), not an artefact of the simulator's one lock.
//
// TIDAL_SIM_CALL_COUNTS=PATH makes the instance write, when destroyed, each fault-injection
// operation's call count to PATH ("alloc 12" per line): the fault sweep learns from a clean
// run how many calls of each operation it can fail. Test hooks, not configuration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "config/settings.h"
#include "runtime/runtime_contract.h"
#include "runtime/sim/sim_cost_model.h"
#include "runtime/sim/sim_fault_injector.h"
#include "runtime/sim/sim_page_mask.h"
#include "runtime/sim/sim_reservation.h"
#include "runtime/sim/sim_allocation.h"
#include "runtime/sim/sim_chunk.h"
#include "runtime/sim/sim_clock.h"
#include "runtime/sim/sim_tsan_annotations.h"

namespace tidal::sim {

// Running totals for one device (or for the host: see SimRuntime::host_counters).
struct SimCounters {
    uint64_t allocations = 0;         // successful alloc() calls placed on it
    uint64_t frees = 0;
    uint64_t bytes_migrated_h2d = 0;  // managed bytes moved host -> this device (prefetch, fault)
    uint64_t bytes_migrated_d2h = 0;  // managed bytes moved this device -> host
    uint64_t bytes_migrated_peer = 0; // managed bytes moved into this device from another one
    uint64_t faults = 0;              // serviced page faults that migrated or duplicated a page
    uint64_t fatal_faults = 0;        // illegal accesses (hipErrorIllegalAddress)
    uint64_t zero_copy_bytes = 0;     // kernel traffic over the link without migration
    uint64_t peer_bytes = 0;          // kernel traffic to another device's memory
    uint64_t copy_bytes_h2d = 0;      // memcpy traffic into this device from the host
    uint64_t copy_bytes_d2h = 0;      // memcpy traffic from this device to the host
    uint64_t oversubscribed = 0;      // faults that found the device full and ran zero-copy
    tidal_rt_paging_stats paging{};   // what paging_stats reports (faults by direction, prefetch moves)
    uint64_t peak_resident_bytes = 0;
};

// One entry of the fault log: an access the device could not make, or an injected failure.
struct FaultRecord {
    enum class Type { illegal_address, injected };
    Type type = Type::illegal_address;
    double time = 0.0;          // simulated seconds
    int32_t device = -2;        // the device that faulted; -2 for injected faults
    uintptr_t address = 0;      // first byte of the offending range (illegal_address)
    std::string operation;      // "kernel", "alloc", ...
    uint64_t call = 0;          // the operation's call number (injected)
    int native_error = 0;
};

class SimRuntime {
public:
    // The log keeps the first entries only, so a runaway test cannot eat the host's memory.
    static constexpr std::size_t kFaultLogCapacity = 4096;

    // Throws std::invalid_argument (message says which setting) for settings it cannot
    // simulate, std::bad_alloc when the host is out of memory. Injected "create" faults are
    // sim_create's business, not the constructor's.
    explicit SimRuntime(const SimSettings &settings);
    ~SimRuntime();
    SimRuntime(const SimRuntime &) = delete;
    SimRuntime &operator=(const SimRuntime &) = delete;

    // ---- Entry points: one per tidal_rt_ops member, same arguments, native HIP codes.
    int device_count(int32_t *count) const;
    int device_props(int32_t device, tidal_rt_device_props *props) const;
    int mem_info(int32_t device, uint64_t *free_bytes, uint64_t *total_bytes) const;
    int alloc(int32_t kind, int32_t device, size_t size, void **out);
    int free(int32_t kind, int32_t device, void *ptr, size_t size);
    int host_register(void *ptr, size_t size);
    int host_unregister(void *ptr);
    int pointer_kind(const void *ptr, int32_t *kind, int32_t *device) const;
    int prefetch(const void *ptr, size_t size, int32_t location, void *stream);
    int advise(const void *ptr, size_t size, int32_t advice, int32_t location);
    int query_range(const void *ptr, size_t size, int32_t attr, int32_t *value) const;
    int paging_stats(int32_t device, tidal_rt_paging_stats *out) const;
    int range_paging(const void *ptr, size_t size, int32_t reset, tidal_rt_paging_stats *out);
    int memcpy(void *dst, const void *src, size_t size, void *stream);
    int memset(void *dst, int value, size_t size, void *stream);
    // The core's host threads copied `size` bytes for a staged copy: host time.
    int host_copy(size_t size, uint32_t threads);
    int stream_create(int32_t device, void **stream);
    int stream_destroy(void *stream);
    int stream_synchronize(void *stream);
    int event_create(int32_t device, void **event);
    int event_destroy(void *event);
    int event_record(void *event, void *stream);
    int stream_wait_event(void *stream, void *event);
    int event_synchronize(void *event);
    // Work runs when it is issued: an event is complete once recorded (or never recorded).
    int event_query(void *event, int32_t *complete);
    int event_elapsed_ms(void *start, void *end, float *ms) const;
    int device_synchronize(int32_t device);
    // The simulated clock (clock_seconds()), as the `clock` entry point: it counts for faults.
    int clock(double *seconds) const;
    // Profiler ranges: nothing to show them in, so they are only counted (fault injection's
    // call counts, TIDAL_SIM_CALL_COUNTS) and can be made to fail.
    int range_push(const char *name) const;
    int range_pop() const;
    int kernel_touch(int32_t device, void *ptr, size_t size, int32_t write, void *stream);
    int kernel_pattern_fill(int32_t device, void *ptr, size_t size, uint64_t seed, void *stream);
    int kernel_pattern_check(int32_t device, const void *ptr, size_t size, uint64_t seed,
                             uint64_t *mismatches, void *stream);
    int kernel_copy(int32_t device, void *dst, const void *src, size_t size, void *stream);
    int kernel_triad(int32_t device, double *a, const double *b, const double *c, double scalar,
                     size_t size, void *stream);
    // Compute of known length: `ns` of simulated time on the stream, no memory traffic.
    int kernel_spin(int32_t device, uint64_t ns, void *stream);
    int kernel_atomic_add(int32_t device, uint64_t *counters, size_t count, uint32_t iterations,
                          void *stream);
    // The atomic set on the CPU (atomic operations, so host threads may share the words), as
    // the profile's device would see it: an MI200-class profile (AMD gfx90a) drops float adds
    // on fine-grained memory, as its hardware float atomics do.
    int kernel_atomic_set(int32_t device, void *words, uint32_t ops, uint32_t rounds, void *stream);
    // Reads the table from (simulated) device memory; each item's ranges follow the XNACK
    // rules of any kernel access. Cost: one launch plus the table and every item's traffic.
    int kernel_batch_copy(int32_t device, const tidal_rt_copy_item *items, uint32_t count,
                          uint64_t max_size, void *stream);
    // The virtual-memory group (sim_vmm.cpp). A mapped range with access set is device memory
    // to kernels, copies and pointer_kind; any other part of a reservation is an illegal
    // address to them (hipErrorIllegalAddress), and to the CPU (it is PROT_NONE).
    int vmm_granularity(int32_t device, uint64_t *bytes) const;
    int vmm_reserve(int32_t device, size_t size, void **ptr);
    int vmm_release(void *ptr, size_t size);
    int vmm_create(int32_t device, size_t size, void **chunk);
    int vmm_destroy(void *chunk);
    int vmm_map(void *ptr, size_t size, void *chunk);
    int vmm_set_access(int32_t device, void *ptr, size_t size);
    int vmm_unmap(void *ptr, size_t size);
    // Peer access (sim_transfers.cpp), from the profile's [topology] links: a listed pair with
    // peer = true can be enabled; copies between two devices run over the link once either
    // direction is enabled, and through host memory (d2h then h2d, pinned rates) before.
    int peer_info(int32_t device, int32_t peer, tidal_rt_peer_info *info) const;
    int peer_enable(int32_t device, int32_t peer);
    int memcpy_peer(void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size,
                    void *stream);

    // ---- Introspection for tests and telemetry: consistent snapshots, thread-safe.
    // Members taking a device throw std::out_of_range for an index outside [0, devices()).
    double clock_seconds() const;                 // SimClock::now()
    SimCounters counters(int32_t device) const;   // device in [0, devices())
    SimCounters host_counters() const;            // host kinds; migration fields stay 0
    uint64_t resident_bytes(int32_t device) const; // what counts against the capacity
    // Residency of every page of the managed allocation containing `ptr` (interior pointers
    // too); empty when `ptr` is not in a managed allocation.
    std::vector<PageMask> page_residency(const void *ptr) const;
    // Residency of the one page containing `ptr`; nullopt when not managed.
    std::optional<PageMask> page_at(const void *ptr) const;
    std::vector<FaultRecord> fault_log() const;
    uint64_t fault_log_dropped() const;
    uint64_t calls(Operation op) const { return faults_.calls(op); }
    bool serialized() const noexcept { return serialize_; }

    int32_t devices() const noexcept { return devices_; }
    uint64_t capacity() const noexcept { return capacity_; }
    uint64_t page_size() const noexcept { return page_size_; }
    uint64_t vmm_granularity() const noexcept { return vmm_granularity_; }
    bool xnack() const noexcept { return xnack_; }
    bool amd() const noexcept { return amd_; }
    const SimProfile &profile() const noexcept { return profile_; }
    FaultInjector &fault_injector() noexcept { return faults_; }
    // "simulated: profile h200, 1 device(s), 16 GiB, xnack on"
    std::string describe() const;

private:
    // One range a kernel touches, and how much link traffic each of its bytes causes (a
    // touch kernel reads one word per 4 KiB; an atomic loop hits each counter many times).
    struct Access {
        const void *ptr;
        uint64_t size;
        bool write;
        double traffic_per_byte;
    };
    enum class Reach { own_device, peer_device, managed, link, illegal };
    struct Target {
        Reach reach = Reach::illegal;
        SimAllocation *allocation = nullptr;
    };
    struct CopyEnd {
        Endpoint endpoint = Endpoint::pageable;
        int32_t device = -1;
    };

    // Everything below expects mutex_ held.
    SimAllocation *find(const void *ptr) const;
    // AMD's fine-grained memory (pinned and pageable host, fine-grained device, managed
    // without coarse-grain advice), where MI200's hardware float atomics do not work.
    bool fine_grained(const Target &target) const;
    SimAllocation *find_range(const void *ptr, uint64_t size) const;
    bool registered(const void *ptr, uint64_t size) const;
    SimReservation *find_reservation(const void *ptr) const;
    SimReservation *vmm_range(const void *ptr, uint64_t size) const;
    // [ptr, ptr + size) lies in one reservation, mapped and accessible from `device` (-1: from
    // the device whose chunk it is); *owner is then that device.
    bool vmm_resident(const void *ptr, uint64_t size, int32_t device, int32_t *owner) const;
    int lookup_stream(void *handle, SimStream **out) const;
    int lookup_event(void *handle, SimEvent **out) const;
    bool valid_location(int32_t location) const;
    // Counts one call of `op` (every call counts, even one with bad arguments) and returns the
    // native code it must fail with, or 0. Const: queries count and fail as well.
    int injected(Operation op) const;
    void log_fault(FaultRecord record) const;

    void set_page(SimAllocation &a, std::size_t page, PageMask mask);
    bool fits(int32_t device, uint64_t bytes) const;
    PageMask collapse(PageMask mask, int32_t keep) const;

    Target classify_access(int32_t device, const Access &access) const;
    double apply_access(int32_t device, const Access &access, const Target &target);
    double apply_managed_access(int32_t device, SimAllocation &a, const Access &access);
    int kernel_prologue(int32_t device, void *stream, bool arguments_ok, SimStream **out);
    template <typename Work>
    int run_kernel(int32_t device, SimStream *stream, std::span<const Access> accesses,
                   bool synchronous, Work &&work);
    template <typename Work>
    int run_kernel(int32_t device, SimStream *stream, std::initializer_list<Access> accesses,
                   bool synchronous, Work &&work)
    {
        return run_kernel(device, stream, std::span<const Access>(accesses.begin(), accesses.size()),
                          synchronous, std::forward<Work>(work));
    }

    int classify_copy_end(const void *ptr, uint64_t size, CopyEnd *out) const;
    void count_copy(const CopyEnd &src, const CopyEnd &dst, uint64_t bytes);
    int copy_failed(int error, Operation op, const void *ptr);
    // The copy itself, for memcpy and memcpy_peer (expects the lock held and `s` looked up).
    int copy_between(void *dst, const void *src, size_t size, SimStream *s, Operation op);
    bool peer_enabled(int32_t a, int32_t b) const;

    SimProfile profile_;
    int32_t devices_;
    uint64_t capacity_;
    uint64_t page_size_;
    bool xnack_;
    bool amd_;
    uint64_t vmm_granularity_;
    CostModel cost_;
    mutable FaultInjector faults_; // const entry points count their calls too
    bool serialize_ = true;
    std::string call_counts_path_;

    // Holds the bookkeeping lock (everything, in the serialised mode) for its scope.
    class Lock {
    public:
        explicit Lock(const SimRuntime &rt) : rt_(rt) { rt_.lock_books(); }
        ~Lock() { rt_.unlock_books(); }
        Lock(const Lock &) = delete;
        Lock &operator=(const Lock &) = delete;

    private:
        const SimRuntime &rt_;
    };
    void lock_books() const;
    void unlock_books() const;
    void tsan_after_books(const void *address) const;
    // Runs a call's real work. Expects the bookkeeping lock held; in the unserialised mode it
    // is released around `work`, which then holds `stream`'s order instead (nullptr: the
    // default stream's).
    template <typename Work> void do_work(SimStream *stream, Work &&work);
    void write_call_counts() const noexcept;

    mutable std::mutex mutex_;
    mutable std::mutex null_stream_order_; // the default stream's work order (unserialised mode)
    char all_work_ = 0; // unserialised mode: every piece of work happens before a device sync
    SimClock clock_;
    std::map<uintptr_t, std::unique_ptr<SimAllocation>> allocations_; // by base address
    std::map<uintptr_t, uint64_t> registered_;                         // base -> size
    std::map<uintptr_t, std::unique_ptr<SimReservation>> reservations_; // by base address
    std::unordered_map<const void *, std::unique_ptr<SimChunk>> chunks_; // by handle
    std::unordered_set<SimStream *> streams_;
    std::unordered_set<SimEvent *> events_;
    std::vector<uint64_t> resident_; // per device
    std::vector<SimCounters> counters_;
    // When each device's host links (host->device, device->host) are next free.
    std::vector<double> link_h2d_, link_d2h_;
    std::vector<uint8_t> peer_enabled_; // [device * devices_ + peer]: device may reach peer
    SimCounters host_counters_;
    mutable std::vector<FaultRecord> fault_log_;
    mutable uint64_t fault_log_dropped_ = 0;
};

template <typename Work> void SimRuntime::do_work(SimStream *stream, Work &&work)
{
    if (serialize_) {
        work();
        return;
    }
    unlock_books();
    {
        std::lock_guard order(stream != nullptr ? stream->order : null_stream_order_);
        work();
        tsan_happens_before(&all_work_);
    }
    lock_books();
}

} // namespace tidal::sim
