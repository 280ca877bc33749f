/* batch_copy: many small copies in one launch (tidal_copy_batch). A host->device batch arrives
 * in one device staging buffer and this kernel scatters it to the destinations; a
 * device->host batch is gathered into staging by the same kernel. A runtime memcpy per item
 * costs microseconds of submission each; a launch costs that once for the whole table.
 *
 * Grid: x = item, y = tile of the item. A tile is what one block moves in one pass, so small
 * items take one block each and a 1 MiB item is spread over many SMs instead of one. */
#include <cstdint>

#include "kernel_compat.h"
#include "kernel_launch.h"
#include "launch_geometry.h"

namespace {

constexpr size_t kTileBytes = size_t(16) << 10; /* 256 threads x 16 B x 4 passes */

/* dst = src for `size` bytes by the threads of one block: bytewise up to dst's Vec alignment,
 * then whole Vec (src is aligned alike: the caller picked Vec from both), then the tail. */
template <typename Vec>
__device__ inline void block_copy(unsigned char *__restrict__ dst, const unsigned char *__restrict__ src,
                                  size_t size)
{
    const size_t misalignment = reinterpret_cast<uintptr_t>(dst) % sizeof(Vec);
    size_t head = misalignment == 0 ? 0 : sizeof(Vec) - misalignment;
    if (head > size)
        head = size;
    const size_t vectors = (size - head) / sizeof(Vec);
    const size_t tail_begin = head + vectors * sizeof(Vec);
    for (size_t i = threadIdx.x; i < head; i += blockDim.x)
        dst[i] = src[i];
    Vec *__restrict__ d = reinterpret_cast<Vec *>(dst + head);
    const Vec *__restrict__ s = reinterpret_cast<const Vec *>(src + head);
    for (size_t i = threadIdx.x; i < vectors; i += blockDim.x)
        d[i] = s[i];
    for (size_t i = tail_begin + threadIdx.x; i < size; i += blockDim.x)
        dst[i] = src[i];
}

__global__ void copy_items(const tidal_kernel_copy_item *__restrict__ items)
{
    const tidal_kernel_copy_item item = items[blockIdx.x];
    const size_t begin = static_cast<size_t>(blockIdx.y) * kTileBytes;
    if (begin >= item.size)
        return;
    const size_t size = item.size - begin < kTileBytes ? item.size - begin : kTileBytes;
    auto *dst = static_cast<unsigned char *>(item.dst) + begin;
    const auto *src = static_cast<const unsigned char *>(item.src) + begin;
    /* The same branch for the whole block: no divergence. tidal_copy_batch places staging
     * copies at the destination's (or source's) offset modulo 16, so uint4 is the rule. */
    const uintptr_t relative = reinterpret_cast<uintptr_t>(dst) ^ reinterpret_cast<uintptr_t>(src);
    if (relative % 16 == 0)
        block_copy<uint4>(dst, src, size);
    else if (relative % 8 == 0)
        block_copy<uint2>(dst, src, size);
    else if (relative % 4 == 0)
        block_copy<unsigned int>(dst, src, size);
    else
        block_copy<unsigned char>(dst, src, size);
}

} // namespace

extern "C" int tidal_kernel_batch_copy(const tidal_kernel_copy_item *items, uint32_t count, uint64_t max_size,
                                       void *stream)
{
    if (count == 0 || max_size == 0)
        return hipSuccess;
    const size_t tiles = (max_size + kTileBytes - 1) / kTileBytes;
    if (tiles > 65535) /* gridDim.y's limit on both platforms: 1 GiB items */
        return hipErrorInvalidValue;
    const dim3 grid(count, static_cast<unsigned>(tiles));
    copy_items<<<grid, tidal::kernels::kBlockThreads, 0, static_cast<hipStream_t>(stream)>>>(items);
    return static_cast<int>(hipGetLastError());
}
