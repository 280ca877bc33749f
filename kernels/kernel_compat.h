/* The HIP names the validation kernels are written with, for both of their compilers.
 *
 * hipcc compiles the sources against the real HIP headers. nvcc compiles the same sources
 * against the CUDA runtime: Debian's HIP 5.2.3 ships NVIDIA-platform headers that no longer
 * compile against CUDA 13 (removed texture APIs, new prefetch/advise signatures), so instead
 * of HIP-on-NVIDIA this header maps the handful of names the kernel sources use onto CUDA.
 * Add a name here when a kernel source needs one; keep the kernels to this subset. */
#ifndef TIDAL_KERNELS_KERNEL_COMPAT_H
#define TIDAL_KERNELS_KERNEL_COMPAT_H

#if defined(__HIPCC__) || defined(__HIP__)
#  include <hip/hip_runtime.h>
#elif defined(__CUDACC__)
#  include <cuda_runtime.h>

using hipError_t = cudaError_t;
using hipStream_t = cudaStream_t;
using hipMemcpyKind = cudaMemcpyKind;

constexpr hipError_t hipSuccess = cudaSuccess;
constexpr hipError_t hipErrorInvalidValue = cudaErrorInvalidValue;
constexpr hipMemcpyKind hipMemcpyDeviceToHost = cudaMemcpyDeviceToHost;

/* Functions rather than macros so a misuse is a type error at the call, not inside a macro. */
static inline hipError_t hipGetLastError() { return cudaGetLastError(); }
static inline hipError_t hipMalloc(void **ptr, size_t size) { return cudaMalloc(ptr, size); }
static inline hipError_t hipFree(void *ptr) { return cudaFree(ptr); }
static inline hipError_t hipMemsetAsync(void *dst, int value, size_t size, hipStream_t stream)
{
    return cudaMemsetAsync(dst, value, size, stream);
}
static inline hipError_t hipMemcpyAsync(void *dst, const void *src, size_t size, hipMemcpyKind kind,
                                        hipStream_t stream)
{
    return cudaMemcpyAsync(dst, src, size, kind, stream);
}
static inline hipError_t hipStreamSynchronize(hipStream_t stream) { return cudaStreamSynchronize(stream); }
#else
#  error "kernel_compat.h is for the kernel sources, compiled by hipcc or nvcc"
#endif

#endif /* TIDAL_KERNELS_KERNEL_COMPAT_H */
