#!/bin/bash
set -u
R=$(pwd); D=$R/.device-out/s4
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n ($*)"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s device-tests 120 stdbuf -oL -eL $D/tools/tidal-device-tests
if ! grep -q "passed:" $W/device-tests.txt; then
  s device-tests-gdb 120 /usr/local/cuda/bin/cuda-gdb -batch -ex run -ex bt --args $D/tools/tidal-device-tests
  s device-tests-gdb2 120 gdb -batch -ex run -ex bt --args $D/tools/tidal-device-tests
fi
s validate 60 $D/tools/tidal validate --runtime cuda
s overlap 60 $D/bench/migration-scenarios --runtime cuda --scenario overlap --reps 7 --json $W/overlap.json
s stream 60 $D/bench/migration-scenarios --runtime cuda --scenario stream --no-sweeps --json $W/stream.json
s out-of-core 150 $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --json $W/out-of-core.json
s trace-cost 60 $D/bench/trace-cost --runtime cuda --json
s scaling 120 $D/bench/scaling --runtime cuda --max 1000000 --reps 3 --json
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
tail -25 $W/device-tests.txt; tail -5 $W/device-tests.err
[ -f $W/device-tests-gdb.txt ] && grep -A15 "SIGSEGV\|signal" $W/device-tests-gdb.txt $W/device-tests-gdb2.txt | head -40
grep -E "FAIL|validation|host-native" $W/validate.txt | head -6
for f in overlap stream out-of-core; do echo "-- $f"; grep -E "NOT MET|  met|^(transfer|compute|overlapped|prefetch whole|tidal: declare|elastic)" $W/$f.txt | head -14; done
cat $W/trace-cost.txt
python3 -c "
import json; j=json.load(open('$W/scaling.txt'))
for r in j['sizes']: print('live',r['live'],'query',r['query_ns'],'pair',r['alloc_free_ns'],'huge',r.get('anon_huge_kib'))
for r in j['declare']: print('ranges',r['ranges'],'declare',r['declare_ns'])
"
