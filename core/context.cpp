#include "context.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <optional>

#include "abi/growable_struct.h"
#include "config/settings_describer.h"
#include "policy/decision_cache.h"
#include "log/logger.h"
#include "runtime/runtime_loader.h"
#include "status/error.h"

namespace tidal {
namespace {

constexpr size_t kMaxAlignment = size_t{1} << 30;
// Pooled managed blocks start and end on 64 KiB (NVIDIA's large-page) boundaries, so the
// advice given to one block never lands on pages another block shares.
constexpr size_t kManagedPoolGranule = size_t{64} << 10;
constexpr int kMaxRecoveryAttempts = 4;

// The advice tidal gives the runtime for a record. MANAGED_COARSE memory gets its coarse grain
// from the runtime at allocation.
uint32_t runtime_advice(const AllocationRecord &r)
{
    return r.kind == TIDAL_KIND_MANAGED ? r.advice : r.advice & ~TIDAL_ADVICE_COARSE_GRAIN;
}

uint32_t device_flags(const tidal_rt_device_props &p)
{
    uint32_t f = 0;
    if (p.simulated) f |= TIDAL_DEVICE_FLAG_SIMULATED;
    if (p.managed) f |= TIDAL_DEVICE_FLAG_MANAGED;
    if (p.concurrent_managed) f |= TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED;
    if (p.pageable_access) f |= TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS;
    if (p.migrates_on_fault) f |= TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT;
    if (p.host_native_atomics) f |= TIDAL_DEVICE_FLAG_HOST_NATIVE_ATOMICS;
    if (p.fine_grained) f |= TIDAL_DEVICE_FLAG_FINE_GRAINED;
    return f;
}

void copy_name(char *dst, size_t capacity, std::string_view src)
{
    const size_t n = std::min(capacity - 1, src.size());
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

// The fields every record takes from its request and decision. A routed repeat copies the
// record of the decision's first allocation (DecisionCache::Route), so the two cannot differ.
AllocationRecord record_of(const Decision &decision, size_t size, uint32_t hints, const char *tag)
{
    AllocationRecord r;
    r.kind = decision.placement.kind;
    r.device = decision.placement.device;
    r.runtime_device = r.device >= 0 ? r.device : 0;
    r.hints = hints;
    r.advice = decision.placement.advice;
    r.size = r.raw_size = size;
    if (tag && tag[0] != '\0') // most allocations have none, and r.tag is all zeros already
        copy_name(r.tag, sizeof r.tag, tag);
    r.placed_by = decision.placed_by;
    return r;
}

// A vector kept per thread from call to call, for what a call builds per entry: a new one every
// call was a heap block (mapped and unmapped again past glibc's mmap threshold) written cold.
// Per thread, as the calls using it take no lock first; moved out while in use, so a call made
// from inside one (a policy hook) builds its own. Past 8 MiB it is let go.
template <typename T> struct KeptBuffer {
    static inline thread_local std::vector<T> kept;
    std::vector<T> *home = &kept; // one lookup of the thread's copy (a call into the loader)
    std::vector<T> items{std::move(*home)};
    KeptBuffer() = default;
    KeptBuffer(const KeptBuffer &) = delete;
    KeptBuffer &operator=(const KeptBuffer &) = delete;
    ~KeptBuffer()
    {
        if (items.capacity() * sizeof(T) <= (size_t{8} << 20))
            *home = std::move(items);
    }
};

} // namespace

Context::Context(Settings settings) : settings_(std::move(settings)), usage_(settings_.telemetry.tag_depth)
{
    // Process-wide: the newest context's level wins (TIDAL_LOG_LEVEL overrides every file).
    Logger::set_level(settings_.log_level);
    runtime_ = RuntimeLoader::load(settings_);
    if (settings_.telemetry.ranges && !runtime_->supports(RuntimeOp::ranges))
        log_warn(fmt::format("telemetry.ranges = true: the {} runtime has no profiler ranges; none are named",
                             runtime_->name()));
    runtime_->enable_ranges(settings_.telemetry.ranges);
    const bool vendor = settings_.pool.enabled && settings_.pool.backend == PoolBackend::vendor;
    if (vendor && !runtime_->supports(RuntimeOp::stream_ordered_pool))
        throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                    fmt::format("{}pool.backend = \"vendor\": the {} runtime has no stream-ordered pool "
                                "(cudaMallocAsync / hipMallocAsync) to serve device memory from",
                                settings_.pool.backend_where, runtime_->name()),
                    "use backend = \"tidal\" (the default), or a GPU runtime (runtime = \"cuda\" or \"hip\")");
    const int32_t count = runtime_->device_count();
    if (settings_.device_selection == DeviceSelection::local_rank) {
        default_device_ = job_.device_for(count);
        if (const auto &local = job_.local_rank())
            log_info(fmt::format("device_selection = \"local-rank\": local rank {} ({}) of {} device(s): device {}",
                                 local->value, local->variable, count, default_device_));
        else
            log_warn(fmt::format("device_selection = \"local-rank\", but none of {} is set: device 0",
                                 JobEnvironment::local_rank_variables()));
    }
    policy_devices_.resize(static_cast<size_t>(count));
    for (int32_t d = 0; d < count; ++d) {
        const tidal_rt_device_props &p = runtime_->props(d);
        tidal_policy_device &pd = policy_devices_[static_cast<size_t>(d)];
        pd.struct_size = sizeof(pd);
        pd.index = d;
        pd.flags = device_flags(p);
        pd.xnack = static_cast<tidal_xnack>(p.xnack);
        pd.total_memory = p.total_memory;
        pd.page_size = p.page_size;
    }
    policy_system_.struct_size = sizeof(tidal_policy_system);
    policy_system_.runtime = runtime_->name();
    policy_system_.device_count = count;
    policy_system_.devices = policy_devices_.data();
    policy_system_.features = runtime_->supports(RuntimeOp::vmm) ? TIDAL_POLICY_SYSTEM_VIRTUAL_MEMORY : 0u;
    policy_system_.device_budget = &Context::policy_device_budget;
    policy_system_.device_free = &Context::policy_device_free;
    policy_system_.device_resident = &Context::policy_device_resident;
    policy_system_.device_runtime = runtime_.get();
    policy_system_.budgets = std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(count));
    runtime_->set_numa_bind(settings_.topology.numa_bind);
    peers_ = std::make_unique<PeerMatrix>(*runtime_);
    for (int32_t d = 0; d < count; ++d) {
        tidal_policy_device_topology t{};
        t.struct_size = sizeof t;
        t.numa_node = runtime_->props(d).numa_node;
        copy_name(t.pci_bus_id, sizeof t.pci_bus_id, runtime_->props(d).pci_bus_id);
        t.peer_mask = peers_->peer_mask(d);
        policy_topology_.push_back(t);
        for (int32_t p = 0; p < count; ++p) {
            const tidal_rt_peer_info &l = peers_->link(d, p);
            policy_peers_.push_back({sizeof(tidal_policy_peer), l.can_access, static_cast<tidal_link_type>(l.link_type),
                                     l.hops, l.performance_rank});
        }
    }
    policy_system_.topology = policy_topology_.data();
    policy_system_.peers = policy_peers_.data();
    for (int32_t d = 0; d < count; ++d)
        policy_system_.budgets[static_cast<size_t>(d)] = settings_.migration.budget;
    chain_ = std::make_unique<PolicyChain>(settings_, &policy_system_);
    generation_ = DecisionCache::next_generation();
    pool::PoolSettings ps;
    ps.enabled = settings_.pool.enabled;
    ps.release_threshold = settings_.pool.release_threshold;
    ps.growth = settings_.pool.growth;
    ps.thread_cache_blocks = settings_.pool.thread_cache_blocks;
    ps.thread_cache_large_bytes = settings_.pool.thread_cache_large;
    ps.small_max = static_cast<size_t>(settings_.pool.small_max);
    events_ = std::make_unique<EventPool>(*runtime_);
    pools_ = std::make_unique<pool::PoolSet>(*runtime_, ps, events_.get(),
                                             vendor ? pool::PoolSet::Backend::vendor : pool::PoolSet::Backend::tidal);
    // GPU runtimes' prefetch calls block their thread for much of a migration: a worker
    // thread issues them. A runtime whose calls complete in order and never block (the
    // simulated device, whose clock must see its calls in program order) gets them in place.
    const bool threaded = !runtime_->has_trait(TIDAL_RT_TRAIT_IN_ORDER);
    scheduler_ = std::make_unique<MigrationScheduler>(*runtime_, *events_, *chain_, &policy_system_, settings_.migration,
                                                      threaded);
    policy_system_.scheduler = scheduler_.get();
    // Read by base, not kept from the declaration: the allocation may be freed (and its record
    // reused) while the declaration is on its way. A record found is copied under the registry's
    // own protocol, so nothing freed is read; the registry takes no lock of the scheduler's.
    scheduler_->set_tag_source([this](const void *base) {
        AllocationRecord r;
        return registry_.find(base, r) && r.base == base ? std::string(r.tag) : std::string();
    });
    splits_ = std::make_unique<SplitPlacements>(*runtime_, *scheduler_);
    checks_ = std::make_unique<CheckRunner>(*runtime_, registry_);
    copies_ = std::make_unique<CopyEngine>(*runtime_, registry_, settings_.copy, *peers_, settings_.topology);
    batches_ = std::make_unique<BatchCopier>(*runtime_, registry_, *copies_, settings_.copy);
    elastic_ = std::make_unique<elastic::ElasticSpace>(*runtime_, settings_.elastic);
    elastic_moves_ = std::make_unique<elastic::ElasticResidency>(*elastic_);
    scheduler_->set_chunk_residency(elastic_moves_.get());
    // %r and %p in the name, so that every rank of a job writes its own file.
    stats_destination_ = settings_.telemetry.stats == "stderr" ? settings_.telemetry.stats
                                                                : job_.expand(settings_.telemetry.stats);
    const std::string &stats = stats_destination_;
    if (!stats.empty() && stats != "stderr" && !std::filesystem::is_directory(std::filesystem::path(stats).parent_path()))
        throw Error(TIDAL_ERROR_CONFIG,
                    fmt::format("telemetry.stats (or TIDAL_STATS) names {}, in a folder that does not exist", stats),
                    "name a file in an existing folder, or \"stderr\"");
    if (settings_.telemetry.leak_backtrace)
        call_sites_ = std::make_unique<telemetry::CallSites>();
}

