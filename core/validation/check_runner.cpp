#include "validation/check_runner.h"

#include <fmt/format.h>

#include "log/logger.h"
#include "status/error.h"
#include "validation/atomic_set_check.h"

namespace tidal {

CheckRunner::~CheckRunner()
{
    for (Lane &l : lanes_) {
        if (l.start)
            runtime_.event_destroy(l.start);
        if (l.end)
            runtime_.event_destroy(l.end);
        if (l.stream)
            runtime_.stream_destroy_noexcept(l.stream);
    }
}

void CheckRunner::check_operand(const void *p, size_t size, const char *name, int32_t device, bool kernel) const
{
    if (!p)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("check {} is NULL", name), "give the memory to check");
    if (reinterpret_cast<uintptr_t>(p) % 8 != 0)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("check {} {} is not 8-byte aligned", name, p),
                    "validation kernels work on 64-bit words");
    if (auto r = registry_.find(p)) {
        const size_t offset = static_cast<size_t>(static_cast<const char *>(p) - static_cast<const char *>(r->base));
        if (size > r->size - offset)
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                        fmt::format("check {}: {} bytes from {} run past the end of its allocation ({} bytes at {})",
                                    name, size, p, r->size, r->base),
                        "check a range inside the allocation");
        // A device that cannot reach pageable memory faults on it, and on AMD the fault aborts
        // the process instead of returning an error: refuse before the launch, with the status
        // a fault would have given.
        if (kernel && r->kind == TIDAL_KIND_PAGEABLE && !runtime_.props(device).pageable_access)
            throw Error(TIDAL_ERROR_ILLEGAL_ACCESS,
                        fmt::format("check {}: {} is pageable host memory, which device {} cannot reach "
                                    "(no pageable access: XNACK off or no HMM)",
                                    name, p, device),
                        "use pinned or managed memory for memory a kernel touches");
    }
}

void CheckRunner::validate(const tidal_check &c) const
{
    if (c.kind < TIDAL_CHECK_TOUCH_READ || c.kind > TIDAL_CHECK_ATOMIC_SET_SHARED)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("check kind {} is not a tidal_check_kind", static_cast<int>(c.kind)),
                    "use TIDAL_CHECK_* values");
    runtime_.require_device(c.device);
    if (c.kind == TIDAL_CHECK_SPIN) {
        constexpr uint64_t kMaxSpinNs = uint64_t{60} * 1000000000u;
        if (c.seed > kMaxSpinNs)
            throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("spin of {} ns is longer than a minute", c.seed),
                        "spin kernels are for compute of known, short length");
        return; // touches no memory: no operands to check
    }
    if (c.kind == TIDAL_CHECK_ATOMIC_SET || c.kind == TIDAL_CHECK_ATOMIC_SET_SHARED)
        return validate_atomic_set(c);
    if (c.size == 0 || c.size % 8 != 0)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("check size {} is not a positive multiple of 8", c.size),
                    "validation kernels work on 64-bit words");
    // A runtime copy is the copy engine's, which reads pageable memory; kernels need reach.
    const bool kernel = c.kind != TIDAL_CHECK_RUNTIME_COPY;
    check_operand(c.target, c.size, "target", c.device, kernel);
    if (c.kind == TIDAL_CHECK_COPY || c.kind == TIDAL_CHECK_TRIAD || c.kind == TIDAL_CHECK_RUNTIME_COPY)
        check_operand(c.source, c.size, "source", c.device, kernel);
    if (c.kind == TIDAL_CHECK_TRIAD)
        check_operand(c.source2, c.size, "source2", c.device, kernel);
}

