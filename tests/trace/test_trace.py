"""Traces end to end: TIDAL_TRACE and [telemetry] trace record, `tidal replay` replays to the
same allocations and compares configurations, `tidal doctor` names each symptom of a small
program and nothing in a clean one, and a cut-short or corrupt trace is refused naming its line.
Usage: test_trace.py TIDAL_TOOL TRACE_PROGRAMS PLACE_BUFFERS PLACE_BUFFERS_TOML"""
import json
import os
import shutil
import sys
import tempfile

TOOL, PROGRAMS, PLACE_BUFFERS, PLACE_TOML = sys.argv[1:5]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from script_checks import expect, failures, run  # noqa: E402
tmp = tempfile.mkdtemp(prefix="tidal-trace-")


def record(scenario):
    path = os.path.join(tmp, scenario + ".jsonl")
    r = run([PROGRAMS, scenario], TIDAL_TRACE=path)
    expect(r.returncode == 0, f"{scenario}: the program runs and records {path}", r)
    return path


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


# ---- the doctor: one program per symptom, each named with its buffer; a clean one has none.
xnack_off = write("xnack-off.toml", 'runtime = "sim"\n[sim]\nxnack = false\n')
for scenario, symptom, tags, config in (("first-access", "first-access-latency", {"weights"}, None),
                                        ("fault-bound", "fault-bound", {"weights"}, xnack_off),
                                        ("thrashing", "thrashing", {"layer.a", "layer.b"}, None),
                                        ("alternation", "alternation", {"state"}, None),
                                        ("clean", None, set(), None)):
    trace = record(scenario)
    r = run([TOOL, "doctor", trace, "--json"] + (["--config", config] if config else []))
    found = json.loads(r.stdout)["findings"] if r.returncode == 0 else None
    if symptom is None:
        expect(found == [], f"doctor: the clean program has no finding (got {found})", r)
        text = run([TOOL, "doctor", trace])
        expect(text.returncode == 0 and "no finding" in text.stdout, "doctor: says so in text", text)
        continue
    expect(found is not None and {f["symptom"] for f in found} == {symptom} and {f["tag"] for f in found} == tags,
           f"doctor: {scenario} is diagnosed as {symptom} of {sorted(tags)} and nothing else (got "
           f"{[(f['symptom'], f['tag']) for f in found or []]})", r)
    fixes = " ".join(f["fix"] for f in found or [])
    want = {"first-access-latency": "tidal_declare(", "fault-bound": 'advice = ["preferred-device"',
            "thrashing": "budget = ", "alternation": "TIDAL_DECLARE_LOOKAHEAD"}[symptom]
    expect(want in fixes and all(f'"{t}"' in fixes for t in tags), f"doctor: the fix for {symptom} has {want!r}", r)
text = run([TOOL, "doctor", os.path.join(tmp, "thrashing.jsonl")])
expect("1. thrashing: \"layer.a\"" in text.stdout and "[migration]" in text.stdout, "doctor: text output", text)

# ---- place_buffers replays to the same allocation sequence.
pb_trace = os.path.join(tmp, "place_buffers.jsonl")
r = run([PLACE_BUFFERS], TIDAL_TRACE=pb_trace, TIDAL_RUNTIME="sim")
expect(r.returncode == 0, "place_buffers runs with TIDAL_TRACE", r)
with open(pb_trace) as f:
    lines = [json.loads(l) for l in f]
expect(lines[0].get("tidal_trace") == 1 and lines[-1] == {"end": True, "events": len(lines) - 2},
       "the trace has its header and its end record", None)
recorded = [(l["args"]["tag"], l["args"]["size"], l["decision"]["kind"], l["decision"]["device"],
             l["decision"]["policy"]) for l in lines if l.get("call") == "alloc"]
expect(len(recorded) == 5 and all(l["result"] == "TIDAL_OK" for l in lines[1:-1] if "call" in l),
       "place_buffers: 5 allocations, every call recorded as it returned", None)
r = run([TOOL, "replay", pb_trace, "--config", PLACE_TOML, "--json"])
replayed = json.loads(r.stdout)["configs"][0]["allocations"] if r.returncode == 0 else []
expect([(a["tag"], a["size"], a["kind"], a["device"], a["policy"]) for a in replayed] == recorded,
       f"replay: the same allocations, kinds, devices and policies as recorded ({recorded})", r)

