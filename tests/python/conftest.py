"""Shared fixtures: every test runs on the simulated device with its own configuration string.

meson passes TIDAL_LIBRARY (the built libtidal), TIDAL_INCLUDE_DIR (api/) and PYTHONPATH
(bindings/python). Any other TIDAL_* variable a developer has set (TIDAL_CONFIG,
TIDAL_SIM_DEVICES...) is removed before tidal is imported, so it cannot change a result.
"""
import os
import pathlib

import pytest

_KEEP = ("TIDAL_LIBRARY", "TIDAL_INCLUDE_DIR", "TIDAL_LOG_LEVEL", "TIDAL_CACHE_DIR",
         "TIDAL_TEST_RUNTIME_DIR_FAKE")
for _name in [n for n in os.environ if n.startswith("TIDAL_") and n not in _KEEP]:
    del os.environ[_name]
os.environ.setdefault("TIDAL_LOG_LEVEL", "error")

import tidal  # noqa: E402  (after the environment is clean)

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
SIM = 'runtime = "sim"\n'
MiB = 1 << 20


def sim_config(extra: str = "") -> str:
    """A configuration for the simulated device, plus `extra` TOML."""
    return SIM + extra


@pytest.fixture
def ctx():
    """A context on one simulated H200."""
    with tidal.Context(sim_config()) as c:
        yield c


@pytest.fixture
def include_dir():
    """The folder holding tidal/tidal.h for the library under test."""
    return pathlib.Path(os.environ.get("TIDAL_INCLUDE_DIR", SOURCE_ROOT / "api"))


@pytest.fixture
def amd_profile(tmp_path):
    """A hardware profile of an AMD GPU for the simulated device, where the fine- and
    coarse-grained kinds exist. The figures are placeholders: these tests measure nothing."""
    path = tmp_path / "amd.toml"
    path.write_text(
        'name = "amd-test"\n'
        "[device]\n"
        'name = "AMD test GPU (simulated)"\n'
        'vendor = "amd"\n'
        'arch = "gfx90a:sramecc+:xnack+"\n'
        'capacity = "1GiB"\n'
        'page_size = "2MiB"\n'
        'l2_size = "8MiB"\n'
        "xnack = true\n"
        "[bandwidth]\n"
        "h2d_pageable = 10.0\nh2d_pinned = 25.0\nd2h_pageable = 10.0\nd2h_pinned = 25.0\n"
        "d2d = 1300.0\nprefetch_h2d = 20.0\nprefetch_d2h = 10.0\nfault = 5.0\nzero_copy = 5.0\n"
        "host_memcpy = 20.0\n"
        "[latency]\n"
        "copy = 10.0\nkernel_launch = 5.0\nfault = 0.0\nalloc_device = 3.0\nalloc_pinned = 500.0\n"
        "alloc_managed = 20.0\n")
    return path
