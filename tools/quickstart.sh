#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a running tidal: installs what is missing,
# builds into ./build, then runs the main job: `tidal probe` on the best runtime found (a real
# GPU, else the simulated device) and the place-buffers example, which allocates through the
# `rules` policy and prints where each buffer went.
#
# Only what that job needs: the base packages (not the test frameworks, gfortran or the ROCm
# compiler stack; tools/run-tests.sh installs those) and a build without tests and benchmarks:
# the library, the runtime modules for the runtimes found, the policies, `tidal` and the
# examples. A ./build set up before (by tools/run-tests.sh, say) is used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
tidal_install_missing base
[ -d build ] || meson setup build -Dtests=disabled -Dbench=disabled
ninja -C build
echo; echo "== tidal probe =="; ./build/tools/tidal probe
echo; echo "== place-buffers (tools/examples/place_buffers.toml) =="; ./build/tools/examples/place-buffers
