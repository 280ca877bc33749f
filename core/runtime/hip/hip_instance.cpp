#include "hip_instance.h"

#include <hip/hip_runtime_api.h>

#include <cstdlib>

namespace tidal::hip {

namespace {

// HIP packs versions as major * 10^7 + minor * 10^5 + patch (HIP_VERSION in hip_version.h);
// AMD's hipDriverGetVersion uses the same packing. Anything smaller is shown as it came.
std::string version_text(int packed)
{
    if (packed < 10000000)
        return std::to_string(packed);
    return std::to_string(packed / 10000000) + "." + std::to_string(packed / 100000 % 100) + "." +
           std::to_string(packed % 100000);
}

std::string versions_line()
{
    int runtime = 0;
    int driver = 0;
    const bool have_runtime = hipRuntimeGetVersion(&runtime) == hipSuccess;
    const bool have_driver = hipDriverGetVersion(&driver) == hipSuccess;
    (void)hipGetLastError(); // a failed version query must not linger as the thread's error
    return "HIP runtime " + (have_runtime ? version_text(runtime) : std::string("unknown")) +
           " (driver " + (have_driver ? version_text(driver) : std::string("unknown")) + ")";
}

const char *xnack_word(XnackState state)
{
    switch (state) {
    case XnackState::on: return "on";
    case XnackState::off: return "off";
    case XnackState::unknown: break;
    }
    return "unknown";
}

} // namespace

int HipInstance::create(HipInstance *&out, std::string &detail)
{
    detail = versions_line();

    int count = 0;
    if (const hipError_t rc = hipGetDeviceCount(&count); rc != hipSuccess)
        return rc; // hipErrorNoDevice (100) on a machine without an AMD GPU
    if (count <= 0)
        return hipErrorNoDevice;

    // Read once: ROCr itself reads HSA_XNACK at initialisation, so a later change would not
    // match what the devices report anyway.
    const char *hsa_xnack = std::getenv("HSA_XNACK");
    std::vector<DeviceRecord> devices(static_cast<std::size_t>(count));
    for (int32_t d = 0; d < count; ++d) {
        DeviceRecord &record = devices[static_cast<std::size_t>(d)];
        if (const int rc = query_device(d, hsa_xnack, record); rc != hipSuccess)
            return rc;
        // The module cannot log (it does not link libtidal), so the XNACK verdict and its
        // reason travel in the detail line the core logs when it loads the runtime.
        detail += "; device " + std::to_string(d) + " " + record.props.arch + ": XNACK " +
                  xnack_word(record.xnack.state) + " (" + record.xnack.reason + ")";
    }
    out = new HipInstance(std::move(devices));
    return hipSuccess;
}

} // namespace tidal::hip
