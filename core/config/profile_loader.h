// Hardware profiles for the simulated device: TOML files of measured bandwidths and latencies,
// either built into the library (core/runtime/sim/profiles/*.toml, embedded at build time by
// embed_profiles.py) or a file of the user's.
//
// Profile layout (strict: an unknown key is an error with "did you mean"; every key but
// `name` is required):
//   name = "h200"                    optional; defaults to the file's stem
//   [device]    name, vendor ("nvidia" | "amd"), arch, capacity, page_size, l2_size (integer
//               bytes or size strings), xnack (true = managed pages migrate on a device fault),
//               optional: vmm_granularity, host_native_atomics (default true)
//   [bandwidth] GB/s (10^9 B/s): h2d_pageable, h2d_pinned, d2h_pageable, d2h_pinned, d2d,
//               prefetch_h2d, prefetch_d2h, fault, zero_copy, host_memcpy; optional:
//               prefetch_h2d_duplicate, remote_managed, readmostly_collapse, staging_memcpy,
//               host_memcpy_thread
//   [latency]   microseconds: copy, kernel_launch, fault, alloc_device, alloc_pinned,
//               alloc_managed
// SimProfile holds them converted to bytes/second and seconds.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config/settings.h"

namespace tidal {

// Names of the profiles built into this library ("h200", ...).
std::vector<std::string_view> builtin_profile_names();

// The TOML text of a built-in profile; empty when there is none of that name.
std::string_view builtin_profile_text(std::string_view name);

// A built-in profile by name first; otherwise a file, a relative path taken from `base_dir`.
// Throws Error(TIDAL_ERROR_CONFIG): "FILE:LINE:COLUMN: ..." for a bad profile, or a message
// naming the built-in profiles (with "did you mean") when neither exists.
SimProfile load_profile(std::string_view name_or_path, const std::filesystem::path &base_dir);

// Parses profile text. `label` names it in messages, `default_name` is used when the text has
// no `name` key, `source` is stored in SimProfile::source (empty for a built-in).
SimProfile parse_profile(std::string_view text, const std::string &label,
                         const std::string &default_name, const std::filesystem::path &source);

} // namespace tidal
