/* copy and triad: the memory-bandwidth kernels. They measure what a kind of memory delivers
 * to the device, so they have to run close to the hardware's limit themselves: on an H200 the
 * copy must reach at least 90% of the runtime's own device-to-device memcpy (it reaches ~100%,
 * see launch_geometry.h). Both move the widest vector the pointers' alignment allows, one
 * vector per thread over a full grid. */
#include <cstdint>

#include "kernel_compat.h"
#include "kernel_launch.h"
#include "launch_geometry.h"

namespace {

/* dst = src for `head` bytes, then `vectors` aligned Vec, then `tail` bytes. The edges are at
 * most sizeof(Vec)-1 bytes each and are copied bytewise by the first threads. */
template <typename Vec>
__global__ void copy_range(unsigned char *__restrict__ dst, const unsigned char *__restrict__ src,
                           size_t head, size_t vectors, size_t tail)
{
    const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    if (tid < head)
        dst[tid] = src[tid];
    const size_t tail_begin = head + vectors * sizeof(Vec);
    if (tid < tail)
        dst[tail_begin + tid] = src[tail_begin + tid];

    Vec *__restrict__ d = reinterpret_cast<Vec *>(dst + head);
    const Vec *__restrict__ s = reinterpret_cast<const Vec *>(src + head);
    for (size_t i = tid; i < vectors; i += stride)
        d[i] = s[i];
}

template <typename Vec>
hipError_t launch_copy(unsigned char *dst, const unsigned char *src, size_t size, hipStream_t stream)
{
    const size_t misalignment = reinterpret_cast<uintptr_t>(dst) % sizeof(Vec);
    size_t head = misalignment == 0 ? 0 : sizeof(Vec) - misalignment;
    if (head > size)
        head = size;
    const size_t vectors = (size - head) / sizeof(Vec);
    const size_t tail = size - head - vectors * sizeof(Vec);
    copy_range<Vec><<<tidal::kernels::grid_blocks(vectors), tidal::kernels::kBlockThreads, 0, stream>>>(
        dst, src, head, vectors, tail);
    return hipGetLastError();
}

/* a = b + scalar * c on one Vec (double or double2). */
template <typename Vec>
__device__ inline Vec triad_op(const Vec &b, const Vec &c, double scalar);

template <>
__device__ inline double triad_op<double>(const double &b, const double &c, double scalar)
{
    return b + scalar * c;
}

template <>
__device__ inline double2 triad_op<double2>(const double2 &b, const double2 &c, double scalar)
{
    double2 r;
    r.x = b.x + scalar * c.x;
    r.y = b.y + scalar * c.y;
    return r;
}

template <typename Vec>
__global__ void triad_range(Vec *__restrict__ a, const Vec *__restrict__ b, const Vec *__restrict__ c,
                            double scalar, size_t count)
{
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        a[i] = triad_op<Vec>(b[i], c[i], scalar);
}
/* The odd last element of a double2 triad. */
__global__ void triad_last(double *a, const double *b, const double *c, double scalar, size_t index)
{
    a[index] = b[index] + scalar * c[index];
}

bool aligned_to(const void *p, size_t alignment)
{
    return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

} // namespace

extern "C" int tidal_kernel_copy(void *dst, const void *src, size_t size, void *stream)
{
    if (size == 0)
        return hipSuccess;
    auto *d = static_cast<unsigned char *>(dst);
    const auto *s = static_cast<const unsigned char *>(src);
    const hipStream_t st = static_cast<hipStream_t>(stream);
    /* Vectors need dst and src aligned alike; the head makes both aligned at once. */
    const uintptr_t relative = reinterpret_cast<uintptr_t>(d) ^ reinterpret_cast<uintptr_t>(s);
    hipError_t status;
    if (relative % 16 == 0)
        status = launch_copy<uint4>(d, s, size, st);
    else if (relative % 8 == 0)
        status = launch_copy<uint2>(d, s, size, st);
    else if (relative % 4 == 0)
        status = launch_copy<unsigned int>(d, s, size, st);
    else
        status = launch_copy<unsigned char>(d, s, size, st);
    return static_cast<int>(status);
}

extern "C" int tidal_kernel_triad(double *a, const double *b, const double *c, double scalar, size_t size,
                                  void *stream)
{
    const size_t count = size / sizeof(double);
    if (count == 0)
        return hipSuccess;
    const hipStream_t st = static_cast<hipStream_t>(stream);
    using tidal::kernels::grid_blocks;
    using tidal::kernels::kBlockThreads;
    if (aligned_to(a, 16) && aligned_to(b, 16) && aligned_to(c, 16)) {
        const size_t pairs = count / 2;
        if (pairs > 0) {
            triad_range<double2><<<grid_blocks(pairs), kBlockThreads, 0, st>>>(
                reinterpret_cast<double2 *>(a), reinterpret_cast<const double2 *>(b),
                reinterpret_cast<const double2 *>(c), scalar, pairs);
            const hipError_t status = hipGetLastError();
            if (status != hipSuccess)
                return static_cast<int>(status);
        }
        if (count % 2 != 0)
            triad_last<<<1, 1, 0, st>>>(a, b, c, scalar, count - 1);
    } else {
        triad_range<double><<<grid_blocks(count), kBlockThreads, 0, st>>>(a, b, c, scalar, count);
    }
    return static_cast<int>(hipGetLastError());
}
