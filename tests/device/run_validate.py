"""Runs `tidal validate --json` on the best runtime; skips (77) when that is the simulated device."""
import json
import subprocess
import sys

tool = sys.argv[1]
probe = json.loads(subprocess.run([tool, "probe", "--json"], check=True, capture_output=True, text=True).stdout)
if probe["runtime"] == "sim":
    print("SKIP: no GPU runtime is usable here (the best runtime is the simulated device)")
    sys.exit(77)
run = subprocess.run([tool, "validate", "--json"], capture_output=True, text=True)
print(run.stdout)
print(run.stderr, file=sys.stderr)
report = json.loads(run.stdout)
failed = [(d["index"], k["kind"], name) for d in report["devices"] for k in d["kinds"]
          for name, c in k["checks"].items() if c["result"] == "FAIL"]
failed += [(d["index"], "bandwidth", d["bandwidth"]["detail"]) for d in report["devices"]
           if d["bandwidth"]["result"] == "FAIL"]
if failed or run.returncode != 0:
    print("FAILED:", failed)
    sys.exit(1)
sys.exit(0)