void Context::report_leaks(const std::vector<AllocationRecord> &leaked) noexcept
{
    const std::string &destination = stats_destination_;
    if (leaked.empty() && destination.empty())
        return;
    try {
        const telemetry::LeakReport report(leaked, call_sites_.get());
        for (const std::string &line : report.text(10))
            log_warn(line);
        if (destination.empty())
            return;
        telemetry::StatsSnapshot snapshot = stats();
        snapshot.leaks = &report;
        const std::string json = snapshot.to_json();
        if (destination == "stderr") {
            std::fputs(json.c_str(), stderr);
            return;
        }
        std::ofstream out(destination, std::ios::trunc);
        out << json;
        out.flush();
        if (!out)
            log_error(fmt::format("writing the statistics to {} failed", destination));
    } catch (const std::exception &e) {
        log_error(fmt::format("reporting the statistics and leaks at destroy failed: {}", e.what()));
    }
}

Context::~Context()
{
    // The snapshot at destroy still sees the leaks as live; they are freed after it.
    auto leaked = live_allocations();
    report_leaks(leaked);
    leaked = registry_.drain();
    if (!leaked.empty()) {
        for (const auto &r : leaked) {
            scheduler_->forget(r);
            release_record(r);
        }
    }
    scheduler_->set_chunk_residency(nullptr); // waits for the moves queued on elastic memory
    elastic_moves_.reset();
    elastic_.reset();   // its chunks, reservations, homes and copy streams belong to the runtime
    batches_.reset();   // its staging slots belong to the runtime; it copies through copies_
    copies_.reset();    // its staging ring, streams and registrations belong to the runtime
    checks_.reset();    // its streams and events belong to the runtime
    scheduler_.reset(); // waits for its migrations; uses the chain and the events
    chain_.reset();     // policies go before the runtime they decided for
    pools_.reset();     // gives every pooled byte back to the runtime
    events_.reset();    // after the pools' oracles handed theirs back
    runtime_.reset();
}

void Context::validate_request(size_t size, const tidal_alloc_desc &desc) const
{
    if (size == 0)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, "size is 0", "ask for at least one byte");
    if (desc.alignment != 0 && (!std::has_single_bit(desc.alignment) || desc.alignment > kMaxAlignment))
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("alignment {} is not a power of two up to 1 GiB", desc.alignment),
                    "use 0 for the kind's natural alignment, or a power of two");
    if (desc.hints & ~TIDAL_HINT_ALL)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("unknown hint bits {:#x}", desc.hints & ~TIDAL_HINT_ALL),
                    "use TIDAL_HINT_* bits");
    if (desc.kind < TIDAL_KIND_AUTO || desc.kind >= TIDAL_KIND_COUNT)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("kind {} is not a tidal_kind", static_cast<int>(desc.kind)),
                    "use TIDAL_KIND_* values");
    if (desc.device < TIDAL_DEVICE_HOST ||
        (desc.device == TIDAL_DEVICE_HOST && desc.kind != TIDAL_KIND_AUTO && !TIDAL_KIND_IS_HOST(desc.kind)))
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("device {} is not an index, TIDAL_DEVICE_DEFAULT or (for host kinds) TIDAL_DEVICE_HOST",
                                desc.device),
                    "use an index from tidal_system_info_get");
    if (desc.device >= 0)
        runtime_->require_device(desc.device);
    if (desc.tag && strnlen(desc.tag, TIDAL_TAG_MAX) >= TIDAL_TAG_MAX)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("tag is longer than {} bytes", TIDAL_TAG_MAX - 1),
                    "use a shorter tag");
}

