#!/bin/bash
# Session 9, call 2: the library as submitted (HEAD) with [migration] lookahead_hold_us
# 200 (the default), 100, 50 and 0, interleaved: the stream scenario's lookahead row twice each,
# then the overlap scenario (compute ~ transfer) once or twice each.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt; uptime > $W/uptime.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for r in 1 2; do for h in 200 100 50 0; do
  s stream-h$h-$r 60 $M --scenario stream --lookahead-hold-us $h --timeline $W/stream-h$h-$r --json $W/stream-h$h-$r.json
done; done
for r in 1 2; do for h in 200 100 50 0; do
  s overlap-h$h-$r 40 $M --scenario overlap --lookahead-hold-us $h --json $W/overlap-h$h-$r.json
done; done
echo "== summary"
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    n=f.split('/')[-1][:-5]
    if n.startswith('stream'):
        pf=v['prefetch whole range + kernel']; ch=[r for k,r in v.items() if k.startswith('tidal: declare per')][0]
        print(n.ljust(16),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']))
    else:
        print(n.ljust(16),[(r['what'][:40],round(r['value'],3)) for r in d['ratios']])
PY
for f in $W/stream-*.err; do echo "$(basename $f) $(tail -1 $f)"; done
