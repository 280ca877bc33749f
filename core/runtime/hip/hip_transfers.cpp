// Copies and fills in any direction for the HIP module.
#include <hip/hip_runtime_api.h>

#include "hip_entry_points.h"
#include "hip_errors.h"

namespace tidal::hip {

int rt_memcpy(void *, void *dst, const void *src, size_t size, void *stream) noexcept
{
    return guarded([&] {
        // hipMemcpyDefault: unified addressing tells HIP the direction from the pointers.
        if (stream != nullptr)
            return hipMemcpyAsync(dst, src, size, hipMemcpyDefault, static_cast<hipStream_t>(stream));
        // NULL stream promises completion on return; hipMemcpy follows cudaMemcpy's rule where
        // HIP runs on CUDA, and that returns before a device-to-device copy has finished.
        if (const hipError_t rc = hipMemcpyAsync(dst, src, size, hipMemcpyDefault, nullptr); rc != hipSuccess)
            return rc;
        return hipStreamSynchronize(nullptr);
    });
}

int rt_memset(void *, void *dst, int value, size_t size, void *stream) noexcept
{
    return guarded([&] {
        if (stream != nullptr)
            return hipMemsetAsync(dst, value, size, static_cast<hipStream_t>(stream));
        // NULL stream promises host-synchronous completion; hipMemset alone may return
        // before a device-memory fill has finished (CUDA semantics).
        if (const hipError_t rc = hipMemsetAsync(dst, value, size, nullptr); rc != hipSuccess)
            return rc;
        return hipStreamSynchronize(nullptr);
    });
}

} // namespace tidal::hip
