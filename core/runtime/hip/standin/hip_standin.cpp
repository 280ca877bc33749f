// A stand-in for the HIP runtime (libamdhip64.so.5) on host memory, so that the real
// tidal-runtime-hip.so runs its whole contract in CI without an AMD GPU. It exports what the
// module imports (`nm -D --undefined-only`), kernel registration and launch included, plus the
// virtual-memory group, under the real library's symbol versions (libamdhip64.map). Every call
// is recorded, and what the HIP documentation forbids is recorded as a violation instead of
// being quietly accepted, so a test can check the module's conversation with HIP, not only its
// results. hip_standin.h describes the switches and the query interface.
//
// It includes the real hip_runtime_api.h on purpose: each function is then declared by HIP
// itself, so a signature that drifts from HIP's fails to compile here.
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include "hip_standin.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

// Not declared by hip_runtime_api.h: hipcc's generated code calls them (module constructors
// and the host stub of every kernel). The real library's first parameter is a
// std::vector<hipModule_t>*; only its address matters to callers.
extern "C" {
void **__hipRegisterFatBinary(const void *data);
void __hipRegisterFunction(void **modules, const void *host_function, char *device_function,
                           const char *device_name, unsigned int thread_limit, void *tid,
                           void *bid, dim3 *block_dim, dim3 *grid_dim, int *wave_size);
void __hipUnregisterFatBinary(void **modules);
}

