#include "runtime/runtime.h"

#include <iterator>

#include <fmt/format.h>

#include "log/logger.h"
#include "runtime/error_table.h"
#include "runtime/numa_binder.h"
#include "runtime/topology.h"
#include "status/error.h"

namespace tidal {
namespace {

// What each optional operation is called in messages: "the {runtime} runtime does not support
// {operation}" when it is missing, "{operation} failed on the {runtime} runtime" when a call
// without a description of its own fails. Indexed by RuntimeOp.
struct OpInfo {
    const char *operation;
    const char *hint; // for a missing operation; may be empty
};
constexpr const char *kKernelHint = "build tidal with the validation kernels (features hip_kernels / nvcc_kernels)";
constexpr OpInfo kOps[] = {
    {"registering host memory", ""},
    {"unregistering host memory", ""},
    {"asking what a pointer is", ""},
    {"prefetching managed memory", ""},
    {"memory advice", ""},
    {"querying range attributes", ""},
    {"copying memory", ""},
    {"creating a stream", ""},
    {"destroying a stream", ""},
    {"synchronising a stream", ""},
    {"creating an event", ""},
    {"destroying an event", ""},
    {"recording an event", ""},
    {"making a stream wait for an event", ""},
    {"waiting for an event", ""},
    {"timing events", ""},
    {"synchronising a device", ""},
    {"the touch kernel", kKernelHint},
    {"the pattern-fill kernel", kKernelHint},
    {"the pattern-check kernel", kKernelHint},
    {"the copy kernel", kKernelHint},
    {"the triad kernel", kKernelHint},
    {"the atomics kernel", kKernelHint},
    {"polling an event", ""},
    {"the spin kernel", kKernelHint},
    {"reading its own clock", ""},
    {"a stream-ordered pool (cudaMallocAsync / hipMallocAsync)", ""},
    {"the batch-copy kernel", kKernelHint},
    {"trimming its stream-ordered pool", ""},
    {"virtual-memory mapping, so elastic memory is not available", "use device or managed memory on this runtime"},
    {"accounting host copies", ""},
    {"peer access between devices", "copies between devices stage through pinned host memory"},
    {"the atomic-set kernel", kKernelHint},
    {"profiler ranges", "leave [telemetry] ranges off on this runtime"},
    {"counting page faults", "only the simulated device counts them"},
};
static_assert(std::size(kOps) == static_cast<size_t>(RuntimeOp::count_), "one entry per RuntimeOp");

const OpInfo &info(RuntimeOp op) noexcept { return kOps[static_cast<size_t>(op)]; }

bool present(const tidal_rt_ops &o, RuntimeOp op) noexcept
{
    switch (op) {
    case RuntimeOp::host_register: return o.host_register;
    case RuntimeOp::host_unregister: return o.host_unregister;
    case RuntimeOp::pointer_kind: return o.pointer_kind;
    case RuntimeOp::prefetch: return o.prefetch;
    case RuntimeOp::advise: return o.advise;
    case RuntimeOp::query_range: return o.query_range;
    case RuntimeOp::memcpy: return o.memcpy;
    case RuntimeOp::stream_create: return o.stream_create;
    case RuntimeOp::stream_destroy: return o.stream_destroy;
    case RuntimeOp::stream_synchronize: return o.stream_synchronize;
    case RuntimeOp::event_create: return o.event_create;
    case RuntimeOp::event_destroy: return o.event_destroy;
    case RuntimeOp::event_record: return o.event_record;
    case RuntimeOp::stream_wait_event: return o.stream_wait_event;
    case RuntimeOp::event_synchronize: return o.event_synchronize;
    case RuntimeOp::event_elapsed_ms: return o.event_elapsed_ms;
    case RuntimeOp::device_synchronize: return o.device_synchronize;
    case RuntimeOp::kernel_touch: return o.kernel_touch;
    case RuntimeOp::kernel_pattern_fill: return o.kernel_pattern_fill;
    case RuntimeOp::kernel_pattern_check: return o.kernel_pattern_check;
    case RuntimeOp::kernel_copy: return o.kernel_copy;
    case RuntimeOp::kernel_triad: return o.kernel_triad;
    case RuntimeOp::kernel_atomic_add: return o.kernel_atomic_add;
    case RuntimeOp::event_query: return o.event_query;
    case RuntimeOp::kernel_spin: return o.kernel_spin;
    case RuntimeOp::clock: return o.clock;
    case RuntimeOp::stream_ordered_pool: return o.alloc_async && o.free_async;
    case RuntimeOp::kernel_batch_copy: return o.kernel_batch_copy;
    case RuntimeOp::pool_trim: return o.alloc_async && o.free_async && o.pool_trim && o.pool_usage;
    case RuntimeOp::vmm:
        return o.vmm_granularity && o.vmm_reserve && o.vmm_release && o.vmm_create && o.vmm_destroy && o.vmm_map &&
               o.vmm_set_access && o.vmm_unmap;
    case RuntimeOp::host_copy: return o.host_copy;
    case RuntimeOp::peer: return o.peer_info && o.peer_enable && o.memcpy_peer;
    case RuntimeOp::kernel_atomic_set: return o.kernel_atomic_set;
    case RuntimeOp::ranges: return o.range_push && o.range_pop;
    case RuntimeOp::paging: return o.paging_stats && o.range_paging;
    case RuntimeOp::count_: break;
    }
    return false;
}

struct AdviceBit {
    uint32_t bit;
    tidal_rt_advice set, unset;
    bool host;
};
constexpr AdviceBit kAdviceBits[] = {
    {TIDAL_ADVICE_READ_MOSTLY, TIDAL_RT_ADVISE_SET_READ_MOSTLY, TIDAL_RT_ADVISE_UNSET_READ_MOSTLY, false},
    {TIDAL_ADVICE_PREFERRED_DEVICE, TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION, TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION, false},
    {TIDAL_ADVICE_PREFERRED_HOST, TIDAL_RT_ADVISE_SET_PREFERRED_LOCATION, TIDAL_RT_ADVISE_UNSET_PREFERRED_LOCATION, true},
    {TIDAL_ADVICE_ACCESSED_BY_DEVICE, TIDAL_RT_ADVISE_SET_ACCESSED_BY, TIDAL_RT_ADVISE_UNSET_ACCESSED_BY, false},
    {TIDAL_ADVICE_COARSE_GRAIN, TIDAL_RT_ADVISE_SET_COARSE_GRAIN, TIDAL_RT_ADVISE_UNSET_COARSE_GRAIN, false},
};

// Calls `call(advice, location)` for each runtime advice `bits` stand for.
template <typename Call> void for_each_advice(uint32_t bits, AdviceAction action, int32_t device, Call &&call)
{
    for (const AdviceBit &b : kAdviceBits) {
        if (!(bits & b.bit))
            continue;
        if (action == AdviceAction::set) {
            call(b.set, b.host ? TIDAL_RT_LOCATION_HOST : device);
            continue;
        }
        // Runtimes ignore the location of an unset preferred location, and one clears either.
        if (b.bit == TIDAL_ADVICE_PREFERRED_HOST && (bits & TIDAL_ADVICE_PREFERRED_DEVICE))
            continue;
        call(b.unset, device);
    }
}

} // namespace


Runtime::Runtime(const tidal_rt_ops *ops, void *instance, std::string detail,
                 std::optional<SharedLibrary> module)
    : ops_(ops), instance_(instance), detail_(std::move(detail)), module_(std::move(module))
{
    for (size_t op = 0; op < static_cast<size_t>(RuntimeOp::count_); ++op)
        if (present(*ops_, static_cast<RuntimeOp>(op)))
            supported_ |= uint64_t{1} << op;
    try {
        int32_t count = 0;
        check(ops_->device_count(instance_, &count), "counting devices");
        props_.resize(static_cast<size_t>(count));
        for (int32_t d = 0; d < count; ++d) {
            tidal_rt_device_props &p = props_[static_cast<size_t>(d)];
            p = {};
            p.struct_size = sizeof(p);
            p.numa_node = -1;
            check(ops_->device_props(instance_, d, &p), [&] { return fmt::format("reading the properties of device {}", d); });
            // A simulated device's bus id names no host device: asking hwloc would scan the
            // host's PCI tree (slow, and libpciaccess leaks under LeakSanitizer) for nothing.
            if (p.numa_node < 0 && p.pci_bus_id[0] != '\0' && !p.simulated)
                p.numa_node = Topology::numa_node_of_pci(p.pci_bus_id);
        }
    } catch (...) {
        // The instance is ours from the first line, and a constructor that throws runs no
        // destructor: it would leak (found by the fault sweep under LeakSanitizer). The
        // module, a member, is unloaded after this.
        ops_->destroy(instance_);
        instance_ = nullptr;
        throw;
    }
}

Runtime::~Runtime()
{
    if (instance_)
        ops_->destroy(instance_);
}

void Runtime::unsupported(RuntimeOp op) const
{
    const OpInfo &i = info(op);
    throw Error(TIDAL_ERROR_NOT_SUPPORTED, fmt::format("the {} runtime does not support {}", ops_->name, i.operation),
                i.hint);
}

void Runtime::require_device(int32_t device) const
{
    if (device < 0 || device >= device_count())
        throw Error(TIDAL_ERROR_NOT_FOUND,
                    fmt::format("device {} does not exist; the {} runtime has {} device(s)", device, name(), device_count()),
                    "`tidal probe` lists the devices");
}

void Runtime::fail(int native, const std::string &what) const
{
    throw ErrorTable::translate(ops_->family, native, ops_->error_name(native),
                                fmt::format("{} failed on the {} runtime", what, ops_->name));
}

void Runtime::fail(RuntimeOp op, int native, const CallDescription &what) const
{
    fail(native, what.text(info(op).operation));
}

std::string Runtime::native_name(int native) const { return ops_->error_name(native); }

void Runtime::mem_info(int32_t device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    check(ops_->mem_info(instance_, device, free_bytes, total_bytes),
          [&] { return fmt::format("reading the memory of device {}", device); });
}

// Memory.

int Runtime::numa_node_for(tidal_kind kind, int32_t device) const noexcept
{
    if (!numa_bind_ || !TIDAL_KIND_IS_HOST(kind) || device < 0 || device >= device_count())
        return -1;
    const tidal_rt_device_props &p = props_[static_cast<size_t>(device)];
    if (p.numa_node >= 0)
        return p.numa_node;
    if (!numa_unknown_logged_.exchange(true))
        log_info(fmt::format("[topology] numa_bind: the NUMA node of device {} is unknown ({}), so host memory and "
                             "staging threads are not bound",
                             device,
                             p.pci_bus_id[0] == '\0' ? "the runtime reports no PCI bus id"
                             : p.simulated           ? "a simulated device sits on no PCI bus"
                                                     : fmt::format("hwloc finds no node for PCI device {}", p.pci_bus_id)));
    return -1;
}

void *Runtime::alloc(tidal_kind kind, int32_t device, size_t size)
{
    void *out = nullptr;
    const int node = numa_node_for(kind, device);
    std::optional<NumaBinder::MemoryScope> scope;
    if (node >= 0)
        scope.emplace(node); // what the runtime pins while allocating comes from the node
    check(ops_->alloc(instance_, kind, device, size, &out), [&] {
        return fmt::format("allocating {} bytes of {} memory on device {}", size, tidal_kind_name(kind), device);
    });
    if (node >= 0) {
        std::string failed = scope->failed();
        if (failed.empty() && kind == TIDAL_KIND_PAGEABLE) // first touched later, by any thread
            failed = NumaBinder::bind_area(out, size, node);
        if (!failed.empty())
            note_numa_failure(kind, device, node, failed);
    }
    return out;
}

void Runtime::note_numa_failure(tidal_kind kind, int32_t device, int node, const std::string &why) const noexcept
{
    if (!numa_failure_logged_.exchange(true))
        log_warn(fmt::format("[topology] numa_bind: could not place {} memory for device {} on NUMA node {}: {}; "
                             "it stays where the system put it (logged once)",
                             tidal_kind_name(kind), device, node, why));
}

int Runtime::free(tidal_kind kind, int32_t device, void *ptr, size_t size) noexcept
{
    return ops_->free(instance_, kind, device, ptr, size);
}

void Runtime::host_register(void *ptr, size_t size, CallDescription what)
{
    require(RuntimeOp::host_register);
    check(RuntimeOp::host_register, ops_->host_register(instance_, ptr, size), what);
}

void Runtime::host_unregister(void *ptr, CallDescription what)
{
    require(RuntimeOp::host_unregister);
    check(RuntimeOp::host_unregister, ops_->host_unregister(instance_, ptr), what);
}

int Runtime::host_unregister_noexcept(void *ptr) noexcept
{
    return supports(RuntimeOp::host_unregister) ? ops_->host_unregister(instance_, ptr) : kNativeNotSupported;
}

void *Runtime::alloc_async(int32_t device, size_t size, void *stream)
{
    require(RuntimeOp::stream_ordered_pool);
    void *out = nullptr;
    check(ops_->alloc_async(instance_, device, size, stream, &out), [&] {
        return fmt::format("allocating {} bytes from the stream-ordered pool of device {}", size, device);
    });
    return out;
}

int Runtime::free_async(int32_t device, void *ptr, void *stream) noexcept
{
    return supports(RuntimeOp::stream_ordered_pool) ? ops_->free_async(instance_, device, ptr, stream)
                                                    : kNativeNotSupported;
}

void Runtime::pool_trim(int32_t device, uint64_t keep)
{
    require(RuntimeOp::pool_trim);
    check(ops_->pool_trim(instance_, device, keep),
          [&] { return fmt::format("trimming the stream-ordered pool of device {} to {} spare bytes", device, keep); });
}

int Runtime::pool_usage(int32_t device, uint64_t *reserved, uint64_t *used) const noexcept
{
    if (!supports(RuntimeOp::pool_trim))
        return kNativeNotSupported;
    uint64_t r = 0, u = 0;
    const int rc = ops_->pool_usage(instance_, device, &r, &u);
    if (rc == 0) {
        *reserved = r;
        *used = u;
    }
    return rc;
}

// Migration and advice.

void Runtime::prefetch(const void *ptr, size_t size, int32_t location, void *stream, CallDescription what)
{
    require(RuntimeOp::prefetch);
    check(RuntimeOp::prefetch, ops_->prefetch(instance_, ptr, size, location, stream), what);
}

void Runtime::advise(const void *ptr, size_t size, tidal_rt_advice advice, int32_t location, CallDescription what)
{
    require(RuntimeOp::advise);
    check(ops_->advise(instance_, ptr, size, advice, location), what, [&] {
        return fmt::format("memory advice {} on {} bytes at {}", static_cast<int>(advice), size, ptr);
    });
}

void Runtime::advise_bits(const void *ptr, size_t size, uint32_t bits, AdviceAction action, int32_t device)
{
    for_each_advice(bits, action, device,
                    [&](tidal_rt_advice advice, int32_t location) { advise(ptr, size, advice, location); });
}

int Runtime::advise_bits_noexcept(const void *ptr, size_t size, uint32_t bits, AdviceAction action,
                                  int32_t device) noexcept
{
    if (!supports(RuntimeOp::advise))
        return 0;
    int first = 0;
    for_each_advice(bits, action, device, [&](tidal_rt_advice advice, int32_t location) {
        const int rc = ops_->advise(instance_, ptr, size, advice, location);
        if (first == 0)
            first = rc;
    });
    return first;
}

std::optional<int32_t> Runtime::query_range(const void *ptr, size_t size, tidal_rt_range_attr attr,
                                            CallDescription what)
{
    require(RuntimeOp::query_range);
    int32_t value = 0;
    const int rc = ops_->query_range(instance_, ptr, size, attr, &value);
    if (rc != 0 && ErrorTable::status_of(ops_->family, rc) == TIDAL_ERROR_NOT_SUPPORTED)
        return std::nullopt;
    check(rc, what, [&] {
        return fmt::format("reading range attribute {} of {} bytes at {}", static_cast<int>(attr), size, ptr);
    });
    return value;
}

// Streams and events.

void *Runtime::stream_create(int32_t device, CallDescription what)
{
    require(RuntimeOp::stream_create);
    void *stream = nullptr;
    check(RuntimeOp::stream_create, ops_->stream_create(instance_, device, &stream), what);
    return stream;
}

void Runtime::stream_destroy(void *stream, CallDescription what)
{
    require(RuntimeOp::stream_destroy);
    check(RuntimeOp::stream_destroy, ops_->stream_destroy(instance_, stream), what);
}

int Runtime::stream_destroy_noexcept(void *stream) noexcept
{
    return supports(RuntimeOp::stream_destroy) ? ops_->stream_destroy(instance_, stream) : kNativeNotSupported;
}

void Runtime::stream_synchronize(void *stream, CallDescription what)
{
    require(RuntimeOp::stream_synchronize);
    check(RuntimeOp::stream_synchronize, ops_->stream_synchronize(instance_, stream), what);
}

int Runtime::stream_synchronize_noexcept(void *stream) noexcept
{
    return supports(RuntimeOp::stream_synchronize) ? ops_->stream_synchronize(instance_, stream) : kNativeNotSupported;
}

void Runtime::device_synchronize(int32_t device, CallDescription what)
{
    require(RuntimeOp::device_synchronize);
    check(RuntimeOp::device_synchronize, ops_->device_synchronize(instance_, device), what);
}

int Runtime::device_synchronize_noexcept(int32_t device) noexcept
{
    return supports(RuntimeOp::device_synchronize) ? ops_->device_synchronize(instance_, device) : kNativeNotSupported;
}

void *Runtime::event_create(int32_t device, CallDescription what)
{
    require(RuntimeOp::event_create);
    void *event = nullptr;
    check(RuntimeOp::event_create, ops_->event_create(instance_, device, &event), what);
    return event;
}

int Runtime::event_destroy(void *event) noexcept
{
    return supports(RuntimeOp::event_destroy) ? ops_->event_destroy(instance_, event) : kNativeNotSupported;
}

void Runtime::event_record(void *event, void *stream, CallDescription what)
{
    require(RuntimeOp::event_record);
    check(RuntimeOp::event_record, ops_->event_record(instance_, event, stream), what);
}

void Runtime::stream_wait_event(void *stream, void *event, CallDescription what)
{
    require(RuntimeOp::stream_wait_event);
    check(RuntimeOp::stream_wait_event, ops_->stream_wait_event(instance_, stream, event), what);
}

void Runtime::event_synchronize(void *event, CallDescription what)
{
    require(RuntimeOp::event_synchronize);
    check(RuntimeOp::event_synchronize, ops_->event_synchronize(instance_, event), what);
}

int Runtime::event_synchronize_noexcept(void *event) noexcept
{
    return supports(RuntimeOp::event_synchronize) ? ops_->event_synchronize(instance_, event) : kNativeNotSupported;
}

float Runtime::event_elapsed_ms(void *start, void *end, CallDescription what)
{
    require(RuntimeOp::event_elapsed_ms);
    float ms = 0.0f;
    check(RuntimeOp::event_elapsed_ms, ops_->event_elapsed_ms(instance_, start, end, &ms), what);
    return ms;
}

int Runtime::event_query(void *event, int32_t *complete) const noexcept
{
    return supports(RuntimeOp::event_query) ? ops_->event_query(instance_, event, complete) : kNativeNotSupported;
}

double Runtime::clock(CallDescription what) const
{
    require(RuntimeOp::clock);
    double seconds = 0;
    check(RuntimeOp::clock, ops_->clock(instance_, &seconds), what);
    return seconds;
}

void Runtime::host_copy(size_t size, unsigned threads, CallDescription what)
{
    if (supports(RuntimeOp::host_copy))
        check(RuntimeOp::host_copy, ops_->host_copy(instance_, size, threads), what);
}

// Kernels.

void Runtime::kernel_touch(int32_t device, void *ptr, size_t size, bool write, void *stream, CallDescription what)
{
    require(RuntimeOp::kernel_touch);
    check(RuntimeOp::kernel_touch, ops_->kernel_touch(instance_, device, ptr, size, write ? 1 : 0, stream), what);
}

void Runtime::kernel_pattern_fill(int32_t device, void *ptr, size_t size, uint64_t seed, void *stream,
                                  CallDescription what)
{
    require(RuntimeOp::kernel_pattern_fill);
    check(RuntimeOp::kernel_pattern_fill, ops_->kernel_pattern_fill(instance_, device, ptr, size, seed, stream), what);
}

void Runtime::kernel_pattern_check(int32_t device, const void *ptr, size_t size, uint64_t seed,
                                   uint64_t *mismatches, void *stream, CallDescription what)
{
    require(RuntimeOp::kernel_pattern_check);
    check(RuntimeOp::kernel_pattern_check,
          ops_->kernel_pattern_check(instance_, device, ptr, size, seed, mismatches, stream), what);
}

void Runtime::kernel_copy(int32_t device, void *dst, const void *src, size_t size, void *stream,
                          CallDescription what)
{
    require(RuntimeOp::kernel_copy);
    check(RuntimeOp::kernel_copy, ops_->kernel_copy(instance_, device, dst, src, size, stream), what);
}

void Runtime::kernel_triad(int32_t device, double *a, const double *b, const double *c, double scalar, size_t size,
                           void *stream, CallDescription what)
{
    require(RuntimeOp::kernel_triad);
    check(RuntimeOp::kernel_triad, ops_->kernel_triad(instance_, device, a, b, c, scalar, size, stream), what);
}

void Runtime::kernel_atomic_add(int32_t device, uint64_t *counters, size_t count, uint32_t iterations, void *stream,
                                CallDescription what)
{
    require(RuntimeOp::kernel_atomic_add);
    check(RuntimeOp::kernel_atomic_add, ops_->kernel_atomic_add(instance_, device, counters, count, iterations, stream),
          what);
}

void Runtime::kernel_atomic_set(int32_t device, void *words, uint32_t ops, uint32_t rounds, void *stream,
                                CallDescription what)
{
    require(RuntimeOp::kernel_atomic_set);
    check(RuntimeOp::kernel_atomic_set, ops_->kernel_atomic_set(instance_, device, words, ops, rounds, stream), what);
}

void Runtime::kernel_spin(int32_t device, uint64_t ns, void *stream, CallDescription what)
{
    require(RuntimeOp::kernel_spin);
    check(RuntimeOp::kernel_spin, ops_->kernel_spin(instance_, device, ns, stream), what);
}

void Runtime::kernel_batch_copy(int32_t device, const tidal_rt_copy_item *items, uint32_t count, uint64_t max_size,
                                void *stream, CallDescription what)
{
    require(RuntimeOp::kernel_batch_copy);
    check(RuntimeOp::kernel_batch_copy, ops_->kernel_batch_copy(instance_, device, items, count, max_size, stream),
          what);
}

// The virtual-memory group.

uint64_t Runtime::vmm_granularity(int32_t device, CallDescription what)
{
    require(RuntimeOp::vmm);
    uint64_t bytes = 0;
    const int rc = ops_->vmm_granularity(instance_, device, &bytes);
    // A module with the whole group can still find no virtual-memory API beneath it (a CUDA
    // driver without cuMem*, a HIP runtime answering hipErrorNotSupported). The granularity is
    // the first call elastic memory makes, so the core says why here, in the error itself,
    // rather than have the module leave a reason for a later error name to pick up.
    if (rc != 0 && ErrorTable::status_of(ops_->family, rc) == TIDAL_ERROR_NOT_SUPPORTED)
        throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                    fmt::format("the {} runtime has no virtual-memory API on device {} ({}), so elastic memory is "
                                "not available",
                                ops_->name, device, ops_->error_name(rc)),
                    "use device or managed memory here, or a driver with the virtual-memory API (CUDA 10.2 or "
                    "later, ROCm 5 or later)");
    check(rc, what, [&] { return fmt::format("reading the virtual-memory granularity of device {}", device); });
    return bytes;
}

