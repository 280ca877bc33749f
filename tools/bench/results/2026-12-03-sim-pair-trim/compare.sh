#!/bin/bash
# Instructions per operation, callgrind, for two builds of libtidal on the simulated device:
#   bash compare.sh OLD_LIBDIR NEW_LIBDIR
# Each figure is (Ir at 3N calls - Ir at N calls) / 2N, so set-up and teardown cancel out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
tmp=$(mktemp -d)
# pair_sz N CALLS SIZE and declare_loop N TOTAL (TOTAL/N calls of tidal_declare over N ranges,
# timed three times after one untimed call; its printed times are not used here) are earlier
# results' programs. query_loop.c here steps through the live blocks by a stride: the program of
# ../2026-12-02-sim-query-stores draws each pointer with rand(), which callgrind would count
# with the query (264.9 instructions a call where the query is 192).
for prog in "$here/../2026-12-03-sim-hint-heads/pair_sz.c" "$here/query_loop.c" \
    "$here/../2026-12-02-sim-declare-misses/declare_loop.c"; do
    gcc -O2 -I"$root/api" -I"$2/../api" "$prog" -o "$tmp/$(basename "$prog" .c)" -L"$2" -ltidal
done
ir() { # libdir program args...
    local lib=$1; shift
    LD_LIBRARY_PATH=$lib valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        awk '/refs/ {gsub(",", "", $4); print $4}'
}
per_op() { # libdir n calls-at-N program args-after...
    local lib=$1 prog=$2 n=$3 c=$4; shift 4
    local a b
    a=$(ir "$lib" "$tmp/$prog" "$n" "$c" "$@")
    b=$(ir "$lib" "$tmp/$prog" "$n" $((3 * c)) "$@")
    awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { printf "%.1f", (b - a) / (2 * c) }'
}
printf '%-34s %10s %10s\n' operation old new
for sz in 256 4096 65536 1048576 16777216; do
    printf '%-34s %10s %10s\n' "alloc+free pair, $sz B, 10^3 live" \
        "$(per_op "$1" pair_sz 1000 10000 "$sz")" "$(per_op "$2" pair_sz 1000 10000 "$sz")"
done
printf '%-34s %10s %10s\n' "alloc+free pair, 4096 B, 10^5 live" \
    "$(per_op "$1" pair_sz 100000 10000 4096)" "$(per_op "$2" pair_sz 100000 10000 4096)"
printf '%-34s %10s %10s\n' "pointer query, 10^3 live" "$(per_op "$1" query_loop 1000 20000)" "$(per_op "$2" query_loop 1000 20000)"
# declare_loop N TOTAL declares 3 x TOTAL ranges in its timed rounds: per_op's figure over 3.
d_old=$(per_op "$1" declare_loop 1000 10000); d_new=$(per_op "$2" declare_loop 1000 10000)
printf '%-34s %10s %10s\n' "declaration, per range (10^3)" \
    "$(awk -v x="$d_old" 'BEGIN{printf "%.1f", x/3}')" "$(awk -v x="$d_new" 'BEGIN{printf "%.1f", x/3}')"
rm -rf "$tmp"