namespace {

constexpr int kMaxDevices = 8;
constexpr uint64_t kDeviceMemory = uint64_t(64) << 30;
constexpr size_t kPage = 4096;
constexpr size_t kVmmGranularity = size_t(2) << 20;
constexpr int kLocationNone = hipInvalidDeviceId; // -2, what HIP reports for "no location"

enum class Kind { device, device_fine, host, managed, async };

const char *kind_name(Kind k)
{
    switch (k) {
    case Kind::device: return "hipMalloc";
    case Kind::device_fine: return "hipExtMallocWithFlags";
    case Kind::host: return "hipHostMalloc";
    case Kind::managed: return "hipMallocManaged";
    case Kind::async: return "hipMallocAsync";
    }
    return "?";
}

// Advice and migration state of one 4 KiB page of managed memory (HIP applies advice to whole
// pages, so a pool's sub-ranges are tracked exactly).
struct Page {
    int8_t preferred = kLocationNone;
    int8_t last_prefetch = kLocationNone;
    bool read_mostly = false;
    bool coarse = false;
    uint8_t accessed_by = 0; // bit d: device d; bit 7: the host
};

struct Allocation {
    size_t size = 0;
    Kind kind = Kind::device;
    int device = 0;
    std::vector<Page> pages; // managed only
};

struct Stream {
    int device = 0;
    unsigned flags = 0;
};

struct Event {
    unsigned flags = 0;
    bool recorded = false;
    std::chrono::steady_clock::time_point when{};
};

struct Handle { // hipMemGenericAllocationHandle_t
    int fd = -1;
    size_t size = 0;
    int device = 0;
    int mappings = 0;
    bool released = false;
};

struct Mapping {
    size_t size = 0;
    Handle *handle = nullptr;
};

struct Reservation {
    size_t size = 0;
    std::map<uintptr_t, Mapping> mappings;
};

struct Injection {
    std::string function;
    int error = 0;
    unsigned skip = 0;
    unsigned times = 0; // 0 = forever
};

struct LaunchConfig {
    dim3 grid;
    dim3 block;
    size_t shared = 0;
    hipStream_t stream = nullptr;
};

// Never destroyed: the module's destructors (kernel unregistration) may run after this
// library's own at process exit.
struct State {
    std::mutex mutex;
    std::map<uintptr_t, Allocation> allocations;
    std::map<uintptr_t, size_t> registered;
    std::map<void *, Stream> streams;
    std::map<void *, Event> events;
    std::map<uintptr_t, Reservation> reservations;
    std::set<Handle *> handles;
    std::vector<hip_standin_call> calls;
    std::vector<Injection> injections;
    std::vector<std::string> violations;
    std::map<const void *, std::string> kernels; // host stub -> device function name
    uint64_t pool_trim_bytes[kMaxDevices] = {};
    bool peer_enabled[kMaxDevices][kMaxDevices] = {}; // [device][peer]
    FILE *trace = nullptr;
};

State &state()
{
    static State *s = new State;
    return *s;
}

thread_local int t_device = 0;
thread_local hipError_t t_last = hipSuccess;
thread_local std::vector<LaunchConfig> t_configs;

// Read at each use, so a test may change them between contexts.
int env_int(const char *name, int fallback)
{
    const char *v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}
bool xnack_on() { return env_int("HIP_STANDIN_XNACK", 1) != 0; }
int device_count() { return std::clamp(env_int("HIP_STANDIN_DEVICES", 1), 0, kMaxDevices); }
bool vmm_on() { return env_int("HIP_STANDIN_VMM", 1) != 0; }
bool kernels_noop()
{
    const char *v = std::getenv("HIP_STANDIN_KERNELS");
    return v && std::strcmp(v, "noop") == 0;
}
bool valid_device(int d) { return d >= 0 && d < device_count(); }

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...)
{
    char buf[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    return buf;
}

// One HIP call: holds the lock for its whole body (HIP's own entry points are thread-safe;
// the stand-in is simply serialised), answers an injected failure, records the call and sets
// the thread's last error, as HIP does, when it fails.
class Call {
public:
    explicit Call(const char *function) : lock_(state().mutex)
    {
        std::snprintf(record_.function, sizeof record_.function, "%s", function);
        record_.device = t_device;
    }
    Call &ptr(const void *p) { record_.ptr = p; return *this; }
    Call &size(uint64_t s) { record_.size = s; return *this; }
    Call &arg(int64_t a) { record_.arg = a; return *this; }
    Call &device(int64_t d) { record_.device = d; return *this; }

    void violation(const std::string &what)
    {
        state().violations.push_back(std::string(record_.function) + ": " + what);
    }

    // The body of one HIP function: skipped when an injection fails the call; its result
    // is recorded either way.
    template <typename Body>
    hipError_t run(Body &&body)
    {
        const hipError_t injected_error = injected();
        return finish(injected_error != hipSuccess ? injected_error : body());
    }

    hipError_t finish(hipError_t rc)
    {
        record_.result = rc;
        State &s = state();
        s.calls.push_back(record_);
        if (const char *path = std::getenv("HIP_STANDIN_TRACE"); path && *path) {
            if (!s.trace)
                s.trace = std::fopen(path, "a");
            if (s.trace) {
                std::fprintf(s.trace, "%s ptr=%p size=%llu arg=%lld device=%lld -> %d\n",
                             record_.function, record_.ptr,
                             static_cast<unsigned long long>(record_.size),
                             static_cast<long long>(record_.arg),
                             static_cast<long long>(record_.device), rc);
                std::fflush(s.trace);
            }
        }
        if (rc != hipSuccess && rc != hipErrorNotReady)
            t_last = rc;
        return rc;
    }

private:
    // The error an injection asks for now, or hipSuccess.
    hipError_t injected()
    {
        for (auto it = state().injections.begin(); it != state().injections.end(); ++it) {
            if (it->function != record_.function)
                continue;
            if (it->skip > 0) {
                --it->skip;
                continue;
            }
            const auto error = static_cast<hipError_t>(it->error);
            if (it->times > 0 && --it->times == 0)
                state().injections.erase(it);
            return error;
        }
        return hipSuccess;
    }

    std::unique_lock<std::mutex> lock_;
    hip_standin_call record_{};
};

// The allocation containing p, or end().
std::map<uintptr_t, Allocation>::iterator find_allocation(const void *p)
{
    auto &all = state().allocations;
    const auto address = reinterpret_cast<uintptr_t>(p);
    auto it = all.upper_bound(address);
    if (it == all.begin())
        return all.end();
    --it;
    return address < it->first + it->second.size ? it : all.end();
}

bool registered(const void *p)
{
    const auto address = reinterpret_cast<uintptr_t>(p);
    for (const auto &[base, size] : state().registered)
        if (address >= base && address < base + size)
            return true;
    return false;
}

uint64_t device_bytes(int device)
{
    uint64_t bytes = 0;
    for (const auto &[base, a] : state().allocations)
        if (a.device == device && a.kind != Kind::host && a.kind != Kind::managed)
            bytes += a.size;
    for (const Handle *h : state().handles)
        if (h->device == device)
            bytes += h->size;
    return bytes;
}

hipError_t allocate(Call &call, Kind kind, size_t size, void **out)
{
    if (out == nullptr)
        return hipErrorInvalidValue;
    if (size == 0) {
        *out = nullptr;
        return hipSuccess;
    }
    const bool on_device = kind != Kind::host && kind != Kind::managed;
    if (on_device && (size > kDeviceMemory || device_bytes(t_device) > kDeviceMemory - size))
        return hipErrorOutOfMemory;
    // Device memory is 256-byte aligned by contract; managed memory starts on a page, as
    // HIP's does, so advice on it covers whole pages of this allocation only.
    const size_t alignment = kind == Kind::managed || kind == Kind::host ? kPage : 256;
    void *p = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
    if (p == nullptr)
        return hipErrorOutOfMemory;
    Allocation a;
    a.size = size;
    a.kind = kind;
    a.device = t_device;
    if (kind == Kind::managed)
        a.pages.resize((size + kPage - 1) / kPage);
    state().allocations[reinterpret_cast<uintptr_t>(p)] = std::move(a);
    *out = p;
    call.ptr(p);
    return hipSuccess;
}

// Frees an allocation made by one of `allowed`; anything else is a violation.
hipError_t release(Call &call, void *p, std::initializer_list<Kind> allowed)
{
    call.ptr(p);
    if (p == nullptr)
        return hipSuccess;
    auto &all = state().allocations;
    auto it = all.find(reinterpret_cast<uintptr_t>(p));
    if (it == all.end()) {
        call.violation(format("%p is not the start of a live allocation (freed twice, or never "
                              "allocated by HIP)", p));
        return hipErrorInvalidValue;
    }
    Allocation &a = it->second;
    if (std::find(allowed.begin(), allowed.end(), a.kind) == allowed.end()) {
        call.violation(format("%p was allocated by %s", p, kind_name(a.kind)));
        return hipErrorInvalidValue;
    }
    const auto coarse = std::count_if(a.pages.begin(), a.pages.end(),
                                      [](const Page &page) { return page.coarse; });
    if (coarse > 0)
        call.violation(format("%p freed with coarse-grain advice still set on %ld of its %zu "
                              "pages (hipMemAdviseUnsetCoarseGrain must come first)",
                              p, static_cast<long>(coarse), a.pages.size()));
    std::free(p);
    all.erase(it);
    return hipSuccess;
}

// A stream or event handle: an address never handed out before and never dereferenced, so a
// handle used after its destruction can never pass for a live one.
void *new_handle()
{
    static uintptr_t next = uintptr_t(0x5eed) << 32;
    next += 64;
    return reinterpret_cast<void *>(next);
}

bool valid_stream(Call &call, hipStream_t s)
{
    if (s == nullptr || state().streams.count(s) > 0)
        return true;
    call.violation(format("stream %p is not a live stream", static_cast<void *>(s)));
    return false;
}

bool valid_event(Call &call, hipEvent_t e)
{
    if (e != nullptr && state().events.count(e) > 0)
        return true;
    call.violation(format("event %p is not a live event", static_cast<void *>(e)));
    return false;
}

// The pages of a managed allocation covering [p, p + size), or nullptr when the range is not
// inside one managed allocation.
Allocation *managed_range(const void *p, size_t size, size_t &first, size_t &last)
{
    auto it = find_allocation(p);
    if (it == state().allocations.end() || it->second.kind != Kind::managed)
        return nullptr;
    const uintptr_t offset = reinterpret_cast<uintptr_t>(p) - it->first;
    if (size == 0 || size > it->second.size - offset)
        return nullptr;
    first = offset / kPage;
    last = (offset + size - 1) / kPage;
    return &it->second;
}

// Copies or fills must stay inside a HIP allocation they start in.
void check_bounds(Call &call, const void *p, size_t size, const char *what)
{
    auto it = find_allocation(p);
    if (it == state().allocations.end())
        return;
    const uintptr_t offset = reinterpret_cast<uintptr_t>(p) - it->first;
    if (size > it->second.size - offset)
        call.violation(format("%s [%p, +%zu) runs past its allocation's end", what, p, size));
}

// The reservation holding all of [at, at + size), or nullptr.
Reservation *reservation_of(uintptr_t at, size_t size)
{
    auto &all = state().reservations;
    auto it = all.upper_bound(at);
    if (it == all.begin())
        return nullptr;
    --it;
    return at - it->first < it->second.size && size <= it->second.size - (at - it->first)
               ? &it->second
               : nullptr;
}

// A handle's physical memory goes once it is released and its last mapping is gone (CUDA's
// rule, which HIP follows).
void drop_if_unused(Handle *h)
{
    if (h->mappings > 0 || !h->released)
        return;
    close(h->fd);
    state().handles.erase(h);
    delete h;
}

void unmapped(Handle *h)
{
    --h->mappings;
    drop_if_unused(h);
}

struct ErrorText {
    int code;
    const char *name;
    const char *text;
};
constexpr ErrorText kErrors[] = {
    {hipSuccess, "hipSuccess", "no error"},
    {hipErrorInvalidValue, "hipErrorInvalidValue", "invalid argument"},
    {hipErrorOutOfMemory, "hipErrorOutOfMemory", "out of memory"},
    {hipErrorNotInitialized, "hipErrorNotInitialized", "initialization error"},
    {hipErrorInvalidDeviceFunction, "hipErrorInvalidDeviceFunction", "invalid device function"},
    {hipErrorNoDevice, "hipErrorNoDevice", "no ROCm-capable device is detected"},
    {hipErrorInvalidDevice, "hipErrorInvalidDevice", "invalid device ordinal"},
    {hipErrorNoBinaryForGpu, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"},
    {hipErrorInvalidHandle, "hipErrorInvalidHandle", "invalid resource handle"},
    {hipErrorNotReady, "hipErrorNotReady", "device not ready"},
    {hipErrorIllegalAddress, "hipErrorIllegalAddress", "an illegal memory access was encountered"},
    {hipErrorHostMemoryAlreadyRegistered, "hipErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"},
    {hipErrorHostMemoryNotRegistered, "hipErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"},
    {hipErrorNotSupported, "hipErrorNotSupported", "operation not supported"},
    {hipErrorUnknown, "hipErrorUnknown", "unknown error"},
};

const ErrorText *error_text(hipError_t e)
{
    for (const ErrorText &t : kErrors)
        if (t.code == e)
            return &t;
    return nullptr;
}

void write_text(const std::string &text, char *out, size_t capacity)
{
    if (out == nullptr || capacity == 0)
        return;
    const size_t n = std::min(text.size(), capacity - 1);
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
}

} // namespace

extern "C" {

// ---- the stand-in's own interface (hip_standin.h) ----------------------------------------

size_t hip_standin_call_count(void)
{
    std::lock_guard lock(state().mutex);
    return state().calls.size();
}

int hip_standin_call_get(size_t index, hip_standin_call *out)
{
    std::lock_guard lock(state().mutex);
    if (out == nullptr || index >= state().calls.size())
        return -1;
    *out = state().calls[index];
    return 0;
}

void hip_standin_reset(void)
{
    std::lock_guard lock(state().mutex);
    state().calls.clear();
    state().injections.clear();
    state().violations.clear();
}

void hip_standin_inject(const char *function, int error, unsigned skip, unsigned times)
{
    std::lock_guard lock(state().mutex);
    state().injections.push_back(Injection{function ? function : "", error, skip, times});
}

size_t hip_standin_violations(char *text, size_t capacity)
{
    std::lock_guard lock(state().mutex);
    std::string all;
    for (const std::string &v : state().violations)
        all += v + "\n";
    write_text(all, text, capacity);
    return state().violations.size();
}

size_t hip_standin_live(char *text, size_t capacity)
{
    std::lock_guard lock(state().mutex);
    const State &s = state();
    std::string all;
    for (const auto &[base, a] : s.allocations)
        all += format("%s %#lx size %zu device %d\n", kind_name(a.kind),
                      static_cast<unsigned long>(base), a.size, a.device);
    for (const auto &[base, size] : s.registered)
        all += format("hipHostRegister %#lx size %zu\n", static_cast<unsigned long>(base), size);
    for (const auto &[stream, info] : s.streams)
        all += format("stream %p device %d\n", stream, info.device);
    for (const auto &[event, info] : s.events)
        all += format("event %p\n", event);
    for (const auto &[base, r] : s.reservations)
        all += format("hipMemAddressReserve %#lx size %zu\n", static_cast<unsigned long>(base), r.size);
    for (const Handle *h : s.handles)
        all += format("hipMemCreate handle %p size %zu\n", static_cast<const void *>(h), h->size);
    write_text(all, text, capacity);
    return s.allocations.size() + s.registered.size() + s.streams.size() + s.events.size() +
           s.reservations.size() + s.handles.size();
}

// ---- errors and versions ------------------------------------------------------------------

hipError_t hipGetLastError(void)
{
    Call call("hipGetLastError");
    const hipError_t last = t_last;
    t_last = hipSuccess;
    call.arg(last);
    (void)call.finish(hipSuccess);
    return last;
}

hipError_t hipPeekAtLastError(void)
{
    Call call("hipPeekAtLastError");
    call.arg(t_last);
    (void)call.finish(hipSuccess);
    return t_last;
}

const char *hipGetErrorName(hipError_t e)
{
    const ErrorText *t = error_text(e);
    return t ? t->name : "hipErrorUnknown";
}

const char *hipGetErrorString(hipError_t e)
{
    const ErrorText *t = error_text(e);
    return t ? t->text : "unknown error";
}

// The runtime and the driver are one here, both of the headers' version.
static hipError_t report_version(const char *function, int *version)
{
    Call call(function);
    return call.run([&]() -> hipError_t {
        if (version == nullptr)
            return hipErrorInvalidValue;
        *version = HIP_VERSION;
        return hipSuccess;
    });
}

hipError_t hipRuntimeGetVersion(int *version) { return report_version("hipRuntimeGetVersion", version); }
hipError_t hipDriverGetVersion(int *version) { return report_version("hipDriverGetVersion", version); }

// ---- devices ------------------------------------------------------------------------------

hipError_t hipGetDeviceCount(int *count)
{
    Call call("hipGetDeviceCount");
    return call.run([&]() -> hipError_t {
        if (count == nullptr)
            return hipErrorInvalidValue;
        *count = device_count();
        call.arg(*count);
        return *count > 0 ? hipSuccess : hipErrorNoDevice;
    });
}

hipError_t hipGetDevice(int *device)
{
    Call call("hipGetDevice");
    return call.run([&]() -> hipError_t {
        if (device == nullptr)
            return hipErrorInvalidValue;
        *device = t_device;
        return hipSuccess;
    });
}

hipError_t hipSetDevice(int device)
{
    Call call("hipSetDevice");
    call.device(device);
    return call.run([&]() -> hipError_t {
        if (!valid_device(device))
            return hipErrorInvalidDevice;
        t_device = device;
        return hipSuccess;
    });
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *prop, int device)
{
    Call call("hipGetDeviceProperties");
    call.device(device);
    return call.run([&]() -> hipError_t {
        if (prop == nullptr)
            return hipErrorInvalidValue;
        if (!valid_device(device))
            return hipErrorInvalidDevice;
        *prop = hipDeviceProp_t{};
        std::snprintf(prop->name, sizeof prop->name, "HIP stand-in %d", device);
        std::snprintf(prop->gcnArchName, sizeof prop->gcnArchName, "gfx90a:sramecc+:%s",
                      xnack_on() ? "xnack+" : "xnack-");
        prop->gcnArch = 910;
        prop->totalGlobalMem = kDeviceMemory;
        prop->l2CacheSize = 8 << 20;
        prop->multiProcessorCount = 110;
        prop->warpSize = 64;
        prop->maxThreadsPerBlock = 1024;
        prop->major = 9;
        prop->minor = 0;
        prop->managedMemory = 1;
        prop->concurrentManagedAccess = 1;
        prop->pageableMemoryAccess = xnack_on() ? 1 : 0;
        prop->pciBusID = 0xc1 + device;
        return hipSuccess;
    });
}

hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attribute, int device)
{
    Call call("hipDeviceGetAttribute");
    call.arg(attribute).device(device);
    return call.run([&]() -> hipError_t {
        if (value == nullptr)
            return hipErrorInvalidValue;
        if (!valid_device(device))
            return hipErrorInvalidDevice;
        switch (attribute) {
        case hipDeviceAttributeManagedMemory:
        case hipDeviceAttributeConcurrentManagedAccess:
            *value = 1; // on AMD these read 1 with XNACK off too
            return hipSuccess;
        case hipDeviceAttributePageableMemoryAccess:
            *value = xnack_on() ? 1 : 0;
            return hipSuccess;
        default:
            // Including hipDeviceAttributeHostNativeAtomicSupported: "CUDA only" in HIP 5.2.
            return hipErrorInvalidValue;
        }
    });
}

hipError_t hipDeviceGetPCIBusId(char *bus_id, int length, int device)
{
    Call call("hipDeviceGetPCIBusId");
    call.device(device);
    return call.run([&]() -> hipError_t {
        if (bus_id == nullptr || length <= 0)
            return hipErrorInvalidValue;
        if (!valid_device(device))
            return hipErrorInvalidDevice;
        std::snprintf(bus_id, static_cast<size_t>(length), "0000:%02x:00.0", 0xc1 + device);
        return hipSuccess;
    });
}

hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    Call call("hipMemGetInfo");
    return call.run([&]() -> hipError_t {
        if (free_bytes == nullptr || total_bytes == nullptr)
            return hipErrorInvalidValue;
        *total_bytes = kDeviceMemory;
        *free_bytes = kDeviceMemory - device_bytes(t_device);
        return hipSuccess;
    });
}