void *Runtime::vmm_reserve(int32_t device, size_t size, CallDescription what)
{
    require(RuntimeOp::vmm);
    void *out = nullptr;
    check(ops_->vmm_reserve(instance_, device, size, &out), what, [&] { return fmt::format("reserving {} bytes of address space on device {}", size, device); });
    return out;
}

void Runtime::vmm_map(void *ptr, size_t size, void *chunk, CallDescription what)
{
    require(RuntimeOp::vmm);
    check(ops_->vmm_map(instance_, ptr, size, chunk), what, [&] { return fmt::format("mapping {} bytes of physical memory at {}", size, ptr); });
}

void Runtime::vmm_set_access(int32_t device, void *ptr, size_t size, CallDescription what)
{
    require(RuntimeOp::vmm);
    check(ops_->vmm_set_access(instance_, device, ptr, size), what, [&] { return fmt::format("granting device {} access to {} bytes at {}", device, size, ptr); });
}

void *Runtime::vmm_create(int32_t device, size_t size, CallDescription what)
{
    require(RuntimeOp::vmm);
    void *out = nullptr;
    check(ops_->vmm_create(instance_, device, size, &out), what, [&] { return fmt::format("creating {} bytes of physical memory on device {}", size, device); });
    return out;
}

void Runtime::vmm_unmap(void *ptr, size_t size, CallDescription what)
{
    require(RuntimeOp::vmm);
    check(ops_->vmm_unmap(instance_, ptr, size), what, [&] { return fmt::format("unmapping {} bytes at {}", size, ptr); });
}

