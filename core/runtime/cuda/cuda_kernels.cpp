/* The validation kernels (kernels/), run on the asked device. The launchers pick their grid
 * from the current device, so it is made current first. */
#include "cuda_device_scope.h"
#include "cuda_entry_points.h"
#include "kernel_launch.h"

#include <cstddef>

namespace tidal::cuda {

static_assert(sizeof(tidal_rt_copy_item) == sizeof(tidal_kernel_copy_item) &&
                  offsetof(tidal_rt_copy_item, src) == offsetof(tidal_kernel_copy_item, src) &&
                  offsetof(tidal_rt_copy_item, size) == offsetof(tidal_kernel_copy_item, size),
              "the contract's copy table and the kernel's must have one layout");

int rt_kernel_touch(void *, int32_t device, void *ptr, size_t size, int32_t write, void *stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(static_cast<cudaError_t>(tidal_kernel_touch(ptr, size, write, stream)));
}

int rt_kernel_pattern_fill(void *, int32_t device, void *ptr, size_t size, uint64_t seed, void *stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(static_cast<cudaError_t>(tidal_kernel_pattern_fill(ptr, size, seed, stream)));
}

int rt_kernel_pattern_check(void *, int32_t device, const void *ptr, size_t size, uint64_t seed,
                            uint64_t *mismatches, void *stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(static_cast<cudaError_t>(tidal_kernel_pattern_check(ptr, size, seed, mismatches, stream)));
}

int rt_kernel_copy(void *, int32_t device, void *dst, const void *src, size_t size, void *stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(static_cast<cudaError_t>(tidal_kernel_copy(dst, src, size, stream)));
}

int rt_kernel_triad(void *, int32_t device, double *a, const double *b, const double *c, double scalar,
                    size_t size, void *stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(static_cast<cudaError_t>(tidal_kernel_triad(a, b, c, scalar, size, stream)));
}

int rt_kernel_atomic_add(void *, int32_t device, uint64_t *counters, size_t count, uint32_t iterations,
                         void *stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(static_cast<cudaError_t>(tidal_kernel_atomic_add(counters, count, iterations, stream)));
}

int rt_kernel_atomic_set(void *, int32_t device, void *words, uint32_t ops, uint32_t rounds, void *stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(static_cast<cudaError_t>(tidal_kernel_atomic_set(words, ops, rounds, stream)));
}

int rt_kernel_spin(void *, int32_t device, uint64_t ns, void *stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(static_cast<cudaError_t>(tidal_kernel_spin(ns, stream)));
}

int rt_kernel_batch_copy(void *, int32_t device, const tidal_rt_copy_item *items, uint32_t count, uint64_t max_size,
                         void *stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(static_cast<cudaError_t>(
        tidal_kernel_batch_copy(reinterpret_cast<const tidal_kernel_copy_item *>(items), count, max_size, stream)));
}

} // namespace tidal::cuda