hipError_t hipDeviceSynchronize(void)
{
    Call call("hipDeviceSynchronize");
    return call.run([&]() -> hipError_t {
        return hipSuccess;
    });
}

// ---- memory: ptr = the pointer returned or freed, size, arg = flags, device = current ------

// One allocating function of HIP; `flags_valid` says whether HIP accepts its flags.
static hipError_t allocation(const char *function, Kind kind, void **ptr, size_t size,
                             unsigned flags, bool flags_valid)
{
    Call call(function);
    call.size(size).arg(flags);
    return call.run([&]() -> hipError_t {
        return flags_valid ? allocate(call, kind, size, ptr) : hipErrorInvalidValue;
    });
}

static hipError_t deallocation(const char *function, void *ptr, std::initializer_list<Kind> allowed)
{
    Call call(function);
    return call.run([&]() -> hipError_t { return release(call, ptr, allowed); });
}

hipError_t hipMalloc(void **ptr, size_t size)
{
    return allocation("hipMalloc", Kind::device, ptr, size, 0, true);
}

hipError_t hipExtMallocWithFlags(void **ptr, size_t size, unsigned int flags)
{
    return allocation("hipExtMallocWithFlags", Kind::device_fine, ptr, size, flags,
                      flags == hipDeviceMallocDefault || flags == hipDeviceMallocFinegrained);
}

hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    return allocation("hipHostMalloc", Kind::host, ptr, size, flags, true);
}

hipError_t hipMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    return allocation("hipMallocManaged", Kind::managed, ptr, size, flags,
                      flags == hipMemAttachGlobal || flags == hipMemAttachHost);
}

hipError_t hipFree(void *ptr)
{
    return deallocation("hipFree", ptr, {Kind::device, Kind::device_fine, Kind::managed});
}

hipError_t hipHostFree(void *ptr)
{
    return deallocation("hipHostFree", ptr, {Kind::host});
}

hipError_t hipMallocAsync(void **ptr, size_t size, hipStream_t stream)
{
    Call call("hipMallocAsync");
    call.size(size);
    return call.run([&]() -> hipError_t {
        if (!valid_stream(call, stream))
            return hipErrorInvalidHandle;
        return allocate(call, Kind::async, size, ptr);
    });
}

hipError_t hipFreeAsync(void *ptr, hipStream_t stream)
{
    Call call("hipFreeAsync");
    return call.run([&]() -> hipError_t {
        if (!valid_stream(call, stream))
            return hipErrorInvalidHandle;
        return release(call, ptr, {Kind::async});
    });
}

// One pool per device; its handle is the address of the device's trim counter.
hipError_t hipDeviceGetMemPool(hipMemPool_t *pool, int device)
{
    Call call("hipDeviceGetMemPool");
    call.device(device);
    return call.run([&]() -> hipError_t {
        if (pool == nullptr)
            return hipErrorInvalidValue;
        if (!valid_device(device))
            return hipErrorInvalidDevice;
        *pool = reinterpret_cast<hipMemPool_t>(&state().pool_trim_bytes[device]);
        return hipSuccess;
    });
}

static int pool_device(hipMemPool_t pool)
{
    const auto *p = reinterpret_cast<const uint64_t *>(pool);
    const uint64_t *first = state().pool_trim_bytes;
    return p >= first && p < first + kMaxDevices ? static_cast<int>(p - first) : -1;
}

hipError_t hipMemPoolTrimTo(hipMemPool_t pool, size_t keep)
{
    Call call("hipMemPoolTrimTo");
    call.size(keep);
    return call.run([&]() -> hipError_t {
        if (pool_device(pool) < 0)
            return hipErrorInvalidValue;
        return hipSuccess; // freed blocks are given back at once: nothing to trim
    });
}

hipError_t hipMemPoolGetAttribute(hipMemPool_t pool, hipMemPoolAttr attr, void *value)
{
    Call call("hipMemPoolGetAttribute");
    call.arg(attr);
    return call.run([&]() -> hipError_t {
        const int device = pool_device(pool);
        if (device < 0 || value == nullptr)
            return hipErrorInvalidValue;
        uint64_t bytes = 0;
        for (const auto &[base, a] : state().allocations)
            if (a.kind == Kind::async && a.device == device)
                bytes += a.size;
        switch (attr) {
        case hipMemPoolAttrReservedMemCurrent:
        case hipMemPoolAttrUsedMemCurrent:
            *static_cast<uint64_t *>(value) = bytes;
            return hipSuccess;
        default:
            return hipErrorInvalidValue;
        }
    });
}

hipError_t hipHostRegister(void *ptr, size_t size, unsigned int flags)
{
    Call call("hipHostRegister");
    call.ptr(ptr).size(size).arg(flags);
    return call.run([&]() -> hipError_t {
        if (ptr == nullptr || size == 0)
            return hipErrorInvalidValue;
        const auto begin = reinterpret_cast<uintptr_t>(ptr);
        for (const auto &[base, length] : state().registered)
            if (begin < base + length && base < begin + size)
                return hipErrorHostMemoryAlreadyRegistered;
        state().registered[begin] = size;
        return hipSuccess;
    });
}

