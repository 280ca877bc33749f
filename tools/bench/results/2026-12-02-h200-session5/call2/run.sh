#!/bin/bash
# Session 5, call 2: after the changes. Device suite (elastic moves with aliased mappings),
# elastic out of core, copy sweep (streamed staging), managed overlap.
set -u
R=$(pwd); D=$R/.device-out/s5
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s device-tests 150 $D/tools/tidal-device-tests
s ooc 200 $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 5 --json $W/ooc.json
s copy-sweep 120 $D/bench/copy-bandwidth --sweep --reps 5
s cb-again 60 $D/bench/copy-bandwidth --sizes 16MiB,32MiB,64MiB,128MiB --reps 7
s overlap 60 $D/bench/migration-scenarios --runtime cuda --scenario overlap --reps 7 --json $W/overlap.json
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
tail -3 $W/device-tests.txt; grep -iE "fail|elastic" $W/device-tests.txt | head -8
grep -E "^(double|elastic)|\] elastic" $W/ooc.txt | cut -c1-130
grep -E "^(16777216|33554432|67108864|134217728) " $W/copy-sweep.txt $W/cb-again.txt
grep -E "NOT MET|  met|^(transfer|compute|overlapped)" $W/overlap.txt | head -8
