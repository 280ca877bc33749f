# Sourced by a session's run.sh on the GPU machine (device tool), from the repository root:
# what every call shares. The release tree is carried in .device-out/$TREE (core/, policies/,
# bench/, copied from a `meson setup -Dbuildtype=release` build), with the libraries the machine
# lacks (libudev) in .device-out/lib. Each step's output goes to $OUT/w/NAME.txt (stderr to
# NAME.err), and $OUT/results.tgz is rewritten after each step, so a call cut short by its limit
# still brings back what finished.
#   TREE=s11 source tools/bench/h200-call.sh
#   step NAME SECONDS LIBDIR COMMAND...   (LIBDIR: the folder libtidal.so is taken from)
#   summary_declare [PREFIX]; summary_stream   (one line per decl-*.txt, per stream-*.json)
set -u
R=$(pwd)
D=$R/.device-out/${TREE:?set TREE to the folder under .device-out}
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w
mkdir -p "$W"
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > "$W/gpu.txt" 2>&1
date -u > "$W/date.txt"
lscpu > "$W/lscpu.txt" 2>&1
uptime > "$W/uptime.txt"
step() {
    local name=$1 limit=$2 libdir=$3
    shift 3
    local t0
    t0=$(date +%s)
    echo "== $name"
    LD_LIBRARY_PATH=$R/.device-out/lib:$libdir timeout "$limit" "$@" > "$W/$name.txt" 2> "$W/$name.err"
    echo "rc=$? $(($(date +%s) - t0))s"
    tar czf "$OUT/results.tgz" -C "$OUT" w
}
# One line per scaling output ($W/PREFIX*.txt, PREFIX "decl-" unless given): the declaration
# table's rows (ns per range, wall clock), and max/min of the in-order column.
summary_declare() {
    local f
    for f in "$W/${1:-decl-}"*.txt; do
        [ -e "$f" ] || continue
        awk -v n="$(basename "$f" .txt)" \
            '/tidal_declare of N/ {t=1; next} t && $1 == "ranges" {next} t && NF == 0 {t=0}
             t && $1+0 > 0 {s=s" "$2; if (!k++ || $2>hi) hi=$2; if (k==1 || $2<lo) lo=$2}
             END {if (k) printf "%s%s  max/min %.2f\n", n, s, hi/lo}' "$f"
    done
}
# One line per migration-scenarios --scenario stream JSON: the lookahead row's ratio.
summary_stream() {
    python3 - "$W" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + '/stream-*.json')):
    v = {r['name']: r for r in json.load(open(f))['variants']}
    whole = v['prefetch whole range + kernel']
    per = next(r for n, r in v.items() if n.startswith('tidal: declare per'))
    print(f.split('/')[-1][:-5].ljust(12), 'whole %.1f per-64MiB %.1f ratio %.3f' %
          (whole['median_s'] * 1e3, per['median_s'] * 1e3, whole['median_s'] / per['median_s']))
PY
}
