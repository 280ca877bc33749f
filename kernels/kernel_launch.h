/* Host-callable launchers for the validation kernels. One implementation per platform is
 * compiled from the same HIP sources: by hipcc into libtidal-kernels-hip.a and by nvcc into
 * libtidal-kernels-cuda.a. Only the runtime modules (core/runtime/{hip,cuda}) call these.
 * Every launcher returns the platform's native error code (hipError_t / cudaError_t as int,
 * 0 = success), is asynchronous on `stream` (NULL = default stream) unless stated, and takes
 * the semantics documented on the matching entry of tidal_rt_ops (core/runtime/runtime_contract.h). */
#ifndef TIDAL_KERNEL_LAUNCH_H
#define TIDAL_KERNEL_LAUNCH_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
int tidal_kernel_touch(void *ptr, size_t size, int write, void *stream);
int tidal_kernel_pattern_fill(void *ptr, size_t size, uint64_t seed, void *stream);
/* Synchronous: waits for the stream, then writes the count. */
int tidal_kernel_pattern_check(const void *ptr, size_t size, uint64_t seed, uint64_t *mismatches,
                               void *stream);
int tidal_kernel_copy(void *dst, const void *src, size_t size, void *stream);
int tidal_kernel_triad(double *a, const double *b, const double *c, double scalar, size_t size,
                       void *stream);
int tidal_kernel_atomic_add(uint64_t *counters, size_t count, uint32_t iterations, void *stream);
/* The atomic set (kernels/atomic_set.h): `rounds` rounds of each operation in `ops` on every
 * one of its device threads, on the slots at `words`, at system scope. */
int tidal_kernel_atomic_set(void *words, uint32_t ops, uint32_t rounds, void *stream);
/* Busy for `ns` nanoseconds of wall time on one thread; touches no memory. */
int tidal_kernel_spin(uint64_t ns, void *stream);

/* One copy of a batch: the layout of tidal_rt_copy_item (core/runtime/runtime_contract.h). */
typedef struct tidal_kernel_copy_item {
    void *dst;
    const void *src;
    uint64_t size;
} tidal_kernel_copy_item;
/* Copies every item of `items` (a device-readable array of `count`), none larger than
 * `max_size`, in one kernel launch. */
int tidal_kernel_batch_copy(const tidal_kernel_copy_item *items, uint32_t count, uint64_t max_size,
                            void *stream);
#ifdef __cplusplus
}
#endif
#endif
