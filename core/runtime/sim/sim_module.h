// The simulated device as a device runtime: its tidal_rt_ops table and how the core makes one.
#pragma once

#include <cstddef>

#include "config/settings.h"
#include "runtime/runtime_contract.h"

namespace tidal::sim {

// The table: name "sim", family TIDAL_RT_FAMILY_HIP (the simulated device speaks HIP's error
// numbers). Every entry point is filled; none lets an exception out. The table's own
// create() answers hipErrorNotSupported (801): the simulated device is configured by typed
// settings the core already holds, so the core creates it with sim_create() instead.
const tidal_rt_ops *sim_ops();
// The table for a device of these settings: an NVIDIA profile's names its errors as the CUDA
// runtime does (family TIDAL_RT_FAMILY_CUDA, the same numbers), any other HIP's (sim_ops()).
const tidal_rt_ops *sim_ops(const SimSettings &settings);

// Creates a simulated runtime from resolved settings; *rt is then passed to sim_ops()'s
// entries and released with its destroy(). `detail` (may be NULL) gets one line: the
// description on success ("simulated: profile h200, 1 device(s), 16 GiB, xnack on") or why
// it failed. Returns 0; hipErrorInvalidValue (1) for settings that cannot be simulated
// (unknown vendor, 0 devices, capacity 0, bad page size, unknown fault operation);
// hipErrorOutOfMemory (2); or the error of an injected "create" fault (nothing is created).
int sim_create(const SimSettings &settings, void **rt, char *detail, size_t detail_capacity);

} // namespace tidal::sim
