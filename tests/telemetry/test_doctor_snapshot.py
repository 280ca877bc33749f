"""`tidal doctor SNAPSHOT`: the trace tests' small programs (tests/trace/trace_programs.c), one per
symptom, each run with TIDAL_STATS=FILE on the simulated device and diagnosed from the snapshot's
counters alone; the clean one has no finding. Also: the snapshot's page-fault counts are the
simulated device's (exact for the first-access program), a snapshot from a runtime that counts
no faults ("faults": null) is read and its blind spot said, and --config is refused for a snapshot.
Usage: test_doctor_snapshot.py TIDAL_TOOL PROGRAMS"""
import json
import os
import shutil
import sys
import tempfile

TOOL, PROGRAMS = sys.argv[1:3]
MiB = 1024 * 1024
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from script_checks import expect, failures  # noqa: E402
import script_checks  # noqa: E402
tmp = tempfile.mkdtemp(prefix="tidal-doctor-snapshot-")


def run(cmd, **extra):
    return script_checks.run(cmd, keep=("TIDAL_POLICY_PATH",), timeout=120, **extra)


def snapshot(scenario):
    path = os.path.join(tmp, scenario + ".json")
    r = run([PROGRAMS, scenario], TIDAL_STATS=path)
    expect(r.returncode == 0 and os.path.exists(path), f"{scenario}: the program runs and writes {path}", r)
    return path


def doctor(path, *extra):
    r = run([TOOL, "doctor", path, "--json", *extra])
    return r, (json.loads(r.stdout) if r.returncode == 0 else None)


# One program per symptom; the same expectations as the trace path (tests/trace/test_trace.py).
for scenario, symptom, tags in (("first-access", "first-access-latency", {"weights"}),
                                ("fault-bound", "fault-bound", {"weights"}),
                                ("thrashing", "thrashing", {"layer.a", "layer.b"}),
                                ("alternation", "alternation", {"state"}),
                                ("clean", None, set())):
    path = snapshot(scenario)
    r, out = doctor(path)
    found = out["findings"] if out else None
    expect(out is not None and out.get("snapshot") == path and out.get("cannot_tell"),
           f"doctor: {scenario}'s snapshot is read as a snapshot, with what it cannot tell", r)
    if symptom is None:
        expect(found == [], f"doctor: the clean program's snapshot has no finding (got {found})", r)
        text = run([TOOL, "doctor", path])
        expect(text.returncode == 0 and "no finding" in text.stdout and "cannot tell" in text.stdout,
               "doctor: says so in text, and what counters cannot tell", text)
        continue
    expect(found is not None and {f["symptom"] for f in found} == {symptom} and {f["tag"] for f in found} == tags,
           f"doctor: {scenario}'s snapshot is diagnosed as {symptom} of {sorted(tags)} and nothing else (got "
           f"{[(f['symptom'], f['tag']) for f in found or []]})", r)
    fixes = " ".join(f["fix"] for f in found or [])
    want = {"first-access-latency": "tidal_declare(", "fault-bound": 'advice = ["preferred-device"',
            "thrashing": "budget = ", "alternation": "TIDAL_DECLARE_LOOKAHEAD"}[symptom]
    expect(want in fixes and all(f'"{t}"' in fixes for t in tags), f"doctor: the fix for {symptom} has {want!r}", r)
    expect(all(f["line"] == 0 and f["size"] == 64 * MiB for f in found or []),
           f"doctor: {scenario}'s findings name no line and the buffer's 64 MiB", r)

# The counts behind the diagnosis: first-access faults every page under the 64 MiB buffer once
# (whole pages: the block's pages may reach a little past it), from the host, nothing prefetched;
# device 0 counts the same faults.
s = json.load(open(os.path.join(tmp, "first-access.json")))
f = next(t for t in s["by_tag"] if t["tag"] == "weights")["faults"]
d = s["devices"][0]["faults"]
expect(64 * MiB <= f["bytes"] <= 66 * MiB and f["from_host"]["bytes"] == f["bytes"] and f["from_peer"]["count"] == 0
       and f["count"] == f["from_host"]["count"] > 0 and f["prefetched_to_device_bytes"] == 0 and
       f["largest_allocation_bytes"] == 64 * MiB, f"first-access: weights faulted in once, whole, from the host ({f})")
expect(d["bytes"] == f["bytes"] and d["count"] == f["count"], f"first-access: device 0 counts the same faults ({d})")
s = json.load(open(os.path.join(tmp, "fault-bound.json")))
f = next(t for t in s["by_tag"] if t["tag"] == "weights")["faults"]
expect(f["count"] == 0 and 4 * 64 * MiB <= f["link_page_bytes"] <= 4 * 66 * MiB and f["link_bytes"] > 0,
       f"fault-bound (XNACK off): no fault, each of 4 kernels reached every page over the link ({f})")

# Text output.
text = run([TOOL, "doctor", os.path.join(tmp, "thrashing.json")])
expect(text.returncode == 0 and "1. thrashing: \"layer.a\" (64 MiB)\n" in text.stdout and "[migration]" in text.stdout
       and "from line" not in text.stdout, "doctor: a snapshot's text output", text)

# A snapshot from a runtime that counts no faults (a GPU): figures unknown, said, no finding made up.
s = json.load(open(os.path.join(tmp, "first-access.json")))
s["runtime"] = "cuda"
for row in s["devices"] + s["by_tag"]:
    row["faults"] = None
gpu = os.path.join(tmp, "gpu.json")
json.dump(s, open(gpu, "w"))
r, out = doctor(gpu)
expect(out is not None and out["findings"] == [] and any("cuda runtime counts no page faults" in b for b in out["cannot_tell"]),
       "doctor: a snapshot without fault counts has no finding and says what it cannot see", r)

# A snapshot does not replay: --config is refused with a clear message; a broken one names itself.
r = run([TOOL, "doctor", gpu, "--config", gpu])
expect(r.returncode == 1 and "statistics snapshot" in r.stderr and "--config" in r.stderr, "doctor: --config on a snapshot", r)
s = json.load(open(gpu))
del s["devices"]
broken = os.path.join(tmp, "broken.json")
json.dump(s, open(broken, "w"))
r = run([TOOL, "doctor", broken])
expect(r.returncode == 1 and "broken.json" in r.stderr and "Traceback" not in r.stderr, "doctor: a malformed snapshot", r)

# --help says that FILE may be either, and what a snapshot cannot tell.
r = run([TOOL, "doctor", "--help"])
expect(r.returncode == 0 and "statistics snapshot" in r.stdout and "TIDAL_STATS=FILE" in r.stdout and
       "FILE" in r.stdout and max(map(len, r.stdout.splitlines())) <= 120, "doctor --help describes snapshots", r)

shutil.rmtree(tmp)
if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("doctor from snapshots: all checks passed")
