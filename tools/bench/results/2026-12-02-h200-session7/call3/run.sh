#!/bin/bash
# Session 7, call 3: the managed stream's lookahead row under a CPU hog (14 busy threads on the
# 16 cores): default worker (spinning up to 2 ms between jobs) against worker_spin_us = 0, and
# streams 4, interleaved; then idle, default, twice.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps --scenario stream"
HOG=()
for i in $(seq 14); do timeout 300 sh -c 'while :; do :; done' & HOG+=($!); done
for r in 1 2 3; do
  s cpu-default-$r 70 $M --timeline $W/cpu-default-$r --json $W/cpu-default-$r.json
  s cpu-spin0-$r 70 $M --worker-spin-us 0 --timeline $W/cpu-spin0-$r --json $W/cpu-spin0-$r.json
done
s cpu-streams4-1 70 $M --streams 4 --timeline $W/cpu-streams4-1 --json $W/cpu-streams4-1.json
kill ${HOG[@]} 2>/dev/null; wait ${HOG[@]} 2>/dev/null
for r in 1 2; do s idle-default-$r 70 $M --timeline $W/idle-default-$r --json $W/idle-default-$r.json; done
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for n,r in v.items() if n.startswith('tidal: declare per')][0]
    print(f.split('/')[-1][:-5].ljust(16),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']),[round(x*1e3,1) for x in ch['seconds']])
PY
