#!/usr/bin/env bash
# Installs the Debian packages tidal builds with, when any is missing (see DEVELOPERS.md).
# Sourced by quickstart.sh (`tidal_install_missing base`) and run-tests.sh (`tidal_install_missing`,
# everything); needs root or sudo only when something is missing.

# The library, its policies, runtime modules, the `tidal` command and the example. dpkg-dev
# provides dpkg-architecture, which meson asks for Debian's multiarch libdir (lib/x86_64-linux-gnu);
# without it `meson install` puts the library in lib64, where neither the loader nor pkg-config
# looks.
tidal_base_packages=(meson ninja-build pkg-config g++ python3 dpkg-dev libtomlplusplus-dev libhwloc-dev
                     libcli11-dev libfmt-dev nlohmann-json3-dev)
# The rest of what the test command builds: test frameworks, the Fortran binding, the HIP
# runtime module and the AMD kernels (hipcc: the ROCm 5.2 / clang-15 stack, ~300 packages), and
# Open MPI for the MPI examples and the `mpi` suite.
tidal_test_packages=(python3-pytest libcmocka-dev doctest-dev gfortran libamdhip64-dev hipcc openmpi-bin libopenmpi-dev)
# An AMD GPU (the ROCm kernel driver's /dev/kfd): the base set gets the HIP runtime module too.
tidal_amd_packages=(libamdhip64-dev)

# Prints one line per line of apt's output, each overwriting the last, when stdout is a terminal.
tidal_progress_line() {
    if [ -t 1 ]; then
        local line width
        width=$(( $(tput cols 2>/dev/null || echo 80) - 3 ))
        while IFS= read -r line; do
            case "$line" in
                Get:*|Unpacking*|Setting\ up*) printf '\r\033[K  %.*s' "$width" "$line" ;;
            esac
        done
        printf '\r\033[K'
    else
        cat >/dev/null
    fi
}

# tidal_install_missing [base|full]: full (the default) is what the whole test suite needs.
tidal_install_missing() {
    local wanted=("${tidal_base_packages[@]}")
    if [ "${1:-full}" = full ]; then
        wanted+=("${tidal_test_packages[@]}")
    elif [ -e /dev/kfd ]; then
        wanted+=("${tidal_amd_packages[@]}")
    fi
    local missing=()
    for p in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    local log
    log=$(mktemp /tmp/tidal-apt.XXXXXX.log)
    echo "tidal: installing missing packages: ${missing[*]} (apt's output: $log)"
    # apt's status, whatever the caller's `set` options (`local -` keeps these ones here).
    local - status=0
    set -o pipefail
    # sudo resets the environment: the frontend setting goes through env.
    { $sudo apt-get update && $sudo env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"; } 2>&1 | tee "$log" | tidal_progress_line \
        || status=$?
    if [ "$status" -ne 0 ]; then
        echo "tidal: apt-get failed (exit status $status); the end of $log:" >&2
        tail -n 15 "$log" >&2
        return 1
    fi
    echo "tidal: packages installed (apt's output: $log)"
}
