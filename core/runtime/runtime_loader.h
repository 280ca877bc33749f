// Chooses and starts the device runtime: the built-in simulated device, or a GPU runtime
// module (tidal-runtime-hip.so / tidal-runtime-cuda.so) found on the runtime path, next to
// libtidal, or in the install folder. runtime = "auto" tries hip, then cuda, then falls back
// to the simulated device with one log line saying why.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "config/settings.h"
#include "runtime/runtime.h"

namespace tidal {

class RuntimeLoader {
public:
    static std::unique_ptr<Runtime> load(const Settings &settings);
    // The folders searched for `name`'s module, in order.
    static std::vector<std::filesystem::path> search_path(const Settings &settings, const std::string &name);

private:
    static std::unique_ptr<Runtime> load_sim(const Settings &settings);
    static std::unique_ptr<Runtime> load_module(const Settings &settings, const std::string &name);
};

} // namespace tidal
