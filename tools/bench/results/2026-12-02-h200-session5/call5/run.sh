#!/bin/bash
# Session 5, call 5. C = 2699d95 (before the inline elastic moves), E = this tree (9935a7c:
# elastic moves of short calls run in the declaring thread when the worker is idle). Same binaries.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lib() { case $1 in C) echo $R/.device-out/lib:$R/.device-out/libC;; E) echo $R/.device-out/lib:$D/core;; esac; }
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s device-tests 120 E $D/tools/tidal-device-tests
s ooc-E 120 E $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 5 --timeline $W/timeline-E.csv --json $W/ooc-E.json
s ooc-C 120 C $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 5 --timeline $W/timeline-C.csv --json $W/ooc-C.json
s sweep-E1 120 E $D/bench/copy-bandwidth --sweep --reps 5 --json
s sweep-E2 120 E $D/bench/copy-bandwidth --sweep --reps 5
s overlap-E 60 E $D/bench/migration-scenarios --runtime cuda --scenario overlap --reps 7 --json $W/overlap-E.json
s stream-E 90 E $D/bench/migration-scenarios --runtime cuda --scenario stream --no-sweeps --json $W/stream-E.json
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
tail -1 $W/device-tests.txt
for v in E C; do echo "-- ooc $v"; grep -E "^elastic|\] elastic" $W/ooc-$v.txt | cut -c1-110; grep timeline $W/ooc-$v.err; done
python3 -c "
import json; j=json.load(open('$W/sweep-E1.txt'))
for r in j['results']:
  if r['bytes']>=16<<20: print(r['bytes'], r['direction'], 'tidal', r['tidal_copy_pageable'], 'hostN', r['host_memcpy_n'], 'pinned', r['pinned_runtime'], 'ratio', r['ratio_to_bound'], r['meets_target'])
"
grep -E "^(16777216|33554432|67108864|134217728|268435456|536870912|1073741824) " $W/sweep-E2.txt | cut -c1-100
grep -E "NOT MET|  met" $W/overlap-E.txt $W/stream-E.txt | cut -c1-150 | head -12