template <typename OnRouted>
inline void *Context::allocate_with(size_t size, const tidal_alloc_desc &desc, const pool::StreamHandle *stream,
                                    OnRouted &&on_routed)
{
    const DecisionCache::Key key{size, desc.alignment, desc.kind, desc.device, desc.hints, desc.tag ? desc.tag : ""};
    // A hit is this very request (the key is all of it) validated and placed before: no
    // checks again, and once it has a route, straight to its pool.
    DecisionCache::Hit hit = DecisionCache::find(generation_, key);
    if (hit.route && hit.route->target && !stream)
        if (void *p = allocate_routed(*hit.route)) {
            on_routed(*hit.decision);
            return p;
        }
    return allocate_general(key, hit, size, desc, stream);
}

void *Context::allocate(size_t size, const tidal_alloc_desc &desc, const pool::StreamHandle *stream)
{
    return allocate_with(size, desc, stream, [](const Decision &) {});
}

void *Context::allocate_traced(size_t size, const tidal_alloc_desc &desc, const pool::StreamHandle *stream,
                               const Decision *&routed)
{
    routed = nullptr;
    return allocate_with(size, desc, stream, [&](const Decision &d) { routed = &d; });
}

void *Context::allocate_general(const DecisionCache::Key &key, DecisionCache::Hit hit, size_t size,
                                const tidal_alloc_desc &desc, const pool::StreamHandle *stream)
{
    try {
        return allocate_placing(key, hit, size, desc, stream);
    } catch (const Error &e) {
        errors_.count(e.status()); // here, not at the C boundary: no test on the pooled pair
        throw;
    } catch (const std::bad_alloc &) {
        errors_.count(TIDAL_ERROR_OUT_OF_MEMORY);
        throw;
    }
}

void *Context::allocate_placing(const DecisionCache::Key &key, DecisionCache::Hit hit, size_t size,
                                const tidal_alloc_desc &desc, const pool::StreamHandle *stream)
{
    if (!hit.decision)
        validate_request(size, desc);
    tidal_place_request request{};
    request.struct_size = sizeof(request);
    request.size = size;
    request.alignment = desc.alignment;
    request.kind = desc.kind;
    // With device_selection = "local-rank", TIDAL_DEVICE_DEFAULT is this process's device for
    // every kind and every policy: the chain sees the index, as if the caller had named it
    // (default_device_ is TIDAL_DEVICE_DEFAULT otherwise). A cached decision already holds it.
    request.device = desc.device == TIDAL_DEVICE_DEFAULT ? default_device_ : desc.device;
    request.hints = desc.hints;
    request.tag = key.tag;
    request.system = &policy_system_;

    // A cached decision is used in place (a placement is 160 bytes: no copy on the hot path);
    // one from the chain, or a retry, lives in `owned`, made only when needed.
    const Decision *decision = hit.decision;
    DecisionCache::Route *route = hit.route;
    std::optional<Decision> owned;
    std::vector<tidal_policy_part> split; // the chain's split over devices, for its own placement only
    if (!decision) {
        owned.emplace(chain_->place(request, &split));
        if (owned->placement.flags & TIDAL_PLACEMENT_CACHEABLE)
            route = DecisionCache::store(generation_, key, *owned);
        decision = &*owned;
    }
    for (uint32_t attempt = 1;; ++attempt) {
        try {
            AllocationRecord record = allocate_placed(request, *decision, stream);
            if (!split.empty()) {
                try {
                    splits_->add(record, std::move(split));
                } catch (...) {
                    release_record(record);
                    throw;
                }
            }
            registry_.insert(record);
            if (call_sites_) [[unlikely]]
                call_sites_->capture(record.base);
            // A pooled block with nothing to apply (no advice, not over-aligned past what the
            // pool does itself) is all a later hit needs to know. (Not with call stacks to keep:
            // the route skips this path.)
            if (route && !call_sites_ && attempt == 1 && !stream && record.pooled && !TIDAL_KIND_IS_MANAGED(record.kind) &&
                record.raw == record.base && record.raw_size == size) {
                route->target = &pools_->get(record.kind, record.runtime_device);
                route->record = record;
            }
            return record.base;
        } catch (const Error &e) {
            if (attempt >= kMaxRecoveryAttempts || e.status() == TIDAL_ERROR_INTERNAL)
                throw;
            tidal_error_event event{};
            event.struct_size = sizeof(event);
            event.operation = TIDAL_OP_ALLOC;
            event.status = e.status();
            event.native_error = e.native().code;
            event.native_name = e.native().name.c_str();
            event.request = &request;
            event.failed = &decision->placement;
            event.attempt = attempt;
            auto retry = chain_->recover(event);
            if (!retry)
                throw;
            log_info(fmt::format("allocation of {} bytes as {} failed ({}); policy '{}' retries as {} on device {}", size,
                                 tidal_kind_name(decision->placement.kind), tidal_status_name(e.status()),
                                 retry->placed_by, tidal_kind_name(retry->placement.kind), retry->placement.device));
            owned = std::move(*retry);
            decision = &*owned;
            split.clear(); // the split was the failed placement's
        }
    }
}

void *Context::allocate_routed(const DecisionCache::Route &route)
{
    auto &pool = *static_cast<pool::DevicePool *>(route.target);
    const AllocationRecord &first = route.record; // the decision's first allocation: pooled, raw == base
    void *p = nullptr;
    try {
        p = pool.allocate(first.size, first.alignment);
    } catch (const Error &) {
        return nullptr; // the general path tries again, and asks the policies to recover
    }
    try {
        registry_.insert_at(first, p, p);
    } catch (...) {
        pool.deallocate(p, first.size, first.alignment);
        throw;
    }
    return p;
}

