#!/usr/bin/env bash
# tools/fuzz.sh SECONDS [TARGET...]: builds the libFuzzer targets in build-fuzz/ (clang, with
# AddressSanitizer and UndefinedBehaviorSanitizer) and runs each target for SECONDS, all
# targets at once (one process each). Targets: config, capi (default: both).
#
# Each target starts from tests/fuzz/corpus/TARGET. A crash, leak, timeout or out-of-memory
# input is written to tests/fuzz/crashes/TARGET/ and fuzzing goes on (libFuzzer's fork mode);
# every file there is replayed by `meson test --suite fuzz`, so triage each: fix it and keep
# the file as its regression input, or move a reproducer of a defect still open to
# tests/fuzz/known/TARGET/. At the end the corpus is minimised back into the tree
# (-merge=1). Logs: build-fuzz/fuzz-logs/TARGET.log; the last lines printed here are, per
# target, libFuzzer's last stats line ("#EXECUTIONS: cov: ... corp: N ... time: Ts") and the
# corpus and crash counts, the figures tests/README.md's table records.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${1:?usage: tools/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config capi)
build=build-fuzz
jobs=${TIDAL_JOBS:-2}

# libFuzzer comes with Debian's clang (libclang-rt-14-dev, a dependency of clang-14).
source tools/deps.sh
tidal_install_missing
if ! command -v clang >/dev/null || ! command -v clang++ >/dev/null; then
    echo "tidal fuzz: installing clang"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get install -y -qq --no-install-recommends clang >/dev/null
fi

if [ ! -d "$build" ]; then
    CC=clang CXX=clang++ meson setup "$build" -Dfuzz=enabled \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dhip=disabled -Dcuda=disabled -Dhip_kernels=disabled -Dnvcc_kernels=disabled \
        -Dfortran=disabled -Dtools=disabled
fi
ninja_targets=(policies/rules/tidal-policy-rules.so policies/xnack/tidal-policy-xnack.so
               policies/lru/tidal-policy-lru.so)
for t in "${targets[@]}"; do ninja_targets+=("tests/fuzz/fuzz-$t"); done
ninja -C "$build" -j "$jobs" "${ninja_targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TIDAL_LOG_LEVEL=error
mkdir -p "$build/fuzz-logs"

# Paths are absolute: the targets work in a private temporary folder.
run_one() {
    local t=$1
    local exe=$root/$build/tests/fuzz/fuzz-$t
    local corpus=$root/tests/fuzz/corpus/$t crashes=$root/tests/fuzz/crashes/$t
    local work=$root/$build/fuzz-work/$t
    local max_len=4096 dict=()
    [ "$t" = config ] && max_len=16384 && dict=(-dict="$root/tests/fuzz/config.dict")
    rm -rf "$work" "$work.min" && mkdir -p "$work" "$work.min" "$corpus" "$crashes"
    # New inputs go to $work; the tree's corpus only seeds the run.
    "$exe" -max_total_time="$seconds" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
        -timeout=30 -rss_limit_mb=4096 -max_len="$max_len" "${dict[@]}" \
        -artifact_prefix="$crashes/" "$work" "$corpus" || true
    # Minimise: only inputs that add coverage go back into the tree.
    "$exe" -merge=1 -timeout=30 -rss_limit_mb=4096 -artifact_prefix="$work.min/" \
        "$work.min" "$corpus" "$work" || true
    if [ -n "$(ls -A "$work.min" 2>/dev/null)" ]; then
        find "$corpus" -type f ! -name '.*' -delete
        find "$work.min" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'oom-*' \
            -o -name 'timeout-*' \) -delete
        cp "$work.min"/* "$corpus"/
    fi
}

pids=()
for t in "${targets[@]}"; do
    run_one "$t" > "$build/fuzz-logs/$t.log" 2>&1 &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done

date=$(date +%F)
for t in "${targets[@]}"; do
    log=$build/fuzz-logs/$t.log
    stats=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)
    corpus_n=$(find "tests/fuzz/corpus/$t" -type f ! -name '.*' | wc -l)
    crashes_n=$(find "tests/fuzz/crashes/$t" -type f ! -name '.*' | wc -l)
    echo "fuzz summary: $date target=$t seconds=$seconds executions=$(sed -E 's/^#([0-9]+):.*/\1/' <<< "$stats") corpus=$corpus_n crashes_kept=$crashes_n"
    echo "  last stats line: $stats"
done
exit $status
