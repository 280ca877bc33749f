// The core's one handle on a device runtime: the ops table, its instance, the module it came
// from (if any), and the device properties read once at start. The core reaches the runtime
// only through the methods below, one per contract operation: each checks once that an
// optional operation is there (supports()), says the same thing when it is not, and turns a
// failing native code into a translated tidal::Error, so the rest of the core never sees the
// raw table nor a native code it did not ask for.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/call_description.h"
#include "runtime/runtime_contract.h"
#include "plugin/shared_library.h"

namespace tidal {

enum class AdviceAction { set, unset };

// The contract's optional operations (and groups that are optional together). The mandatory
// ones (alloc, free, mem_info, ...) are checked by the loader and always there.
enum class RuntimeOp : uint8_t {
    host_register,
    host_unregister,
    pointer_kind,
    prefetch,
    advise,
    query_range,
    memcpy,
    stream_create,
    stream_destroy,
    stream_synchronize,
    event_create,
    event_destroy,
    event_record,
    stream_wait_event,
    event_synchronize,
    event_elapsed_ms,
    device_synchronize,
    kernel_touch,
    kernel_pattern_fill,
    kernel_pattern_check,
    kernel_copy,
    kernel_triad,
    kernel_atomic_add,
    event_query,
    kernel_spin,
    clock,
    stream_ordered_pool, // alloc_async + free_async
    kernel_batch_copy,
    pool_trim,           // pool_trim + pool_usage, with the stream-ordered pool
    vmm,                 // the virtual-memory group, all eight
    host_copy,
    peer,                // peer_info + peer_enable + memcpy_peer
    kernel_atomic_set,
    ranges,              // range_push + range_pop (profiler ranges)
    paging,              // paging_stats + range_paging (demand-paging counts; the simulated device)
    count_
};

class Runtime {
public:
    // Both families number "not supported" 801 (hipErrorNotSupported, cudaErrorNotSupported):
    // what a noexcept call of a missing operation returns.
    static constexpr int kNativeNotSupported = 801;

    // Takes ownership of `instance` (destroyed through ops->destroy) and of `module`.
    Runtime(const tidal_rt_ops *ops, void *instance, std::string detail,
            std::optional<SharedLibrary> module = std::nullopt);
    ~Runtime();
    Runtime(const Runtime &) = delete;
    Runtime &operator=(const Runtime &) = delete;

    const char *name() const noexcept { return ops_->name; }
    const std::string &detail() const noexcept { return detail_; }
    tidal_rt_family family() const noexcept { return ops_->family; }
    bool has_trait(tidal_rt_trait trait) const noexcept { return (ops_->traits & trait) != 0; }

    bool supports(RuntimeOp op) const noexcept { return (supported_ >> static_cast<unsigned>(op)) & 1u; }
    // The one error for a missing operation: TIDAL_ERROR_NOT_SUPPORTED, "the {name} runtime
    // does not support {operation}".
    [[noreturn]] void unsupported(RuntimeOp op) const;
    // Throws that error unless `op` is there (for a caller that needs it before it starts).
    void require(RuntimeOp op) const
    {
        if (!supports(op)) [[unlikely]]
            unsupported(op);
    }

    int32_t device_count() const noexcept { return static_cast<int32_t>(props_.size()); }
    const tidal_rt_device_props &props(int32_t device) const { return props_.at(device); }
    // Throws TIDAL_ERROR_NOT_FOUND unless 0 <= device < device_count().
    void require_device(int32_t device) const;
    void mem_info(int32_t device, uint64_t *free_bytes, uint64_t *total_bytes);

    // Every throwing call below takes an optional description of what the caller was doing
    // (see CallDescription); without one the error names the operation. The calls that return
    // an int instead (free, event_destroy, the `_noexcept` twins, ...) are for paths that must
    // go on (frees, teardown): they return the native code, kNativeNotSupported for a missing
    // operation.

    // Memory. With NUMA binding on, host kinds for a device (device >= 0) come from that
    // device's NUMA node (best effort: a failure is a warning, logged once).
    void *alloc(tidal_kind kind, int32_t device, size_t size);
    void set_numa_bind(bool on) noexcept { numa_bind_ = on; }
    // The NUMA node host memory for `device` is bound to: -1 when binding is off or the node is
    // unknown (logged once, with the reason).
    int numa_node_for(tidal_kind kind, int32_t device) const noexcept;
    // Logs, once per context, that memory for `device` could not be placed on `node`.
    void note_numa_failure(tidal_kind kind, int32_t device, int node, const std::string &why) const noexcept;
    int free(tidal_kind kind, int32_t device, void *ptr, size_t size) noexcept;
    void host_register(void *ptr, size_t size, CallDescription what = {});
    void host_unregister(void *ptr, CallDescription what = {});
    int host_unregister_noexcept(void *ptr) noexcept;
    // What the runtime says `p` is (a tidal_kind and a device); a failure or a runtime that
    // cannot tell answers non-zero and leaves both as they were. Inline: copies ask it for
    // every end outside tidal's allocations.
    int pointer_kind(const void *p, int32_t *kind, int32_t *device) const noexcept
    {
        return supports(RuntimeOp::pointer_kind) ? ops_->pointer_kind(instance_, p, kind, device)
                                                 : kNativeNotSupported;
    }