AllocationRecord Context::allocate_placed(const tidal_place_request &request, const Decision &decision,
                                          const pool::StreamHandle *stream)
{
    const tidal_placement &p = decision.placement;
    AllocationRecord r = record_of(decision, request.size, request.hints, request.tag);
    if (p.kind == TIDAL_KIND_ELASTIC) {
        r.raw = r.base = elastic_->allocate(request.size, r.runtime_device, request.alignment, request.tag, &r.raw_size,
                                            &r.alignment);
        return r;
    }
    const size_t natural = TIDAL_RT_ALLOC_ALIGNMENT(p.kind);
    r.alignment = std::max(natural, request.alignment);
    if (r.alignment > natural) {
        if (request.size > SIZE_MAX - r.alignment)
            throw Error(TIDAL_ERROR_OUT_OF_MEMORY, fmt::format("{} bytes aligned to {} can never be allocated", request.size, r.alignment),
                        "ask for less memory");
        r.raw_size = request.size + r.alignment;
    }
    r.pooled = pools_->enabled() && pool::PoolSet::poolable(p.kind) && !(p.flags & TIDAL_PLACEMENT_NO_POOL) &&
               r.runtime_device < pool::PoolSet::kMaxDevices;
    if (r.pooled && pools_->vendor_serves(p.kind)) {
        // The vendor's pool is another runtime allocator: over-aligned as the unpooled path
        // is, and ordered on the default stream when the caller named none.
        r.pooled = false;
        r.vendor_pooled = true;
        r.raw = pools_->vendor(r.runtime_device).allocate(r.raw_size, stream ? *stream : pool::StreamHandle{});
        const uintptr_t raw = reinterpret_cast<uintptr_t>(r.raw);
        r.base = reinterpret_cast<void *>((raw + r.alignment - 1) & ~(uintptr_t{r.alignment} - 1));
    } else if (r.pooled) {
        // The pool aligns what it hands out itself: no over-allocation.
        r.raw_size = request.size;
        if (TIDAL_KIND_IS_MANAGED(p.kind)) {
            r.alignment = std::max(r.alignment, kManagedPoolGranule);
            r.raw_size = (request.size + kManagedPoolGranule - 1) & ~(kManagedPoolGranule - 1);
            if (r.raw_size < request.size)
                throw Error(TIDAL_ERROR_OUT_OF_MEMORY, fmt::format("{} bytes can never be allocated", request.size),
                            "ask for less memory");
        }
        pool::DevicePool &pool = pools_->get(p.kind, r.runtime_device);
        r.raw = stream ? pool.allocate(r.raw_size, r.alignment, *stream) : pool.allocate(r.raw_size, r.alignment);
        r.base = r.raw;
    } else {
        r.raw = runtime_->alloc(p.kind, r.runtime_device, r.raw_size);
        const uintptr_t raw = reinterpret_cast<uintptr_t>(r.raw);
        r.base = reinterpret_cast<void *>((raw + r.alignment - 1) & ~(uintptr_t{r.alignment} - 1));
    }
    try {
        apply_advice(r);
    } catch (...) {
        release_record(r);
        throw;
    }
    return r;
}

void Context::apply_advice(const AllocationRecord &r)
{
    if (TIDAL_KIND_IS_MANAGED(r.kind))
        runtime_->advise_bits(r.raw, r.raw_size, runtime_advice(r), AdviceAction::set, r.runtime_device);
}

void Context::unset_advice(const AllocationRecord &r) noexcept
{
    // Advice outlives the owner: coarse grain survives hipFree on AMD (Kokkos unsets it first),
    // and a pooled block's next owner must not inherit this one's advice.
    if (!TIDAL_KIND_IS_MANAGED(r.kind))
        return;
    const uint32_t bits = runtime_advice(r);
    runtime_->advise_bits_noexcept(r.raw, r.raw_size, bits & TIDAL_ADVICE_COARSE_GRAIN, AdviceAction::unset,
                                   r.runtime_device);
    if (!r.pooled)
        return; // the runtime forgets the rest with the memory
    runtime_->advise_bits_noexcept(r.raw, r.raw_size, bits & ~TIDAL_ADVICE_COARSE_GRAIN, AdviceAction::unset,
                                   r.runtime_device);
}

[[gnu::always_inline]] inline void Context::return_to_pool(const AllocationRecord &r, const pool::StreamHandle *stream) noexcept
{
    try {
        pool::DevicePool &pool = pools_->get(r.kind, r.runtime_device);
        if (stream)
            pool.deallocate(r.raw, r.raw_size, r.alignment, *stream);
        else
            pool.deallocate(r.raw, r.raw_size, r.alignment);
    } catch (const std::exception &e) {
        log_error(fmt::format("returning {} bytes at {} to the pool failed: {}", r.size, r.base, e.what()));
    }
}

void Context::retire_paging(const AllocationRecord &r) noexcept
{
    if (!runtime_->supports(RuntimeOp::paging))
        return;
    tidal_rt_paging_stats counts{};
    if (int rc = runtime_->range_paging(r.base, r.size, true, &counts); rc != 0) {
        // Statistics never fail a free: the buffer's counts are lost, and the log says so.
        log_warn(fmt::format("reading the page-fault counts of {} bytes at {} failed: {} ({}); the statistics miss them",
                             r.size, r.base, runtime_->native_name(rc), rc));
        return;
    }
    usage_.retire(r, counts);
}

void Context::release_record(const AllocationRecord &r, const pool::StreamHandle *stream) noexcept
{
    if (r.kind == TIDAL_KIND_ELASTIC) {
        elastic_->release(r.base);
        return;
    }
    unset_advice(r);
    if (r.vendor_pooled) {
        if (int rc = free_vendor_pooled(r, stream); rc != 0)
            log_error(fmt::format("giving {} bytes at {} back to the {} runtime's stream-ordered pool failed: {} ({})", r.size,
                                  r.base, runtime_->name(), runtime_->native_name(rc), rc));
        return;
    }
    if (r.pooled) {
        return_to_pool(r, stream);
        return;
    }
    if (int rc = runtime_->free(r.kind, r.runtime_device, r.raw, r.raw_size); rc != 0)
        log_error(fmt::format("freeing {} bytes of {} memory at {} failed: {} ({})", r.size, tidal_kind_name(r.kind),
                              r.base, runtime_->native_name(rc), rc));
}

