// HIP error numbers and names: the one list the configuration (sim fault injection), the
// simulated device and the status translation table share, so a name always means the same
// number everywhere. Numbers are HIP's (hip_runtime_api.h), which are CUDA's (driver_types.h)
// for every code listed; the simulated device reports this numbering, under the CUDA name when
// its profile is an NVIDIA card's.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace tidal {

struct HipErrorName {
    int code;
    const char *name;        // "hipErrorOutOfMemory"
    const char *cuda_name;   // "cudaErrorMemoryAllocation": the CUDA runtime's name for the number
    const char *description; // short English text, as hipGetErrorString would say it
};

// Every known entry, in ascending code order. Aliases (hipErrorMemoryAllocation = 2,
// hipErrorInitializationError = 3, ...) are accepted by hip_error_from_name() but are not
// listed here, so each code has exactly one canonical name.
std::span<const HipErrorName> hip_error_names() noexcept;

// "hipErrorOutOfMemory" -> 2. Exact, case-sensitive match (aliases included); nullopt when
// unknown.
std::optional<int> hip_error_from_name(std::string_view name) noexcept;

// 2 -> "hipErrorOutOfMemory"; nullptr for a number not in the list.
const char *hip_error_name(int code) noexcept;

// 2 -> "cudaErrorMemoryAllocation"; nullptr for a number not in the list.
const char *cuda_error_name(int code) noexcept;

// 2 -> "out of memory"; nullptr for a number not in the list.
const char *hip_error_description(int code) noexcept;

} // namespace tidal
