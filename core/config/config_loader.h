// Reads a tidal configuration (TOML) into typed, validated Settings.
//
// Strict by design: an unknown key, a value of the wrong type or a bad value is
// Error(TIDAL_ERROR_CONFIG) whose message starts "FILE:LINE:COLUMN: " ("<string>" for text),
// with "did you mean 'X'?" for a misspelt key. After the text, environment variables override
// it (each one applied is recorded in Settings::env_overrides as "NAME=value"):
//   TIDAL_RUNTIME        runtime (auto | sim | hip | cuda)
//   TIDAL_LOG_LEVEL      log_level (error | warn | info | debug)
//   TIDAL_POLICY_PATH    colon-separated folders put BEFORE policy_path
//   TIDAL_RUNTIME_PATH   colon-separated folders put BEFORE runtime_path
//   TIDAL_SIM_DEVICES    sim.devices (1..64)
//   TIDAL_SIM_CAPACITY   sim.capacity (bytes or a size such as "16GiB")
//   TIDAL_SIM_XNACK      sim.xnack (0 | 1 | true | false)
// An empty variable counts as unset. TIDAL_CONFIG (which file to read) is the context's
// business, not this class's.
//
// File layout:
//   runtime = "auto"             auto | sim | hip | cuda
//   [hip], [cuda]                runtime module options: none exist yet, so any key is an error
//                                whatever the runtime (the module checks them again)
//   log_level = "warn"
//   policy_path = ["plugins"]    folders, relative to the file's folder; absolute in Settings
//   runtime_path = ["mods"]      same rule
//   policies = ["rules"]         the chain, in order: non-empty, no duplicates
//   [policy.NAME]                options for a policy of the chain (checked by the plugin)
//   [sim]  devices (1..64), capacity, page_size, xnack, profile ("h200" or a file path)
//   [[sim.fault]]  operation, nth (>= 1), count (0 = every call from nth on), error (HIP name
//                  or number)
//   [security]  allow_writable_plugins (false: refuse plugins others could replace)
// Text is bounded by TomlLimits (1 MiB, 64 levels, 65 536 elements per array), and only regular
// files are read.
#pragma once

#include <filesystem>
#include <string_view>

#include "config/settings.h"

namespace tidal {

class ConfigLoader {
public:
    // Reads `file`; relative paths in it start at the file's folder. Settings::source is the
    // file (absolute), and messages name it as given.
    static Settings from_file(const std::filesystem::path &file);

    // Reads TOML text; relative paths start at `base_dir` (empty: the current directory).
    static Settings from_string(std::string_view toml, const std::filesystem::path &base_dir = {});

    // Built-in defaults plus environment overrides: from_string("").
    static Settings defaults();
};

} // namespace tidal
