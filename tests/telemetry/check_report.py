#!/usr/bin/env python3
"""The report a context writes when it is destroyed: leaks on the log (text) and the statistics
snapshot (JSON, TIDAL_STATS=FILE|stderr), validated against docs/stats.schema.json; call sites
with [telemetry] leak_backtrace = true; `tidal stats FILE` on the file.

Usage: check_report.py LEAKY_PROGRAM SCHEMA PAGING_REUSE_PROGRAM [TIDAL_TOOL]

python3-jsonschema is no dependency of tidal: check() below validates the subset of JSON Schema
the schema uses (type, required, properties, additionalProperties, items, enum, minimum,
maximum, type lists with "null", and "$ref" to "#/$defs/NAME") and fails on any other keyword,
so the schema cannot grow past what is checked.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

LEAKY, SCHEMA_PATH, PAGING_REUSE = sys.argv[1:4]
TOOL = sys.argv[4] if len(sys.argv) > 4 else None
SCHEMA = json.load(open(SCHEMA_PATH, encoding="utf-8"))
KNOWN = {"$schema", "$id", "title", "description", "type", "required", "properties",
         "additionalProperties", "items", "enum", "minimum", "maximum", "$defs", "$ref"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool,
         "integer": int, "number": (int, float)}
failures = []


def check(value, schema, where="$"):
    """Problems of `value` against `schema`, as strings naming the place."""
    unknown = set(schema) - KNOWN
    if unknown:
        return [f"{where}: schema keyword(s) {sorted(unknown)} not checked by this test"]
    if "$ref" in schema:  # only "#/$defs/NAME", the one form the schema uses
        ref = schema["$ref"]
        if not ref.startswith("#/$defs/") or ref[len("#/$defs/"):] not in SCHEMA.get("$defs", {}):
            return [f"{where}: unresolved $ref {ref!r}"]
        return check(value, SCHEMA["$defs"][ref[len("#/$defs/"):]], where)
    problems = []
    t = schema.get("type")
    if t:  # one type name, or a list of them ("null" among them for a figure that may be unknown)
        names = t if isinstance(t, list) else [t]
        ok = any(value is None if n == "null" else
                 isinstance(value, TYPES[n]) and not (n in ("integer", "number") and isinstance(value, bool))
                 for n in names)
        if not ok:
            return [f"{where}: {value!r} is not {t}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} not one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        problems.append(f"{where}: {value} < {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        problems.append(f"{where}: {value} > {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{where}: required key {key!r} missing")
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                problems += check(v, props[key], f"{where}.{key}")
            elif extra is False:
                problems.append(f"{where}: key {key!r} is not in the schema")
            elif isinstance(extra, dict):
                problems += check(v, extra, f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            problems += check(v, schema["items"], f"{where}[{i}]")
    return problems


def expect(cond, what, detail=""):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}\n{detail}", file=sys.stderr)


def run(config, stats):
    env = {**os.environ, "TIDAL_LOG_LEVEL": "warn", "TIDAL_STATS": stats}
    return subprocess.run([LEAKY, config], capture_output=True, text=True, env=env, timeout=60)


# The checker itself must refuse what it should (a test that passes everything proves nothing).
expect(check({"schema": "tidal-stats/1"}, SCHEMA), "the checker refuses a snapshot missing required keys")
expect(check([], SCHEMA), "the checker refuses a value of the wrong type")
expect(not check(None, {"$ref": "#/$defs/faults"}) and check({}, {"$ref": "#/$defs/faults"}) and
       check(None, {"type": "object"}), "the checker takes null only where the schema allows it")

tmp = tempfile.mkdtemp(prefix="tidal-telemetry-")
path = os.path.join(tmp, "stats.json")

# 1. TIDAL_STATS=FILE, no call sites: text on the log, JSON in the file.
r = run('runtime = "sim"\n', path)
expect(r.returncode == 0, "leaky runs", r.stderr)
expect("context destroyed with 3 live allocation(s), 12388 bytes; freeing them" in r.stderr,
       "the text report's summary line", r.stderr)
for size, kind, device, tag in [(4096, "device", "device 0", "model/weights"),
                                (8192, "managed", "device 0", "model/kv"),
                                (100, "pinned", "the host", "io")]:
    pattern = rf"  leak: {size} bytes of {kind} memory on {device} at 0x[0-9a-f]+ tag '{re.escape(tag)}'"
    expect(re.search(pattern, r.stderr), f"the text report lists the {tag} leak", r.stderr)
expect("      at " not in r.stderr, "no call sites without leak_backtrace", r.stderr)
snapshot = json.load(open(path, encoding="utf-8"))
problems = check(snapshot, SCHEMA)
expect(not problems, "the snapshot at destroy validates against the schema", "\n".join(problems))
leaks = snapshot.get("leaks", [])
expect(sorted((l["size"], l["kind"], l["tag"]) for l in leaks) ==
       [(100, "pinned", "io"), (4096, "device", "model/weights"), (8192, "managed", "model/kv")],
       "the JSON lists the three leaks", json.dumps(leaks))
expect(all(l["call_site"] == [] for l in leaks), "no call sites in the JSON without leak_backtrace")
expect(snapshot.get("live", {}).get("bytes") == 12388 and snapshot["live"]["count"] == 3,
       "live bytes at destroy are the leaks", json.dumps(snapshot.get("live")))
expect(snapshot.get("errors") == {"TIDAL_ERROR_UNKNOWN_POINTER": 1}, "the error is counted by status",
       json.dumps(snapshot.get("errors")))
expect({t["tag"]: t["bytes"] for t in snapshot["by_tag"]} ==
       {"model/weights": 4096, "model/kv": 8192, "io": 100}, "by_tag at destroy",
       json.dumps(snapshot["by_tag"]))
expect(any(p["kind"] == "device" and p["allocations"] >= 2 for p in snapshot["pools"]),
       "the device pool's counters are in", json.dumps(snapshot["pools"]))
# The simulated device counts page faults: real zeros here (no kernel ran), per device and per
# tag, the managed group with its allocation's size ("faults": null is for runtimes that count none).
expect(all(isinstance(d.get("faults"), dict) and d["faults"]["count"] == 0 for d in snapshot["devices"]),
       "each simulated device's faults are counted (none)", json.dumps(snapshot["devices"]))
expect({t["tag"]: (t.get("faults") or {}).get("largest_allocation_bytes") for t in snapshot["by_tag"]} ==
       {"model/weights": 0, "model/kv": 8192, "io": 0}, "each tag's faults, against its largest managed buffer",
       json.dumps(snapshot["by_tag"]))

# 2. leak_backtrace: each leak names its allocating call site, in text and JSON; tag groups.
r = run('runtime = "sim"\n[telemetry]\nleak_backtrace = true\ntag_depth = 1\n', path)
expect(r.returncode == 0, "leaky runs with leak_backtrace", r.stderr)
snapshot = json.load(open(path, encoding="utf-8"))
problems = check(snapshot, SCHEMA)
expect(not problems, "the snapshot with call sites validates", "\n".join(problems))
for leak in snapshot.get("leaks", []):
    expect(leak["call_site"] and "leaky_allocate" in leak["call_site"][0],
           f"the {leak['tag']} leak's call site starts in leaky_allocate", json.dumps(leak["call_site"]))
expect(re.search(r"tag 'io'\n[^\n]*      at [^\n]*leaky_allocate", r.stderr), "the text report shows the call site",
       r.stderr)
expect({t["tag"]: t["bytes"] for t in snapshot["by_tag"]} == {"model": 12288, "io": 100},
       "tag_depth = 1 groups model/*", json.dumps(snapshot["by_tag"]))

# 3. TIDAL_STATS=stderr: the same JSON, on one line of stderr.
r = run('runtime = "sim"\n', "stderr")
lines = [l for l in r.stderr.splitlines() if l.startswith("{")]
expect(len(lines) == 1, "one JSON line on stderr", r.stderr)
if lines:
    problems = check(json.loads(lines[0]), SCHEMA)
    expect(not problems, "the stderr snapshot validates", "\n".join(problems))

# 3b. A freed managed buffer's faults stay with its tag; its pooled block's next owner (another
# tag, no kernel) starts from zero.
r = subprocess.run([PAGING_REUSE, 'runtime = "sim"\n'], capture_output=True, text=True, timeout=60,
                   env={**os.environ, "TIDAL_LOG_LEVEL": "warn", "TIDAL_STATS": path})
expect(r.returncode == 0, "paging_reuse runs (the pool hands the block back)", r.stderr)
snapshot = json.load(open(path, encoding="utf-8"))
faults = {t["tag"]: t.get("faults") or {} for t in snapshot["by_tag"]}
expect(not check(snapshot, SCHEMA) and faults.get("touched", {}).get("count", 0) > 0 and
       faults["touched"]["from_host"]["bytes"] >= 1 << 20 and faults.get("untouched", {}).get("count") == 0 and
       faults["untouched"]["largest_allocation_bytes"] == 1 << 20,
       "faults stay with the freed buffer's tag; the block's next owner starts from zero", json.dumps(faults))

# 4. `tidal stats FILE` prints the snapshot as tables; a broken file is a clear error.
if TOOL:
    run('runtime = "sim"\n', path)
    t = subprocess.run([TOOL, "stats", path], capture_output=True, text=True, timeout=60)
    expect(t.returncode == 0, "tidal stats FILE succeeds", t.stderr)
    expect(re.search(r"model/kv\s+8192\s+1", t.stdout), "tidal stats shows the tag table", t.stdout)
    expect("TIDAL_ERROR_UNKNOWN_POINTER" in t.stdout and "leaks" in t.stdout, "errors and leaks", t.stdout)
    expect(re.search(r"page faults\n.*\ndevice 0 +0 +0 ", t.stdout) and re.search(r"\nmodel/kv +0 ", t.stdout),
           "tidal stats shows the page faults by device and tag", t.stdout)
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"schema": "tidal-stats/1",\n "live": [\n')
    t = subprocess.run([TOOL, "stats", bad], capture_output=True, text=True, timeout=60)
    expect(t.returncode != 0 and "bad.json" in t.stderr and "line" in t.stderr,
           "tidal stats names the broken file and the line", t.stderr)

for name in os.listdir(tmp):
    os.unlink(os.path.join(tmp, name))
os.rmdir(tmp)
if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("telemetry report: all checks passed")