void CheckRunner::validate_atomic_set(const tidal_check &c) const
{
    static_assert(atomic_set::kBytes == TIDAL_ATOMIC_SET_BYTES && atomic_set::kAllOps == TIDAL_ATOMIC_ALL &&
                      (1u << atomic_set::fadd32) == TIDAL_ATOMIC_FADD32 && (1u << atomic_set::cas64) == TIDAL_ATOMIC_CAS64,
                  "the public TIDAL_ATOMIC_* bits follow kernels/atomic_set.h");
    const bool shared = c.kind == TIDAL_CHECK_ATOMIC_SET_SHARED;
    if (c.size < TIDAL_ATOMIC_SET_BYTES)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("atomic-set check of {} bytes: it needs at least {}", c.size, TIDAL_ATOMIC_SET_BYTES),
                    "give TIDAL_ATOMIC_SET_BYTES or more");
    if (c.target && reinterpret_cast<uintptr_t>(c.target) % 16 != 0)
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("atomic-set check target {} is not 16-byte aligned", c.target),
                    "tidal allocations are aligned enough");
    if (c.seed > AtomicSetCheck::max_rounds(shared))
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("atomic-set check of {} rounds: at most {} keep its float adds exact (2^24)", c.seed,
                                AtomicSetCheck::max_rounds(shared)),
                    "ask for fewer rounds");
    check_operand(c.target, TIDAL_ATOMIC_SET_BYTES, "target", c.device, true);
    if (!shared)
        return;
    // Host threads touch the words directly: device memory would crash them.
    int32_t kind = TIDAL_KIND_PAGEABLE, device = TIDAL_DEVICE_HOST;
    if (auto r = registry_.find(c.target))
        kind = r->kind;
    else
        (void)runtime_.pointer_kind(c.target, &kind, &device); // unknown to the runtime: host memory
    if (!TIDAL_KIND_IS_HOST(kind) && !TIDAL_KIND_IS_MANAGED(kind))
        throw Error(TIDAL_ERROR_INVALID_ARGUMENT,
                    fmt::format("shared atomic-set check on {}: {} memory, which the host cannot reach", c.target,
                                tidal_kind_name(static_cast<tidal_kind>(kind))),
                    "share pinned, pageable or managed memory; check device memory with TIDAL_CHECK_ATOMIC_SET");
}

void CheckRunner::settle(void *stream, int32_t device, const CallDescription &what)
{
    if (stream && runtime_.supports(RuntimeOp::stream_synchronize))
        runtime_.stream_synchronize(stream, what);
    else if (runtime_.supports(RuntimeOp::device_synchronize))
        runtime_.device_synchronize(device, what);
}

void CheckRunner::run_atomic_set(tidal_check &c, Lane &l, void *stream, const CallDescription &what)
{
    const uint32_t rounds = c.seed ? static_cast<uint32_t>(c.seed) : AtomicSetCheck::kDefaultRounds;
    AtomicSetCheck check(rounds, c.kind == TIDAL_CHECK_ATOMIC_SET_SHARED);
    AtomicSetCheck::Words words = AtomicSetCheck::initial();
    runtime_.memcpy(c.target, words.data(), words.size(), stream, what);
    settle(stream, c.device, what); // the host threads must not start before the words are set
    check.start(static_cast<unsigned char *>(c.target));
    if (l.stream)
        runtime_.event_record(l.start, stream, "recording a timing event");
    check.release();
    runtime_.kernel_atomic_set(c.device, c.target, TIDAL_ATOMIC_ALL, rounds, stream, what);
    c.elapsed_ms = 0.0;
    if (l.stream) {
        runtime_.event_record(l.end, stream, "recording a timing event");
        runtime_.event_synchronize(l.end, what);
        c.elapsed_ms = runtime_.event_elapsed_ms(l.start, l.end, "reading a timing event");
    }
    settle(stream, c.device, what);
    check.finish();
    runtime_.memcpy(words.data(), c.target, words.size(), stream, what);
    settle(stream, c.device, what);
    c.result = check.wrong(words);
}

CheckRunner::Lane &CheckRunner::lane(int32_t device)
{
    if (lanes_.size() < static_cast<size_t>(runtime_.device_count()))
        lanes_.resize(static_cast<size_t>(runtime_.device_count()));
    Lane &l = lanes_[static_cast<size_t>(device)];
    if (l.ready)
        return l;
    // Without streams and timing events the kernels run on the default stream, untimed.
    if (runtime_.supports(RuntimeOp::stream_create) && runtime_.supports(RuntimeOp::event_create) &&
        runtime_.supports(RuntimeOp::event_record) && runtime_.supports(RuntimeOp::event_synchronize) &&
        runtime_.supports(RuntimeOp::event_elapsed_ms)) {
        l.stream = runtime_.stream_create(device, [&] { return fmt::format("creating a stream on device {}", device); });
        l.start = runtime_.event_create(device, "creating a timing event");
        l.end = runtime_.event_create(device, "creating a timing event");
    }
    l.ready = true;
    return l;
}