# ---- two configurations on one trace: different figures, and the difference explained.
pair = record("replay-pair")
core = write("core.toml", 'runtime = "sim"\n')
r = run([TOOL, "replay", pair, "--config", PLACE_TOML, "--config", core, "--json"])
out = json.loads(r.stdout) if r.returncode == 0 else {"configs": [{}, {}], "differences": []}
a, b = out["configs"]
expect(a.get("migrated_bytes") == 64 << 20 and b.get("migrated_bytes") == 0 and a.get("failures") == 0 and
       b.get("failures") == 0, "replay: the rules policy puts weights in managed memory that the declarations "
       f"migrate (64 MiB), the defaults in device memory (nothing moves); got {a.get('migrated_bytes')} and "
       f"{b.get('migrated_bytes')}", r)
expect(a.get("simulated_seconds", 0) > b.get("simulated_seconds", 1), "replay: so the managed placement takes longer", r)
expect(len(out["differences"]) == 1 and "weights.layer0" in out["differences"][0] and
       "managed on device 0 (rules)" in out["differences"][0] and "device on device 0 (core)" in out["differences"][0],
       f"replay: the difference is explained by the one placement that differs ({out['differences']})", r)
svg = os.path.join(tmp, "memory.svg")
r = run([TOOL, "replay", pair, "--config", PLACE_TOML, "--config", core, "--svg", svg])
expect(r.returncode == 0 and "placements that differ" in r.stdout and "bytes migrated" in r.stdout,
       "replay: the side-by-side table", r)
with open(svg) if os.path.exists(svg) else open(os.devnull) as f:
    drawing = f.read()
expect(drawing.startswith("<?xml") and drawing.count("device memory by tag") == 2 and "scratch.attention" in drawing
       and "managed (resident)" in drawing, "replay --svg: one chart per configuration, by tag", None)

# ---- one trace per rank (%r in TIDAL_TRACE), replayed together: each rank, then summed.
ranks = []
for rank in (0, 1):
    r = run([PROGRAMS, "replay-pair"], TIDAL_TRACE=os.path.join(tmp, "rank-%r.jsonl"), RANK=str(rank))
    expect(r.returncode == 0, f"rank {rank}: the program records its own trace", r)
    ranks.append(os.path.join(tmp, f"rank-{rank}.jsonl"))
expect(all(os.path.exists(p) for p in ranks), f"TIDAL_TRACE's %r names one file per rank ({ranks})", None)
r = run([TOOL, "replay", *ranks, "--config", PLACE_TOML, "--json"])
out = json.loads(r.stdout) if r.returncode == 0 else {"traces": [], "summed": [{}]}
each = [t["configs"][0] for t in out["traces"]]
job = out["summed"][0]
expect(len(each) == 2 and job.get("migrated_bytes") == sum(e["migrated_bytes"] for e in each) == 2 * (64 << 20) and
       job.get("peak_device_bytes") == sum(e["peak_device_bytes"] for e in each) and
       job.get("slowest_simulated_seconds") == max(e["simulated_seconds"] for e in each),
       f"replay of two ranks: per rank, then summed ({job})", r)
r = run([TOOL, "replay", *ranks, "--config", PLACE_TOML])
expect(r.returncode == 0 and "all 2 traces (ranks) together" in r.stdout, "replay of two ranks: the summed table", r)

# ---- threads: every thread's ring reaches the file, each declaration and batch whole, and a
# free sorts before the allocation that gets its address back on another thread.
threads = record("threads")
r = run([TOOL, "replay", threads, "--json"])
figures = json.loads(r.stdout)["configs"][0] if r.returncode == 0 else {}
expected = 1 + 4 * (2 * 2000 + 1 + 1 + 1 + 1) + 1  # shared; per thread: pairs, batch alloc, declare, batch, free; free
expect(figures.get("calls") == expected and figures.get("failures") == 0 and figures.get("recorded_failures") == 0,
       f"threads: {expected} calls replay without a failure (got {figures.get('calls')} calls, "
       f"{figures.get('failures')} failures: {figures.get('failure_lines')})", r)
with open(threads) as f:
    lines = [json.loads(l) for l in f]
expect({l["thread"] for l in lines if "call" in l} == {0, 1, 2, 3, 4}, "threads: five threads recorded", None)

# ---- ordered: 4 threads x 25000 pooled pairs back to back. Every event reaches the file exactly
# once and in its thread's order (sizes cycle 256 * (1 + i % 7); each free follows its alloc and
# names its pointer), times never go back within a thread, and the end record counts them all.
ordered = record("ordered")
with open(ordered) as f:
    lines = [json.loads(l) for l in f]
by_thread = {}
for l in lines[1:-1]:
    by_thread.setdefault(l["thread"], []).append(l)
