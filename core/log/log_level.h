// How much the log says. Its own header so that config/ (which reads the level from TOML) and
// log/ (which filters by it) meet here, with log/ below config/ in the layering.
#pragma once

namespace tidal {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

} // namespace tidal
