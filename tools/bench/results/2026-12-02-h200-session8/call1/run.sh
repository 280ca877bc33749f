#!/bin/bash
# Session 8, call 1: what h200-pending.sh owes: four default runs of the stream scenario with
# timelines (issue 17), scaling to 10^6 twice (issue 15: query, declare per range), copy sweep.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lscpu > $W/lscpu.txt 2>&1; uptime > $W/uptime.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for r in 1 2 3 4; do
  s stream-default-$r 90 $M --scenario stream --timeline $W/stream-default-$r --json $W/stream-default-$r.json
done
s scaling-1 200 $D/bench/scaling --runtime cuda --max 1000000 --reps 3
s scaling-2 200 $D/bench/scaling --runtime cuda --max 1000000 --reps 3 --json
uptime >> $W/uptime.txt
s copy-sweep 200 $D/bench/copy-bandwidth --sweep --reps 5
echo "== summary"
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/stream*.json')):
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for n,r in v.items() if n.startswith('tidal: declare per')][0]
    print(f.split('/')[-1][:-5].ljust(18),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']),[round(x*1e3,1) for x in ch['seconds']])
PY
cat $W/scaling-1.txt
