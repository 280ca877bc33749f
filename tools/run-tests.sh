#!/usr/bin/env bash
# The whole test suite, twice: a normal build (every feature found on this machine, GPU
# modules and kernels included) and an AddressSanitizer + UndefinedBehaviorSanitizer build.
# Suites: unit, capi, faults, stress, plugins, abi, tools, fortran, python, device (skips
# without a GPU); `faults` in the sanitizer build only, `calibration` in the normal one only.
# Exit status 0 only if all pass.
#
# --tsan (or TIDAL_TSAN=1) runs instead the ThreadSanitizer setup: build-tsan, the unit, capi
# and stress suites, the stress test with TIDAL_STRESS_OPS operations (default 2000000) with the
# simulated device serialised and not. Not part of the default run: it takes long on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
tidal_install_missing
jobs=${TIDAL_JOBS:-$(nproc)}

if [ "${1:-}" = "--tsan" ] || [ "${TIDAL_TSAN:-0}" = "1" ]; then
    # GPU modules left out as in the ASan build; the vendor runtimes are not instrumented.
    [ -d build-tsan ] || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false \
        -Dhip=disabled -Dcuda=disabled -Dhip_kernels=disabled -Dnvcc_kernels=disabled
    ninja -C build-tsan -j "$jobs"
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
    export TIDAL_STRESS_OPS=${TIDAL_STRESS_OPS:-2000000}
    meson test -C build-tsan --print-errorlogs --num-processes "$jobs" --timeout-multiplier 0 \
        --suite unit --suite capi --suite stress
    exit 0
fi
# A ./build the quickstart set up has tests and benchmarks off and was configured before the
# test packages were here; meson keeps its failed checks (a header once missing stays missing
# across reconfigurations), so such a folder is set up afresh with every feature on `auto`.
if grep -Eqs '"name": "(tests|bench)", "value": "disabled"' build/meson-info/intro-buildoptions.json; then
    meson setup --wipe build -Dtests=auto -Dbench=auto
fi
[ -d build ] || meson setup build
ninja -C build -j "$jobs"
# The fault sweep (suite `faults`, ~80 s here and ~160 s under ASan on 2 cores) runs in the
# sanitizer build only: its checks are the same in both, and a failure path's memory error is
# what the sanitizers see.
meson test -C build --print-errorlogs --num-processes "$jobs" --no-suite faults
# The sanitizer build leaves out the GPU modules: they link vendor runtimes ASan cannot see into.
# It compiles at -O1 with line tables only (-g1), as ASan's documentation advises: reports keep
# their file:line frames, and it compiles in about half of -O2 -g's time (with -O2 -g it was
# half of a 31-minute clean-clone run on 2 cores, the `tidal` tool's files about a minute each).
asan_options=(-Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Ddebug=false
              -Dc_args=-g1 -Dcpp_args=-g1
              -Dhip=disabled -Dcuda=disabled -Dhip_kernels=disabled -Dnvcc_kernels=disabled)
if [ ! -d build-asan ]; then
    meson setup build-asan "${asan_options[@]}"
elif ! grep -Eqs '"name": "optimization", "value": "1"' build-asan/meson-info/intro-buildoptions.json; then
    meson configure build-asan "${asan_options[@]}" # a folder set up before these options were
fi
ninja -C build-asan -j "$jobs"
# `calibration` (sim-calibration) checks the simulated device's figures: the normal run has.
meson test -C build-asan --print-errorlogs --num-processes "$jobs" --no-suite device --no-suite calibration
