"""The `tidal` command as a user runs it: exit statuses, output, JSON shape, help, version, the
man page and the bash completion the build generates from it.
Usage: test_tool.py TIDAL_BINARY EXAMPLE_CONFIG MAN_PAGE BASH_COMPLETION"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOOL, EXAMPLE, MAN_PAGE, COMPLETION = sys.argv[1:5]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from script_checks import expect, failures  # noqa: E402
import script_checks  # noqa: E402


def run(*args, env_extra=None):
    return script_checks.run([TOOL, *args], keep=("TIDAL_LOG_LEVEL",), timeout=120, **(env_extra or {}))


def write(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    f.write(text)
    f.close()
    return f.name


# Help: one line per command at the top, the long text under the command's own --help.
r = run("--help")
listed = {m.group(1): m.group(2) for m in re.finditer(r"^  (probe|config|validate|bench|replay|doctor) +(\S.*)$", r.stdout, re.M)}
expect(r.returncode == 0 and set(listed) == {"probe", "config", "validate", "bench", "replay", "doctor"} and
       all(len(r.stdout.split("\n  " + c + " ")) == 2 for c in listed), "--help lists each command once, on one line", r)
expect("NOT MEASURED" not in r.stdout and "For each device and allocation kind" not in r.stdout and
       max(map(len, r.stdout.splitlines())) <= 120, "--help leaves the commands' long text to their own --help", r)
r = run("validate", "--help")
expect(r.returncode == 0 and "For each device and allocation kind" in r.stdout and "--bandwidth-size" in r.stdout and
       max(map(len, r.stdout.splitlines())) <= 120, "validate --help has the long text, wrapped", r)

# A bare `tidal` is a usage error: one short usage line, status 2.
r = run()
expect(r.returncode == 2 and r.stdout == "" and r.stderr.startswith("usage: tidal") and len(r.stderr.splitlines()) == 1
       and all(c in r.stderr for c in ("probe", "config", "validate", "bench")), "a bare tidal prints a usage line, exit 2", r)

# Mistyped commands get a suggestion; every usage error is status 2 (not CLI11's 105-109).
for args, needle in ((("probr",), "did you mean 'probe'"), (("valdiate",), "did you mean 'validate'"),
                     (("config", "chek", "x.toml"), "did you mean 'check'")):
    r = run(*args)
    expect(r.returncode == 2 and needle in r.stderr, f"tidal {' '.join(args)}: {needle}, exit 2", r)
r = run("frobnicate")
expect(r.returncode == 2 and "not a command" in r.stderr and "did you mean" not in r.stderr,
       "an unrelated word gets no suggestion, exit 2", r)
for args in (("probe", "--jsn"), ("probe", "--runtime", "opencl"), ("validate", "--repeat", "0"), ("config",),
             ("config", "check")):
    r = run(*args)
    expect(r.returncode == 2 and r.stderr.startswith("tidal: ") and "--help" in r.stderr,
           f"tidal {' '.join(args)}: a usage error, exit 2", r)

# --version and -V: version, what this build has, where modules and policies are looked for.
r = run("--version")
r_short = run("-V")
expect(r.returncode == 0 and r_short.returncode == 0 and r.stdout == r_short.stdout, "--version and -V say the same", r)
expect(r.stdout.startswith("tidal 0.") and all(w in r.stdout for w in (
    "runtimes: sim (built in)", "hip module:", "cuda module:", "validation kernels", "Fortran binding:", "hwloc",
    "runtime modules (tidal-runtime-NAME.so) are looked for in:", "policies (tidal-policy-NAME.so) are looked for in:",
    "TIDAL_POLICY_PATH", "TIDAL_RUNTIME_PATH")), "--version names the runtimes, features and search folders", r)
lib = re.search(r"^library: libtidal \S+ \((.+)\)$", r.stdout, re.M)
expect(lib and os.path.exists(lib.group(1)) and os.path.join(os.path.dirname(lib.group(1)), "tidal", "policies") in r.stdout,
       "--version names the loaded libtidal and the policy folder beside it", r)
r = run("-V", env_extra={"TIDAL_POLICY_PATH": "/nonexistent/tidal-policies"})
expect("/nonexistent/tidal-policies  (does not exist)" in r.stdout, "--version lists TIDAL_POLICY_PATH, marking a missing folder", r)

# Every size option takes the configuration's units.
r = run("probe", "--runtime", "sim", "--json", "--batch-hint", "1MiB")
j = json.loads(r.stdout) if r.returncode == 0 else {"devices": [{}]}
hint = j["devices"][0].get("batch_hint", {})
expect(hint.get("sample_bytes") == 1 << 20 and hint.get("batch") == j["devices"][0]["l2_size"] // (2 << 20),
       "probe --batch-hint 1MiB", r)
r = run("probe", "--runtime", "sim", "--json", "--batch-hint", "1mib")
expect(r.returncode == 0 and json.loads(r.stdout)["devices"][0]["batch_hint"]["sample_bytes"] == 1 << 20,
       "probe --batch-hint: units in any case, as in the configuration", r)
r = run("validate", "--runtime", "sim", "--size", "16MiB", "--bandwidth-size", "8MiB")
expect(r.returncode == 0 and "16 MiB per kind" in r.stdout and "bandwidth (8 MiB" in r.stdout,
       "validate --size 16MiB --bandwidth-size 8MiB", r)
r = run("validate", "--runtime", "sim", "--size", "1KiB")
expect(r.returncode == 2 and "'1KiB' is 1024 bytes; give 4 KiB to 16 GiB" in r.stderr and "not in range" not in r.stderr,
       "validate --size below the minimum says the bounds in units, exit 2", r)
r = run("validate", "--runtime", "sim", "--size", "12parsecs")
expect(r.returncode == 2 and "unknown unit 'parsecs'" in r.stderr, "validate --size with a bad unit says so", r)
r = run("probe", "--help")
expect("SAMPLE_BYTES" in r.stdout and "1MiB" in r.stdout, "probe --help: --batch-hint takes a size with units", r)

# runtime = "auto" without a GPU runtime: one warning that says how to silence it.
r = run("probe", env_extra={"TIDAL_LOG_LEVEL": "warn"})
if "runtime: sim" in r.stdout:
    warnings = [l for l in r.stderr.splitlines() if "no GPU runtime is usable" in l]
    expect(len(warnings) == 1 and 'runtime = "sim"' in warnings[0] and "TIDAL_RUNTIME=sim" in warnings[0],
           "the auto fallback warns once, saying how to silence it", r)
    searched = [p for m in re.finditer(r"\(searched ([^)]*)\)", r.stderr) for p in m.group(1).split(", ")]
    expect(all(os.path.isdir(p) or p.startswith("no folder") for p in searched),
           f"the warning lists only module folders that exist ({searched})", r)
    r = run("probe", env_extra={"TIDAL_RUNTIME": "sim", "TIDAL_LOG_LEVEL": "warn"})
    expect(r.returncode == 0 and "no GPU runtime" not in r.stderr, "TIDAL_RUNTIME=sim silences it", r)

# An unknown policy names only the folders that were searched and exist.
real_plugins = tempfile.mkdtemp()
missing = write(f'runtime = "sim"\npolicy_path = ["{real_plugins}", "/nonexistent/plugins"]\npolicies = ["nosuch"]\n')
r = run("config", "check", missing)
m = re.search(r"no tidal-policy-nosuch\.so in (.*?)(;| \(|$)", r.stderr, re.M)
listed = m.group(1).split(", ") if m else []
expect(r.returncode == 1 and real_plugins in listed and all(os.path.isdir(p) for p in listed) and
       "/nonexistent" not in r.stderr and "policies/nosuch" not in r.stderr,
       f"an unknown policy's error lists only existing folders ({listed})", r)
missing = write('runtime = "sim"\npolicy_path = ["/nonexistent/plugins"]\npolicies = ["nosuch"]\n')
r = run("config", "check", missing, env_extra={"TIDAL_POLICY_PATH": ""})
expect(r.returncode == 1 and "/nonexistent" not in r.stderr and
       ("none exists" in r.stderr or re.search(r"nosuch\.so in /", r.stderr)),
       "an unknown policy's error names no folder that does not exist", r)

# Error names as the simulated card's vendor spells them: CUDA's for the H200, HIP's for AMD.
faulty = write('runtime = "sim"\n[[sim.fault]]\noperation = "kernel"\nnth = 5\ncount = 1\nerror = "hipErrorIllegalAddress"\n')
r = run("validate", "--config", faulty, "--size", "8MiB")
expect(r.returncode == 1 and "cudaErrorIllegalAddress (700)" in r.stdout and "hipError" not in r.stdout,
       "a simulated NVIDIA device names its errors as CUDA does", r)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(EXAMPLE))))
h200 = open(os.path.join(root, "core", "runtime", "sim", "profiles", "h200.toml")).read()
amd_profile = write(h200.replace('vendor = "nvidia"', 'vendor = "amd"').replace('name = "h200"', 'name = "amd-test"'))
faulty_amd = write(f'runtime = "sim"\n[sim]\nprofile = "{amd_profile}"\n[[sim.fault]]\noperation = "kernel"\nnth = 5\n'
                   'count = 1\nerror = "hipErrorIllegalAddress"\n')
r = run("validate", "--config", faulty_amd, "--size", "8MiB")
expect(r.returncode == 1 and "hipErrorIllegalAddress (700)" in r.stdout and "cudaError" not in r.stdout,
       "a simulated AMD device names its errors as HIP does", r)

# The man page and the bash completion are the tool's own text, generated by the build.
r = run("--man")
man = open(MAN_PAGE).read()
expect(r.returncode == 0 and r.stdout == man, "the installed man page is what tidal --man prints", r)
expect(man.startswith(".TH TIDAL 1 ") and all(f"\n{h}\n" in man for h in (
    ".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS", ".SH COMMANDS", ".SH ENVIRONMENT")) and
    all(f'.SS "tidal {c}' in man for c in ("probe", "config check", "validate", "bench")) and
    all(o in man for o in ("\\-\\-bandwidth\\-size", "\\-\\-emit\\-profile", "\\-\\-batch\\-hint", "NOT MEASURED"))
    and "--man" not in man and "bash\\-completion" not in man, "the man page has every section, command and option")
expect("offloaded and restored" in man and "elastic memory offloaded to its host home" in man,
       "the man page describes validate's and bench's elastic rows")
expect(not any(l.startswith(("'", ".")) and not re.match(r"^\.(TH|SH|SS|TP|PP|B) ?", l) for l in man.splitlines()),
       "the man page's text never starts a line with a roff control character")
if shutil.which("groff"):
    g = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", MAN_PAGE], capture_output=True, text=True)
    expect(g.returncode == 0 and g.stderr == "", f"groff reads the man page without a warning: {g.stderr[:500]}")
if shutil.which("man"):
    g = subprocess.run(["man", "-l", MAN_PAGE], capture_output=True, text=True, env={**os.environ, "MANPAGER": "cat",
                                                                                      "MANWIDTH": "80"})
    expect(g.returncode == 0 and "validate" in g.stdout, "man -l shows the page")

r = run("--bash-completion")
expect(r.returncode == 0 and r.stdout == open(COMPLETION).read(), "the installed completion is what the tool prints", r)
b = subprocess.run(["bash", "-n", COMPLETION], capture_output=True, text=True)
expect(b.returncode == 0, f"bash -n accepts the completion script: {b.stderr}")
completion_dir = tempfile.mkdtemp()
open(os.path.join(completion_dir, "tidal.toml"), "w").close()


def complete(line):
    words = line.split(" ")
    script = (f"source {COMPLETION}\nCOMP_WORDS=({' '.join(repr(w) for w in words)})\nCOMP_CWORD={len(words) - 1}\n"
              f"cd {completion_dir}\n_tidal\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    out = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True)
    return set(out.stdout.split())


# (line, completions wanted, whether exactly those)
for line, want, exact in (("tidal ", {"probe", "config", "validate", "bench", "--help", "--version", "-V"}, False),
                          ("tidal va", {"validate"}, True), ("tidal config ", {"check"}, False),
                          ("tidal validate --si", {"--size"}, True), ("tidal probe --runtime s", {"sim"}, True),
                          ("tidal bench --json ti", {"tidal.toml"}, True), ("tidal config check ti", {"tidal.toml"}, True),
                          ("tidal probe --batch-hint ", set(), True),
                          ("tidal probe --json --c", {"--config"}, True)):
    got = complete(line)
    expect(got == want if exact else want <= got, f"completion of '{line}': {sorted(want)} (got {sorted(got)})")
expect("--man" not in complete("tidal --"), "completion does not offer the hidden build options")

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

# The peer matrix: every pair of the simulated XGMI mesh, as a table and in --json.
mesh = write('runtime = "sim"\n[sim]\nprofile = "xgmi4"\ncapacity = "1GiB"\n')
r = run("probe", "--json", "--config", mesh)
j = json.loads(r.stdout) if r.returncode == 0 else {}
peers = j.get("peers", [])
expect(len(peers) == 16 and all(p["link"] == ("self" if p["device"] == p["peer"] else "xgmi") for p in peers)
       and all(d["peer_mask"] == 15 for d in j["devices"]), "probe --json carries the 4x4 peer matrix", r)
r = run("probe", "--config", mesh)
expect(r.returncode == 0 and "peer matrix" in r.stdout and "xgmi 1h" in r.stdout, "probe prints the peer matrix", r)
# bench --peer on two devices behind a PCIe switch (50 GB/s link on the simulated clock).
switch = write('runtime = "sim"\n[sim]\nprofile = "pcie-switch2"\ncapacity = "1GiB"\n')
r = run("bench", "--peer", "--config", switch, "--max-size", "16MiB", "--reps", "2", "--json", "-")
j = json.loads(r.stdout) if r.returncode == 0 else {}
pairs = j.get("pairs", [])
expect(len(pairs) == 2 and all(45 < p["tidal_peer_on"]["clock_gbs"] < 51 and p["tidal_peer_off"]["clock_gbs"] < 40
                               and "clock_gbs" in p["runtime_peer_on"] for p in pairs)
       and "tidal" in j.get("two_contexts_device0", {}),
       "bench --peer: each pair off and on against the runtime, the link's rate once peer access is on", r)

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
# Atomics on pinned memory with host threads at once, on a device that reports no host-native
# atomics (the H200's profile): none is promised, so every cell carries that reason (exact on the
# simulated device: "exact, although expected to fail"); the device alone is plainly exact.
cells = {k["kind"]: k.get("atomics", {}) for d in j["devices"] for k in d["kinds"]}.get("pinned", {})
expect(len(cells.get("host_and_device", {})) == 19 and
       all("hostNativeAtomicSupported = 0" in c.get("detail", "") for c in cells["host_and_device"].values()) and
       all(c.get("detail") == "exact" for c in cells.get("device", {}).values()),
       "validate --json: pinned host+device atomics name the missing host-native atomics, device-alone ones do not", r)
r = run("validate", "--config", faulty, "--size", "8388608")
expect(r.returncode == 1 and "FAIL" in r.stdout and "validation FAILED" in r.stdout,
       "validate fails (exit 1) when a kernel fails", r)

# Elastic memory: the kernels, an offload/restore round trip, and a kernel on it while offloaded.
elastic = rows.get("elastic", {})
expect(all(elastic.get(c, {}).get("result") == "pass"
           for c in ("alloc", "touch", "pattern", "migrate", "atomics", "offload", "fault")) and
       "same address" in elastic["offload"]["detail"] and "TIDAL_ERROR_ILLEGAL_ACCESS" in elastic["fault"]["detail"],
       "validate --json: elastic memory passes every check, the round trip and the fault included", r)
expect(all(rows[k]["offload"]["result"] == "-" and rows[k]["fault"]["result"] == "-" for k in rows if k != "elastic"),
       "validate --json: offload and fault are elastic memory's own columns", r)
r = run("validate", "--runtime", "sim", "--size", "8MiB")
expect(re.search(r"^  elastic +pass +pass +pass +pass +pass +pass +pass *$", r.stdout, re.M) and
       re.search(r"^  kind +alloc +touch +pattern +migrate +atomics +offload +fault *$", r.stdout, re.M),
       "validate: the elastic row in the table", r)
unmap_fails = write('runtime = "sim"\n[[sim.fault]]\noperation = "vmm_unmap"\nnth = 1\ncount = 0\n'
                    'error = "hipErrorInvalidValue"\n')
r = run("validate", "--config", unmap_fails, "--size", "8MiB", "--json")
j = json.loads(r.stdout) if r.stdout.startswith("{") else {"devices": []}
e = {k["kind"]: k["checks"] for d in j["devices"] for k in d["kinds"]}.get("elastic", {})
expect(r.returncode == 1 and e.get("offload", {}).get("result") == "FAIL" and "offload:" in e["offload"]["detail"] and
       e.get("pattern", {}).get("result") == "pass", "validate: an offload the runtime fails is a FAIL of that check", r)
fake_dir = os.environ.get("TIDAL_TEST_RUNTIME_DIR_FAKE", "")
if not os.path.exists(os.path.join(fake_dir, "tidal-runtime-hip.so")):
    print("skip: validate without a virtual-memory API (the fake HIP module is not built)")
else:
    # The fake HIP module has no virtual-memory group (and no kernels: the other rows fail).
    no_vmm = write(f'runtime = "hip"\nruntime_path = ["{fake_dir}"]\n')
    r = run("validate", "--config", no_vmm, "--size", "8MiB", "--json")
    j = json.loads(r.stdout) if r.stdout.startswith("{") else {"devices": []}
    e = {k["kind"]: k["checks"] for d in j["devices"] for k in d["kinds"]}.get("elastic", {})
    expect(e.get("alloc", {}).get("result") == "unsupported" and "virtual-memory" in e["alloc"]["detail"] and
           e.get("offload", {}).get("result") == "-", "validate: elastic memory is unsupported without a virtual-memory API", r)
    r = run("validate", "--config", no_vmm, "--size", "8MiB")
    expect("elastic / alloc: unsupported" in r.stdout and "virtual-memory" in r.stdout,
           "validate: the table says why elastic memory is unsupported", r)


# tidal bench: the allocation-type table measured through the public API.
r = run("bench", "--help")
expect(r.returncode == 0 and all(o in r.stdout for o in (
    "--quick", "--json", "--csv", "--svg", "--emit-profile", "--sizes", "--min-size", "--max-size", "--reps",
    "--device", "--runtime", "--config", "--no-progress", "vendor", "NOT MEASURED", "stream-ordered")),
    "bench --help documents every option, the backends and the profile fallbacks", r)

r = run("bench", "--quick", "--runtime", "sim", "--json", "-")
j = {}
try:
    j = json.loads(r.stdout) if r.returncode == 0 else {}
except ValueError:
    pass
expect(all(k in j for k in ("runtime", "device", "clock", "date", "settings", "latency", "bandwidth", "managed", "other",
                            "notes")) and j["runtime"] == "sim" and j["clock"] == "simulated",
       "bench --quick --json - prints only JSON, with every section", r)
lat = {(p["kind"], p["bytes"], p["backend"]): p for p in j.get("latency", [])}
expect({k for k, _, _ in lat} == {"device", "managed", "pinned", "pageable"} and {b for _, _, b in lat} == {"runtime", "vendor", "tidal"},
       "bench: latency for every kind and backend", r)
expect(abs((lat.get(("device", 256, "runtime"), {}).get("seconds") or 0) - 3e-06) < 1e-9 and
       abs((lat.get(("pinned", 256, "runtime"), {}).get("seconds") or 0) - 790e-06) < 1e-9,
       "bench: unpooled latencies are the simulated profile's (3 us device, 790 us pinned)", r)
expect(lat.get(("device", 256, "tidal"), {}).get("seconds") == 0, "bench: a pool hit costs no simulated time", r)
vendor = lat.get(("device", 256, "vendor"), {})
expect(vendor.get("seconds") is None and "no stream-ordered pool" in vendor.get("note", ""),
       "bench: the vendor pool is skipped with a note on the simulated device", r)
series = {(p["direction"], p["memory"], p["path"]) for p in j.get("bandwidth", [])}
expect(len(series) == 14 and all(p["gbs"] and p["gbs"] > 0 for p in j.get("bandwidth", [])),
       "bench: nine copy series and the runtime's five event-timed extras, every one measured", r)
# Issue 17: the runtime's copy and tidal_copy are timed the same way (the clock around the call),
# so a direct pinned tidal_copy, which is one runtime copy, reads the runtime's rate at every size;
# the event-timed extra leaves the call out.
bw = {(p["direction"], p["memory"], p["path"], p["bytes"]): p["gbs"] for p in j.get("bandwidth", [])}
sizes = j.get("settings", {}).get("bandwidth_sizes", [])
expect(all(0.97 <= bw[(d, "pinned", "tidal_copy", n)] / bw[(d, "pinned", "runtime", n)] <= 1.03
           for d in ("h2d", "d2h") for n in sizes) if len(series) == 14 and sizes else False,
       "bench: pinned tidal_copy and the runtime's copy, timed alike, run at the same rate", r)
# (The simulated device charges nothing for the call itself, so there the two agree.)
expect(all(bw[(d, "pinned", "rt_events", n)] >= 0.999 * bw[(d, "pinned", "runtime", n)] for d in ("h2d", "d2h") for n in sizes)
       if len(series) == 14 and sizes else False,
       "bench: the event-timed extra leaves the call out, so it is never slower", r)
sizes = j.get("settings", {}).get("bandwidth_sizes", [])
expect(sizes and sizes[0] == 4096 and sizes[-1] == 16 << 20, "bench --quick: copies from 4 KiB to 16 MiB", r)
modes = {p["mode"]: p for p in j.get("managed", []) if p["bytes"] == 16 << 20}
expect(set(modes) == {"demand_paging", "prefetch_h2d", "prefetch_then_touch", "prefetch_d2h"} and
       modes["prefetch_h2d"]["gbs"] > modes["demand_paging"]["gbs"],
       "bench: managed memory, prefetching beats demand paging", r)
expect(all(j.get("other", {}).get(k, {}).get("value") for k in ("kernel_launch", "zero_copy", "host_memcpy")),
       "bench: kernel launch, zero-copy and host memcpy figures", r)
el = {p["mode"]: p for p in j.get("elastic", [])}
expect(set(el) == {"offload", "restore", "runtime_d2h", "runtime_h2d", "home"} and
       all(el[m]["gbs"] and el[m]["gbs"] > 0 and el[m]["bytes"] == 16 << 20 for m in ("offload", "restore", "runtime_d2h", "runtime_h2d")) and
       el["home"]["seconds"] is not None and j.get("settings", {}).get("elastic_size") == 16 << 20,
       "bench --quick: elastic offload and restore rates beside the runtime's copies, 16 MiB", r)
# The simulated H200 charges its pinned copy rate (~55 GB/s) to offload and restore too.
expect(all(0.5 < el[a]["gbs"] / el[b]["gbs"] <= 1.01 for a, b in (("offload", "runtime_d2h"), ("restore", "runtime_h2d")))
       if len(el) == 5 else False, "bench: offload and restore run near the runtime's copy rate on the simulated device", r)
expect("\r" not in r.stderr, "bench: no progress bar when stderr is not a terminal", r)

r = run("bench", "--quick", "--runtime", "sim")
expect(r.returncode == 0 and all(t in r.stdout for t in ("alloc+free pair latency", "copy bandwidth", "managed memory",
                                                         "[SIMULATED DEVICE", "notes:")),
       "bench prints a table by default", r)
expect("both timed on the wall clock" in r.stdout and "rt_events" in r.stdout,
       "bench: the copy table says how each column was timed", r)
expect(re.search(r"^elastic memory, GB/s \(every column timed with tidal_clock", r.stdout, re.M) and
       re.search(r"^16 MiB +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9.]+x +\S", r.stdout, re.M),
       "bench: the elastic table, with the ratios to the runtime's copies and the clock named", r)

work = tempfile.mkdtemp()
csv_path, svg_path, profile_path = (os.path.join(work, n) for n in ("b.csv", "b.svg", "measured.toml"))
r = run("bench", "--quick", "--runtime", "sim", "--csv", csv_path, "--svg", svg_path, "--emit-profile", profile_path)
expect(r.returncode == 0 and os.path.exists(csv_path) and os.path.exists(svg_path) and os.path.exists(profile_path),
       "bench --csv --svg --emit-profile write their files", r)
if os.path.exists(csv_path):
    import csv
    rows = list(csv.DictReader(open(csv_path)))
    expect(rows and set(rows[0]) == {"section", "name", "variant", "bytes", "value", "unit", "note"} and
           {row["section"] for row in rows} == {"latency", "bandwidth", "managed", "elastic", "other"}, "bench --csv: one row per figure")
if os.path.exists(svg_path):
    import xml.etree.ElementTree as ET
    try:
        root = ET.parse(svg_path).getroot()
        texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
        expect(root.tag == "{http://www.w3.org/2000/svg}svg" and "GB/s" in texts and "h2d pinned runtime" in texts
               and "device" in texts and len(list(root.iter("{http://www.w3.org/2000/svg}path"))) >= 9,
               "bench --svg: well-formed SVG with axes, legend and a line per series")
    except ET.ParseError as e:
        expect(False, f"bench --svg parses as XML: {e}")
if os.path.exists(profile_path):
    import tomllib
    emitted = tomllib.load(open(profile_path, "rb"))
    builtin = tomllib.load(open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(EXAMPLE)))),
                                             "core", "runtime", "sim", "profiles", "h200.toml"), "rb"))
    # On the simulated device the measurements read the built-in profile back.
    close = [f"{t}.{k}" for t in ("bandwidth", "latency") for k, v in builtin[t].items()
             if k in emitted[t] and k != "prefetch_h2d_duplicate" and k != "host_memcpy" and
             abs(emitted[t][k] - v) > 0.02 * max(v, 0.01) and
             # zero_copy is timed with a kernel launch and the device-side writes included
             not (k == "zero_copy" and abs(emitted[t][k] - v) < 0.05 * v)]
    expect(not close and emitted["device"]["capacity"] == builtin["device"]["capacity"] and emitted["device"]["xnack"] is True
           and emitted["device"].get("host_native_atomics") is False,
           f"bench --emit-profile on the simulated H200 gives back its profile (differ: {close})")
    cfg = write(f'runtime = "sim"\n[sim]\nprofile = "{profile_path}"\n')
    r = run("config", "check", cfg)
    expect(r.returncode == 0 and profile_path in r.stdout, "the emitted profile loads: [sim] profile = FILE", r)
    r = run("bench", "--quick", "--config", cfg, "--json", "-")
    again = {(p["direction"], p["memory"], p["path"], p["bytes"]): p["gbs"] for p in json.loads(r.stdout)["bandwidth"]} if r.returncode == 0 else {}
    expect(abs(again.get(("h2d", "pinned", "runtime", 16 << 20), 0) - 53.97) < 0.5,
           "bench on the emitted profile measures what the profile says", r)

for args, what, needle in (
        (("--max-size", "12parsecs"), "a bad size", "unknown unit"),
        (("--sizes", "256,0"), "a zero size", "whole number"),
        (("--min-size", "100"), "a copy size that is not a multiple of 8", "multiples of 8"),
        (("--json", "-", "--csv", "-"), "two outputs on standard output", "cannot both"),
        (("--device", "7"), "a device that does not exist", "device 7 does not exist"),
        (("--reps", "0"), "zero repetitions", "reps"),
        (("--svg", os.path.join(work, "no", "such", "folder", "b.svg")), "an unwritable output", "cannot write")):
    r = run("bench", "--quick", "--runtime", "sim", *args)
    expect(r.returncode != 0 and needle in r.stderr, f"bench rejects {what} with a message", r)


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
