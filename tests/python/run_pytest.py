"""Runs the Python package's tests (meson test --suite python).
Usage: run_pytest.py TEST_FOLDER. Exit status 77, which meson reports as skipped, when pytest
is not installed for this interpreter (Debian: python3-pytest)."""
import sys

try:
    import pytest
except ImportError:
    print(f"pytest is not installed for {sys.executable}; on Debian: apt install python3-pytest")
    sys.exit(77)

# No cache folder and no bytecode in the source tree: the tests run from it.
sys.dont_write_bytecode = True
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-rfE", sys.argv[1]]))
