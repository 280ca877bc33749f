#!/bin/bash
# Session 8, call 3: held lookaheads released when the application waits (new) against the
# library at c10d813 (old), interleaved: the stream scenario idle (4 each) and under a
# 14-thread CPU hog (2 each), the overlap scenario (1 each); then the copy sweep's large sizes.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
lib() { if [ "$1" = old ]; then echo $R/.device-out/lib:$R/.device-out/oldlib8; else echo $R/.device-out/lib:$D/core; fi; }
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for r in 1 2 3 4; do
  s new-$r 60 new $M --scenario stream --timeline $W/new-$r --json $W/new-$r.json
  s old-$r 60 old $M --scenario stream --timeline $W/old-$r --json $W/old-$r.json
done
HOG=()
for i in $(seq 14); do timeout 150 sh -c 'while :; do :; done' & HOG+=($!); done
for r in 1 2; do
  s cpu-new-$r 60 new $M --scenario stream --timeline $W/cpu-new-$r --json $W/cpu-new-$r.json
  s cpu-old-$r 60 old $M --scenario stream --timeline $W/cpu-old-$r --json $W/cpu-old-$r.json
done
kill ${HOG[@]} 2>/dev/null; wait ${HOG[@]} 2>/dev/null
s overlap-new 60 new $M --scenario overlap --json $W/overlap-new.json
s overlap-old 60 old $M --scenario overlap --json $W/overlap-old.json
echo "== summary"
python3 - $W <<'PY'
import json,glob,sys,csv,statistics
for f in sorted(glob.glob(sys.argv[1]+'/*-[0-9].json')):
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for n,r in v.items() if n.startswith('tidal: declare per')][0]
    rows=list(csv.DictReader(open(f[:-5]+'.stream')))
    med=lambda c: statistics.median(float(r[c]) for r in rows)
    print(f.split('/')[-1][:-5].ljust(12),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']),'decl %.0f step %.0f'%(med('declare_us'),med('step_us')),[round(x*1e3,1) for x in ch['seconds']])
PY
for f in $W/overlap*.txt; do echo "-- $f"; grep -E "overlapped / max" $f | cut -c1-150; done
s copy-large-1 60 new $D/bench/copy-bandwidth --sizes 256MiB,512MiB,1GiB --reps 5
s copy-large-2 60 new $D/bench/copy-bandwidth --sizes 256MiB,512MiB,1GiB --reps 5
grep -E "h2d" $W/copy-large-*.txt
