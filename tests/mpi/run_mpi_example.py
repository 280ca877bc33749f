#!/usr/bin/env python3
"""The `mpi` suite: an MPI example on the simulated device, with 1 rank and with RANKS (4).

Checks that the RANKS-rank grid equals the 1-rank grid bit for bit, that each rank took the
device of its node-local rank (device_selection = "local-rank" over 2 simulated devices), and
that each rank wrote its own statistics file (TIDAL_STATS with %r in the name) with no leak in it.

The sanitizer build runs it with 2 ranks: there Open MPI's start-up with more ranks than cores
takes ~18 s, even for a program that only calls MPI_Init and MPI_Finalize (4 ranks, 2 cores),
against under 1 s with 2 ranks or without ASan.

Usage: run_mpi_example.py EXAMPLE [RANKS]   (exit 77, skipped, where mpirun or the example is
missing)
"""
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def mpirun(np, example, output, folder):
    env = dict(os.environ)
    env.update({
        "TIDAL_RUNTIME": "sim",
        "TIDAL_SIM_DEVICES": "2",
        "TIDAL_DEVICE_SELECTION": "local-rank",
        "TIDAL_STATS": os.path.join(folder, f"stats-np{np}-%r.json"),
        "TIDAL_LOG_LEVEL": "warn",
        # CI runs as root; Open MPI refuses that unless told twice.
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        # One machine, shared memory only: no network interface is probed.
        "OMPI_MCA_btl": "self,vader",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
    })
    # In the ASan build: Open MPI's components leak by design and are unloaded before exit, so
    # LeakSanitizer can neither attribute nor suppress what they leave. Memory errors are still
    # caught here; tidal's own leaks are checked by every other suite.
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    cmd = [shutil.which("mpirun"), "-np", str(np), example, output, "200"]
    print("$", " ".join(cmd), flush=True)
    run = subprocess.run(cmd, env=env, cwd=folder, capture_output=True, text=True, timeout=240)
    print(run.stdout, end="")
    print(run.stderr, end="", file=sys.stderr)
    if run.returncode != 0:
        sys.exit(f"FAIL: mpirun -np {np} exited {run.returncode}")
    return run.stdout


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        sys.exit(__doc__)
    example = sys.argv[1]
    ranks = int(sys.argv[2]) if len(sys.argv) == 3 else 4
    if ranks < 2:
        sys.exit("RANKS must be at least 2: the check compares a split grid with the whole one")
    if not shutil.which("mpirun"):
        print("SKIP: no mpirun (tools/deps.sh installs openmpi-bin)")
        return SKIP
    if not os.path.exists(example):
        print(f"SKIP: {example} was not built")
        return SKIP
    folder = tempfile.mkdtemp(prefix="tidal-mpi-")
    try:
        one, many = os.path.join(folder, "np1.out"), os.path.join(folder, f"np{ranks}.out")
        mpirun(1, example, one, folder)
        text = mpirun(ranks, example, many, folder)
        if not filecmp.cmp(one, many, shallow=False):
            sys.exit(f"FAIL: the {ranks}-rank grid differs from the 1-rank grid")
        if os.path.getsize(one) != 64 * 64 * 8:
            sys.exit(f"FAIL: the grid file has {os.path.getsize(one)} bytes, not 64 x 64 doubles")
        devices = {int(r): int(d) for r, d in re.findall(rf"rank (\d+) of {ranks}: rows \d+\.\.\d+ on device (\d+)", text)}
        if devices != {r: r % 2 for r in range(ranks)}:
            sys.exit(f"FAIL: ranks took devices {devices}, expected local rank mod 2")
        for np in (1, ranks):
            for rank in range(np):
                stats = os.path.join(folder, f"stats-np{np}-{rank}.json")
                if not os.path.exists(stats):
                    sys.exit(f"FAIL: rank {rank} of {np} wrote no statistics file {stats}")
                with open(stats) as f:
                    snapshot = json.load(f)
                if not snapshot.get("leaks") == [] or "devices" not in json.dumps(snapshot):
                    sys.exit(f"FAIL: {stats} is no statistics snapshot without leaks: {json.dumps(snapshot)[:300]}")
        print(f"ok: {ranks} ranks = 1 rank bit for bit; devices by local rank; one statistics file per rank")
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
