// Device discovery for the HIP module: what each GPU is and what its memory does.
#pragma once

#include <cstdint>

#include "hip_xnack.h"
#include "runtime/runtime_contract.h"

namespace tidal::hip {

// Everything create() learns about one device; immutable afterwards, so entry points read it
// from several threads without locks.
struct DeviceRecord {
    tidal_rt_device_props props{};
    XnackVerdict xnack;
};

// Fills `out` for HIP device `device`. `hsa_xnack_env` is getenv("HSA_XNACK") read once by
// the caller. Returns hipSuccess or the native error of the query that failed.
int query_device(int32_t device, const char *hsa_xnack_env, DeviceRecord &out);

// AMD's shared-virtual-memory migration granularity: amdgpu.svm_default_granularity = 9,
// i.e. 2^9 pages of 4 KiB = 2 MiB. No HIP attribute reports it.
inline constexpr uint64_t kSvmGranularity = 2u << 20;

} // namespace tidal::hip
