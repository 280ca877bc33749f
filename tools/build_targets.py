#!/usr/bin/env python3
"""What a configured meson build folder has to compile to run some of its test suites: every
target it builds by default, less the test programs (those defined under tests/) that only the
other suites' tests run. One ninja target per line, relative to the folder. Benchmarks, examples
and everything `meson install` installs are kept.

    build_targets.py BUILD_DIR SUITE...

tools/run-tests.sh runs only a few suites in its normal build and the rest in the sanitizer
build: without this, the normal build compiled the unit tests and the other suites' programs for
nothing (~100 of its ~530 compile-seconds on 2 cores). The `install` suite installs with
--no-rebuild, so what is installed must be built.
"""
import json
import os
import sys


def source_dir(info):
    with open(os.path.join(info, "meson-info.json")) as f:
        return json.load(f)["directories"]["source"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, suites = sys.argv[1], set(sys.argv[2:])
    info = os.path.join(build, "meson-info")
    with open(os.path.join(info, "intro-targets.json")) as f:
        targets = json.load(f)
    with open(os.path.join(info, "intro-tests.json")) as f:
        tests = json.load(f)

    def selected(test):  # suites are listed as "project:suite"
        return any(s.split(":", 1)[-1] in suites for s in test["suite"])

    wanted = {d for t in tests if selected(t) for d in t["depends"]}
    others = {d for t in tests if not selected(t) for d in t["depends"]}
    root = os.path.abspath(build)
    tests_dir = os.path.join(source_dir(info), "tests") + os.sep

    def test_program(t):
        return t["defined_in"].startswith(tests_dir) and not t["installed"]

    for t in targets:
        if t["build_by_default"] and not (test_program(t) and t["id"] in others and t["id"] not in wanted):
            for f in t["filename"]:
                print(os.path.relpath(f, root))


if __name__ == "__main__":
    main()
