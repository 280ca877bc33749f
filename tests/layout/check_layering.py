#!/usr/bin/env python3
"""Fails when a folder of core/ includes a folder above it (or beside it) in the layering.

The core's folders form layers, lowest first. A file may include its own folder and the folders
of lower layers; folders of one layer are independent of each other. So a cycle between two
folders (policy/ <-> runtime/ once did it through shared-object loading and the options view)
cannot come back unnoticed. Every `#include "x/..."` line of every file under core/ is checked;
a folder of core/ missing from LAYERS, or an include naming a folder nobody knows, fails too,
so a new folder has to be placed in the order on purpose.

Usage: check_layering.py CORE_DIR
"""
import re
import sys
from pathlib import Path

# Lowest first. The files at core/'s root (capi.cpp, context.*) sit above every layer.
LAYERS = [
    ["sync", "status"],                 # no core includes (status: Error, LastError)
    ["log", "abi"],                     # log: Logger, LogLevel; abi: growable structs
    ["config"],                         # TOML -> Settings
    ["plugin", "registry"],             # plugin: SharedLibrary + OptionsView, for policies and runtimes
    ["runtime", "policy"],              # both load plugins; neither knows the other
    ["pool"],                           # over the runtime
    ["copy", "migration", "validation"],
    ["elastic"],                        # elastic memory: chunks over the runtime's vmm group, moved by copy/
    ["telemetry"],                      # statistics snapshot, leak report: reads the counters below
    ["trace"],                          # TIDAL_TRACE: API events as JSON lines, written by a background thread
]

# Includes outside core/ that any folder may use.
OUTSIDE = {"tidal"}  # api/tidal/*.h

# Known upward includes, by file: none. (status/error_table.* was one until it moved into
# runtime/.) An entry whose file is gone is only reported, so that it can be deleted.
EXCEPTIONS: dict[str, set[str]] = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = {".h", ".hpp", ".cpp", ".c", ".cc", ".inc"}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    core = Path(sys.argv[1])
    level = {}
    for i, layer in enumerate(LAYERS):
        for folder in layer:
            level[folder] = i
    top = len(LAYERS)

    problems = []
    for d in sorted(p.name for p in core.iterdir() if p.is_dir()):
        if d not in level and not d.startswith("."):
            problems.append(f"core/{d}/ is in no layer: add it to LAYERS in {Path(__file__).name}")

    used = set()
    for path in sorted(core.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        rel = path.relative_to(core)
        own = rel.parts[0] if len(rel.parts) > 1 else None
        own_level = level.get(own, top) if own else top
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or "/" not in m.group(1):
                continue  # "x.h": a file beside it or on the kernels' include path
            target = m.group(1).split("/")[0]
            where = f"core/{rel}:{n}: #include \"{m.group(1)}\""
            if target in OUTSIDE or target == own:
                continue
            if target == "..":
                problems.append(f"{where}: name the folder from core/, not with ..")
                continue
            if target not in level:
                problems.append(f"{where}: {target}/ is no folder of core/ this check knows")
                continue
            if target in EXCEPTIONS.get(rel.as_posix(), set()):
                used.add(rel.as_posix())
                continue
            if level[target] >= own_level:
                how = "beside it" if level[target] == own_level else "above it"
                problems.append(f"{where}: {own}/ includes {target}/, which is {how} in the layering")

    for name in sorted(EXCEPTIONS):
        if name not in used:
            print(f"note: the exception for core/{name} is no longer needed: delete it")

    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering problem(s); the order is LAYERS in {Path(__file__).resolve()}")
        return 1
    print("layering ok: " + " < ".join("{" + ", ".join(l) + "}" for l in LAYERS) + " < core/*.cpp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