problems = []
for thread, events in sorted(by_thread.items()):
    if len(events) != 2 * 25000:
        problems.append(f"thread {thread}: {len(events)} events, not 50000")
    for i in range(0, len(events) - 1, 2):
        a, f_ = events[i], events[i + 1]
        if (a["call"], f_["call"]) != ("alloc", "free") or a["args"]["size"] != 256 * (1 + (i // 2) % 7) or \
                f_["args"]["ptr"] != a["ptr"] or a["result"] != "TIDAL_OK" or f_["result"] != "TIDAL_OK":
            problems.append(f"thread {thread}: pair {i // 2} is {a['call']} {a['args']} / {f_['call']} {f_['args']}")
            break
    times = [e["time_ns"] for e in events]
    if times != sorted(times):
        problems.append(f"thread {thread}: time goes back")
end = lines[-1]
expect(len(by_thread) == 4 and not problems and end.get("end") and end.get("events") == 4 * 2 * 25000,
       f"ordered: 4 threads' 200000 events, each once and in order (end {end}; {problems[:3]})")
print(f"ordered: the end record {end}")

# ---- [telemetry] trace in a configuration file, relative to the file's folder.
cfg = write("traced.toml", 'runtime = "sim"\n[telemetry]\ntrace = "from-config.jsonl"\n')
r = run([TOOL, "probe", "--config", cfg])
path = os.path.join(tmp, "from-config.jsonl")
expect(r.returncode == 0 and os.path.exists(path) and open(path).read().endswith('{"end":true,"events":0}\n'),
       "[telemetry] trace records to a file beside the configuration", r)
bad = write("bad-trace.toml", 'runtime = "sim"\n[telemetry]\ntrace = "/nonexistent/folder/t.jsonl"\n')
r = run([TOOL, "probe", "--config", bad])
expect(r.returncode != 0 and "TIDAL_ERROR_CONFIG" in r.stderr and "bad-trace.toml:3:9: telemetry.trace" in r.stderr and
       "/nonexistent/folder/t.jsonl" in r.stderr, "an unwritable trace file is a CONFIG error naming the key", r)
r = run([TOOL, "probe", "--runtime", "sim"], TIDAL_TRACE="/nonexistent/folder/t.jsonl")
expect(r.returncode != 0 and "TIDAL_TRACE" in r.stderr, "so is an unwritable TIDAL_TRACE", r)
r = run([TOOL, "config", "check", write("unknown.toml", '[telemetry]\ntrcae = "x"\n')])
expect(r.returncode != 0 and "trcae" in r.stderr, "an unknown [telemetry] key is refused", r)

# ---- a cut-short or corrupt trace: a clear error naming its line, for replay and doctor alike.
with open(pb_trace) as f:
    good = f.read().splitlines(keepends=True)


def refused(name, text, needle):
    path = write(name, text)
    for command in ("replay", "doctor"):
        r = run([TOOL, command, path])
        expect(r.returncode == 1 and needle in r.stderr and "Traceback" not in r.stderr and "INTERNAL" not in r.stderr,
               f"{command}: {name} is refused with {needle!r}", r)


refused("cut.jsonl", "".join(good[:4]) + good[4][:40], f"cut.jsonl:5: the line is cut short")
refused("no-end.jsonl", "".join(good[:-1]), f"no-end.jsonl:{len(good) - 1}: the trace ends without its end record")
refused("garbage.jsonl", "".join(good[:2]) + "{\"time_ns\": 12,,}\n" + "".join(good[3:]), "garbage.jsonl:3: not a JSON object")
refused("missing.jsonl", "".join(good[:2]) + good[2].replace('"size":', '"sise":', 1) + "".join(good[3:]),
        'missing.jsonl:3: "alloc" lacks "args.size"')
refused("wrong-type.jsonl", "".join(good[:2]) + good[2].replace('"thread":0', '"thread":"zero"', 1) + "".join(good[3:]),
        'wrong-type.jsonl:3: "thread" of "alloc" is "zero" where a number belongs')
refused("unknown-call.jsonl", "".join(good[:2]) + good[2].replace('"call":"alloc"', '"call":"explode"', 1) +
        "".join(good[3:]), 'unknown-call.jsonl:3: unknown call "explode"')
refused("dropped.jsonl", "".join(good[:2]) + "".join(good[3:]), "the end record counts")
refused("not-a-trace.jsonl", "".join(good[1:]), "not-a-trace.jsonl:1: not a tidal trace")
refused("empty.jsonl", "", "empty: not a tidal trace")
r = run([TOOL, "replay", os.path.join(tmp, "absent.jsonl")])
expect(r.returncode == 1 and "cannot open the trace" in r.stderr, "replay: a missing file is named", r)

if failures:
    print(f"\n{len(failures)} failure(s); the traces are in {tmp}")
    sys.exit(1)
shutil.rmtree(tmp)
print("\nall trace checks passed")
