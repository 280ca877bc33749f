#!/bin/bash
# Session 8, call 2: [migration] stream_counters (new, default on) against off: device tests,
# then the stream scenario interleaved idle (3 each) and under a 14-thread CPU hog (2 each),
# the overlap scenario and the elastic out-of-core rows once each.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
s device-tests 150 $D/tools/tidal-device-tests
tail -2 $W/device-tests.txt
for r in 1 2 3; do
  s on-$r 60 $M --scenario stream --timeline $W/on-$r --json $W/on-$r.json
  s off-$r 60 $M --scenario stream --no-stream-counters --timeline $W/off-$r --json $W/off-$r.json
done
HOG=()
for i in $(seq 14); do timeout 200 sh -c 'while :; do :; done' & HOG+=($!); done
for r in 1 2; do
  s cpu-on-$r 60 $M --scenario stream --timeline $W/cpu-on-$r --json $W/cpu-on-$r.json
  s cpu-off-$r 60 $M --scenario stream --no-stream-counters --timeline $W/cpu-off-$r --json $W/cpu-off-$r.json
done
kill ${HOG[@]} 2>/dev/null; wait ${HOG[@]} 2>/dev/null
s overlap-on 60 $M --scenario overlap --json $W/overlap-on.json
s overlap-off 60 $M --scenario overlap --no-stream-counters --json $W/overlap-off.json
echo "== summary"
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/*on-*.json')+glob.glob(sys.argv[1]+'/*off-*.json')):
    if 'overlap' in f: continue
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for n,r in v.items() if n.startswith('tidal: declare per')][0]
    print(f.split('/')[-1][:-5].ljust(12),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']),[round(x*1e3,1) for x in ch['seconds']])
PY
for f in $W/overlap*.txt; do echo "-- $f"; grep -E "max\(transfer|overlapped" $f | cut -c1-150; done
s ooc-on 100 $M --scenario out-of-core --elastic-only --reps 5 --json $W/ooc-on.json
s ooc-off 100 $M --scenario out-of-core --elastic-only --reps 5 --no-stream-counters --json $W/ooc-off.json
for f in $W/ooc*.txt; do echo "-- $f"; grep -E "elastic|double" $f | cut -c1-150; done
