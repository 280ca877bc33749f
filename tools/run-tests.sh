#!/usr/bin/env bash
# The whole test suite, twice: a normal build (every feature found on this machine, GPU
# modules and kernels included) and an AddressSanitizer + UndefinedBehaviorSanitizer build.
# Suites: unit, capi, plugins, abi, tools, fortran, python, device (skips without a GPU).
# Exit status 0 only if all pass.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
tidal_install_missing
jobs=${TIDAL_JOBS:-$(nproc)}
[ -d build ] || meson setup build
ninja -C build -j "$jobs"
meson test -C build --print-errorlogs --num-processes "$jobs"
# The sanitizer build leaves out the GPU modules: they link vendor runtimes ASan cannot see into.
[ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
    -Dhip=disabled -Dcuda=disabled -Dhip_kernels=disabled -Dnvcc_kernels=disabled
ninja -C build-asan -j "$jobs"
meson test -C build-asan --print-errorlogs --num-processes "$jobs" --no-suite device