int Runtime::vmm_destroy(void *chunk) noexcept
{
    return supports(RuntimeOp::vmm) ? ops_->vmm_destroy(instance_, chunk) : kNativeNotSupported;
}

int Runtime::vmm_release(void *ptr, size_t size) noexcept
{
    return supports(RuntimeOp::vmm) ? ops_->vmm_release(instance_, ptr, size) : kNativeNotSupported;
}

tidal_rt_peer_info Runtime::peer_info(int32_t device, int32_t peer, CallDescription what)
{
    require(RuntimeOp::peer);
    tidal_rt_peer_info info{};
    info.struct_size = sizeof info;
    info.hops = -1;
    info.performance_rank = -1;
    check(ops_->peer_info(instance_, device, peer, &info), what,
          [&] { return fmt::format("asking how device {} reaches device {}", device, peer); });
    return info;
}

void Runtime::peer_enable(int32_t device, int32_t peer, CallDescription what)
{
    require(RuntimeOp::peer);
    check(ops_->peer_enable(instance_, device, peer), what,
          [&] { return fmt::format("enabling peer access from device {} to device {}", device, peer); });
}

void Runtime::memcpy_peer(void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size,
                          void *stream, CallDescription what)
{
    require(RuntimeOp::peer);
    check(ops_->memcpy_peer(instance_, dst, dst_device, src, src_device, size, stream), what, [&] {
        return fmt::format("copying {} bytes from device {} ({}) to device {} ({})", size, src_device, src,
                           dst_device, dst);
    });
}

tidal_rt_paging_stats Runtime::paging_stats(int32_t device, CallDescription what)
{
    require(RuntimeOp::paging);
    tidal_rt_paging_stats stats{};
    stats.struct_size = sizeof stats;
    check(ops_->paging_stats(instance_, device, &stats), what,
          [&] { return fmt::format("reading device {}'s page-fault counts", device); });
    return stats;
}

int Runtime::range_paging(const void *ptr, size_t size, bool reset, tidal_rt_paging_stats *out) const noexcept
{
    if (!supports(RuntimeOp::paging))
        return kNativeNotSupported;
    *out = {};
    out->struct_size = sizeof *out;
    return ops_->range_paging(instance_, ptr, size, reset ? 1 : 0, out);
}

} // namespace tidal
