#!/bin/bash
# usage: D=./d OUT=/tmp [NS="1 10 100 1000 10000 100000"] callgrind.sh LIBDIR TAG
# exp-declare (D; ../2026-12-01-sim-scaling-4/exp-declare.cpp) under callgrind, counting only
# declares(), with a modelled 2 MiB 16-way L2 as the H200 host's per-core L2 (LL):
# instructions, D1 misses and LL misses per declared range. REPS: 20 up to 1 000 ranges, else 2.
LIB=$1; TAG=$2
for n in ${NS:-1 10 100 1000 10000 100000}; do
  reps=2; [ $n -le 1000 ] && reps=20; [ $n -le 10 ] && reps=200
  LD_LIBRARY_PATH=$LIB valgrind --tool=callgrind --cache-sim=yes --LL=2097152,16,64 --toggle-collect='declares*' \
    --callgrind-out-file=${OUT:-/tmp}/cg-$TAG-$n.out ${D:-./d} $n $reps >/dev/null 2>&1
  python3 - "$n" "$reps" ${OUT:-/tmp}/cg-$TAG-$n.out <<'PY'
import sys
n=int(sys.argv[1]); reps=int(sys.argv[2])
for line in open(sys.argv[3]):
    if line.startswith('events:'): ev=line.split()[1:]
    if line.startswith('totals:') or line.startswith('summary:'):
        d=dict(zip(ev,map(int,line.split()[1:]))); per=n*reps
        print(f"N={n} Ir/range={d['Ir']/per:.0f} Ir/call={d['Ir']/reps:.0f} D1miss/range={(d.get('D1mr',0)+d.get('D1mw',0))/per:.2f} LLmiss/range={(d.get('DLmr',0)+d.get('DLmw',0))/per:.3f}")
        break
PY
done
