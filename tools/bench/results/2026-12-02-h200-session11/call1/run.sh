#!/bin/bash
# Session 11, call 1: the declaration table timed two ways with one library (the working tree
# at the session's start plus the interleaved slices in scaling): "new" = scaling with the
# sizes' slices interleaved (--declare-only), "old" = scaling as 69544e1 has it (rounds of one
# ~10^5-range repetition per size, each in its own context). Then the lookahead row four times.
TREE=s11 source tools/bench/h200-call.sh
L=$D/core
N="$D/bench/scaling --runtime cuda --max 10000 --reps 5 --declare-only"
O="$D/bench/scaling-old --runtime cuda --max 10000 --reps 5"
step decl-new-1 60 $L $N
step decl-old-1 90 $L $O
step decl-new-2 60 $L $N
step decl-new-3 60 $L $N
step decl-old-2 90 $L $O
step decl-new-4 60 $L $N
step decl-sim-1 60 $L $D/bench/scaling --runtime sim --max 10000 --reps 5 --declare-only
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for r in 1 2 3; do
  step stream-$r 60 $L $M --scenario stream --timeline $W/stream-$r --json $W/stream-$r.json
done
uptime >> $W/uptime.txt
echo "== summary"
for f in $W/decl-*.txt; do echo "$(basename $f .txt) $(grep -A5 'tidal_declare of N' $f | tail -4 | awk '{print $2"/"$3}' | tr '\n' ' ')"; done
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/stream-*.json')):
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for n,r in v.items() if n.startswith('tidal: declare per')][0]
    print(f.split('/')[-1][:-5].ljust(12),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']))
PY
