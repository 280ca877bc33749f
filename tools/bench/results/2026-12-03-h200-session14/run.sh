# Session 14: the refactored tidal tool (command_line.cpp) on the H200, with s12's library
# (the library's code has not changed since). Each command's output in $OUT/w/NAME.txt.
set -u
R=$(pwd)
export LD_LIBRARY_PATH=$R/.device-out/lib:$R/.device-out/s12/core
export TIDAL_RUNTIME_PATH=$R/.device-out/s12/core/runtime/cuda TIDAL_POLICY_PATH=$R/.device-out/s12/policies
export TIDAL_LOG_LEVEL=warn
T=$R/.device-out/s14/tidal
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1
date -u > $W/date.txt
run() { local n=$1; shift; local t0=$(date +%s); timeout 240 "$@" > $W/$n.txt 2> $W/$n.err; echo "== $n rc=$? $(( $(date +%s) - t0 ))s"; }
run version $T --version
run probe $T probe --runtime cuda
run probe-json $T probe --runtime cuda --json
run config-check $T config check $R/tools/examples/place_buffers.toml
run bad-runtime $T probe --runtime nope
run validate $T validate --runtime cuda --size 64MiB --bandwidth-size 256MiB
run bench-quick $T bench --runtime cuda --quick --no-progress
tail -5 $W/validate.txt; tail -3 $W/bench-quick.txt; head -3 $W/probe.txt
