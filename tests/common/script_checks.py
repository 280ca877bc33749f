"""What the test scripts that drive tidal's programs share: running a program with the caller's
TIDAL_* environment cleared (but for the variables a script keeps), and checks that print
"ok:" or "FAIL:" with the program's output and are counted for the exit status.

A script finds this module through its own path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
"""
import os
import subprocess

failures = []


def environment(keep=("TIDAL_LOG_LEVEL", "TIDAL_POLICY_PATH"), **extra):
    """os.environ without TIDAL_* variables other than `keep`, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIDAL_") or k in keep}
    env.update(extra)
    return env


def run(cmd, keep=("TIDAL_LOG_LEVEL", "TIDAL_POLICY_PATH"), timeout=240, **extra):
    """`cmd` (a list) with environment(keep, **extra), its output captured as text."""
    return subprocess.run(cmd, capture_output=True, text=True, env=environment(keep, **extra), timeout=timeout)


def expect(cond, what, result=None):
    """Prints and counts one check; `result` (a CompletedProcess) adds the end of its output."""
    if cond:
        print("ok:", what)
        return
    detail = f"\n  stdout: {result.stdout[-3000:]}\n  stderr: {result.stderr[-2000:]}" if result is not None else ""
    failures.append(what + detail)
    print("FAIL:", what + detail)
