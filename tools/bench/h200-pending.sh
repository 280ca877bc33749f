#!/usr/bin/env bash
# The H200 measurements this tree still owes (see ARCHITECTURE.md, "Not built yet"), in one
# command for the GPU machine. Build here first, in a release tree the machine can run
# (it lacks the toml++ headers and cmocka, so build on the Debian machine and carry the tree):
#
#   meson setup build-h200 --buildtype=release -Dhip=disabled -Dhip_kernels=disabled -Dfortran=disabled
#   ninja -C build-h200
#
# then, on the GPU machine, from the repository root, with OUT set to the results folder:
#
#   OUT=$OUT bash tools/bench/h200-pending.sh build-h200
#
# Each step writes FILE.txt (and FILE.json where the tool has --json) under $OUT and goes on
# after a failure; the exit status is the number of steps that failed. Managed memory stays far
# below 16 GiB (the out-of-core rows use elastic and device memory, never managed memory).
set -u
B=${1:-build-h200}
OUT=${OUT:?set OUT to the folder the results go to}
export LD_LIBRARY_PATH=$PWD/$B/core${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TIDAL_RUNTIME_PATH=$PWD/$B/core/runtime/cuda
export TIDAL_LOG_LEVEL=warn
export TIDAL_RUNTIME=cuda # for the tools without --runtime (copy-bandwidth, scaling)
failed=0
step() { # step NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    echo "== $name: $*"
    if ! timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1; then
        echo "   FAILED (see $name.txt)"
        failed=$((failed + 1))
    fi
    tail -4 "$OUT/$name.txt"
}
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > "$OUT/gpu.txt" 2>&1
date -u > "$OUT/date.txt"

# Issue 14, target a: elastic out of core against the double-buffered loops, same run.
step out-of-core 400 "$B/tools/bench/migration-scenarios" --runtime cuda --scenario out-of-core --no-sweeps \
    --json "$OUT/out-of-core.json"
# Issue 15: 16 threads of interior queries and copies while others allocate (>= 8x one thread).
step scaling-threads 300 "$B/tools/bench/scaling" --threads-only --max 1000000 --threads 16 --churn 2 --json
# Issue 15: interior queries up to 10^6 live (<= 150 ns, <= 1.5x the 10^3 row; anon_huge_kib: the
# huge pages the registry got) and tidal_declare per range (within 1.5x from 10 to 10^4 ranges).
step scaling-sizes 400 "$B/tools/bench/scaling" --runtime cuda --max 1000000 --reps 3 --json
# Issue 17: pageable copies by size (>= 0.8x from 16 MiB), lookahead and overlap rows, the atomics.
step copy-sweep 300 "$B/tools/bench/copy-bandwidth" --sweep --reps 5 --json
step scenarios 500 "$B/tools/bench/migration-scenarios" --runtime cuda --scenario all --json "$OUT/scenarios.json"
step validate 200 "$B/tools/tidal" validate --runtime cuda --json
step bench-table 300 "$B/tools/tidal" bench --runtime cuda --no-progress --json "$OUT/bench.json"
# Issue 16 on one device: the matrix of one, copies between two contexts' buffers.
step probe 60 "$B/tools/tidal" probe --runtime cuda --json
step bench-peer 200 "$B/tools/tidal" bench --peer --runtime cuda --max-size 1GiB --json "$OUT/bench-peer.json"
# Issue 18: what a trace adds to a pooled pair (<= 150 ns).
step trace-cost 120 "$B/tools/bench/trace-cost" --runtime cuda --json
# Issue 19: what one context costs to start.
step context-startup 120 "$B/tools/bench/context-startup" --runtime cuda --reps 20 --json "$OUT/context-startup.json"
echo "failed steps: $failed"
exit "$failed"