void Context::release(void *ptr, const pool::StreamHandle *stream)
{
    const auto [how, r] = registry_.remove(ptr);
    switch (how) {
    case AllocationRegistry::Removal::removed:
        break;
    case AllocationRegistry::Removal::interior:
        errors_.count(TIDAL_ERROR_INVALID_ARGUMENT);
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("{} is an interior pointer, {} bytes into the allocation at {} ({} bytes); nothing was freed",
                                ptr, static_cast<const char *>(ptr) - static_cast<const char *>(r.base), r.base, r.size),
                    "free the pointer tidal_alloc returned");
    case AllocationRegistry::Removal::already_freed:
        errors_.count(TIDAL_ERROR_UNKNOWN_POINTER);
        throw Error(TIDAL_ERROR_UNKNOWN_POINTER, fmt::format("{} was already freed (double free)", ptr),
                    "free each allocation once");
    case AllocationRegistry::Removal::unknown:
        errors_.count(TIDAL_ERROR_UNKNOWN_POINTER);
        throw Error(TIDAL_ERROR_UNKNOWN_POINTER, fmt::format("{} was never returned by this context's tidal_alloc", ptr),
                    "free memory with the allocator (and context) that returned it");
    }
    if (r.pooled && !TIDAL_KIND_IS_MANAGED(r.kind)) {
        // Nothing to forget or unset: straight back to its pool, which takes it without a
        // runtime call that could fail.
        return_to_pool(r, stream);
        return;
    }
    release_slow(r, stream);
}

void Context::release_slow(const AllocationRecord &r, const pool::StreamHandle *stream)
{
    try {
        release_unpooled(r, stream);
    } catch (const Error &e) {
        errors_.count(e.status()); // here, not at the C boundary: no test on the pooled pair
        throw;
    }
}

void Context::release_unpooled(const AllocationRecord &r, const pool::StreamHandle *stream)
{
    if (r.kind == TIDAL_KIND_ELASTIC) { // never pooled: after the fast path, which it would slow
        scheduler_->forget(r);          // waits for the moves queued on it
        elastic_->release(r.base);      // its chunks, reservation and host home
        return;
    }
    if (TIDAL_KIND_IS_MANAGED(r.kind)) {
        retire_paging(r);      // before its block finds a new owner, who starts from zero
        scheduler_->forget(r); // before its advice goes and its block finds a new owner
        if (splits_->any())
            splits_->remove(r);
    }
    if (r.pooled) {
        release_record(r, stream); // a pool takes its block back without a runtime call that could fail
        return;
    }
    if (r.vendor_pooled) {
        // Stream-ordered: no wait for the stream, the runtime's pool orders the reuse itself.
        if (int rc = free_vendor_pooled(r, stream); rc != 0) {
            registry_.insert(r);
            runtime_->check(rc, fmt::format("giving {} bytes at {} back to the stream-ordered pool", r.size, r.base));
        }
        return;
    }
    if (stream)
        synchronize_before_free(r, *stream);
    if (const uint32_t coarse = runtime_advice(r) & TIDAL_ADVICE_COARSE_GRAIN) {
        try {
            runtime_->advise_bits(r.raw, r.raw_size, coarse, AdviceAction::unset, r.runtime_device);
        } catch (...) {
            registry_.insert(r); // still allocated: keep it known, so nothing is lost
            throw;
        }
    }
    if (int rc = runtime_->free(r.kind, r.runtime_device, r.raw, r.raw_size); rc != 0) {
        registry_.insert(r);
        runtime_->check(rc, fmt::format("freeing {} bytes of {} memory at {}", r.size, tidal_kind_name(r.kind), r.base));
    }
}

void Context::synchronize_before_free(const AllocationRecord &r, const pool::StreamHandle &stream)
{
    // Memory the runtime frees at once: the stream's queued work may still use it.
    try {
        runtime_->stream_synchronize(stream.native, "synchronising the stream before freeing unpooled memory");
    } catch (...) {
        registry_.insert(r); // still allocated: keep it known, so nothing is lost
        throw;
    }
}

int Context::free_vendor_pooled(const AllocationRecord &r, const pool::StreamHandle *stream) noexcept
{
    return pools_->vendor(r.runtime_device).deallocate(r.raw, r.raw_size, stream ? *stream : pool::StreamHandle{});
}

namespace {
[[noreturn]] void unknown_pointer(const void *ptr)
{
    throw Error(TIDAL_ERROR_UNKNOWN_POINTER, fmt::format("{} is not inside any live allocation of this context", ptr),
                "query pointers tidal_alloc returned, before they are freed");
}
} // namespace

AllocationRecord Context::query(const void *ptr) const
{
    AllocationRecord r; // the one copy: returned in place (a single named result)
    if (!registry_.find(ptr, r))
        unknown_pointer(ptr);
    return r;
}

void Context::describe(const void *ptr, AllocationRecord &out) const
{
    if (!registry_.describe(ptr, out))
        unknown_pointer(ptr);
}

AllocationRecord Context::range_owner(const void *ptr, size_t size, bool head) const
{
    if (size == 0)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, "size is 0", "give the number of bytes of the range");
    AllocationRecord r;
    if (!head)
        r = query(ptr);
    else if (!registry_.find_head(ptr, r))
        r = query(ptr); // the whole record, or the query's error
    const size_t offset = static_cast<size_t>(static_cast<const char *>(ptr) - static_cast<const char *>(r.base));
    if (size > r.size - offset)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("{} bytes from {} run past the end of the allocation at {} ({} bytes)", size, ptr, r.base,
                                r.size),
                    "a range must lie inside one allocation");
    return r;
}

void Context::prefetch(const void *ptr, size_t size, int32_t device)
{
    const AllocationRecord r = range_owner(ptr, size);
    if (device != TIDAL_DEVICE_HOST)
        runtime_->require_device(device);
    if (!TIDAL_KIND_IS_MANAGED(r.kind)) {
        // Device, pinned and pageable memory cannot migrate: the data is where it will be used.
        scheduler_->count_noop(device >= 0 ? device : r.runtime_device);
        log_debug(fmt::format("prefetch of {} memory at {} is a no-op", tidal_kind_name(r.kind), ptr));
        return;
    }
    runtime_->require(RuntimeOp::prefetch);
    DeclaredRange range;
    range.owner = r;
    range.ptr = ptr;
    range.size = size;
    range.device = device;
    range.mode = TIDAL_ACCESS_READ_WRITE; // an explicit prefetch says nothing about writes
    scheduler_->prefetch(range);
}

