#!/bin/bash
# Session 5, call 6. C = 2699d95 (elastic moves on the worker thread), F = this tree (moves of
# short calls in the declaring thread when the worker is idle, victims unmapped later on the worker).
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lib() { case $1 in C) echo $R/.device-out/lib:$R/.device-out/libC;; F) echo $R/.device-out/lib:$D/core;; esac; }
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s device-tests 120 F $D/tools/tidal-device-tests
s ooc-F 120 F $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 5 --timeline $W/timeline-F.csv --json $W/ooc-F.json
s ooc-C 120 C $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 5 --timeline $W/timeline-C.csv --json $W/ooc-C.json
s stream-F 90 F $D/bench/migration-scenarios --runtime cuda --scenario stream --no-sweeps --json $W/stream-F.json
s stream-C 90 C $D/bench/migration-scenarios --runtime cuda --scenario stream --no-sweeps --json $W/stream-C.json
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
tail -1 $W/device-tests.txt
for v in F C; do echo "-- ooc $v"; grep -E "^elastic|\] elastic" $W/ooc-$v.txt | cut -c1-110 | head -7; grep timeline $W/ooc-$v.err; done
for v in F C; do echo "-- stream $v"; grep -E "NOT MET|  met|^(prefetch whole|tidal: declare)" $W/stream-$v.txt | cut -c1-120; done