hipError_t hipHostUnregister(void *ptr)
{
    Call call("hipHostUnregister");
    call.ptr(ptr);
    return call.run([&]() -> hipError_t {
        if (state().registered.erase(reinterpret_cast<uintptr_t>(ptr)) == 0)
            return hipErrorHostMemoryNotRegistered;
        return hipSuccess;
    });
}

hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attributes, const void *ptr)
{
    Call call("hipPointerGetAttributes");
    call.ptr(ptr);
    return call.run([&]() -> hipError_t {
        if (attributes == nullptr)
            return hipErrorInvalidValue;
        *attributes = hipPointerAttribute_t{};
        auto it = find_allocation(ptr);
        if (it == state().allocations.end()) {
            if (!registered(ptr))
                return hipErrorInvalidValue; // ROCm 5: memory HIP does not know
            attributes->memoryType = hipMemoryTypeHost;
            attributes->device = t_device;
            attributes->hostPointer = const_cast<void *>(ptr);
            return hipSuccess;
        }
        const Allocation &a = it->second;
        attributes->device = a.device;
        attributes->devicePointer = reinterpret_cast<void *>(it->first);
        switch (a.kind) {
        case Kind::host:
            attributes->memoryType = hipMemoryTypeHost;
            attributes->hostPointer = attributes->devicePointer;
            break;
        case Kind::managed:
            attributes->memoryType = hipMemoryTypeUnified;
            attributes->isManaged = 1;
            attributes->hostPointer = attributes->devicePointer;
            break;
        default:
            attributes->memoryType = hipMemoryTypeDevice;
            break;
        }
        return hipSuccess;
    });
}

// ---- copies: ptr = dst, size, arg = hipMemcpyKind / the fill value ------------------------

// hipMemcpy is hipMemcpyAsync on the NULL stream, completed before it returns; here every
// copy is.
// The copy itself, for hipMemcpy* and hipMemcpyPeer*.
static hipError_t copy_body(Call &call, void *dst, const void *src, size_t size, hipStream_t stream)
{
    if (!valid_stream(call, stream))
        return hipErrorInvalidHandle;
    if (size > 0 && (dst == nullptr || src == nullptr))
        return hipErrorInvalidValue;
    check_bounds(call, dst, size, "destination");
    check_bounds(call, src, size, "source");
    if (size > 0)
        std::memmove(dst, src, size);
    return hipSuccess;
}

static hipError_t copy(const char *function, void *dst, const void *src, size_t size,
                       hipMemcpyKind kind, hipStream_t stream)
{
    Call call(function);
    call.ptr(dst).size(size).arg(kind);
    return call.run([&]() -> hipError_t { return copy_body(call, dst, src, size, stream); });
}

hipError_t hipMemcpy(void *dst, const void *src, size_t size, hipMemcpyKind kind)
{
    return copy("hipMemcpy", dst, src, size, kind, nullptr);
}

hipError_t hipMemcpyAsync(void *dst, const void *src, size_t size, hipMemcpyKind kind,
                          hipStream_t stream)
{
    return copy("hipMemcpyAsync", dst, src, size, kind, stream);
}

// ---- peers: every pair of stand-in devices is one XGMI hop apart, unless
// HIP_STANDIN_NO_PEER=1 (then PCIe, two hops, and no peer access) ----------------------------

static bool peers_allowed() { return env_int("HIP_STANDIN_NO_PEER", 0) == 0; }

hipError_t hipDeviceCanAccessPeer(int *can_access, int device, int peer)
{
    Call call("hipDeviceCanAccessPeer");
    call.device(device).arg(peer);
    return call.run([&]() -> hipError_t {
        if (can_access == nullptr)
            return hipErrorInvalidValue;
        if (!valid_device(device) || !valid_device(peer))
            return hipErrorInvalidDevice;
        *can_access = device != peer && peers_allowed() ? 1 : 0;
        return hipSuccess;
    });
}

hipError_t hipExtGetLinkTypeAndHopCount(int device1, int device2, uint32_t *linktype, uint32_t *hopcount)
{
    Call call("hipExtGetLinkTypeAndHopCount");
    call.device(device1).arg(device2);
    return call.run([&]() -> hipError_t {
        if (linktype == nullptr || hopcount == nullptr)
            return hipErrorInvalidValue;
        if (!valid_device(device1) || !valid_device(device2))
            return hipErrorInvalidDevice;
        *linktype = peers_allowed() ? 4 : 2; // HSA_AMD_LINK_INFO_TYPE_XGMI : _PCIE
        *hopcount = peers_allowed() ? 1 : 2;
        return hipSuccess;
    });
}

hipError_t hipDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    Call call("hipDeviceEnablePeerAccess");
    call.arg(peer);
    return call.run([&]() -> hipError_t {
        if (flags != 0)
            return hipErrorInvalidValue;
        if (!valid_device(peer) || peer == t_device)
            return hipErrorInvalidDevice;
        if (!peers_allowed())
            return hipErrorPeerAccessUnsupported;
        bool &enabled = state().peer_enabled[t_device][peer];
        if (enabled)
            return hipErrorPeerAccessAlreadyEnabled;
        enabled = true;
        return hipSuccess;
    });
}

static hipError_t copy_peer(const char *function, void *dst, int dst_device, const void *src, int src_device,
                            size_t size, hipStream_t stream)
{
    Call call(function);
    call.ptr(dst).size(size).device(dst_device).arg(src_device);
    return call.run([&]() -> hipError_t {
        if (!valid_device(dst_device) || !valid_device(src_device))
            return hipErrorInvalidDevice;
        return copy_body(call, dst, src, size, stream);
    });
}

hipError_t hipMemcpyPeer(void *dst, int dst_device, const void *src, int src_device, size_t size)
{
    return copy_peer("hipMemcpyPeer", dst, dst_device, src, src_device, size, nullptr);
}

hipError_t hipMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device, size_t size,
                              hipStream_t stream)
{
    return copy_peer("hipMemcpyPeerAsync", dst, dst_device, src, src_device, size, stream);
}

hipError_t hipMemsetAsync(void *dst, int value, size_t size, hipStream_t stream)
{
    Call call("hipMemsetAsync");
    call.ptr(dst).size(size).arg(value);
    return call.run([&]() -> hipError_t {
        if (!valid_stream(call, stream))
            return hipErrorInvalidHandle;
        if (size > 0 && dst == nullptr)
            return hipErrorInvalidValue;
        check_bounds(call, dst, size, "destination");
        if (size > 0)
            std::memset(dst, value, size);
        return hipSuccess;
    });
}

// ---- managed memory: ptr, size, arg = advice / attribute number, device = location -------