void Context::advise(const void *ptr, size_t size, uint32_t set, uint32_t unset)
{
    if ((set | unset) & ~TIDAL_ADVICE_ALL)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("unknown advice bits {:#x}", (set | unset) & ~TIDAL_ADVICE_ALL),
                    "use TIDAL_ADVICE_* bits");
    if (set & unset)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("advice bits {:#x} are both set and unset", set & unset),
                    "name each bit in one of the two");
    if ((set & TIDAL_ADVICE_PREFERRED_DEVICE) && (set & TIDAL_ADVICE_PREFERRED_HOST))
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, "preferred-device and preferred-host advice set together",
                    "a range has one preferred location");
    const AllocationRecord r = range_owner(ptr, size);
    if (!TIDAL_KIND_IS_MANAGED(r.kind)) {
        scheduler_->count_noop(r.runtime_device);
        return;
    }
    if ((set | unset) & TIDAL_ADVICE_COARSE_GRAIN &&
        !(policy_devices_[static_cast<size_t>(r.runtime_device)].flags & TIDAL_DEVICE_FLAG_FINE_GRAINED))
        throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                    fmt::format("coarse-grain advice on device {}, which has no fine/coarse-grained memory (AMD only)",
                                r.runtime_device),
                    "leave TIDAL_ADVICE_COARSE_GRAIN out on this device");
    // A split allocation's parts each name their own device (accessed-by, preferred location).
    const uint32_t by_part = splits_->any() ? splits_->advise(r, ptr, size, set, unset) : 0u;
    runtime_->advise_bits(ptr, size, unset & ~by_part, AdviceAction::unset, r.runtime_device);
    runtime_->advise_bits(ptr, size, set & ~by_part, AdviceAction::set, r.runtime_device);
    // The record remembers it, so a free unsets it (and a pooled block's next owner starts
    // clean). A bit leaves the record only when the whole allocation lost it: advice unset on
    // part of it is still set on the rest, and a free that unsets it again costs nothing, while
    // one that forgets it frees pages that still carry it (HIP requires coarse grain unset
    // before hipFree). A preferred location set for the device replaces one set for the host.
    const bool whole = ptr == r.base && size >= r.size;
    const uint32_t cleared = whole ? unset : 0u;
    uint32_t advice = (r.advice & ~cleared) | set;
    if (whole && (set & TIDAL_ADVICE_PREFERRED_DEVICE))
        advice &= ~TIDAL_ADVICE_PREFERRED_HOST;
    if (whole && (set & TIDAL_ADVICE_PREFERRED_HOST))
        advice &= ~TIDAL_ADVICE_PREFERRED_DEVICE;
    registry_.set_advice(r.base, advice);
}

void Context::declare(void *stream, const tidal_access *accesses, size_t count, uint32_t flags)
{
    constexpr size_t kHintsAhead = 8;
    if (flags & ~TIDAL_DECLARE_FLAGS_ALL)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("unknown declaration flags {:#x}", flags & ~TIDAL_DECLARE_FLAGS_ALL),
                    "use TIDAL_DECLARE_* flags");
    const bool lookahead = flags & TIDAL_DECLARE_LOOKAHEAD;
    if (count == 0) {
        if (!lookahead)
            scheduler_->end_phase(stream);
        return;
    }
    if (!accesses)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, "accesses is NULL with a count above 0", "pass an array of count entries");
    KeptBuffer<tidal_access> read;
    const std::vector<tidal_access> &entries = read.items;
    abi::read_array(accesses, count, "access", read.items);
    KeptBuffer<DeclaredRange> built;
    std::vector<DeclaredRange> &ranges = built.items;
    ranges.clear();
    ranges.reserve(count);
    bool any_managed = false;
    int32_t checked = TIDAL_DEVICE_HOST; // the device last found to exist: a call names few, range after range
    for (size_t i = 0; i < count; ++i) {
        // Past the L2 (10^4 ranges), each range's page hint (which carries the record's head)
        // is a cache miss: started some ranges ahead, the misses overlap.
        if (i + kHintsAhead < count)
            registry_.prefetch_hints(entries[i + kHintsAhead].ptr);
        const tidal_access &a = entries[i];
        if (a.mode == 0 || (a.mode & ~TIDAL_ACCESS_READ_WRITE))
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("access {} has mode {:#x}", i, a.mode),
                        "use TIDAL_ACCESS_READ, _WRITE or _READ_WRITE");
        if (a.device != checked) {
            runtime_->require_device(a.device);
            checked = a.device;
        }
        if (!a.ptr)
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("access {} has a NULL pointer", i),
                        "declare ranges inside tidal allocations");
        const AllocationRecord r = range_owner(a.ptr, a.size, true); // a range's owner reads the head alone
        // Elastic memory moves for a device (mapped, copied in); the host cannot touch it.
        const bool chunks = r.kind == TIDAL_KIND_ELASTIC && a.device != TIDAL_DEVICE_HOST;
        any_managed = any_managed || TIDAL_KIND_IS_MANAGED(r.kind);
        if (!TIDAL_KIND_IS_MANAGED(r.kind) && !chunks) {
            // Device and pinned memory do not move: already where the work will find it.
            scheduler_->count_noop(a.device >= 0 ? a.device : r.runtime_device);
            continue;
        }
        ranges.emplace_back(r, a.ptr, a.size, a.device, a.mode); // the owner without its tag
    }
    if (any_managed)
        runtime_->require(RuntimeOp::prefetch);
    scheduler_->declare(stream, ranges, lookahead);
}

void Context::copy_batch(const tidal_copy_item *items, size_t count, void *stream)
{
    if (count == 0)
        return;
    if (!items)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, "items is NULL with a count above 0", "pass an array of count items");
    std::vector<tidal_copy_item> entries = abi::read_array(items, count, "item");
    for (size_t i = 0; i < count; ++i)
        if (!entries[i].dst || !entries[i].src)
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                        fmt::format("item {} has a NULL {}", i, entries[i].dst ? "src" : "dst"),
                        "every item names both ends, even one of size 0");
    if (!elastic_->empty()) {
        // Elastic items may be partly offloaded: they take tidal_copy's path one by one.
        std::vector<tidal_copy_item> plain;
        plain.reserve(entries.size());
        std::vector<std::pair<tidal_copy_item, elastic::CopyEnds>> elastic;
        for (const tidal_copy_item &item : entries)
            if (const elastic::CopyEnds ends = elastic_ends(item.dst, item.src); ends.any())
                elastic.emplace_back(item, ends);
            else
                plain.push_back(item);
        if (!elastic.empty()) {
            for (const auto &[item, ends] : elastic) // a bad one is refused before any copy
                elastic_->check_copy(item.dst, item.src, item.size, ends);
            if (!plain.empty())
                batches_->copy(plain, stream);
            for (const auto &[item, ends] : elastic) {
                settle_elastic(item.dst, item.size, stream);
                settle_elastic(item.src, item.size, stream);
                elastic_->copy(item.dst, item.src, item.size, ends, stream, *copies_);
            }
            return;
        }
    }
    batches_->copy(entries, stream);
}

void Context::budget_set(int32_t device, uint64_t bytes)
{
    scheduler_->set_budget(device, bytes); // checks the device
    policy_system_.budgets[static_cast<size_t>(device)] = bytes;
}

uint64_t Context::policy_device_budget(const tidal_policy_system *system, int32_t device)
{
    const auto *s = static_cast<const PolicySystem *>(system);
    if (device < 0 || device >= s->device_count)
        return 0;
    return s->budgets[static_cast<size_t>(device)].load(std::memory_order_relaxed);
}