void CheckRunner::launch(const tidal_check &c, void *stream, uint64_t *mismatches, CallDescription what)
{
    switch (c.kind) {
    case TIDAL_CHECK_TOUCH_READ:
    case TIDAL_CHECK_TOUCH_WRITE:
        return runtime_.kernel_touch(c.device, c.target, c.size, c.kind == TIDAL_CHECK_TOUCH_WRITE, stream, what);
    case TIDAL_CHECK_PATTERN_FILL:
        return runtime_.kernel_pattern_fill(c.device, c.target, c.size, c.seed, stream, what);
    case TIDAL_CHECK_PATTERN_VERIFY:
        return runtime_.kernel_pattern_check(c.device, c.target, c.size, c.seed, mismatches, stream, what);
    case TIDAL_CHECK_COPY:
        return runtime_.kernel_copy(c.device, c.target, c.source, c.size, stream, what);
    case TIDAL_CHECK_TRIAD:
        return runtime_.kernel_triad(c.device, static_cast<double *>(c.target), static_cast<const double *>(c.source),
                                     static_cast<const double *>(c.source2), c.scalar, c.size, stream, what);
    case TIDAL_CHECK_ATOMIC_ADD:
        return runtime_.kernel_atomic_add(c.device, static_cast<uint64_t *>(c.target), c.size / 8,
                                          static_cast<uint32_t>(c.seed), stream, what);
    case TIDAL_CHECK_RUNTIME_COPY:
        return runtime_.memcpy(c.target, c.source, c.size, stream, what);
    case TIDAL_CHECK_SPIN:
        return runtime_.kernel_spin(c.device, c.seed, stream, what);
    case TIDAL_CHECK_ATOMIC_SET: // run() takes these on their own path
    case TIDAL_CHECK_ATOMIC_SET_SHARED:
    case TIDAL_CHECK_FORCE_32BIT: // never a kind: the C API refuses it before this
        break;
    }
    throw Error(TIDAL_ERROR_INVALID_ARGUMENT, fmt::format("check kind {} is not a tidal_check_kind", static_cast<int>(c.kind)),
                "use TIDAL_CHECK_* values");
}

void CheckRunner::run(tidal_check &c)
{
    validate(c);
    std::lock_guard lock(mutex_);
    Lane &l = lane(c.device);
    const uint32_t repeat = c.repeat ? c.repeat : 1;
    auto what = [&] {
        return fmt::format("validation kernel {} on device {} ({} bytes)", static_cast<int>(c.kind), c.device, c.size);
    };
    uint64_t mismatches = 0;
    // The caller's stream (after tidal_declare, say) when given: the kernel then runs after
    // whatever that stream waits for.
    void *stream = c.stream ? c.stream : l.stream;
    if (c.kind == TIDAL_CHECK_ATOMIC_SET || c.kind == TIDAL_CHECK_ATOMIC_SET_SHARED)
        return run_atomic_set(c, l, stream, what); // runs once: `repeat` is for timing loops
    if (l.stream)
        runtime_.event_record(l.start, stream, "recording a timing event");
    for (uint32_t i = 0; i < repeat; ++i)
        launch(c, stream, &mismatches, what);
    c.elapsed_ms = 0.0;
    if (l.stream) {
        runtime_.event_record(l.end, stream, "recording a timing event");
        runtime_.event_synchronize(l.end, what);
        c.elapsed_ms = runtime_.event_elapsed_ms(l.start, l.end, "reading a timing event");
    } else if (runtime_.supports(RuntimeOp::device_synchronize)) {
        runtime_.device_synchronize(c.device, what);
    }
    c.result = c.kind == TIDAL_CHECK_PATTERN_VERIFY ? mismatches : 0;
}

} // namespace tidal