hipError_t hipMemAdvise(const void *ptr, size_t size, hipMemoryAdvise advice, int device)
{
    Call call("hipMemAdvise");
    call.ptr(ptr).size(size).arg(advice).device(device);
    return call.run([&]() -> hipError_t {
        switch (advice) {
        case hipMemAdviseSetReadMostly:
        case hipMemAdviseUnsetReadMostly:
        case hipMemAdviseSetPreferredLocation:
        case hipMemAdviseUnsetPreferredLocation:
        case hipMemAdviseSetAccessedBy:
        case hipMemAdviseUnsetAccessedBy:
        case hipMemAdviseSetCoarseGrain:
        case hipMemAdviseUnsetCoarseGrain:
            break;
        default:
            call.violation(format("advice %d is not a hipMemoryAdvise value", static_cast<int>(advice)));
            return hipErrorInvalidValue;
        }
        if (device != hipCpuDeviceId && !valid_device(device))
            return hipErrorInvalidDevice;
        size_t first = 0, last = 0;
        Allocation *a = managed_range(ptr, size, first, last);
        if (a == nullptr) {
            call.violation(format("[%p, +%zu) is not inside one managed allocation", ptr, size));
            return hipErrorInvalidValue;
        }
        const uint8_t bit = device == hipCpuDeviceId ? 0x80 : static_cast<uint8_t>(1u << device);
        for (size_t i = first; i <= last; ++i) {
            Page &page = a->pages[i];
            switch (advice) {
            case hipMemAdviseSetReadMostly: page.read_mostly = true; break;
            case hipMemAdviseUnsetReadMostly: page.read_mostly = false; break;
            case hipMemAdviseSetPreferredLocation: page.preferred = static_cast<int8_t>(device); break;
            case hipMemAdviseUnsetPreferredLocation: page.preferred = kLocationNone; break;
            case hipMemAdviseSetAccessedBy: page.accessed_by |= bit; break;
            case hipMemAdviseUnsetAccessedBy: page.accessed_by &= static_cast<uint8_t>(~bit); break;
            case hipMemAdviseSetCoarseGrain: page.coarse = true; break;
            case hipMemAdviseUnsetCoarseGrain: page.coarse = false; break;
            }
        }
        return hipSuccess;
    });
}

hipError_t hipMemPrefetchAsync(const void *ptr, size_t size, int device, hipStream_t stream)
{
    Call call("hipMemPrefetchAsync");
    call.ptr(ptr).size(size).device(device);
    return call.run([&]() -> hipError_t {
        if (!valid_stream(call, stream))
            return hipErrorInvalidHandle;
        if (device != hipCpuDeviceId && !valid_device(device))
            return hipErrorInvalidDevice;
        size_t first = 0, last = 0;
        Allocation *a = managed_range(ptr, size, first, last);
        if (a == nullptr) {
            if (find_allocation(ptr) != state().allocations.end())
                return hipErrorInvalidValue; // device or pinned memory cannot move
            // Memory HIP did not allocate migrates only where the system allocator's pages are
            // visible to the GPU (XNACK on).
            return xnack_on() ? hipSuccess : hipErrorNotSupported;
        }
        for (size_t i = first; i <= last; ++i)
            a->pages[i].last_prefetch = static_cast<int8_t>(device);
        return hipSuccess;
    });
}

hipError_t hipMemRangeGetAttribute(void *data, size_t data_size, hipMemRangeAttribute attribute,
                                   const void *ptr, size_t count)
{
    Call call("hipMemRangeGetAttribute");
    call.ptr(ptr).size(count).arg(attribute);
    return call.run([&]() -> hipError_t {
        if (data == nullptr || data_size != sizeof(int32_t))
            return hipErrorInvalidValue;
        size_t first = 0, last = 0;
        const Allocation *a = managed_range(ptr, count, first, last);
        if (a == nullptr)
            return hipErrorInvalidValue;
        // A value every page agrees on, or `mixed`.
        auto uniform = [&](auto field, int32_t mixed) {
            const int32_t v = field(a->pages[first]);
            for (size_t i = first + 1; i <= last; ++i)
                if (field(a->pages[i]) != v)
                    return mixed;
            return v;
        };
        int32_t value = 0;
        switch (attribute) {
        case hipMemRangeAttributeReadMostly:
            value = uniform([](const Page &p) { return int32_t(p.read_mostly); }, 0);
            break;
        case hipMemRangeAttributePreferredLocation:
            value = uniform([](const Page &p) { return int32_t(p.preferred); }, kLocationNone);
            break;
        case hipMemRangeAttributeLastPrefetchLocation:
            value = uniform([](const Page &p) { return int32_t(p.last_prefetch); }, kLocationNone);
            break;
        case hipMemRangeAttributeCoherencyMode:
            value = uniform([](const Page &p) { return int32_t(p.coarse); },
                            hipMemRangeCoherencyModeIndeterminate);
            break;
        default:
            call.violation(format("attribute %d is not a single-int hipMemRangeAttribute",
                                  static_cast<int>(attribute)));
            return hipErrorInvalidValue;
        }
        std::memcpy(data, &value, sizeof value);
        return hipSuccess;
    });
}

// ---- streams and events: ptr = the handle, arg = flags -----------------------------------
// Work runs when it is queued, so every stream and event is complete at once.

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    Call call("hipStreamCreateWithFlags");
    call.arg(flags);
    return call.run([&]() -> hipError_t {
        if (stream == nullptr)
            return hipErrorInvalidValue;
        void *handle = new_handle();
        state().streams[handle] = Stream{t_device, flags};
        *stream = reinterpret_cast<hipStream_t>(handle);
        call.ptr(handle);
        return hipSuccess;
    });
}

hipError_t hipStreamDestroy(hipStream_t stream)
{
    Call call("hipStreamDestroy");
    call.ptr(stream);
    return call.run([&]() -> hipError_t {
        if (stream == nullptr || !valid_stream(call, stream))
            return hipErrorInvalidHandle;
        state().streams.erase(stream);
        return hipSuccess;
    });
}

hipError_t hipStreamSynchronize(hipStream_t stream)
{
    Call call("hipStreamSynchronize");
    call.ptr(stream);
    return call.run([&]() -> hipError_t {
        return valid_stream(call, stream) ? hipSuccess : hipErrorInvalidHandle;
    });
}

hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
    Call call("hipStreamWaitEvent");
    call.ptr(stream).arg(flags);
    return call.run([&]() -> hipError_t {
        if (!valid_stream(call, stream) || !valid_event(call, event))
            return hipErrorInvalidHandle;
        if (flags != 0)
            return hipErrorInvalidValue; // "flags: must be 0"
        return hipSuccess;
    });
}

hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
    Call call("hipEventCreateWithFlags");
    call.arg(flags);
    return call.run([&]() -> hipError_t {
        if (event == nullptr)
            return hipErrorInvalidValue;
        void *handle = new_handle();
        state().events[handle] = Event{flags, false, {}};
        *event = reinterpret_cast<hipEvent_t>(handle);
        call.ptr(handle);
        return hipSuccess;
    });
}

