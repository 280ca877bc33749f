#!/usr/bin/env python3
"""migration-scenarios takes its scenarios by name and, as aliases, by their old numbers.

Runs the overlap scenario (the quickest) on the simulated device once by name and once by
number, and checks an unknown name is a usage error (exit 2).

Usage: check_scenario_names.py MIGRATION_SCENARIOS
"""
import subprocess
import sys

QUICK = ["--runtime", "sim", "--quick", "--no-sweeps", "--reps", "1", "--warmup", "0", "--policies", "none"]


def run(program, scenario):
    return subprocess.run([program, *QUICK, "--scenario", scenario], capture_output=True, text=True, timeout=300)


def main() -> int:
    program = sys.argv[1]
    failures = 0
    for scenario in ("overlap", "3"):
        r = run(program, scenario)
        if r.returncode != 0 or "overlap (scenario 3)" not in r.stdout or "stream (scenario 1)" in r.stdout:
            print(f"--scenario {scenario}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
            failures += 1
    r = run(program, "scenario3")
    if r.returncode != 2:
        print(f"--scenario scenario3: exit {r.returncode}, expected 2 (usage)\n{r.stderr}")
        failures += 1
    print("ok" if not failures else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