    // The runtime's own stream-ordered pool of device memory (RuntimeOp::stream_ordered_pool),
    // and its trim and usage (RuntimeOp::pool_trim).
    void *alloc_async(int32_t device, size_t size, void *stream);
    int free_async(int32_t device, void *ptr, void *stream) noexcept;
    void pool_trim(int32_t device, uint64_t keep);
    // `reserved` and `used` are set only on success.
    int pool_usage(int32_t device, uint64_t *reserved, uint64_t *used) const noexcept;

    // Migration and advice.
    void prefetch(const void *ptr, size_t size, int32_t location, void *stream, CallDescription what = {});
    void advise(const void *ptr, size_t size, tidal_rt_advice advice, int32_t location, CallDescription what = {});
    // The one translation of TIDAL_ADVICE_* bits into runtime advice: one call per bit, in the
    // order of the bits' values; `device` is the location of every bit but preferred-host.
    // Preferred device and preferred host are one runtime attribute, so unsetting either or
    // both is one call. No bits, no call (and no error from a runtime that takes no advice).
    // Throws at the first failing call: the bits after it are left as they were.
    void advise_bits(const void *ptr, size_t size, uint32_t bits, AdviceAction action, int32_t device);
    // The same for paths that must go on (frees, teardown): every bit is tried, and a runtime
    // that takes no advice is no failure. Returns the first failing call's native code, or 0.
    int advise_bits_noexcept(const void *ptr, size_t size, uint32_t bits, AdviceAction action,
                             int32_t device) noexcept;
    // One range attribute; nullopt when the runtime answers that it cannot tell this one (its
    // not-supported code), as HIP does for attributes CUDA has and the reverse.
    std::optional<int32_t> query_range(const void *ptr, size_t size, tidal_rt_range_attr attr,
                                       CallDescription what = {});

    // Copies. Inline, and the description made only on failure: every direct tidal_copy
    // makes this call (out of line, with the description built first, it cost 22 instructions
    // a copy, 1.6%).
    template <typename What = CallDescription>
    void memcpy(void *dst, const void *src, size_t size, void *stream, const What &what = {})
    {
        require(RuntimeOp::memcpy);
        if (const int rc = ops_->memcpy(instance_, dst, src, size, stream); rc != 0) [[unlikely]]
            fail(RuntimeOp::memcpy, rc, CallDescription(what));
    }

    // Streams and events.
    void *stream_create(int32_t device, CallDescription what = {});
    void stream_destroy(void *stream, CallDescription what = {});
    int stream_destroy_noexcept(void *stream) noexcept;
    void stream_synchronize(void *stream, CallDescription what = {});
    int stream_synchronize_noexcept(void *stream) noexcept;
    void device_synchronize(int32_t device, CallDescription what = {});
    int device_synchronize_noexcept(int32_t device) noexcept;
    void *event_create(int32_t device, CallDescription what = {});
    int event_destroy(void *event) noexcept;
    void event_record(void *event, void *stream, CallDescription what = {});
    void stream_wait_event(void *stream, void *event, CallDescription what = {});
    void event_synchronize(void *event, CallDescription what = {});
    int event_synchronize_noexcept(void *event) noexcept;
    float event_elapsed_ms(void *start, void *end, CallDescription what = {});
    // *complete = 1 once the event's work has finished; never blocks.
    int event_query(void *event, int32_t *complete) const noexcept;
    // Seconds on the runtime's own clock (RuntimeOp::clock).
    double clock(CallDescription what = {}) const;
    // The core copied `size` bytes host to host with `threads` threads (staging): a runtime with
    // its own clock charges it; without the operation, nothing to do.
    void host_copy(size_t size, unsigned threads, CallDescription what = {});

