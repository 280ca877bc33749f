// PyTorch's CUDA allocator backed by tidal: the two entry points
// torch.cuda.memory.CUDAPluggableAllocator calls, plus what tidal.torch needs to attach a
// context and read counters. tidal.torch compiles this file on first use against the torch
// package's own headers (c10's exception types must be torch's, see below) and links it with
// libc10 and the libtidal the Python package loaded, so one libtidal serves both.
//
// Stream semantics: PyTorch hands malloc the current stream of the device and hands free the
// stream the block was allocated on. tidal_alloc_async / tidal_free_async give exactly the
// contract of PyTorch's caching allocator: a freed block is reused at once on its own stream
// (stream order makes that safe) and elsewhere only once the work queued before the free has
// finished. As with the caching allocator, a tensor used on a second stream must be kept alive
// by the program (record_stream has no hook in CUDAPluggableAllocator's Python API).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/types.h>

#include <c10/util/Exception.h>
#include <tidal/tidal.h>

#define TIDAL_TORCH_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// Counters per device index PyTorch passes; indices beyond this (no machine has them) are
// allocated and freed normally but not counted.
constexpr int kMaxDevices = 128;

struct alignas(64) DeviceCounters {
    std::atomic<uint64_t> allocations{0};
    std::atomic<uint64_t> frees{0};
    std::atomic<uint64_t> ooms{0};
    std::atomic<uint64_t> failures{0};      // allocations refused for another reason
    std::atomic<uint64_t> free_failures{0};
    std::atomic<uint64_t> current_bytes{0}; // bytes PyTorch holds, as it asked for them
    std::atomic<uint64_t> peak_bytes{0};
    std::atomic<uint64_t> allocated_bytes{0}; // cumulative
    std::atomic<uint64_t> freed_bytes{0};
};

DeviceCounters g_counters[kMaxDevices];

// tidal.torch.tag's scope on this thread (PyTorch allocates on the thread that creates a
// tensor). kind is a tidal_kind, or kPreferElastic: elastic memory where the runtime has a
// virtual-memory API, AUTO where it has not. Tensors below min_bytes take AUTO (an elastic
// allocation is rounded up to the runtime's granularity, 2 MiB on CUDA).
constexpr int kPreferElastic = -1;
struct Scope {
    bool active = false;
    char tag[TIDAL_TAG_MAX] = {};
    int kind = kPreferElastic;
    uint64_t min_bytes = 0;
};
thread_local Scope t_scope;
// Devices whose runtime answered NOT_SUPPORTED for elastic memory: kPreferElastic gives AUTO
// there without asking again.
std::atomic<bool> g_no_elastic[kMaxDevices];
std::atomic<tidal_context *> g_context{nullptr};
// Set once the interpreter has begun to exit (see tidal_torch_shutdown).
std::atomic<bool> g_exiting{false};

DeviceCounters *counters_of(int device)
{
    return device >= 0 && device < kMaxDevices ? &g_counters[device] : nullptr;
}

void raise_peak(std::atomic<uint64_t> &peak, uint64_t value)
{
    uint64_t seen = peak.load(std::memory_order_relaxed);
    while (seen < value && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
    }
}

// tidal_last_error() must be read before anything else can call tidal on this thread.
std::string failure_message(tidal_status status, size_t bytes, int device)
{
    const std::string detail = tidal_last_error();
    return "tidal.torch: allocating " + std::to_string(bytes) + " bytes on cuda:" +
           std::to_string(device) + " failed: " + tidal_status_name(status) + ": " + detail;
}

} // namespace

// What tidal.torch reads (mirrored by a ctypes structure there).
struct tidal_torch_stats {
    uint64_t allocations;
    uint64_t frees;
    uint64_t ooms;
    uint64_t failures;
    uint64_t free_failures;
    uint64_t current_bytes;
    uint64_t peak_bytes;
    uint64_t allocated_bytes;
    uint64_t freed_bytes;
};

// The context every allocation comes from; NULL detaches. Call before PyTorch allocates.
TIDAL_TORCH_EXPORT void tidal_torch_attach(tidal_context *ctx)
{
    g_context.store(ctx, std::memory_order_release);
}

// Called from a Python atexit handler. Tensors still alive then are freed during interpreter
// teardown and by PyTorch's own static destructors, which may run after libtidal's (it was
// loaded later, so the C runtime finalises it first): from here on frees are skipped, and the
// process's exit returns the memory.
TIDAL_TORCH_EXPORT void tidal_torch_shutdown(void)
{
    g_exiting.store(true, std::memory_order_release);
}

// Sets this thread's tidal.torch.tag scope: tensors allocated from here on get `tag` and
// `kind` (a tidal_kind or -1: elastic where possible), those below min_bytes kind AUTO.
// tag NULL ends the scope (tag "torch", kind AUTO). tidal.torch checked the tag's length.
TIDAL_TORCH_EXPORT void tidal_torch_scope_set(const char *tag, int kind, uint64_t min_bytes)
{
    if (tag == nullptr) {
        t_scope = Scope{};
        return;
    }
    t_scope.active = true;
    std::strncpy(t_scope.tag, tag, sizeof t_scope.tag - 1);
    t_scope.tag[sizeof t_scope.tag - 1] = '\0';
    t_scope.kind = kind;
    t_scope.min_bytes = min_bytes;
}

// tidal_alloc_async as this file's libtidal sees it: tidal.torch compares it with the address
// the Python package sees, to prove both use one loaded libtidal (one context, one registry).
TIDAL_TORCH_EXPORT const void *tidal_torch_libtidal_entry(void)
{
    return reinterpret_cast<const void *>(&tidal_alloc_async);
}

