"""The `tidal` command as a user runs it: exit statuses, output, JSON shape.
Usage: test_tool.py TIDAL_BINARY EXAMPLE_CONFIG"""
import json
import os
import subprocess
import sys
import tempfile

TOOL, EXAMPLE = sys.argv[1], sys.argv[2]
failures = []


def run(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIDAL_") or k == "TIDAL_LOG_LEVEL"}
    env.update(env_extra or {})
    return subprocess.run([TOOL, *args], capture_output=True, text=True, env=env, timeout=120)


def expect(cond, what, result=None):
    if not cond:
        detail = f"\n  stdout: {result.stdout[-2000:]}\n  stderr: {result.stderr[-2000:]}" if result else ""
        failures.append(what + detail)
        print("FAIL:", what + detail)
    else:
        print("ok:", what)


def write(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    f.write(text)
    f.close()
    return f.name


r = run("--help")
expect(r.returncode == 0 and all(c in r.stdout for c in ("probe", "config", "validate")), "--help lists the commands", r)
r = run()
expect(r.returncode != 0, "no subcommand is an error", r)

r = run("probe", "--runtime", "sim")
expect(r.returncode == 0 and "SIMULATED" in r.stdout and "runtime: sim" in r.stdout, "probe labels the simulated device", r)
r = run("probe", "--runtime", "sim", "--json", "--batch-hint", "4096")
j = json.loads(r.stdout) if r.returncode == 0 else {}
expect(j.get("runtime") == "sim" and j["devices"][0]["simulated"] is True, "probe --json describes the simulated device", r)
dev = j["devices"][0] if j else {}
expect(dev.get("batch_hint", {}).get("batch") == dev.get("l2_size", 0) // (2 * 4096) and "heuristic" in dev.get("batch_hint", {}),
       "probe --batch-hint is L2 / (2 x sample), labelled a heuristic", r)
r = run("probe", "--runtime", "opencl")
expect(r.returncode != 0, "probe rejects an unknown runtime", r)
cfg = write('runtime = "sim"\n[sim]\ndevices = 3\n')
r = run("probe", "--json", env_extra={"TIDAL_CONFIG": cfg})
expect(r.returncode == 0 and len(json.loads(r.stdout)["devices"]) == 3, "probe honours TIDAL_CONFIG", r)

r = run("config", "check", EXAMPLE)
expect(r.returncode == 0 and "valid" in r.stdout and "policy chain: rules" in r.stdout, "config check accepts the example", r)
bad = write('runtime = "sim"\npolicies = ["rules"]\n[policy.rules]\nfallbak = "pinned"\n')
r = run("config", "check", bad)
expect(r.returncode == 1 and f"{bad}:4:1" in r.stderr and "did you mean 'fallback'" in r.stderr,
       "config check reports a misspelt policy option with line, column and a suggestion", r)
bad = write('runtime = "sim"\n[sim]\ncapacity = "12 parsecs"\n')
r = run("config", "check", bad)
expect(r.returncode == 1 and f"{bad}:3:" in r.stderr, "config check reports a bad size with its position", r)
r = run("config", "check", "/nonexistent/tidal.toml")
expect(r.returncode == 1 and "/nonexistent/tidal.toml" in r.stderr, "config check names a missing file", r)

r = run("validate", "--runtime", "sim", "--size", "8388608")
expect(r.returncode == 0 and "validation passed" in r.stdout, "validate passes on the simulated device", r)
r = run("validate", "--runtime", "sim", "--size", "8388608", "--json")
j = json.loads(r.stdout) if r.returncode == 0 else {"devices": []}
rows = {k["kind"]: k["checks"] for d in j["devices"] for k in d["kinds"]}
expect(rows.get("managed", {}).get("migrate", {}).get("result") == "pass", "validate --json: managed migrates and passes", r)
expect(rows.get("device-fine", {}).get("alloc", {}).get("result") == "unsupported",
       "validate --json: fine-grained memory is unsupported on an NVIDIA profile", r)
faulty = write('runtime = "sim"\n[[sim.fault]]\noperation = "kernel"\nnth = 5\ncount = 1\nerror = "hipErrorIllegalAddress"\n')
r = run("validate", "--config", faulty, "--size", "8388608")
expect(r.returncode == 1 and "FAIL" in r.stdout and "validation FAILED" in r.stdout,
       "validate fails (exit 1) when a kernel fails", r)


# The README's plugin example, built as a new user would, must load and reject a misspelt option.
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(EXAMPLE))))
readme = open(os.path.join(root, "README.md")).read()
start = readme.index("/* prefix_policy.c */")
source = readme[start:readme.index("```", start)]
work = tempfile.mkdtemp()
os.makedirs(os.path.join(work, "plugins"))
with open(os.path.join(work, "prefix_policy.c"), "w") as f:
    f.write(source)
cc = subprocess.run(["cc", "-shared", "-fPIC", "-Wall", "-Werror", "-o",
                     os.path.join(work, "plugins", "tidal-policy-prefix.so"), os.path.join(work, "prefix_policy.c"),
                     "-I" + os.path.join(root, "api")], capture_output=True, text=True)
expect(cc.returncode == 0, "the README's plugin example compiles with -Wall -Werror", cc)
good = os.path.join(work, "good.toml")
with open(good, "w") as f:
    f.write('runtime = "sim"\npolicy_path = ["plugins"]\npolicies = ["prefix", "rules"]\n[policy.prefix]\nprefix = "weights"\n')
r = run("config", "check", good)
expect(r.returncode == 0 and "prefix (" in r.stdout and "tidal-policy-prefix.so" in r.stdout,
       "the README's plugin example loads from policy_path", r)
bad = os.path.join(work, "bad.toml")
with open(bad, "w") as f:
    f.write('runtime = "sim"\npolicy_path = ["plugins"]\npolicies = ["prefix"]\n[policy.prefix]\nprefx = "weights"\n')
r = run("config", "check", bad)
expect(r.returncode == 1 and "did you mean 'prefix'" in r.stderr and f"{bad}:5:" in r.stderr,
       "the README's plugin example rejects a misspelt option with its line", r)

print(f"{len(failures) == 0 and 'all' or len(failures)} {'passed' if not failures else 'failed'}")
sys.exit(1 if failures else 0)