uint64_t Context::policy_device_free(const tidal_policy_system *system, int32_t device)
{
    const auto *s = static_cast<const PolicySystem *>(system);
    if (device < 0 || device >= s->device_count)
        return 0;
    uint64_t free_bytes = 0, total_bytes = 0;
    try {
        s->device_runtime->mem_info(device, &free_bytes, &total_bytes);
    } catch (const std::exception &) {
        return 0; // a hook cannot take an exception: "nothing known free"
    }
    return free_bytes;
}

uint64_t Context::policy_device_resident(const tidal_policy_system *system, int32_t device)
{
    const auto *s = static_cast<const PolicySystem *>(system);
    return s->scheduler ? s->scheduler->resident_now(device) : 0;
}

tidal_migration_stats Context::migration_stats(int32_t device) const
{
    tidal_migration_stats stats = scheduler_->stats(device);
    elastic_->add_stats(device, stats);
    return stats;
}

void Context::copy(void *dst, const void *src, size_t size, void *stream)
{
    const elastic::CopyEnds ends = elastic_->empty() ? elastic::CopyEnds{} : elastic_ends(dst, src);
    if (!ends.any()) [[likely]] {
        copies_->copy(dst, src, size, stream);
    } else {
        settle_elastic(dst, size, stream);
        settle_elastic(src, size, stream);
        elastic_->copy(dst, src, size, ends, stream, *copies_);
    }
}

// Through the registry's address index, which holds elastic allocations with the others: a
// copy between plain buffers takes neither the elastic space's lock nor the scheduler's.
elastic::CopyEnds Context::elastic_ends(const void *dst, const void *src) const
{
    auto base = [this](const void *p) -> const void * {
        AllocationRecord r; // base and kind are in the record's head: the rest is not copied
        return registry_.find_head(p, r) && r.kind == TIDAL_KIND_ELASTIC ? r.base : nullptr;
    };
    return {base(dst), base(src)};
}

void Context::settle_elastic(const void *ptr, size_t size, void *stream)
{
    const auto lo = reinterpret_cast<uintptr_t>(ptr);
    scheduler_->settle(lo, size > UINTPTR_MAX - lo ? UINTPTR_MAX : lo + size, stream);
}

namespace {
void check_elastic_flags(uint32_t flags, uint32_t all, const char *what, const char *names)
{
    if (flags & ~all)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("unknown {} flags {:#x}", what, flags & ~all),
                    fmt::format("use {} flags", names));
}
} // namespace

void Context::offload(const char *glob, uint32_t flags, void *stream, tidal_elastic_result &out)
{
    check_elastic_flags(flags, TIDAL_OFFLOAD_FLAGS_ALL, "offload", "TIDAL_OFFLOAD_*");
    settle_elastic(nullptr, SIZE_MAX, stream);
    elastic_->offload(glob, flags, stream, out);
}

void Context::restore(const char *glob, uint32_t flags, void *stream, tidal_elastic_result &out)
{
    check_elastic_flags(flags, TIDAL_RESTORE_FLAGS_ALL, "restore", "TIDAL_RESTORE_*");
    settle_elastic(nullptr, SIZE_MAX, stream);
    elastic_->restore(glob, flags, stream, out);
}

AllocationRecord Context::elastic_owner(const void *ptr, size_t size) const
{
    AllocationRecord r = range_owner(ptr, size);
    if (r.kind != TIDAL_KIND_ELASTIC)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("{} is {} memory, not elastic memory", ptr, tidal_kind_name(r.kind)),
                    "offload and restore memory allocated as TIDAL_KIND_ELASTIC");
    return r;
}

void Context::offload_range(void *ptr, size_t size, uint32_t flags, void *stream, tidal_elastic_result &out)
{
    check_elastic_flags(flags, TIDAL_OFFLOAD_FLAGS_ALL, "offload", "TIDAL_OFFLOAD_*");
    const AllocationRecord r = elastic_owner(ptr, size);
    settle_elastic(ptr, size, stream);
    elastic_->offload_range(r.base, static_cast<size_t>(static_cast<char *>(ptr) - static_cast<char *>(r.base)), size,
                            flags, stream, out);
}

void Context::restore_range(void *ptr, size_t size, uint32_t flags, void *stream, tidal_elastic_result &out)
{
    check_elastic_flags(flags, TIDAL_RESTORE_FLAGS_ALL, "restore", "TIDAL_RESTORE_*");
    const AllocationRecord r = elastic_owner(ptr, size);
    settle_elastic(ptr, size, stream);
    elastic_->restore_range(r.base, static_cast<size_t>(static_cast<char *>(ptr) - static_cast<char *>(r.base)), size,
                            flags, stream, out);
}

double Context::clock() const
{
    if (runtime_->supports(RuntimeOp::clock))
        return runtime_->clock("reading the runtime's clock");
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Context::run_check(tidal_check &check)
{
    // A kernel (or the runtime's copy) on elastic memory that is not resident faults, and on a
    // GPU that fault leaves the whole context unusable: refuse it first, with the status the
    // fault would have given. (The simulated device faults such kernels too; this keeps a real
    // GPU's context alive.)
    for (const void *p : {static_cast<const void *>(check.target), check.source, check.source2}) {
        if (!p)
            continue;
        const auto r = registry_.find(p);
        if (!r || r->kind != TIDAL_KIND_ELASTIC)
            continue;
        const size_t offset = static_cast<size_t>(static_cast<const char *>(p) - static_cast<const char *>(r->base));
        if (offset >= r->size)
            continue;
        settle_elastic(p, std::min<size_t>(check.size, r->size - offset), nullptr);
        const elastic::ChunkBytes b = elastic_->bytes(r->base, offset, std::min<size_t>(check.size, r->size - offset));
        if (b.offloaded + b.discarded > 0)
            throw Error(TIDAL_ERROR_ILLEGAL_ACCESS,
                        fmt::format("{} is elastic memory with {} bytes offloaded and {} discarded in the range a "
                                    "check would touch: a kernel there faults",
                                    p, b.offloaded, b.discarded),
                        "tidal_restore it (or tidal_restore_range) before the kernel runs");
    }
    checks_->run(check);
}

tidal_range_info Context::range_query(const void *ptr, size_t size) const
{
    const AllocationRecord r = range_owner(ptr, size);
    if (r.kind == TIDAL_KIND_ELASTIC) {
        const elastic::ChunkBytes b =
            elastic_->bytes(r.base, static_cast<size_t>(static_cast<const char *>(ptr) - static_cast<const char *>(r.base)), size);
        tidal_range_info info = TIDAL_RANGE_INFO_INIT;
        info.resident_bytes = b.resident;
        info.offloaded_bytes = b.offloaded;
        info.discarded_bytes = b.discarded;
        return info;
    }
    if (!TIDAL_KIND_IS_MANAGED(r.kind))
        throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                    fmt::format("{} is {} memory; range attributes exist for managed memory only", ptr, tidal_kind_name(r.kind)),
                    "tidal_pointer_query tells where other kinds live");
    runtime_->require(RuntimeOp::query_range);
    auto location = [](int32_t v) {
        return v == TIDAL_RT_LOCATION_HOST ? TIDAL_DEVICE_HOST : (v >= 0 ? v : TIDAL_LOCATION_NONE);
    };
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    if (auto v = runtime_->query_range(ptr, size, TIDAL_RT_ATTR_LAST_PREFETCH_LOCATION))
        info.last_prefetch_location = location(*v);
    if (auto v = runtime_->query_range(ptr, size, TIDAL_RT_ATTR_PREFERRED_LOCATION))
        info.preferred_location = location(*v);
    if (auto v = runtime_->query_range(ptr, size, TIDAL_RT_ATTR_READ_MOSTLY))
        info.read_mostly = *v ? 1 : 0;
    if (auto v = runtime_->query_range(ptr, size, TIDAL_RT_ATTR_COHERENCY_MODE))
        info.coherency = *v == 0 ? TIDAL_COHERENCY_FINE : *v == 1 ? TIDAL_COHERENCY_COARSE : TIDAL_COHERENCY_INDETERMINATE;
    return info;
}