    // Kernels (kernels/), asynchronous on `stream` unless the contract says otherwise.
    void kernel_touch(int32_t device, void *ptr, size_t size, bool write, void *stream, CallDescription what = {});
    void kernel_pattern_fill(int32_t device, void *ptr, size_t size, uint64_t seed, void *stream,
                             CallDescription what = {});
    void kernel_pattern_check(int32_t device, const void *ptr, size_t size, uint64_t seed, uint64_t *mismatches,
                              void *stream, CallDescription what = {});
    void kernel_copy(int32_t device, void *dst, const void *src, size_t size, void *stream, CallDescription what = {});
    void kernel_triad(int32_t device, double *a, const double *b, const double *c, double scalar, size_t size,
                      void *stream, CallDescription what = {});
    void kernel_atomic_set(int32_t device, void *words, uint32_t ops, uint32_t rounds, void *stream,
                           CallDescription what = {});
    void kernel_atomic_add(int32_t device, uint64_t *counters, size_t count, uint32_t iterations, void *stream,
                           CallDescription what = {});
    void kernel_spin(int32_t device, uint64_t ns, void *stream, CallDescription what = {});
    void kernel_batch_copy(int32_t device, const tidal_rt_copy_item *items, uint32_t count, uint64_t max_size,
                           void *stream, CallDescription what = {});

    // The virtual-memory group (RuntimeOp::vmm), for elastic memory. A runtime that has the
    // group but answers its not-supported code on a device throws the same, translated.
    uint64_t vmm_granularity(int32_t device, CallDescription what = {});
    void *vmm_reserve(int32_t device, size_t size, CallDescription what = {});
    void vmm_map(void *ptr, size_t size, void *chunk, CallDescription what = {});
    void vmm_set_access(int32_t device, void *ptr, size_t size, CallDescription what = {});
    void *vmm_create(int32_t device, size_t size, CallDescription what = {});
    void vmm_unmap(void *ptr, size_t size, CallDescription what = {});
    int vmm_destroy(void *chunk) noexcept;
    int vmm_release(void *ptr, size_t size) noexcept;

    // Peer access (RuntimeOp::peer). device != peer, both valid.
    tidal_rt_peer_info peer_info(int32_t device, int32_t peer, CallDescription what = {});
    void peer_enable(int32_t device, int32_t peer, CallDescription what = {});
    void memcpy_peer(void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size, void *stream,
                     CallDescription what = {});
    // Profiler ranges (RuntimeOp::ranges): on only after enable_ranges(true) on a runtime with
    // the pair ([telemetry] ranges = true). ProfilerRange is the one caller of the pair.
    void enable_ranges(bool on) noexcept { ranges_ = on && supports(RuntimeOp::ranges); }
    bool ranges_on() const noexcept { return ranges_; }
    int range_push(const char *name) const noexcept { return ops_->range_push(instance_, name); }
    int range_pop() const noexcept { return ops_->range_pop(instance_); }
    // Demand paging as the runtime counted it (RuntimeOp::paging): per device, and for one
    // managed allocation's pages (read and, with `reset`, zeroed; noexcept for the free path).
    tidal_rt_paging_stats paging_stats(int32_t device, CallDescription what = {});
    int range_paging(const void *ptr, size_t size, bool reset, tidal_rt_paging_stats *out) const noexcept;

    // Throws the translated error for a non-zero native code (one a noexcept call returned).
    void check(int native, CallDescription what) const
    {
        if (native != 0) [[unlikely]]
            fail(native, what.text());
    }
    [[noreturn]] void fail(int native, const std::string &what) const;
    std::string native_name(int native) const;

private:
    // Tests read the instance behind a context (the simulated device's call counters).
    friend struct RuntimeTestAccess;

    const tidal_rt_ops &ops() const noexcept { return *ops_; }
    void *instance() const noexcept { return instance_; }
    // Throws the translated error for a failed call of `op`, described by `what` or else by
    // the operation's own description.
    void check(RuntimeOp op, int native, const CallDescription &what) const
    {
        if (native != 0) [[unlikely]]
            fail(op, native, what);
    }
    [[noreturn]] void fail(RuntimeOp op, int native, const CallDescription &what) const;
    // The same with a default description of the call's own (its arguments), formatted only
    // on failure and only when the caller gave none.
    template <typename Describe> void check(int native, const CallDescription &what, const Describe &fallback) const
    {
        if (native != 0) [[unlikely]]
            fail(native, what.empty() ? std::string(fallback()) : what.text());
    }

    const tidal_rt_ops *ops_;
    void *instance_;
    std::string detail_;
    std::optional<SharedLibrary> module_; // destroyed after the instance
    std::vector<tidal_rt_device_props> props_;
    uint64_t supported_ = 0; // bit i: RuntimeOp i is there
    bool numa_bind_ = false;
    mutable std::atomic<bool> numa_unknown_logged_{false}, numa_failure_logged_{false};
    bool ranges_ = false;    // enable_ranges
};

} // namespace tidal
