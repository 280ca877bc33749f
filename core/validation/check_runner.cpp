#include "validation/check_runner.h"

#include <fmt/format.h>

#include "log/logger.h"
#include "status/error.h"

namespace tidal {

CheckRunner::~CheckRunner()
{
    const tidal_rt_ops &ops = runtime_.ops();
    void *rt = runtime_.instance();
    for (Lane &l : lanes_) {
        if (l.start)
            ops.event_destroy(rt, l.start);
        if (l.end)
            ops.event_destroy(rt, l.end);
        if (l.stream)
            ops.stream_destroy(rt, l.stream);
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
    if (c.kind < TIDAL_CHECK_TOUCH_READ || c.kind > TIDAL_CHECK_SPIN)
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

CheckRunner::Lane &CheckRunner::lane(int32_t device)
{
    if (lanes_.size() < static_cast<size_t>(runtime_.device_count()))
        lanes_.resize(static_cast<size_t>(runtime_.device_count()));
    Lane &l = lanes_[static_cast<size_t>(device)];
    if (l.ready)
        return l;
    const tidal_rt_ops &ops = runtime_.ops();
    void *rt = runtime_.instance();
    if (ops.stream_create && ops.event_create && ops.event_record && ops.event_synchronize && ops.event_elapsed_ms) {
        runtime_.check(ops.stream_create(rt, device, &l.stream), fmt::format("creating a stream on device {}", device));
        runtime_.check(ops.event_create(rt, device, &l.start), "creating a timing event");
        runtime_.check(ops.event_create(rt, device, &l.end), "creating a timing event");
    }
    l.ready = true;
    return l;
}

int CheckRunner::launch(const tidal_check &c, void *stream, uint64_t *mismatches)
{
    const tidal_rt_ops &ops = runtime_.ops();
    void *rt = runtime_.instance();
    auto missing = [&](const char *what) -> int {
        throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                    fmt::format("the {} runtime of this build has no {} kernel", runtime_.name(), what),
                    "build tidal with the validation kernels (features hip_kernels / nvcc_kernels)");
    };
    switch (c.kind) {
    case TIDAL_CHECK_TOUCH_READ:
    case TIDAL_CHECK_TOUCH_WRITE:
        return ops.kernel_touch ? ops.kernel_touch(rt, c.device, c.target, c.size, c.kind == TIDAL_CHECK_TOUCH_WRITE, stream)
                                : missing("touch");
    case TIDAL_CHECK_PATTERN_FILL:
        return ops.kernel_pattern_fill ? ops.kernel_pattern_fill(rt, c.device, c.target, c.size, c.seed, stream)
                                       : missing("pattern");
    case TIDAL_CHECK_PATTERN_VERIFY:
        return ops.kernel_pattern_check
                   ? ops.kernel_pattern_check(rt, c.device, c.target, c.size, c.seed, mismatches, stream)
                   : missing("pattern");
    case TIDAL_CHECK_COPY:
        return ops.kernel_copy ? ops.kernel_copy(rt, c.device, c.target, c.source, c.size, stream) : missing("copy");
    case TIDAL_CHECK_TRIAD:
        return ops.kernel_triad
                   ? ops.kernel_triad(rt, c.device, static_cast<double *>(c.target), static_cast<const double *>(c.source),
                                      static_cast<const double *>(c.source2), c.scalar, c.size, stream)
                   : missing("triad");
    case TIDAL_CHECK_ATOMIC_ADD:
        return ops.kernel_atomic_add ? ops.kernel_atomic_add(rt, c.device, static_cast<uint64_t *>(c.target), c.size / 8,
                                                             static_cast<uint32_t>(c.seed), stream)
                                     : missing("atomics");
    case TIDAL_CHECK_RUNTIME_COPY:
        return ops.memcpy ? ops.memcpy(rt, c.target, c.source, c.size, stream) : missing("memcpy");
    case TIDAL_CHECK_SPIN:
        return ops.kernel_spin ? ops.kernel_spin(rt, c.device, c.seed, stream) : missing("spin");
    case TIDAL_CHECK_FORCE_32BIT: // never a kind: the C API refuses it before this
        break;
    }
    return missing("such");
}

void CheckRunner::run(tidal_check &c)
{
    validate(c);
    std::lock_guard lock(mutex_);
    Lane &l = lane(c.device);
    const tidal_rt_ops &ops = runtime_.ops();
    void *rt = runtime_.instance();
    const uint32_t repeat = c.repeat ? c.repeat : 1;
    auto what = [&] {
        return fmt::format("validation kernel {} on device {} ({} bytes)", static_cast<int>(c.kind), c.device, c.size);
    };
    uint64_t mismatches = 0;
    // The caller's stream (after tidal_declare, say) when given: the kernel then runs after
    // whatever that stream waits for.
    void *stream = c.stream ? c.stream : l.stream;
    if (l.stream)
        runtime_.check(ops.event_record(rt, l.start, stream), "recording a timing event");
    for (uint32_t i = 0; i < repeat; ++i)
        runtime_.check(launch(c, stream, &mismatches), what);
    c.elapsed_ms = 0.0;
    if (l.stream) {
        runtime_.check(ops.event_record(rt, l.end, stream), "recording a timing event");
        runtime_.check(ops.event_synchronize(rt, l.end), what);
        float ms = 0.0f;
        runtime_.check(ops.event_elapsed_ms(rt, l.start, l.end, &ms), "reading a timing event");
        c.elapsed_ms = ms;
    } else if (ops.device_synchronize) {
        runtime_.check(ops.device_synchronize(rt, c.device), what);
    }
    c.result = c.kind == TIDAL_CHECK_PATTERN_VERIFY ? mismatches : 0;
}

} // namespace tidal
