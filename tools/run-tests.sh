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
# A ./build the quickstart set up has tests and benchmarks off and was configured before the
# test packages were here; meson keeps its failed checks (a header once missing stays missing
# across reconfigurations), so such a folder is set up afresh with every feature on `auto`.
if grep -Eqs '"name": "(tests|bench)", "value": "disabled"' build/meson-info/intro-buildoptions.json; then
    meson setup --wipe build -Dtests=auto -Dbench=auto
fi
[ -d build ] || meson setup build
ninja -C build -j "$jobs"
meson test -C build --print-errorlogs --num-processes "$jobs"
# The sanitizer build leaves out the GPU modules: they link vendor runtimes ASan cannot see into.
[ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
    -Dhip=disabled -Dcuda=disabled -Dhip_kernels=disabled -Dnvcc_kernels=disabled
ninja -C build-asan -j "$jobs"
meson test -C build-asan --print-errorlogs --num-processes "$jobs" --no-suite device
