/* touch: one word of every 4 KiB page of a range, read or read and written back.
 * Used to fault pages in (managed memory), to check that the device can reach a range at all
 * and to time demand paging against prefetching. */
#include <cstdint>

#include "kernel_compat.h"
#include "kernel_launch.h"
#include "launch_geometry.h"

namespace {

constexpr unsigned kPageShift = 12; /* 4 KiB: the smallest page any host or GPU maps */

/* Pages are counted on the address, not from `begin`: a range that starts mid-page still has
 * every page it spans touched. The word touched is the first whole word of the range inside
 * the page. Volatile keeps the read that nobody uses and stops the compiler from fusing the
 * write-back away. Writing the value read back leaves the data unchanged, so touching never
 * corrupts a buffer; it is not atomic, so do not touch a range another kernel is writing. */
__global__ void touch_pages(uintptr_t begin, uintptr_t end, size_t pages, int write)
{
    const uintptr_t first_page = begin >> kPageShift;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t p = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < pages; p += stride) {
        uintptr_t address = (first_page + p) << kPageShift;
        if (address < begin)
            address = begin;
        if (address + sizeof(uint64_t) > end)
            continue;
        volatile uint64_t *word = reinterpret_cast<volatile uint64_t *>(address);
        const uint64_t value = *word;
        if (write)
            *word = value;
    }
}

} // namespace

extern "C" int tidal_kernel_touch(void *ptr, size_t size, int write, void *stream)
{
    const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
    /* Whole words only: the tail of a size that is not a multiple of 8 is not touched. */
    const uintptr_t end = begin + (size & ~static_cast<size_t>(sizeof(uint64_t) - 1));
    if (end <= begin)
        return hipSuccess;
    const size_t pages = ((end - 1) >> kPageShift) - (begin >> kPageShift) + 1;
    touch_pages<<<tidal::kernels::grid_blocks(pages), tidal::kernels::kBlockThreads, 0,
                  static_cast<hipStream_t>(stream)>>>(begin, end, pages, write);
    return static_cast<int>(hipGetLastError());
}
