// The C face of SimRuntime: one static tidal_rt_ops table whose entries forward to the
// instance and turn any C++ exception into a HIP code, so none crosses the C boundary.
#include "runtime/sim/sim_ops.h"

#include <cstdio>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "runtime/sim/sim_error_names.h"
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

int op_create(const tidal_options *, const tidal_options_api *, void **, char *detail,
              size_t detail_capacity)
{
    write_detail(detail, detail_capacity,
                 "the simulated device is created from [sim] settings with sim_create()");
    return kNotSupported;
}

void op_destroy(void *rt) { delete static_cast<SimRuntime *>(rt); }

const char *op_hip_error_name(int native) { return sim_error_name(native, ErrorNaming::hip); }
const char *op_cuda_error_name(int native) { return sim_error_name(native, ErrorNaming::cuda); }
const char *op_error_string(int native) { return sim_error_string(native); }

int op_device_count(void *rt, int32_t *count)
{
    return guarded([&] { return self(rt).device_count(count); });
}
int op_device_props(void *rt, int32_t device, tidal_rt_device_props *props)
{
    return guarded([&] { return self(rt).device_props(device, props); });
}
int op_mem_info(void *rt, int32_t device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    return guarded([&] { return self(rt).mem_info(device, free_bytes, total_bytes); });
}
int op_alloc(void *rt, int32_t kind, int32_t device, size_t size, void **out)
{
    return guarded([&] { return self(rt).alloc(kind, device, size, out); });
}
int op_free(void *rt, int32_t kind, int32_t device, void *ptr, size_t size)
{
    return guarded([&] { return self(rt).free(kind, device, ptr, size); });
}
int op_host_register(void *rt, void *ptr, size_t size)
{
    return guarded([&] { return self(rt).host_register(ptr, size); });
}
int op_host_unregister(void *rt, void *ptr)
{
    return guarded([&] { return self(rt).host_unregister(ptr); });
}
int op_pointer_kind(void *rt, const void *ptr, int32_t *kind, int32_t *device)
{
    return guarded([&] { return self(rt).pointer_kind(ptr, kind, device); });
}
int op_prefetch(void *rt, const void *ptr, size_t size, int32_t location, void *stream)
{
    return guarded([&] { return self(rt).prefetch(ptr, size, location, stream); });
}
int op_advise(void *rt, const void *ptr, size_t size, int32_t advice, int32_t location)
{
    return guarded([&] { return self(rt).advise(ptr, size, advice, location); });
}
int op_query_range(void *rt, const void *ptr, size_t size, int32_t attr, int32_t *value)
{
    return guarded([&] { return self(rt).query_range(ptr, size, attr, value); });
}
int op_memcpy(void *rt, void *dst, const void *src, size_t size, void *stream)
{
    return guarded([&] { return self(rt).memcpy(dst, src, size, stream); });
}
int op_memset(void *rt, void *dst, int value, size_t size, void *stream)
{
    return guarded([&] { return self(rt).memset(dst, value, size, stream); });
}
int op_stream_create(void *rt, int32_t device, void **stream)
{
    return guarded([&] { return self(rt).stream_create(device, stream); });
}
int op_stream_destroy(void *rt, void *stream)
{
    return guarded([&] { return self(rt).stream_destroy(stream); });
}
int op_stream_synchronize(void *rt, void *stream)
{
    return guarded([&] { return self(rt).stream_synchronize(stream); });
}
int op_event_create(void *rt, int32_t device, void **event)
{
    return guarded([&] { return self(rt).event_create(device, event); });
}
int op_event_destroy(void *rt, void *event)
{
    return guarded([&] { return self(rt).event_destroy(event); });
}
int op_event_record(void *rt, void *event, void *stream)
{
    return guarded([&] { return self(rt).event_record(event, stream); });
}
int op_stream_wait_event(void *rt, void *stream, void *event)
{
    return guarded([&] { return self(rt).stream_wait_event(stream, event); });
}
int op_event_synchronize(void *rt, void *event)
{
    return guarded([&] { return self(rt).event_synchronize(event); });
}
int op_event_elapsed_ms(void *rt, void *start, void *end, float *ms)
{
    return guarded([&] { return self(rt).event_elapsed_ms(start, end, ms); });
}
int op_event_query(void *rt, void *event, int32_t *complete)
{
    return guarded([&] { return self(rt).event_query(event, complete); });
}
int op_kernel_spin(void *rt, int32_t device, uint64_t ns, void *stream)
{
    return guarded([&] { return self(rt).kernel_spin(device, ns, stream); });
}
int op_clock(void *rt, double *seconds)
{
    return guarded([&] { return self(rt).clock(seconds); });
}
int op_device_synchronize(void *rt, int32_t device)
{
    return guarded([&] { return self(rt).device_synchronize(device); });
}
int op_kernel_touch(void *rt, int32_t device, void *ptr, size_t size, int32_t write, void *stream)
{
    return guarded([&] { return self(rt).kernel_touch(device, ptr, size, write, stream); });
}
int op_kernel_pattern_fill(void *rt, int32_t device, void *ptr, size_t size, uint64_t seed,
                           void *stream)
{
    return guarded([&] { return self(rt).kernel_pattern_fill(device, ptr, size, seed, stream); });
}
int op_kernel_pattern_check(void *rt, int32_t device, const void *ptr, size_t size, uint64_t seed,
                            uint64_t *mismatches, void *stream)
{
    return guarded([&] {
        return self(rt).kernel_pattern_check(device, ptr, size, seed, mismatches, stream);
    });
}
int op_kernel_copy(void *rt, int32_t device, void *dst, const void *src, size_t size,
                   void *stream)
{
    return guarded([&] { return self(rt).kernel_copy(device, dst, src, size, stream); });
}
int op_kernel_triad(void *rt, int32_t device, double *a, const double *b, const double *c,
                    double scalar, size_t size, void *stream)
{
    return guarded([&] { return self(rt).kernel_triad(device, a, b, c, scalar, size, stream); });
}
int op_kernel_atomic_add(void *rt, int32_t device, uint64_t *counters, size_t count,
                         uint32_t iterations, void *stream)
{
    return guarded([&] {
        return self(rt).kernel_atomic_add(device, counters, count, iterations, stream);
    });
}
int op_kernel_batch_copy(void *rt, int32_t device, const tidal_rt_copy_item *items, uint32_t count,
                         uint64_t max_size, void *stream)
{
    return guarded([&] { return self(rt).kernel_batch_copy(device, items, count, max_size, stream); });
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
        .create = op_create,
        .destroy = op_destroy,
        .error_name = error_name,
        .error_string = op_error_string,
        .device_count = op_device_count,
        .device_props = op_device_props,
        .mem_info = op_mem_info,
        .alloc = op_alloc,
        .free = op_free,
        .host_register = op_host_register,
        .host_unregister = op_host_unregister,
        .pointer_kind = op_pointer_kind,
        .prefetch = op_prefetch,
        .advise = op_advise,
        .query_range = op_query_range,
        .memcpy = op_memcpy,
        .memset = op_memset,
        .stream_create = op_stream_create,
        .stream_destroy = op_stream_destroy,
        .stream_synchronize = op_stream_synchronize,
        .event_create = op_event_create,
        .event_destroy = op_event_destroy,
        .event_record = op_event_record,
        .stream_wait_event = op_stream_wait_event,
        .event_synchronize = op_event_synchronize,
        .event_elapsed_ms = op_event_elapsed_ms,
        .device_synchronize = op_device_synchronize,
        .kernel_touch = op_kernel_touch,
        .kernel_pattern_fill = op_kernel_pattern_fill,
        .kernel_pattern_check = op_kernel_pattern_check,
        .kernel_copy = op_kernel_copy,
        .kernel_triad = op_kernel_triad,
        .kernel_atomic_add = op_kernel_atomic_add,
        .event_query = op_event_query,
        .kernel_spin = op_kernel_spin,
        .clock = op_clock,
        // No model of a vendor's stream-ordered pool (its costs were never measured apart from
        // cudaMalloc's): [pool] backend = "vendor" is NOT_SUPPORTED on the simulated device.
        .alloc_async = nullptr,
        .free_async = nullptr,
        .kernel_batch_copy = op_kernel_batch_copy,
        .pool_trim = nullptr,
        .pool_usage = nullptr,
    };
}

const tidal_rt_ops kHipNamedOps = make_ops(TIDAL_RT_FAMILY_HIP, op_hip_error_name);
const tidal_rt_ops kCudaNamedOps = make_ops(TIDAL_RT_FAMILY_CUDA, op_cuda_error_name);

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
