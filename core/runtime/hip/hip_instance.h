// One instance of the HIP runtime module (the `rt` handle of tidal_rt_ops): the devices
// found at create(). HIP itself is process-global; this object only holds what was learnt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hip_devices.h"

namespace tidal::hip {

class HipInstance {
public:
    // Counts and describes the devices. Returns hipSuccess, hipErrorNoDevice when there is
    // none, or the native error of the first failing query; `out` is set only on success.
    // `detail` receives the one-line description (also on failure, for the core's log).
    static int create(HipInstance *&out, std::string &detail);

    int32_t device_count() const noexcept { return static_cast<int32_t>(devices_.size()); }
    const DeviceRecord &device(int32_t index) const noexcept
    {
        return devices_[static_cast<std::size_t>(index)];
    }

    static HipInstance &of(void *rt) noexcept { return *static_cast<HipInstance *>(rt); }

private:
    explicit HipInstance(std::vector<DeviceRecord> devices) : devices_(std::move(devices)) {}

    std::vector<DeviceRecord> devices_;
};

} // namespace tidal::hip
