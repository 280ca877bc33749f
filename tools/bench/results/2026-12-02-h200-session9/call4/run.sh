#!/bin/bash
# Session 9, call 4: the stream scenario's lookahead row with the hold at 50 µs (the default),
# 200 and 0, interleaved (does the hold matter on a machine in the slow state?); then the
# declaration table twice more.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt; uptime > $W/uptime.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps --scenario stream"
for r in 1 2; do
  s stream-h50-$r 60 $M --timeline $W/stream-h50-$r --json $W/stream-h50-$r.json
  s stream-h200-$r 60 $M --lookahead-hold-us 200 --timeline $W/stream-h200-$r --json $W/stream-h200-$r.json
  s stream-h0-$r 60 $M --lookahead-hold-us 0 --timeline $W/stream-h0-$r --json $W/stream-h0-$r.json
done
s decl-1 60 $D/bench/scaling --runtime cuda --max 10000 --reps 5
s decl-2 60 $D/bench/scaling --runtime cuda --max 10000 --reps 5
echo "== summary"
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/stream*.json')):
    n=f.split('/')[-1][:-5]; d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for k,r in v.items() if k.startswith('tidal: declare per')][0]
    print(n.ljust(16),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']))
PY
for f in $W/stream-*.err; do echo "$(basename $f) $(tail -1 $f)"; done
for f in $W/decl-*.txt; do head -5 $f | tail -3 | awk '{print $5}' | tr '\n' ' '; grep -A6 'tidal_declare of N' $f | tail -4 | awk '{print $2}' | tr '\n' ' '; echo; done
