#!/bin/bash
# Session 5, call 4. A = b2ac786 (last session's end), C = 2699d95 (streamed staging with
# ordinary stores, merged declarations), D = this tree (non-temporal fill). Same binaries.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lib() { case $1 in A) echo $R/.device-out/lib:$R/.device-out/libA;; C) echo $R/.device-out/lib:$R/.device-out/libC;; D) echo $R/.device-out/lib:$D/core;; esac; }
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s device-tests 120 D $D/tools/tidal-device-tests
for r in 1 2; do for v in C D A; do
  s cb-$v$r 60 $v $D/bench/copy-bandwidth --sizes 16MiB,32MiB,64MiB,128MiB --reps 7
done; done
s ooc-D 120 D $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 5 --timeline $W/timeline-D.csv --json $W/ooc-D.json
s scaling-D 200 D $D/bench/scaling --runtime cuda --max 1000000 --reps 3 --json
s scaling-A 200 A $D/bench/scaling --runtime cuda --max 1000000 --reps 3 --json
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
tail -1 $W/device-tests.txt
for f in C1 D1 A1 C2 D2 A2; do echo "-- cb $f"; grep -E "^(16777216|33554432|67108864|134217728) " $W/cb-$f.txt | cut -c1-100; done
grep -E "^elastic (compute|overlapped)|overlapped / max" $W/ooc-D.txt | cut -c1-110; grep timeline $W/ooc-D.err
for v in D A; do echo "-- scaling $v"; python3 -c "
import json; j=json.load(open('$W/scaling-$v.txt'))
for r in j['sizes']: print('live',r['live'],'query',r['query_ns'],'pair',r['alloc_free_ns'],'huge',r.get('anon_huge_kib'))
for r in j['declare']: print('ranges',r['ranges'],'declare',r['declare_ns'])
" 2>&1 | head -12; done
