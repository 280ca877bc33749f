// The C face of SimRuntime: one static tidal_rt_ops table whose entries forward to the
// instance and turn any C++ exception into a HIP code, so none crosses the C boundary.
#include "runtime/sim/sim_module.h"

#include <cstdio>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "runtime/sim/sim_errors.h"
#include "runtime/sim/sim_runtime.h"

namespace tidal::sim {

namespace {

SimRuntime &self(void *rt) { return *static_cast<SimRuntime *>(rt); }

template <typename F>
int guarded(F &&body) noexcept
{
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return kOutOfMemory;
    } catch (...) {
        return kUnknown;
    }
}

void write_detail(char *detail, size_t capacity, const std::string &text)
{
    if (detail != nullptr && capacity > 0)
        std::snprintf(detail, capacity, "%s", text.c_str());
}

int rt_create(const tidal_options *, const tidal_options_api *, void **, char *detail,
              size_t detail_capacity)
{
    write_detail(detail, detail_capacity,
                 "the simulated device is created from [sim] settings with sim_create()");
    return kNotSupported;
}

void rt_destroy(void *rt) { delete static_cast<SimRuntime *>(rt); }

const char *rt_error_name_hip(int native) { return sim_error_name(native, ErrorNaming::hip); }
const char *rt_error_name_cuda(int native) { return sim_error_name(native, ErrorNaming::cuda); }
const char *rt_error_string(int native) { return sim_error_string(native); }

int rt_device_count(void *rt, int32_t *count)
{
    return guarded([&] { return self(rt).device_count(count); });
}
int rt_device_props(void *rt, int32_t device, tidal_rt_device_props *props)
{
    return guarded([&] { return self(rt).device_props(device, props); });
}
int rt_mem_info(void *rt, int32_t device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    return guarded([&] { return self(rt).mem_info(device, free_bytes, total_bytes); });
}
int rt_alloc(void *rt, int32_t kind, int32_t device, size_t size, void **out)
{
    return guarded([&] { return self(rt).alloc(kind, device, size, out); });
}
int rt_free(void *rt, int32_t kind, int32_t device, void *ptr, size_t size)
{
    return guarded([&] { return self(rt).free(kind, device, ptr, size); });
}
int rt_host_register(void *rt, void *ptr, size_t size)
{
    return guarded([&] { return self(rt).host_register(ptr, size); });
}
int rt_host_unregister(void *rt, void *ptr)
{
    return guarded([&] { return self(rt).host_unregister(ptr); });
}
int rt_pointer_kind(void *rt, const void *ptr, int32_t *kind, int32_t *device)
{
    return guarded([&] { return self(rt).pointer_kind(ptr, kind, device); });
}
int rt_prefetch(void *rt, const void *ptr, size_t size, int32_t location, void *stream)
{
    return guarded([&] { return self(rt).prefetch(ptr, size, location, stream); });
}
int rt_advise(void *rt, const void *ptr, size_t size, int32_t advice, int32_t location)
{
    return guarded([&] { return self(rt).advise(ptr, size, advice, location); });
}
int rt_query_range(void *rt, const void *ptr, size_t size, int32_t attr, int32_t *value)
{
    return guarded([&] { return self(rt).query_range(ptr, size, attr, value); });
}
int rt_memcpy(void *rt, void *dst, const void *src, size_t size, void *stream)
{
    return guarded([&] { return self(rt).memcpy(dst, src, size, stream); });
}
int rt_memset(void *rt, void *dst, int value, size_t size, void *stream)
{
    return guarded([&] { return self(rt).memset(dst, value, size, stream); });
}
int rt_stream_create(void *rt, int32_t device, void **stream)
{
    return guarded([&] { return self(rt).stream_create(device, stream); });
}
int rt_stream_destroy(void *rt, void *stream)
{
    return guarded([&] { return self(rt).stream_destroy(stream); });
}
int rt_stream_synchronize(void *rt, void *stream)
{
    return guarded([&] { return self(rt).stream_synchronize(stream); });
}
int rt_event_create(void *rt, int32_t device, void **event)
{
    return guarded([&] { return self(rt).event_create(device, event); });
}
int rt_event_destroy(void *rt, void *event)
{
    return guarded([&] { return self(rt).event_destroy(event); });
}
int rt_event_record(void *rt, void *event, void *stream)
{
    return guarded([&] { return self(rt).event_record(event, stream); });
}
int rt_stream_wait_event(void *rt, void *stream, void *event)
{
    return guarded([&] { return self(rt).stream_wait_event(stream, event); });
}
int rt_event_synchronize(void *rt, void *event)
{
    return guarded([&] { return self(rt).event_synchronize(event); });
}
int rt_event_elapsed_ms(void *rt, void *start, void *end, float *ms)
{
    return guarded([&] { return self(rt).event_elapsed_ms(start, end, ms); });
}
int rt_event_query(void *rt, void *event, int32_t *complete)
{
    return guarded([&] { return self(rt).event_query(event, complete); });
}
int rt_kernel_spin(void *rt, int32_t device, uint64_t ns, void *stream)
{
    return guarded([&] { return self(rt).kernel_spin(device, ns, stream); });
}
int rt_range_push(void *rt, const char *name)
{
    return guarded([&] { return self(rt).range_push(name); });
}
int rt_range_pop(void *rt)
{
    return guarded([&] { return self(rt).range_pop(); });
}
int rt_paging_stats(void *rt, int32_t device, tidal_rt_paging_stats *out)
{
    return guarded([&] { return self(rt).paging_stats(device, out); });
}
int rt_range_paging(void *rt, const void *ptr, size_t size, int32_t reset, tidal_rt_paging_stats *out)
{
    return guarded([&] { return self(rt).range_paging(ptr, size, reset, out); });
}

int rt_clock(void *rt, double *seconds)
{
    return guarded([&] { return self(rt).clock(seconds); });
}
int rt_host_copy(void *rt, size_t size, uint32_t threads)
{
    return guarded([&] { return self(rt).host_copy(size, threads); });
}
int rt_device_synchronize(void *rt, int32_t device)
{
    return guarded([&] { return self(rt).device_synchronize(device); });
}
int rt_kernel_touch(void *rt, int32_t device, void *ptr, size_t size, int32_t write, void *stream)
{
    return guarded([&] { return self(rt).kernel_touch(device, ptr, size, write, stream); });
}
int rt_kernel_pattern_fill(void *rt, int32_t device, void *ptr, size_t size, uint64_t seed,
                           void *stream)
{
    return guarded([&] { return self(rt).kernel_pattern_fill(device, ptr, size, seed, stream); });
}
int rt_kernel_pattern_check(void *rt, int32_t device, const void *ptr, size_t size, uint64_t seed,
                            uint64_t *mismatches, void *stream)
{
    return guarded([&] {
        return self(rt).kernel_pattern_check(device, ptr, size, seed, mismatches, stream);
    });
}
int rt_kernel_copy(void *rt, int32_t device, void *dst, const void *src, size_t size,
                   void *stream)
{
    return guarded([&] { return self(rt).kernel_copy(device, dst, src, size, stream); });
}
int rt_kernel_triad(void *rt, int32_t device, double *a, const double *b, const double *c,
                    double scalar, size_t size, void *stream)
{
    return guarded([&] { return self(rt).kernel_triad(device, a, b, c, scalar, size, stream); });
}
int rt_kernel_atomic_add(void *rt, int32_t device, uint64_t *counters, size_t count,
                         uint32_t iterations, void *stream)
{
    return guarded([&] {
        return self(rt).kernel_atomic_add(device, counters, count, iterations, stream);
    });
}
int rt_kernel_atomic_set(void *rt, int32_t device, void *words, uint32_t ops, uint32_t rounds,
                         void *stream)
{
    return guarded([&] { return self(rt).kernel_atomic_set(device, words, ops, rounds, stream); });
}
int rt_kernel_batch_copy(void *rt, int32_t device, const tidal_rt_copy_item *items, uint32_t count,
                         uint64_t max_size, void *stream)
{
    return guarded([&] { return self(rt).kernel_batch_copy(device, items, count, max_size, stream); });
}

int rt_vmm_granularity(void *rt, int32_t device, uint64_t *bytes)
{
    return guarded([&] { return self(rt).vmm_granularity(device, bytes); });
}
int rt_vmm_reserve(void *rt, int32_t device, size_t size, void **ptr)
{
    return guarded([&] { return self(rt).vmm_reserve(device, size, ptr); });
}
int rt_vmm_release(void *rt, void *ptr, size_t size)
{
    return guarded([&] { return self(rt).vmm_release(ptr, size); });
}
int rt_vmm_create(void *rt, int32_t device, size_t size, void **chunk)
{
    return guarded([&] { return self(rt).vmm_create(device, size, chunk); });
}
int rt_vmm_destroy(void *rt, void *chunk)
{
    return guarded([&] { return self(rt).vmm_destroy(chunk); });
}
int rt_vmm_map(void *rt, void *ptr, size_t size, void *chunk)
{
    return guarded([&] { return self(rt).vmm_map(ptr, size, chunk); });
}
int rt_vmm_set_access(void *rt, int32_t device, void *ptr, size_t size)
{
    return guarded([&] { return self(rt).vmm_set_access(device, ptr, size); });
}
int rt_vmm_unmap(void *rt, void *ptr, size_t size)
{
    return guarded([&] { return self(rt).vmm_unmap(ptr, size); });
}
int rt_peer_info(void *rt, int32_t device, int32_t peer, tidal_rt_peer_info *info)
{
    return guarded([&] { return self(rt).peer_info(device, peer, info); });
}
int rt_peer_enable(void *rt, int32_t device, int32_t peer)
{
    return guarded([&] { return self(rt).peer_enable(device, peer); });
}
int rt_memcpy_peer(void *rt, void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size,
                   void *stream)
{
    return guarded([&] { return self(rt).memcpy_peer(dst, dst_device, src, src_device, size, stream); });
}

// One table per naming: the ops table's error_name() has no instance to ask for its profile.
constexpr tidal_rt_ops make_ops(tidal_rt_family family, const char *(*error_name)(int))
{
    return {
        .abi_version = TIDAL_RT_ABI_VERSION,
        .struct_size = sizeof(tidal_rt_ops),
        .name = "sim",
        .family = family,
        .traits = TIDAL_RT_TRAIT_IN_ORDER,
        .create = rt_create,
        .destroy = rt_destroy,
        .error_name = error_name,
        .error_string = rt_error_string,
        .device_count = rt_device_count,
        .device_props = rt_device_props,
        .mem_info = rt_mem_info,
        .alloc = rt_alloc,
        .free = rt_free,
        .host_register = rt_host_register,
        .host_unregister = rt_host_unregister,
        .pointer_kind = rt_pointer_kind,
        .prefetch = rt_prefetch,
        .advise = rt_advise,
        .query_range = rt_query_range,
        .memcpy = rt_memcpy,
        .memset = rt_memset,
        .stream_create = rt_stream_create,
        .stream_destroy = rt_stream_destroy,
        .stream_synchronize = rt_stream_synchronize,
        .event_create = rt_event_create,
        .event_destroy = rt_event_destroy,
        .event_record = rt_event_record,
        .stream_wait_event = rt_stream_wait_event,
        .event_synchronize = rt_event_synchronize,
        .event_elapsed_ms = rt_event_elapsed_ms,
        .device_synchronize = rt_device_synchronize,
        .kernel_touch = rt_kernel_touch,
        .kernel_pattern_fill = rt_kernel_pattern_fill,
        .kernel_pattern_check = rt_kernel_pattern_check,
        .kernel_copy = rt_kernel_copy,
        .kernel_triad = rt_kernel_triad,
        .kernel_atomic_add = rt_kernel_atomic_add,
        .event_query = rt_event_query,
        .kernel_spin = rt_kernel_spin,
        .clock = rt_clock,
        // No model of a vendor's stream-ordered pool (its costs were never measured apart from
        // cudaMalloc's): [pool] backend = "vendor" is NOT_SUPPORTED on the simulated device.
        .alloc_async = nullptr,
        .free_async = nullptr,
        .kernel_batch_copy = rt_kernel_batch_copy,
        .pool_trim = nullptr,
        .pool_usage = nullptr,
        .vmm_granularity = rt_vmm_granularity,
        .vmm_reserve = rt_vmm_reserve,
        .vmm_release = rt_vmm_release,
        .vmm_create = rt_vmm_create,
        .vmm_destroy = rt_vmm_destroy,
        .vmm_map = rt_vmm_map,
        .vmm_set_access = rt_vmm_set_access,
        .vmm_unmap = rt_vmm_unmap,
        .host_copy = rt_host_copy,
        .peer_info = rt_peer_info,
        .peer_enable = rt_peer_enable,
        .memcpy_peer = rt_memcpy_peer,
        .kernel_atomic_set = rt_kernel_atomic_set,
        .range_push = rt_range_push,
        .range_pop = rt_range_pop,
        .paging_stats = rt_paging_stats,
        .range_paging = rt_range_paging,
    };
}

const tidal_rt_ops kHipNamedOps = make_ops(TIDAL_RT_FAMILY_HIP, rt_error_name_hip);
const tidal_rt_ops kCudaNamedOps = make_ops(TIDAL_RT_FAMILY_CUDA, rt_error_name_cuda);

} // namespace

