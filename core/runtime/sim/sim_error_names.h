// HIP error names and descriptions for the codes the simulated device returns. The simulated
// device speaks HIP's numbering (TIDAL_RT_FAMILY_HIP) so the core's one translation table
// treats it exactly like the HIP module.
#pragma once

namespace tidal::sim {

// Native HIP codes the simulated device returns itself (a fault spec may inject any other).
enum SimError : int {
    kSuccess = 0,
    kInvalidValue = 1,
    kOutOfMemory = 2,
    kNoDevice = 100,
    kInvalidDevice = 101,
    kInvalidHandle = 400,
    kIllegalAddress = 700,
    kHostMemoryAlreadyRegistered = 712,
    kHostMemoryNotRegistered = 713,
    kNotSupported = 801,
    kUnknown = 999,
};

// "hipErrorOutOfMemory" etc.; "hipErrorUnknown" for a number outside the table. Never NULL.
const char *sim_error_name(int native) noexcept;
// hipGetErrorString-style description. Never NULL.
const char *sim_error_string(int native) noexcept;

} // namespace tidal::sim
