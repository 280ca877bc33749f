// Settings -> TOML text: what a context will actually run with, for `tidal config show`,
// logs and bug reports. The text is itself a valid configuration: read back with
// ConfigLoader::from_string it gives the same settings (paths are written absolute, and
// values that come from the hardware profile are written as comments so they stay the
// profile's). Environment overrides that were applied are listed as comments at the top.
#pragma once

#include <string>

#include "config/settings.h"

namespace tidal {

std::string describe_settings(const Settings &settings);

} // namespace tidal
