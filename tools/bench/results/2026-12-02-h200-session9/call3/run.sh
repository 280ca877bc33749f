#!/bin/bash
# Session 9, call 3: [migration] lookahead_hold_us 50 (the new default, "h50") against 200 (the
# old default, "h200"), interleaved: the stream scenario's lookahead row three times each, the
# overlap scenario twice each; then scaling with its declaration table taken in rounds.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt; uptime > $W/uptime.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for r in 1 2 3; do
  s stream-h50-$r 60 $M --scenario stream --timeline $W/stream-h50-$r --json $W/stream-h50-$r.json
  s stream-h200-$r 60 $M --scenario stream --lookahead-hold-us 200 --timeline $W/stream-h200-$r --json $W/stream-h200-$r.json
done
for r in 1 2; do
  s overlap-h50-$r 40 $M --scenario overlap --json $W/overlap-h50-$r.json
  s overlap-h200-$r 40 $M --scenario overlap --lookahead-hold-us 200 --json $W/overlap-h200-$r.json
done
s scaling-1 90 $D/bench/scaling --runtime cuda --max 100000 --reps 5
s scaling-2 90 $D/bench/scaling --runtime cuda --max 100000 --reps 5
s scaling-3 150 $D/bench/scaling --runtime cuda --max 1000000 --reps 5 --json
echo "== summary"
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    n=f.split('/')[-1][:-5]
    try: d=json.load(open(f))
    except Exception as e: print(n,'unreadable',e); continue
    v={r['name']:r for r in d['variants']}
    if n.startswith('stream'):
        pf=v['prefetch whole range + kernel']; ch=[r for k,r in v.items() if k.startswith('tidal: declare per')][0]
        print(n.ljust(16),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']))
    else:
        print(n.ljust(16),[(r['what'][:40],round(r['value'],3)) for r in d['ratios']])
PY
for f in $W/stream-*.err; do echo "$(basename $f) $(tail -1 $f)"; done
for f in $W/scaling-1.txt $W/scaling-2.txt; do head -6 $f | tail -3; grep -A7 'tidal_declare of N' $f | tail -5 | awk '{print $2}' | tr '\n' ' '; echo; done
python3 -c "
import json; d=json.load(open('$W/scaling-3.txt'))
for s in d['sizes']: print(s['live'], s['query_ns'], s['query_set_ns'], s['floor_dependent_ns'])
print([(x['ranges'],x['declare_ns']) for x in d['declare']])"
