/* Internal to the CUDA runtime module: the entry points each concern file implements, and
 * the conventions they share. The ops table that gathers them is in cuda_module.cpp.
 *
 * Every function here is an entry point of tidal_rt_ops (core/runtime/runtime_contract.h):
 * C-callable, noexcept (the CUDA runtime API never throws, and nothing here allocates
 * through operator new without nothrow), returning a cudaError_t as int. */
#ifndef TIDAL_RUNTIME_CUDA_CUDA_ENTRY_POINTS_H
#define TIDAL_RUNTIME_CUDA_CUDA_ENTRY_POINTS_H

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda_errors.h"
#include "runtime/runtime_contract.h"

namespace tidal::cuda {

inline cudaStream_t as_stream(void *stream) noexcept { return static_cast<cudaStream_t>(stream); }
inline cudaEvent_t as_event(void *event) noexcept { return static_cast<cudaEvent_t>(event); }

/* cuda_lifecycle.cpp */
int rt_create(const tidal_options *options, const tidal_options_api *api, void **rt, char *detail,
              size_t detail_capacity) noexcept;
void rt_destroy(void *rt) noexcept;

/* cuda_errors.cpp */
const char *rt_error_name(int native) noexcept;
const char *rt_error_string(int native) noexcept;

/* cuda_devices.cpp */
int rt_device_count(void *rt, int32_t *count) noexcept;
int rt_device_props(void *rt, int32_t device, tidal_rt_device_props *props) noexcept;
int rt_mem_info(void *rt, int32_t device, uint64_t *free_bytes, uint64_t *total_bytes) noexcept;

/* cuda_memory.cpp */
int rt_alloc(void *rt, int32_t kind, int32_t device, size_t size, void **out) noexcept;
int rt_free(void *rt, int32_t kind, int32_t device, void *ptr, size_t size) noexcept;
int rt_alloc_async(void *rt, int32_t device, size_t size, void *stream, void **out) noexcept;
int rt_free_async(void *rt, int32_t device, void *ptr, void *stream) noexcept;
int rt_pool_trim(void *rt, int32_t device, uint64_t keep) noexcept;
int rt_pool_usage(void *rt, int32_t device, uint64_t *reserved, uint64_t *used) noexcept;
int rt_host_register(void *rt, void *ptr, size_t size) noexcept;
int rt_host_unregister(void *rt, void *ptr) noexcept;
int rt_pointer_kind(void *rt, const void *ptr, int32_t *kind, int32_t *device) noexcept;

/* cuda_migration.cpp */
int rt_prefetch(void *rt, const void *ptr, size_t size, int32_t location, void *stream) noexcept;
int rt_advise(void *rt, const void *ptr, size_t size, int32_t advice, int32_t location) noexcept;
int rt_query_range(void *rt, const void *ptr, size_t size, int32_t attr, int32_t *value) noexcept;

/* cuda_transfers.cpp */
int rt_memcpy(void *rt, void *dst, const void *src, size_t size, void *stream) noexcept;
int rt_memset(void *rt, void *dst, int value, size_t size, void *stream) noexcept;

/* cuda_streams.cpp */
int rt_stream_create(void *rt, int32_t device, void **stream) noexcept;
int rt_stream_destroy(void *rt, void *stream) noexcept;
int rt_stream_synchronize(void *rt, void *stream) noexcept;
int rt_event_create(void *rt, int32_t device, void **event) noexcept;
int rt_event_destroy(void *rt, void *event) noexcept;
int rt_event_record(void *rt, void *event, void *stream) noexcept;
int rt_stream_wait_event(void *rt, void *stream, void *event) noexcept;
int rt_event_synchronize(void *rt, void *event) noexcept;
int rt_event_elapsed_ms(void *rt, void *start, void *end, float *ms) noexcept;
int rt_event_query(void *rt, void *event, int32_t *complete) noexcept;
int rt_device_synchronize(void *rt, int32_t device) noexcept;

/* cuda_vmm.cpp */
int rt_vmm_granularity(void *rt, int32_t device, uint64_t *bytes) noexcept;
int rt_vmm_reserve(void *rt, int32_t device, size_t size, void **ptr) noexcept;
int rt_vmm_release(void *rt, void *ptr, size_t size) noexcept;
int rt_vmm_create(void *rt, int32_t device, size_t size, void **chunk) noexcept;
int rt_vmm_destroy(void *rt, void *chunk) noexcept;
int rt_vmm_map(void *rt, void *ptr, size_t size, void *chunk) noexcept;
int rt_vmm_set_access(void *rt, int32_t device, void *ptr, size_t size) noexcept;
int rt_vmm_unmap(void *rt, void *ptr, size_t size) noexcept;

/* cuda_peers.cpp */
int rt_peer_info(void *rt, int32_t device, int32_t peer, tidal_rt_peer_info *info) noexcept;
int rt_peer_enable(void *rt, int32_t device, int32_t peer) noexcept;
int rt_memcpy_peer(void *rt, void *dst, int32_t dst_device, const void *src, int32_t src_device, size_t size,
                   void *stream) noexcept;
/* cuda_ranges.cpp */
int rt_range_push(void *rt, const char *name) noexcept;
int rt_range_pop(void *rt) noexcept;

/* cuda_kernels.cpp (only when the validation kernels were built with nvcc) */
int rt_kernel_touch(void *rt, int32_t device, void *ptr, size_t size, int32_t write, void *stream) noexcept;
int rt_kernel_pattern_fill(void *rt, int32_t device, void *ptr, size_t size, uint64_t seed,
                           void *stream) noexcept;
int rt_kernel_pattern_check(void *rt, int32_t device, const void *ptr, size_t size, uint64_t seed,
                            uint64_t *mismatches, void *stream) noexcept;
int rt_kernel_copy(void *rt, int32_t device, void *dst, const void *src, size_t size, void *stream) noexcept;
int rt_kernel_triad(void *rt, int32_t device, double *a, const double *b, const double *c, double scalar,
                    size_t size, void *stream) noexcept;
int rt_kernel_spin(void *rt, int32_t device, uint64_t ns, void *stream) noexcept;
int rt_kernel_atomic_add(void *rt, int32_t device, uint64_t *counters, size_t count, uint32_t iterations,
                         void *stream) noexcept;
int rt_kernel_atomic_set(void *rt, int32_t device, void *words, uint32_t ops, uint32_t rounds, void *stream) noexcept;
int rt_kernel_batch_copy(void *rt, int32_t device, const tidal_rt_copy_item *items, uint32_t count, uint64_t max_size,
                         void *stream) noexcept;

} // namespace tidal::cuda

#endif /* TIDAL_RUNTIME_CUDA_CUDA_ENTRY_POINTS_H */
