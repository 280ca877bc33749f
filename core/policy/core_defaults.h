// The decisions that end every policy chain, so every allocation gets a placement even with
// no plugin configured. Deliberately plain: XNACK-aware placement is the `xnack` policy's job.
#pragma once

#include "registry/allocation_record.h"
#include "tidal/policy.h"

namespace tidal {

class CoreDefaults {
public:
    static constexpr char kName[kPlacedByBytes] = "core"; // NUL-padded (AllocationRecord::placed_by)
    // AUTO: pinned host memory when the hints say the host reads or writes it (and not
    // device-only), device memory otherwise. Explicit kinds are kept. Device DEFAULT becomes 0
    // for device kinds and TIDAL_DEVICE_HOST for host kinds. Read-mostly hints on managed
    // kinds become read-mostly advice.
    static tidal_placement place(const tidal_place_request &request) noexcept;
};

} // namespace tidal
