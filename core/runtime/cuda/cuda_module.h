/* Internal to the CUDA runtime module: the entry points each concern file implements, and
 * the conventions they share. The ops table that gathers them is in cuda_runtime_module.cpp.
 *
 * Every function here is an entry point of tidal_rt_ops (core/runtime/runtime_contract.h):
 * C-callable, noexcept (the CUDA runtime API never throws, and nothing here allocates
 * through operator new without nothrow), returning a cudaError_t as int. */
#ifndef TIDAL_RUNTIME_CUDA_CUDA_MODULE_H
#define TIDAL_RUNTIME_CUDA_CUDA_MODULE_H

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/runtime_contract.h"

namespace tidal::cuda {

/* Returns `status` as the native code, and when it is a failure clears the runtime's
 * last-error slot: otherwise a failed allocation lingers there and the next kernel launch,
 * which checks cudaGetLastError(), would report it as its own. Sticky errors (a faulted
 * context) survive the clear, as they must. */
inline int settle(cudaError_t status) noexcept
{
    if (status != cudaSuccess)
        (void)cudaGetLastError();
    return static_cast<int>(status);
}

inline cudaStream_t as_stream(void *stream) noexcept { return static_cast<cudaStream_t>(stream); }
inline cudaEvent_t as_event(void *event) noexcept { return static_cast<cudaEvent_t>(event); }

/* lifecycle.cpp */
int create(const tidal_options *options, const tidal_options_api *api, void **rt, char *detail,
           size_t detail_capacity) noexcept;
void destroy(void *rt) noexcept;
const char *error_name(int native) noexcept;
const char *error_string(int native) noexcept;

/* devices.cpp */
int device_count(void *rt, int32_t *count) noexcept;
int device_props(void *rt, int32_t device, tidal_rt_device_props *props) noexcept;
int mem_info(void *rt, int32_t device, uint64_t *free_bytes, uint64_t *total_bytes) noexcept;

/* memory.cpp */
int allocate(void *rt, int32_t kind, int32_t device, size_t size, void **out) noexcept;
int release(void *rt, int32_t kind, int32_t device, void *ptr, size_t size) noexcept;
int allocate_async(void *rt, int32_t device, size_t size, void *stream, void **out) noexcept;
int release_async(void *rt, int32_t device, void *ptr, void *stream) noexcept;
int pool_trim(void *rt, int32_t device, uint64_t keep) noexcept;
int pool_usage(void *rt, int32_t device, uint64_t *reserved, uint64_t *used) noexcept;
int host_register(void *rt, void *ptr, size_t size) noexcept;
int host_unregister(void *rt, void *ptr) noexcept;
int pointer_kind(void *rt, const void *ptr, int32_t *kind, int32_t *device) noexcept;

/* migration.cpp */
int prefetch(void *rt, const void *ptr, size_t size, int32_t location, void *stream) noexcept;
int advise(void *rt, const void *ptr, size_t size, int32_t advice, int32_t location) noexcept;
int query_range(void *rt, const void *ptr, size_t size, int32_t attr, int32_t *value) noexcept;

/* transfers.cpp */
int copy(void *rt, void *dst, const void *src, size_t size, void *stream) noexcept;
int fill(void *rt, void *dst, int value, size_t size, void *stream) noexcept;

/* streams.cpp */
int stream_create(void *rt, int32_t device, void **stream) noexcept;
int stream_destroy(void *rt, void *stream) noexcept;
int stream_synchronize(void *rt, void *stream) noexcept;
int event_create(void *rt, int32_t device, void **event) noexcept;
int event_destroy(void *rt, void *event) noexcept;
int event_record(void *rt, void *event, void *stream) noexcept;
int stream_wait_event(void *rt, void *stream, void *event) noexcept;
int event_synchronize(void *rt, void *event) noexcept;
int event_elapsed_ms(void *rt, void *start, void *end, float *ms) noexcept;
int event_query(void *rt, void *event, int32_t *complete) noexcept;
int device_synchronize(void *rt, int32_t device) noexcept;

/* kernels.cpp (only when the validation kernels were built with nvcc) */
int kernel_touch(void *rt, int32_t device, void *ptr, size_t size, int32_t write, void *stream) noexcept;
int kernel_pattern_fill(void *rt, int32_t device, void *ptr, size_t size, uint64_t seed,
                        void *stream) noexcept;
int kernel_pattern_check(void *rt, int32_t device, const void *ptr, size_t size, uint64_t seed,
                         uint64_t *mismatches, void *stream) noexcept;
int kernel_copy(void *rt, int32_t device, void *dst, const void *src, size_t size, void *stream) noexcept;
int kernel_triad(void *rt, int32_t device, double *a, const double *b, const double *c, double scalar,
                 size_t size, void *stream) noexcept;
int kernel_spin(void *rt, int32_t device, uint64_t ns, void *stream) noexcept;
int kernel_atomic_add(void *rt, int32_t device, uint64_t *counters, size_t count, uint32_t iterations,
                      void *stream) noexcept;
int kernel_batch_copy(void *rt, int32_t device, const tidal_rt_copy_item *items, uint32_t count, uint64_t max_size,
                      void *stream) noexcept;

} // namespace tidal::cuda

#endif /* TIDAL_RUNTIME_CUDA_CUDA_MODULE_H */