hipError_t hipEventDestroy(hipEvent_t event)
{
    Call call("hipEventDestroy");
    call.ptr(event);
    return call.run([&]() -> hipError_t {
        if (!valid_event(call, event))
            return hipErrorInvalidHandle;
        state().events.erase(event);
        return hipSuccess;
    });
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
    Call call("hipEventRecord");
    call.ptr(event);
    return call.run([&]() -> hipError_t {
        if (!valid_event(call, event) || !valid_stream(call, stream))
            return hipErrorInvalidHandle;
        Event &e = state().events[event];
        e.recorded = true;
        e.when = std::chrono::steady_clock::now();
        return hipSuccess;
    });
}

// Work is done when it is queued: waiting for an event, or asking, only checks the handle.
static hipError_t event_done(const char *function, hipEvent_t event)
{
    Call call(function);
    call.ptr(event);
    return call.run([&]() -> hipError_t {
        return valid_event(call, event) ? hipSuccess : hipErrorInvalidHandle;
    });
}

hipError_t hipEventSynchronize(hipEvent_t event) { return event_done("hipEventSynchronize", event); }
hipError_t hipEventQuery(hipEvent_t event) { return event_done("hipEventQuery", event); }

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
    Call call("hipEventElapsedTime");
    call.ptr(start);
    return call.run([&]() -> hipError_t {
        if (ms == nullptr)
            return hipErrorInvalidValue;
        if (!valid_event(call, start) || !valid_event(call, stop))
            return hipErrorInvalidHandle;
        const Event &a = state().events[start];
        const Event &b = state().events[stop];
        // HIP: both must have been recorded, and neither created with hipEventDisableTiming.
        if (!a.recorded || !b.recorded || (a.flags & hipEventDisableTiming) ||
            (b.flags & hipEventDisableTiming))
            return hipErrorInvalidHandle;
        *ms = std::chrono::duration<float, std::milli>(b.when - a.when).count();
        return hipSuccess;
    });
}

// ---- kernels: registration as hipcc's constructors do it, launches recorded ---------------

void **__hipRegisterFatBinary(const void *data)
{
    Call call("__hipRegisterFatBinary");
    call.ptr(data);
    (void)call.finish(hipSuccess);
    static void *modules = nullptr;
    return &modules;
}

void __hipRegisterFunction(void **, const void *host_function, char *, const char *device_name,
                           unsigned int, void *, void *, dim3 *, dim3 *, int *)
{
    Call call("__hipRegisterFunction");
    call.ptr(host_function);
    state().kernels[host_function] = device_name ? device_name : "";
    (void)call.finish(hipSuccess);
}

void __hipUnregisterFatBinary(void **)
{
    Call call("__hipUnregisterFatBinary");
    (void)call.finish(hipSuccess);
}

hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shared, hipStream_t stream)
{
    Call call("__hipPushCallConfiguration");
    call.ptr(stream).size(uint64_t(grid.x) * grid.y * grid.z);
    t_configs.push_back(LaunchConfig{grid, block, shared, stream});
    return call.finish(hipSuccess);
}

hipError_t __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, hipStream_t *stream)
{
    Call call("__hipPopCallConfiguration");
    if (t_configs.empty()) {
        call.violation("no configuration was pushed");
        return call.finish(hipErrorInvalidValue);
    }
    const LaunchConfig c = t_configs.back();
    t_configs.pop_back();
    *grid = c.grid;
    *block = c.block;
    *shared = c.shared;
    *stream = c.stream;
    return call.finish(hipSuccess);
}

// ptr = the host stub, size = blocks in the grid, arg = threads per block. The recorded
// function name is "hipLaunchKernel"; the kernel's device name is in the trace and in the
// violation text when it was never registered.
hipError_t hipLaunchKernel(const void *function, dim3 blocks, dim3 threads, void **, size_t,
                           hipStream_t stream)
{
    Call call("hipLaunchKernel");
    call.ptr(function)
        .size(uint64_t(blocks.x) * blocks.y * blocks.z)
        .arg(int64_t(threads.x) * threads.y * threads.z);
    return call.run([&]() -> hipError_t {
        if (state().kernels.count(function) == 0) {
            call.violation(format("%p was never registered by __hipRegisterFunction", function));
            return hipErrorInvalidDeviceFunction;
        }
        if (!valid_stream(call, stream))
            return hipErrorInvalidHandle;
        // No device code runs here: by default the stand-in is a GPU the build has no code
        // object for, which is what a launch on a mismatched xnack target reports.
        return kernels_noop() ? hipSuccess : hipErrorInvalidDeviceFunction;
    });
}

// ---- virtual memory: reservations are PROT_NONE mappings, physical chunks memfds -----------
// ptr = the address, size, arg = the handle (as an integer) where there is one.

hipError_t hipMemGetAllocationGranularity(size_t *granularity, const hipMemAllocationProp *prop,
                                          hipMemAllocationGranularity_flags option)
{
    Call call("hipMemGetAllocationGranularity");
    call.arg(option);
    return call.run([&]() -> hipError_t {
        if (!vmm_on())
            return hipErrorNotSupported;
        if (granularity == nullptr || prop == nullptr || prop->type != hipMemAllocationTypePinned ||
            prop->location.type != hipMemLocationTypeDevice || !valid_device(prop->location.id))
            return hipErrorInvalidValue;
        *granularity = kVmmGranularity;
        return hipSuccess;
    });
}

hipError_t hipMemAddressReserve(void **ptr, size_t size, size_t alignment, void *addr,
                                unsigned long long flags)
{
    Call call("hipMemAddressReserve");
    call.size(size).arg(static_cast<int64_t>(alignment));
    return call.run([&]() -> hipError_t {
        if (!vmm_on())
            return hipErrorNotSupported;
        (void)addr; // a hint only
        if (ptr == nullptr || size == 0 || size % kVmmGranularity != 0 || flags != 0 ||
            (alignment & (alignment - 1)) != 0)
            return hipErrorInvalidValue;
        const size_t align = std::max(alignment, kVmmGranularity);
        void *raw = mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                         -1, 0);
        if (raw == MAP_FAILED)
            return hipErrorOutOfMemory;
        // Keep the aligned part only.
        const auto base = (reinterpret_cast<uintptr_t>(raw) + align - 1) / align * align;
        if (base > reinterpret_cast<uintptr_t>(raw))
            munmap(raw, base - reinterpret_cast<uintptr_t>(raw));
        const uintptr_t end = reinterpret_cast<uintptr_t>(raw) + size + align;
        if (end > base + size)
            munmap(reinterpret_cast<void *>(base + size), end - (base + size));
        state().reservations[base] = Reservation{size, {}};
        *ptr = reinterpret_cast<void *>(base);
        call.ptr(*ptr);
        return hipSuccess;
    });
}