const tidal_rt_ops *sim_ops() { return &kHipNamedOps; }

const tidal_rt_ops *sim_ops(const SimSettings &settings)
{
    return error_naming_of(settings.profile.vendor) == ErrorNaming::cuda ? &kCudaNamedOps : &kHipNamedOps;
}

int sim_create(const SimSettings &settings, void **rt, char *detail, size_t detail_capacity)
{
    if (rt == nullptr)
        return kInvalidValue;
    try {
        auto runtime = std::make_unique<SimRuntime>(settings);
        // Each instance counts its own calls, so "create" can only ever be call 1: a spec
        // with nth = 1 makes context creation fail, which is what error-path tests want.
        const FaultInjector::Verdict verdict = runtime->fault_injector().check(Operation::create);
        if (verdict.native_error != 0) {
            write_detail(detail, detail_capacity,
                         std::string("simulated device: injected fault on create call ") +
                             std::to_string(verdict.call) + ": " +
                             sim_error_name(verdict.native_error, error_naming_of(settings.profile.vendor)) + " (" +
                             std::to_string(verdict.native_error) + ")");
            return verdict.native_error;
        }
        write_detail(detail, detail_capacity, runtime->describe());
        *rt = runtime.release();
        return kSuccess;
    } catch (const std::invalid_argument &e) {
        write_detail(detail, detail_capacity, e.what());
        return kInvalidValue;
    } catch (const std::bad_alloc &) {
        write_detail(detail, detail_capacity, "simulated device: out of host memory");
        return kOutOfMemory;
    } catch (const std::exception &e) {
        write_detail(detail, detail_capacity, e.what());
        return kUnknown;
    }
}

} // namespace tidal::sim
