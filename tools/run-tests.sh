#!/usr/bin/env bash
# The whole test suite, over two builds: a normal build (every feature found on this machine, GPU
# modules and kernels included) and an AddressSanitizer + UndefinedBehaviorSanitizer build.
# Each test runs once, in the sanitizer build where it can: there a memory error or undefined
# behaviour fails it. The normal build runs what needs it: `calibration` (the simulated device's
# figures, optimised), `install` (installs this build), `layout` (source checks), `device` (a
# real GPU; skips without one), `hip-standin` and `gpu-modules` (the GPU runtime modules, which
# the sanitizer build leaves out), and `abi` (in both: the exported symbols of the library as
# shipped, and old clients' small structs under the sanitizers). It compiles what these need,
# benchmarks and what is installed (not the other suites' test programs), and its tests run
# while the sanitizer build compiles; their output follows the build's. Exit status 0 only if all
# pass.
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
# A folder this script sets up gets line tables only (-g1) where -O2 -g's full debug information
# took a fifth to a quarter of the compile time (core/context.cpp 9.8 s against 7.0 s on 2 cores);
# backtraces keep their file:line frames. A folder set up by hand keeps its own flags.
normal_options=(-Dc_args=-g1 -Dcpp_args=-g1)
if grep -Eqs '"name": "(tests|bench)", "value": "disabled"' build/meson-info/intro-buildoptions.json; then
    meson setup --wipe build -Dtests=auto -Dbench=auto "${normal_options[@]}"
fi
[ -d build ] || meson setup build "${normal_options[@]}"
# The one list of the normal build's suites: the sanitizer run below leaves out all of them but
# `abi`, which runs in both.
normal_suite_names=(calibration install layout device hip-standin gpu-modules abi)
normal_suites=()
asan_skipped=()
for s in "${normal_suite_names[@]}"; do
    normal_suites+=(--suite "$s")
    [ "$s" = abi ] || asan_skipped+=(--no-suite "$s")
done
# Everything but the test programs that only the sanitizer build's suites run (build_targets.py).
ninja -C build build.ninja >/dev/null # the introspection below reads an up-to-date setup
mapfile -t normal_targets < <(python3 tools/build_targets.py build "${normal_suite_names[@]}")
[ "${#normal_targets[@]}" -gt 0 ] || { echo "tools/build_targets.py named no target" >&2; exit 1; }
ninja -C build -j "$jobs" "${normal_targets[@]}"
# The sanitizer build leaves out the GPU modules: they link vendor runtimes ASan cannot see into.
# It compiles at -O1 with line tables only (-g1), as ASan's documentation advises: reports keep
# their file:line frames, and it compiles in about half of -O2 -g's time (with -O2 -g it was
# half of a 31-minute clean-clone run of this script on 2 cores, the `tidal` tool's files about a
# minute each).
asan_options=(-Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Ddebug=false
              -Dc_args=-g1 -Dcpp_args=-g1
              -Dhip=disabled -Dcuda=disabled -Dhip_kernels=disabled -Dnvcc_kernels=disabled)
if [ ! -d build-asan ]; then
    meson setup build-asan "${asan_options[@]}"
elif ! grep -Eqs '"name": "optimization", "value": "1"' build-asan/meson-info/intro-buildoptions.json; then
    meson configure build-asan "${asan_options[@]}" # a folder set up before these options were
fi
# The normal build's tests beside the sanitizer build's compile: sim-calibration alone took
# 87-134 s of one core in clean-clone runs on 2 cores, which the compile fills. Its output is shown once the compile is done.
normal_log=build/meson-logs/run-tests-normal.txt
meson test -C build --no-rebuild --print-errorlogs --num-processes "$jobs" "${normal_suites[@]}" \
    > "$normal_log" 2>&1 &
normal_pid=$!
asan_built=0
ninja -C build-asan -j "$jobs" && asan_built=1
normal_status=0
wait "$normal_pid" || normal_status=$?
echo "== normal build's tests (${normal_suites[*]})"
cat "$normal_log"
[ "$asan_built" = 1 ] || { echo "the sanitizer build failed" >&2; exit 1; }
# Everything else, under the sanitizers (`faults`: failure paths, where memory errors hide).
meson test -C build-asan --print-errorlogs --num-processes "$jobs" "${asan_skipped[@]}"
exit "$normal_status"
