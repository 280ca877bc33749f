#include "runtime/runtime.h"

#include <fmt/format.h>

#include "runtime/topology.h"
#include "status/error.h"
#include "status/error_table.h"

namespace tidal {
namespace {

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
    try {
        int32_t count = 0;
        check(ops_->device_count(instance_, &count), "counting devices");
        props_.resize(static_cast<size_t>(count));
        for (int32_t d = 0; d < count; ++d) {
            tidal_rt_device_props &p = props_[static_cast<size_t>(d)];
            p = {};
            p.struct_size = sizeof(p);
            p.numa_node = -1;
            check(ops_->device_props(instance_, d, &p), fmt::format("reading the properties of device {}", d));
            if (p.numa_node < 0 && p.pci_bus_id[0] != '\0')
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

std::string Runtime::native_name(int native) const { return ops_->error_name(native); }

void *Runtime::alloc(tidal_kind kind, int32_t device, size_t size)
{
    void *out = nullptr;
    check(ops_->alloc(instance_, kind, device, size, &out), [&] {
        return fmt::format("allocating {} bytes of {} memory on device {}", size, tidal_kind_name(kind), device);
    });
    return out;
}

int Runtime::free(tidal_kind kind, int32_t device, void *ptr, size_t size) noexcept
{
    return ops_->free(instance_, kind, device, ptr, size);
}

void *Runtime::alloc_async(int32_t device, size_t size, void *stream)
{
    void *out = nullptr;
    check(ops_->alloc_async(instance_, device, size, stream, &out), [&] {
        return fmt::format("allocating {} bytes from the stream-ordered pool of device {}", size, device);
    });
    return out;
}

int Runtime::free_async(int32_t device, void *ptr, void *stream) noexcept
{
    return ops_->free_async(instance_, device, ptr, stream);
}

void Runtime::pool_trim(int32_t device, uint64_t keep)
{
    check(ops_->pool_trim(instance_, device, keep),
          [&] { return fmt::format("trimming the stream-ordered pool of device {} to {} spare bytes", device, keep); });
}

int Runtime::pool_usage(int32_t device, uint64_t *reserved, uint64_t *used) const noexcept
{
    uint64_t r = 0, u = 0;
    const int rc = ops_->pool_usage(instance_, device, &r, &u);
    if (rc == 0) {
        *reserved = r;
        *used = u;
    }
    return rc;
}

void Runtime::advise(const void *ptr, size_t size, tidal_rt_advice advice, int32_t location)
{
    if (!ops_->advise)
        throw Error(TIDAL_ERROR_NOT_SUPPORTED, fmt::format("the {} runtime takes no memory advice", ops_->name));
    check(ops_->advise(instance_, ptr, size, advice, location),
          [&] { return fmt::format("memory advice {} on {} bytes at {}", static_cast<int>(advice), size, ptr); });
}

void Runtime::advise_bits(const void *ptr, size_t size, uint32_t bits, AdviceAction action, int32_t device)
{
    for_each_advice(bits, action, device,
                    [&](tidal_rt_advice advice, int32_t location) { advise(ptr, size, advice, location); });
}

int Runtime::advise_bits_noexcept(const void *ptr, size_t size, uint32_t bits, AdviceAction action,
                                  int32_t device) noexcept
{
    if (!ops_->advise)
        return 0;
    int first = 0;
    for_each_advice(bits, action, device, [&](tidal_rt_advice advice, int32_t location) {
        const int rc = ops_->advise(instance_, ptr, size, advice, location);
        if (first == 0)
            first = rc;
    });
    return first;
}

void Runtime::mem_info(int32_t device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    check(ops_->mem_info(instance_, device, free_bytes, total_bytes),
          [&] { return fmt::format("reading the memory of device {}", device); });
}

bool Runtime::has_vmm() const noexcept
{
    return ops_->vmm_granularity && ops_->vmm_reserve && ops_->vmm_release && ops_->vmm_create &&
           ops_->vmm_destroy && ops_->vmm_map && ops_->vmm_set_access && ops_->vmm_unmap;
}

namespace {
[[noreturn]] void no_vmm(const char *runtime)
{
    throw Error(TIDAL_ERROR_NOT_SUPPORTED,
                fmt::format("the {} runtime has no virtual-memory API, so elastic memory is not available", runtime));
}
} // namespace

uint64_t Runtime::vmm_granularity(int32_t device)
{
    if (!has_vmm())
        no_vmm(ops_->name);
    uint64_t bytes = 0;
    check(ops_->vmm_granularity(instance_, device, &bytes),
          [&] { return fmt::format("reading the virtual-memory granularity of device {}", device); });
    return bytes;
}

void *Runtime::vmm_reserve(int32_t device, size_t size)
{
    if (!has_vmm())
        no_vmm(ops_->name);
    void *out = nullptr;
    check(ops_->vmm_reserve(instance_, device, size, &out),
          [&] { return fmt::format("reserving {} bytes of address space on device {}", size, device); });
    return out;
}

void Runtime::vmm_map(void *ptr, size_t size, void *chunk)
{
    if (!has_vmm())
        no_vmm(ops_->name);
    check(ops_->vmm_map(instance_, ptr, size, chunk),
          [&] { return fmt::format("mapping {} bytes of physical memory at {}", size, ptr); });
}

void Runtime::vmm_set_access(int32_t device, void *ptr, size_t size)
{
    if (!has_vmm())
        no_vmm(ops_->name);
    check(ops_->vmm_set_access(instance_, device, ptr, size),
          [&] { return fmt::format("granting device {} access to {} bytes at {}", device, size, ptr); });
}

void *Runtime::vmm_create(int32_t device, size_t size)
{
    if (!has_vmm())
        no_vmm(ops_->name);
    void *out = nullptr;
    check(ops_->vmm_create(instance_, device, size, &out),
          [&] { return fmt::format("creating {} bytes of physical memory on device {}", size, device); });
    return out;
}

void Runtime::vmm_unmap(void *ptr, size_t size)
{
    if (!has_vmm())
        no_vmm(ops_->name);
    check(ops_->vmm_unmap(instance_, ptr, size), [&] { return fmt::format("unmapping {} bytes at {}", size, ptr); });
}

int Runtime::vmm_destroy(void *chunk) noexcept { return has_vmm() ? ops_->vmm_destroy(instance_, chunk) : 0; }

int Runtime::vmm_release(void *ptr, size_t size) noexcept
{
    return has_vmm() ? ops_->vmm_release(instance_, ptr, size) : 0;
}

} // namespace tidal