void *Context::stream_create(int32_t device)
{
    runtime_->require_device(device);
    return runtime_->stream_create(device, [&] { return fmt::format("creating a stream on device {}", device); });
}

void Context::stream_destroy(void *stream)
{
    try {
        stream_forget(stream);
    } catch (const Error &e) {
        // Destroying it now would strand what is still tied to it.
        throw Error(e.status(), e.message() + "; the stream was not destroyed", e.hint(), e.native());
    }
    runtime_->stream_destroy(stream);
}

void Context::stream_forget(void *stream)
{
    // Both are asked even when the first fails: each settles what it can while the handle is valid.
    std::exception_ptr first;
    for (auto settle : {+[](Context &c, void *s) { c.pools_->end_stream(s); },
                        +[](Context &c, void *s) { c.scheduler_->end_stream(s); }}) {
        try {
            settle(*this, stream);
        } catch (...) {
            if (!first)
                first = std::current_exception();
        }
    }
    if (first)
        std::rethrow_exception(first);
}

void Context::stream_synchronize(void *stream)
{
    runtime_->stream_synchronize(stream);
}

tidal_device_info Context::device_info(int32_t device) const
{
    runtime_->require_device(device);
    const tidal_rt_device_props &p = runtime_->props(device);
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    info.index = device;
    copy_name(info.name, sizeof info.name, p.name);
    copy_name(info.arch, sizeof info.arch, p.arch);
    info.total_memory = p.total_memory;
    uint64_t free_bytes = 0, total = 0;
    runtime_->mem_info(device, &free_bytes, &total);
    info.free_memory = free_bytes;
    info.page_size = p.page_size;
    info.l2_size = p.l2_size;
    info.flags = device_flags(p);
    info.xnack = static_cast<tidal_xnack>(p.xnack);
    info.numa_node = p.numa_node;
    copy_name(info.pci_bus_id, sizeof info.pci_bus_id, p.pci_bus_id);
    copy_name(info.local_cpus, sizeof info.local_cpus, peers_->local_cpus(device).c_str());
    info.peer_mask = peers_->peer_mask(device);
    return info;
}

tidal_peer_info Context::peer_info(int32_t device, int32_t peer) const
{
    runtime_->require_device(device);
    runtime_->require_device(peer);
    const tidal_rt_peer_info &l = peers_->link(device, peer);
    tidal_peer_info info = TIDAL_PEER_INFO_INIT;
    info.device = device;
    info.peer = peer;
    info.can_access = l.can_access;
    info.link = static_cast<tidal_link_type>(l.link_type);
    info.hops = l.hops;
    info.performance_rank = l.performance_rank;
    info.enabled = device != peer && peers_->enabled(device, peer) ? 1 : 0;
    info.bandwidth = l.bandwidth / 1e9;
    info.latency_us = l.latency * 1e6;
    return info;
}

telemetry::StatsSnapshot Context::stats()
{
    telemetry::StatsSnapshot s;
    s.runtime = runtime_->name();
    s.tag_depth = settings_.telemetry.tag_depth;
    const bool paging = runtime_->supports(RuntimeOp::paging); // the simulated device counts faults
    const telemetry::UsageLedger::PagingReader read_paging = [this](const AllocationRecord &r) {
        tidal_rt_paging_stats p{};
        runtime_->check(runtime_->range_paging(r.base, r.size, false, &p),
                        fmt::format("reading the page-fault counts of {} bytes at {}", r.size, r.base));
        return p;
    };
    usage_.observe(registry_.live(), s, paging ? &read_paging : nullptr);
    const int32_t count = runtime_->device_count();
    for (int k = TIDAL_KIND_AUTO + 1; k < TIDAL_KIND_COUNT; ++k)
        for (int32_t d = 0; d < count && d < pool::PoolSet::kMaxDevices; ++d)
            if (pools_->find(static_cast<tidal_kind>(k), d))
                s.pools.push_back({static_cast<tidal_kind>(k), d, pools_->stats(static_cast<tidal_kind>(k), d)});
    for (int32_t d = 0; d < count; ++d) {
        s.devices.push_back({d, migration_stats(d), std::nullopt});
        if (paging)
            s.devices.back().paging = runtime_->paging_stats(d);
    }
    s.errors = errors_.nonzero();
    return s;
}

std::vector<AllocationRecord> Context::live_allocations() const
{
    std::vector<AllocationRecord> all = registry_.live();
    std::sort(all.begin(), all.end(), [](const AllocationRecord &a, const AllocationRecord &b) {
        return reinterpret_cast<uintptr_t>(a.base) < reinterpret_cast<uintptr_t>(b.base);
    });
    return all;
}

std::string Context::describe() const
{
    std::string text = describe_settings(settings_);
    text += fmt::format("\n# runtime in use: {} ({})\n", runtime_->name(), runtime_->detail());
    text += "# policy chain:";
    for (const auto &plugin : chain_->plugins())
        text += fmt::format(" {} ({}, policy ABI {}) ->", plugin->name(), plugin->file().string(), plugin->abi());
    text += " core defaults\n";
    return text;
}

} // namespace tidal
