/* How big a grid the validation kernels launch: shared by every launcher, both platforms.
 *
 * The kernels are grid-stride loops, correct for any grid. The grid is nevertheless sized to
 * give every work item its own thread: measured on an H200 (1 GiB device-to-device copy), a
 * grid-stride copy over a resident-sized grid (132 SMs x 8 blocks of 256, 4x unrolled uint4)
 * reached 92% of cudaMemcpy, the same loop over a full grid (one uint4 per thread) 100%.
 * Short-lived blocks keep consecutive blocks on neighbouring addresses, which the memory
 * system rewards. */
#ifndef TIDAL_KERNELS_LAUNCH_GEOMETRY_H
#define TIDAL_KERNELS_LAUNCH_GEOMETRY_H

#include <cstddef>

namespace tidal::kernels {

inline constexpr unsigned kBlockThreads = 256;
/* 2^22 blocks x 256 threads = 2^30 threads: inside AMD's limit of 2^32 work-items per grid
 * and far inside CUDA's 2^31-1 blocks. A single pass then covers 16 GiB of uint4; larger
 * ranges take more trips around the grid-stride loop. */
inline constexpr size_t kMaxBlocks = size_t(1) << 22;

/* Blocks for `items` work items, one per thread. */
inline unsigned grid_blocks(size_t items)
{
    const size_t wanted = (items + kBlockThreads - 1) / kBlockThreads;
    const size_t blocks = wanted < kMaxBlocks ? wanted : kMaxBlocks;
    return static_cast<unsigned>(blocks > 0 ? blocks : 1);
}

} // namespace tidal::kernels

#endif /* TIDAL_KERNELS_LAUNCH_GEOMETRY_H */