TIDAL_TORCH_EXPORT void *tidal_torch_malloc(ssize_t size, int device, void *stream)
{
    // PyTorch asks for 0 bytes for empty tensors: NULL is its own answer there (the caching
    // allocator does the same), and tidal_alloc would call size 0 an invalid argument.
    const size_t bytes = static_cast<size_t>(size);
    if (bytes == 0)
        return nullptr;
    tidal_context *ctx = g_context.load(std::memory_order_acquire);
    TORCH_CHECK(ctx != nullptr,
                "tidal.torch: PyTorch allocated through tidal before a context was attached; "
                "use tidal.torch.install() rather than loading the allocator by hand");

    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT; // kind AUTO: the configuration's policy decides
    desc.device = device;
    desc.tag = "torch";
    bool prefer_elastic = false;
    if (t_scope.active) {
        desc.tag = t_scope.tag;
        if (bytes >= t_scope.min_bytes) {
            prefer_elastic = t_scope.kind == kPreferElastic;
            if (!prefer_elastic)
                desc.kind = static_cast<tidal_kind>(t_scope.kind);
            else if (device < 0 || device >= kMaxDevices || !g_no_elastic[device].load(std::memory_order_relaxed))
                desc.kind = TIDAL_KIND_ELASTIC;
        }
    }
    void *ptr = nullptr;
    tidal_status status = tidal_alloc_async(ctx, bytes, &desc, stream, &ptr);
    if (status == TIDAL_ERROR_NOT_SUPPORTED && prefer_elastic && desc.kind == TIDAL_KIND_ELASTIC) {
        if (device >= 0 && device < kMaxDevices)
            g_no_elastic[device].store(true, std::memory_order_relaxed);
        desc.kind = TIDAL_KIND_AUTO;
        status = tidal_alloc_async(ctx, bytes, &desc, stream, &ptr);
    }
    DeviceCounters *c = counters_of(device);
    if (status != TIDAL_OK) {
        std::string message = failure_message(status, bytes, device);
        // Returning NULL would hand PyTorch a tensor at address 0 without any error, and
        // std::bad_alloc becomes a plain RuntimeError: only c10's own OutOfMemoryError turns
        // into torch.OutOfMemoryError in Python.
        if (status == TIDAL_ERROR_OUT_OF_MEMORY || status == TIDAL_ERROR_BUDGET_EXCEEDED) {
            if (c)
                c->ooms.fetch_add(1, std::memory_order_relaxed);
            TORCH_CHECK_WITH(OutOfMemoryError, false, message);
        }
        if (c)
            c->failures.fetch_add(1, std::memory_order_relaxed);
        TORCH_CHECK(false, message);
    }
    if (c) {
        c->allocations.fetch_add(1, std::memory_order_relaxed);
        c->allocated_bytes.fetch_add(bytes, std::memory_order_relaxed);
        const uint64_t now = c->current_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
        raise_peak(c->peak_bytes, now);
    }
    return ptr;
}

// PyTorch frees from destructors, where an exception would terminate the process: a failure
// is reported on stderr and the block is left to tidal_context_destroy.
TIDAL_TORCH_EXPORT void tidal_torch_free(void *ptr, ssize_t size, int device, void *stream) noexcept
{
    if (ptr == nullptr || g_exiting.load(std::memory_order_acquire))
        return;
    DeviceCounters *c = counters_of(device);
    tidal_context *ctx = g_context.load(std::memory_order_acquire);
    const tidal_status status =
        ctx != nullptr ? tidal_free_async(ctx, ptr, stream) : TIDAL_ERROR_INVALID_ARGUMENT;
    if (status != TIDAL_OK) {
        const char *detail = ctx != nullptr ? tidal_last_error() : "no tidal context is attached";
        std::fprintf(stderr, "tidal.torch: freeing %p (%zd bytes, cuda:%d) failed: %s: %s\n", ptr,
                     size, device, tidal_status_name(status), detail);
        if (c)
            c->free_failures.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (c) {
        const uint64_t bytes = static_cast<uint64_t>(size);
        c->frees.fetch_add(1, std::memory_order_relaxed);
        c->freed_bytes.fetch_add(bytes, std::memory_order_relaxed);
        c->current_bytes.fetch_sub(bytes, std::memory_order_relaxed);
    }
}

// Copies one device's counters. @return 0, or -1 for a device index outside the counters.
TIDAL_TORCH_EXPORT int tidal_torch_stats_get(int device, tidal_torch_stats *out)
{
    const DeviceCounters *c = counters_of(device);
    if (c == nullptr || out == nullptr)
        return -1;
    out->allocations = c->allocations.load(std::memory_order_relaxed);
    out->frees = c->frees.load(std::memory_order_relaxed);
    out->ooms = c->ooms.load(std::memory_order_relaxed);
    out->failures = c->failures.load(std::memory_order_relaxed);
    out->free_failures = c->free_failures.load(std::memory_order_relaxed);
    out->current_bytes = c->current_bytes.load(std::memory_order_relaxed);
    out->peak_bytes = c->peak_bytes.load(std::memory_order_relaxed);
    out->allocated_bytes = c->allocated_bytes.load(std::memory_order_relaxed);
    out->freed_bytes = c->freed_bytes.load(std::memory_order_relaxed);
    return 0;
}

// Starts the peak of one device again from what is held now. @return 0, or -1 for a bad index.
TIDAL_TORCH_EXPORT int tidal_torch_reset_peak(int device)
{
    DeviceCounters *c = counters_of(device);
    if (c == nullptr)
        return -1;
    c->peak_bytes.store(c->current_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return 0;
}
