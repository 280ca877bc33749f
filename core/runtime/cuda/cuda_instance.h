/* The state behind the `rt` handle create() returns. Everything else the module needs lives
 * in the CUDA runtime's own per-process state, so this stays small and immutable. */
#ifndef TIDAL_RUNTIME_CUDA_CUDA_INSTANCE_H
#define TIDAL_RUNTIME_CUDA_CUDA_INSTANCE_H

#include <cstdint>

#include "cuda_vmm.h"

namespace tidal::cuda {

struct CudaInstance {
    int32_t device_count = 0;
    DriverVmm vmm; /* the driver's virtual-memory entry points, looked up at create() */
};

inline const CudaInstance &instance(void *rt) noexcept { return *static_cast<const CudaInstance *>(rt); }

} // namespace tidal::cuda

#endif /* TIDAL_RUNTIME_CUDA_CUDA_INSTANCE_H */
