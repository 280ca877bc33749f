#!/usr/bin/env python3
"""Fails when a file outside core/runtime/{hip,cuda}/ and kernels/ includes a GPU vendor header.

The house rule (DESIGN.md, DEVELOPERS.md "Layout rules"): the core reaches a GPU only through a
runtime module, tools only through api/tidal/, policies only through policy.h. A vendor header
anywhere else ties that code to one vendor's toolkit and breaks the build without it. The HIP
stand-in lives in core/runtime/hip/standin/ for this reason.

Usage: check_gpu_headers.py SOURCE_ROOT
"""
import re
import sys
from pathlib import Path

ALLOWED = ("core/runtime/hip/", "core/runtime/cuda/", "kernels/")
# Build trees and version control are not sources.
SKIPPED_TOP = {".git", "subprojects"}
VENDOR = re.compile(r'^\s*#\s*include\s*[<"]((hip|nvtx3|roctracer|rocprofiler)/[^>"]*|'
                    r'(cuda|cuda_runtime|cuda_runtime_api|cudaTypedefs|driver_types|nvml|nvToolsExt|roctx)[^/>"]*\.h)[>"]')
SOURCES = {".h", ".hpp", ".c", ".cc", ".cpp", ".cu", ".hip", ".inc", ".F90", ".f90"}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = Path(sys.argv[1])
    problems = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        # Hidden top-level folders (.git, an ignored .device-out of binaries for the GPU machine)
        # are not the project's sources.
        if (rel.parts[0] in SKIPPED_TOP or rel.parts[0].startswith(("build", ".")) or
                path.suffix not in SOURCES):
            continue
        if not path.is_file() or rel.as_posix().startswith(ALLOWED):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = VENDOR.match(line)
            if m:
                problems.append(f"{rel}:{n}: includes <{m.group(1)}>; only {', '.join(ALLOWED)} may")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} GPU header include(s) outside the runtime modules and kernels/")
        return 1
    print("gpu headers ok: only " + ", ".join(ALLOWED) + " include them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
