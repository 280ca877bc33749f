#!/bin/bash
# Session 9, call 1: the declaration's head-only lookup (HEAD, "new") against the library at
# c10d813 ("old"), interleaved, declare per range 10..10^4 (issue 15); the stream scenario's
# lookahead row with the library as submitted, six runs (issue 17); scaling to 10^6 twice
# (query(set)); the copy sweep (issue 17, pageable host->device >= 0.8x from 16 MiB).
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
lib() { if [ "$1" = old ]; then echo $R/.device-out/lib:$R/.device-out/oldlib8; else echo $R/.device-out/lib:$D/core; fi; }
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lscpu > $W/lscpu.txt 2>&1; uptime > $W/uptime.txt
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
for r in 1 2 3 4; do
  s decl-new-$r 60 new $D/bench/scaling --runtime cuda --max 10000 --reps 5
  s decl-old-$r 60 old $D/bench/scaling --runtime cuda --max 10000 --reps 5
done
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for r in 1 2 3 4 5 6; do
  s stream-$r 60 new $M --scenario stream --timeline $W/stream-$r --json $W/stream-$r.json
done
uptime >> $W/uptime.txt
s scaling-1 150 new $D/bench/scaling --runtime cuda --max 1000000 --reps 5
s scaling-2 150 new $D/bench/scaling --runtime cuda --max 1000000 --reps 5 --json
s copy-sweep 200 new $D/bench/copy-bandwidth --sweep --reps 5
echo "== summary"
for f in $W/decl-*.txt; do echo "$(basename $f .txt) $(grep -A5 'tidal_declare of N' $f | tail -4 | awk '{print $2}' | tr '\n' ' ')"; done
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/stream-*.json')):
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for n,r in v.items() if n.startswith('tidal: declare per')][0]
    print(f.split('/')[-1][:-5].ljust(12),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']))
PY
head -7 $W/scaling-1.txt; grep -A6 'tidal_declare of N' $W/scaling-1.txt
grep -i "target\|met" $W/copy-sweep.txt | head -20
