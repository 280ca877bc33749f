#!/bin/bash
# Session 7, call 4: under the CPU hog, [migration] streams 2 (default) against 4, interleaved,
# three each; then, idle, the overlap scenario with 2 and 4 streams.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
HOG=()
for i in $(seq 14); do timeout 300 sh -c 'while :; do :; done' & HOG+=($!); done
for r in 1 2 3; do
  s cpu-s2-$r 60 $M --scenario stream --timeline $W/cpu-s2-$r --json $W/cpu-s2-$r.json
  s cpu-s4-$r 60 $M --scenario stream --streams 4 --timeline $W/cpu-s4-$r --json $W/cpu-s4-$r.json
done
kill ${HOG[@]} 2>/dev/null; wait ${HOG[@]} 2>/dev/null
s overlap-s2 60 $M --scenario overlap --json $W/overlap-s2.json
s overlap-s4 60 $M --scenario overlap --streams 4 --json $W/overlap-s4.json
echo "== summary"
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/cpu*.json')):
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for n,r in v.items() if n.startswith('tidal: declare per')][0]
    print(f.split('/')[-1][:-5].ljust(12),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']),[round(x*1e3,1) for x in ch['seconds']])
PY
for f in $W/overlap*.txt; do echo "-- $f"; grep -E "max\(transfer" $f | cut -c1-140; done
