#!/usr/bin/env bash
# Installs the Debian packages tidal builds with, when any is missing (see DEVELOPERS.md).
# Sourced by quickstart.sh and run-tests.sh; needs root or sudo only when something is missing.
tidal_packages=(meson ninja-build pkg-config g++ python3 python3-pytest libtomlplusplus-dev libcmocka-dev doctest-dev
                libhwloc-dev libcli11-dev libfmt-dev nlohmann-json3-dev gfortran libamdhip64-dev hipcc)
tidal_install_missing() {
    local missing=()
    for p in "${tidal_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "tidal: installing missing packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
