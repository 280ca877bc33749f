// Error names and descriptions for the codes the simulated device returns. The simulated
// device speaks HIP's numbering, which for every code it knows is CUDA's too; it names a code as
// the card its profile describes would (hipErrorOutOfMemory on an AMD profile,
// cudaErrorMemoryAllocation on an NVIDIA one), so messages read as they will on that card.
#pragma once

#include <string_view>

namespace tidal::sim {

// Native HIP codes the simulated device returns itself (a fault spec may inject any other).
enum SimError : int {
    kSuccess = 0,
    kInvalidValue = 1,
    kOutOfMemory = 2,
    kNoDevice = 100,
    kInvalidDevice = 101,
    kPeerAccessUnsupported = 217,
    kInvalidHandle = 400,
    kIllegalAddress = 700,
    kHostMemoryAlreadyRegistered = 712,
    kHostMemoryNotRegistered = 713,
    kNotSupported = 801,
    kUnknown = 999,
};

enum class ErrorNaming { hip, cuda };

// A profile's [device] vendor -> its runtime's naming: "nvidia" -> cuda, anything else -> hip.
ErrorNaming error_naming_of(std::string_view vendor) noexcept;

// "hipErrorOutOfMemory" / "cudaErrorMemoryAllocation" etc.; "hipErrorUnknown" /
// "cudaErrorUnknown" for a number outside the table. Never NULL.
const char *sim_error_name(int native, ErrorNaming naming) noexcept;
// hipGetErrorString-style description. Never NULL.
const char *sim_error_string(int native) noexcept;

} // namespace tidal::sim
