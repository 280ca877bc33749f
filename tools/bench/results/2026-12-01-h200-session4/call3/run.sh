#!/bin/bash
set -u
R=$(pwd); D=$R/.device-out/s4
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n ($*)"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s device-tests 120 $D/tools/tidal-device-tests
s sync-probe 60 $R/.device-out/diag/sync_probe
s validate 60 $D/tools/tidal validate --runtime cuda
s validate-json 60 $D/tools/tidal validate --runtime cuda --json
s probe 20 $D/tools/tidal probe --runtime cuda --json
s bench-peer 60 $D/tools/tidal bench --peer --runtime cuda --max-size 1GiB --json $W/bench-peer.json
s trace-cost 60 $D/bench/trace-cost --runtime cuda --json
s copy-sweep 100 $D/bench/copy-bandwidth --sweep --reps 5
s scaling 150 $D/bench/scaling --runtime cuda --max 1000000 --reps 3 --json
s overlap-hold200 60 $D/bench/migration-scenarios --runtime cuda --scenario overlap --reps 7 --json $W/overlap-hold200.json
s overlap-hold0 60 $D/bench/migration-scenarios --runtime cuda --scenario overlap --reps 7 --lookahead-hold-us 0 --json $W/overlap-hold0.json
s overlap-streams2 60 $D/bench/migration-scenarios --runtime cuda --scenario overlap --reps 7 --streams 2 --json $W/overlap-streams2.json
s stream 60 $D/bench/migration-scenarios --runtime cuda --scenario stream --no-sweeps --json $W/stream.json
s stream-streams2 60 $D/bench/migration-scenarios --runtime cuda --scenario stream --no-sweeps --streams 2 --json $W/stream-streams2.json
s out-of-core 240 $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --json $W/out-of-core.json
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
tail -3 $W/device-tests.txt; grep -i "device->device" $W/device-tests.txt
grep -E "launch on thread" $W/sync-probe.txt
grep -E "FAIL|validation|host-native" $W/validate.txt | head -8
grep -E "two contexts" $W/bench-peer.txt
tail -c 400 $W/trace-cost.txt; echo
grep -E "^(16777216|33554432|67108864) " $W/copy-sweep.txt
python3 -c "
import json; j=json.load(open('$W/scaling.json'))
for r in j['sizes']: print('live',r['live'],'query',r['query_ns'],'cpu',r['query_cpu_ns'],'pair',r['alloc_free_ns'],'huge',r.get('anon_huge_kib'))
for r in j['declare']: print('ranges',r['ranges'],'declare',r['declare_ns'])
" 2>&1 | head -12
for f in overlap-hold200 overlap-hold0 overlap-streams2 stream stream-streams2 out-of-core; do echo "-- $f"; grep -E "NOT MET|  met|^(transfer|compute|overlapped|prefetch whole|tidal: declare)" $W/$f.txt | head -12; done