hipError_t hipMemAddressFree(void *ptr, size_t size)
{
    Call call("hipMemAddressFree");
    call.ptr(ptr).size(size);
    return call.run([&]() -> hipError_t {
        if (!vmm_on())
            return hipErrorNotSupported;
        auto it = state().reservations.find(reinterpret_cast<uintptr_t>(ptr));
        if (it == state().reservations.end() || it->second.size != size) {
            call.violation(format("[%p, +%zu) is not a reservation", ptr, size));
            return hipErrorInvalidValue;
        }
        if (!it->second.mappings.empty())
            call.violation(format("reservation %p freed with %zu chunks still mapped", ptr,
                                  it->second.mappings.size()));
        for (auto &[at, m] : it->second.mappings)
            unmapped(m.handle);
        munmap(ptr, size);
        state().reservations.erase(it);
        return hipSuccess;
    });
}

hipError_t hipMemCreate(hipMemGenericAllocationHandle_t *handle, size_t size,
                        const hipMemAllocationProp *prop, unsigned long long flags)
{
    Call call("hipMemCreate");
    call.size(size);
    return call.run([&]() -> hipError_t {
        if (!vmm_on())
            return hipErrorNotSupported;
        if (handle == nullptr || prop == nullptr || size == 0 || size % kVmmGranularity != 0 ||
            flags != 0 || prop->type != hipMemAllocationTypePinned ||
            prop->location.type != hipMemLocationTypeDevice || !valid_device(prop->location.id))
            return hipErrorInvalidValue;
        if (device_bytes(prop->location.id) > kDeviceMemory - size)
            return hipErrorOutOfMemory;
        const int fd = memfd_create("hip-standin-chunk", MFD_CLOEXEC);
        if (fd < 0)
            return hipErrorOutOfMemory;
        if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
            close(fd);
            return hipErrorOutOfMemory;
        }
        auto *h = new Handle{fd, size, prop->location.id, 0, false};
        state().handles.insert(h);
        *handle = reinterpret_cast<hipMemGenericAllocationHandle_t>(h);
        call.arg(reinterpret_cast<intptr_t>(h));
        return hipSuccess;
    });
}

hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle)
{
    Call call("hipMemRelease");
    auto *h = reinterpret_cast<Handle *>(handle);
    call.arg(reinterpret_cast<intptr_t>(h));
    return call.run([&]() -> hipError_t {
        if (!vmm_on())
            return hipErrorNotSupported;
        if (state().handles.count(h) == 0 || h->released) {
            call.violation(format("handle %p is not live", static_cast<void *>(h)));
            return hipErrorInvalidValue;
        }
        h->released = true;
        drop_if_unused(h);
        return hipSuccess;
    });
}

hipError_t hipMemMap(void *ptr, size_t size, size_t offset, hipMemGenericAllocationHandle_t handle,
                     unsigned long long flags)
{
    Call call("hipMemMap");
    auto *h = reinterpret_cast<Handle *>(handle);
    call.ptr(ptr).size(size).arg(reinterpret_cast<intptr_t>(h));
    return call.run([&]() -> hipError_t {
        if (!vmm_on())
            return hipErrorNotSupported;
        if (state().handles.count(h) == 0 || h->released) {
            call.violation(format("handle %p is not live", static_cast<void *>(h)));
            return hipErrorInvalidValue;
        }
        const auto at = reinterpret_cast<uintptr_t>(ptr);
        if (offset != 0 || flags != 0 || size != h->size || at % kVmmGranularity != 0)
            return hipErrorInvalidValue;
        Reservation *r = reservation_of(at, size);
        if (r == nullptr) {
            call.violation(format("[%p, +%zu) is not inside a reservation", ptr, size));
            return hipErrorInvalidValue;
        }
        for (const auto &[base, m] : r->mappings)
            if (at < base + m.size && base < at + size) {
                call.violation(format("[%p, +%zu) overlaps a mapped chunk", ptr, size));
                return hipErrorInvalidValue;
            }
        // Not accessible until hipMemSetAccess, as on the GPU.
        if (mmap(ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, h->fd, 0) == MAP_FAILED)
            return hipErrorOutOfMemory;
        r->mappings[at] = Mapping{size, h};
        ++h->mappings;
        return hipSuccess;
    });
}

hipError_t hipMemUnmap(void *ptr, size_t size)
{
    Call call("hipMemUnmap");
    call.ptr(ptr).size(size);
    return call.run([&]() -> hipError_t {
        if (!vmm_on())
            return hipErrorNotSupported;
        // Whole mapped chunks only, one or several side by side (as HIP and CUDA require).
        const auto begin = reinterpret_cast<uintptr_t>(ptr);
        Reservation *r = reservation_of(begin, size);
        uintptr_t covered = begin;
        if (r != nullptr)
            for (auto m = r->mappings.find(begin);
                 m != r->mappings.end() && m->first == covered && covered - begin < size; ++m)
                covered += m->second.size;
        if (r == nullptr || covered - begin != size) {
            call.violation(format("[%p, +%zu) is not made of whole mapped chunks", ptr, size));
            return hipErrorInvalidValue;
        }
        // Back to reserved address space.
        mmap(ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        for (auto m = r->mappings.find(begin); m != r->mappings.end() && m->first < begin + size;) {
            unmapped(m->second.handle);
            m = r->mappings.erase(m);
        }
        return hipSuccess;
    });
}

hipError_t hipMemSetAccess(void *ptr, size_t size, const hipMemAccessDesc *desc, size_t count)
{
    Call call("hipMemSetAccess");
    call.ptr(ptr).size(size).arg(static_cast<int64_t>(count));
    return call.run([&]() -> hipError_t {
        if (!vmm_on())
            return hipErrorNotSupported;
        if (desc == nullptr || count == 0)
            return hipErrorInvalidValue;
        int protection = PROT_NONE;
        for (size_t i = 0; i < count; ++i) {
            if (desc[i].location.type != hipMemLocationTypeDevice || !valid_device(desc[i].location.id))
                return hipErrorInvalidValue;
            if (desc[i].flags == hipMemAccessFlagsProtReadWrite)
                protection = PROT_READ | PROT_WRITE;
            else if (desc[i].flags == hipMemAccessFlagsProtRead && protection == PROT_NONE)
                protection = PROT_READ;
        }
        // Every byte of the range must be mapped.
        const auto begin = reinterpret_cast<uintptr_t>(ptr);
        uintptr_t covered = begin;
        for (auto &[base, r] : state().reservations)
            for (auto &[at, m] : r.mappings)
                if (at == covered && covered < begin + size)
                    covered += m.size;
        if (covered < begin + size) {
            call.violation(format("[%p, +%zu) is not wholly mapped", ptr, size));
            return hipErrorInvalidValue;
        }
        if (mprotect(ptr, size, protection) != 0)
            return hipErrorInvalidValue;
        return hipSuccess;
    });
}

} // extern "C"
