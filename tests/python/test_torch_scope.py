"""tidal.torch.tag without torch: the scope stack and the kind rule (tidal/_torch_scope.py),
and the allocator shim's side of them, compiled against a stand-in for torch's one header
(c10/util/Exception.h) and an empty libc10, then called the way PyTorch calls it, on the
simulated device. The real torch path runs on a GPU: tests/device/test_torch_gpu.py."""
import ctypes
import os
import shutil
import subprocess
import threading

import pytest
import tidal
from tidal import _torch_build, _torch_scope

from conftest import SOURCE_ROOT, MiB, sim_config

ELASTIC = sim_config('[elastic]\nchunk_size = "4MiB"\n[pool]\nenabled = false\n')


# ----------------------------------------------------------------------------- pure Python
def test_kind_rule():
    assert _torch_scope.make_scope("weights").kind == _torch_scope.PREFER_ELASTIC
    assert _torch_scope.make_scope("w", kind="auto").kind == tidal.Kind.AUTO
    assert _torch_scope.make_scope("w", kind="device").kind == tidal.Kind.DEVICE
    assert _torch_scope.make_scope("w", kind=tidal.Kind.ELASTIC).kind == tidal.Kind.ELASTIC
    assert _torch_scope.make_scope("w", min_bytes=MiB).min_bytes == MiB


def test_bad_scopes():
    with pytest.raises(ValueError, match="unknown memory kind"):
        _torch_scope.make_scope("w", kind="fast")
    with pytest.raises(ValueError, match="pageable"):
        _torch_scope.make_scope("w", kind="pageable")
    with pytest.raises(ValueError, match="not a valid Kind"):
        _torch_scope.make_scope("w", kind=99)
    with pytest.raises(ValueError, match="at most 63"):
        _torch_scope.make_scope("x" * 64)
    assert _torch_scope.make_scope("x" * 63).tag == "x" * 63
    with pytest.raises(ValueError, match="NUL"):
        _torch_scope.make_scope("a\0b")
    with pytest.raises(TypeError):
        _torch_scope.make_scope(b"weights")
    with pytest.raises(ValueError, match="min_bytes"):
        _torch_scope.make_scope("w", min_bytes=-1)


def test_scopes_nest_and_belong_to_their_thread():
    stack = _torch_scope.ScopeStack()
    applied = []
    outer, inner = _torch_scope.make_scope("model"), _torch_scope.make_scope("kv", kind="device")
    with stack.entered(outer, applied.append):
        with stack.entered(inner, applied.append):
            assert stack.current() is inner
            seen = []
            t = threading.Thread(target=lambda: seen.append(stack.current()))
            t.start()
            t.join()
            assert seen == [None]
        assert stack.current() is outer
    assert stack.current() is None
    assert applied == [outer, inner, outer, None]


def test_a_failing_block_still_leaves_the_scope():
    stack = _torch_scope.ScopeStack()
    applied = []
    with pytest.raises(RuntimeError):
        with stack.entered(_torch_scope.make_scope("w"), applied.append):
            raise RuntimeError("boom")
    assert stack.current() is None and applied[-1] is None


# ----------------------------------------------------------------------------- the shim
STAND_IN = """#pragma once
// The two macros torch_allocator.cpp uses, for a test without torch.
#include <stdexcept>
#define TORCH_CHECK(cond, ...) do { if (!(cond)) throw std::runtime_error("TORCH_CHECK"); } while (0)
#define TORCH_CHECK_WITH(type, cond, ...) TORCH_CHECK(cond)
"""


@pytest.fixture(scope="module")
def shim_path(tmp_path_factory):
    try:
        compiler = _torch_build.find_compiler()
    except _torch_build.BuildError as e:
        pytest.skip(str(e))
    root = tmp_path_factory.mktemp("torch-stand-in")
    (root / "include" / "c10" / "util").mkdir(parents=True)
    (root / "include" / "c10" / "util" / "Exception.h").write_text(STAND_IN)
    (root / "lib").mkdir()
    (root / "empty.cpp").write_text("")
    subprocess.run([*compiler, "-shared", "-fPIC", str(root / "empty.cpp"), "-o", str(root / "lib" / "libc10.so")],
                   check=True, capture_output=True)
    inputs = _torch_build.ShimInputs(
        compiler=tuple(compiler), torch_version="stand-in", cxx11_abi=1,
        torch_include_dirs=(str(root / "include"),), torch_lib_dir=str(root / "lib"),
        libtidal=tidal.library_path(),
        tidal_include_dir=os.environ.get("TIDAL_INCLUDE_DIR", str(SOURCE_ROOT / "api")))
    out = root / "shim.so"
    built = subprocess.run(_torch_build.command(inputs, str(out)), capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return out


def load_shim(path, copy_to=None):
    # A copy under another name is a separate instance with its own global state.
    if copy_to is not None:
        shutil.copy(path, copy_to)
        path = copy_to
    shim = ctypes.CDLL(str(path))
    shim.tidal_torch_attach.argtypes = [ctypes.c_void_p]
    shim.tidal_torch_scope_set.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64]
    shim.tidal_torch_scope_set.restype = None
    shim.tidal_torch_malloc.argtypes = [ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    shim.tidal_torch_malloc.restype = ctypes.c_void_p
    shim.tidal_torch_free.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    shim.tidal_torch_free.restype = None
    return shim


def set_scope(shim, scope):
    if scope is None:
        shim.tidal_torch_scope_set(None, 0, 0)
    else:
        shim.tidal_torch_scope_set(scope.tag.encode(), scope.kind, scope.min_bytes)


@pytest.fixture
def attached(shim_path, tmp_path):
    shim = load_shim(shim_path, tmp_path / "shim-sim.so")
    with tidal.Context(ELASTIC) as ctx:
        shim.tidal_torch_attach(ctx.handle)
        yield shim, ctx
        shim.tidal_torch_attach(None)


def test_scope_tags_and_makes_tensors_elastic(attached):
    shim, ctx = attached
    stack = _torch_scope.ScopeStack()
    plain = shim.tidal_torch_malloc(MiB, 0, None)
    with stack.entered(_torch_scope.make_scope("weights", min_bytes=64 * 1024), lambda s: set_scope(shim, s)):
        big = shim.tidal_torch_malloc(6 * MiB, 0, None)
        small = shim.tidal_torch_malloc(4096, 0, None)
        with stack.entered(_torch_scope.make_scope("kv", kind="device"), lambda s: set_scope(shim, s)):
            kv = shim.tidal_torch_malloc(MiB, 0, None)
        after_inner = shim.tidal_torch_malloc(MiB, 0, None)
    outside = shim.tidal_torch_malloc(MiB, 0, None)
    expected = {plain: (tidal.Kind.DEVICE, "torch"), big: (tidal.Kind.ELASTIC, "weights"),
                small: (tidal.Kind.DEVICE, "weights"), kv: (tidal.Kind.DEVICE, "kv"),
                after_inner: (tidal.Kind.ELASTIC, "weights"), outside: (tidal.Kind.DEVICE, "torch")}
    for ptr, (kind, tag) in expected.items():
        info = ctx.query(ptr)
        assert (info.kind, info.tag) == (kind, tag)

    # Offload and restore by the scope's tag: the elastic tensors keep their addresses.
    ctypes.memset(big, 0x5A, 6 * MiB)
    r = ctx.offload("weights")
    assert r.allocations == 2 and ctx.query(big).offloaded_bytes == 6 * MiB  # 2 MiB granularity
    r = ctx.restore("weights")
    assert r.allocations == 2 and ctx.query(big).base == big
    assert ctypes.string_at(big, 6 * MiB) == b"\x5a" * (6 * MiB)
    ctx.offload("weights")  # PyTorch may free a tensor while it is offloaded
    for ptr in expected:
        shim.tidal_torch_free(ptr, MiB, 0, None)


def test_scope_is_per_thread(attached):
    shim, ctx = attached
    shim.tidal_torch_scope_set(b"weights", _torch_scope.PREFER_ELASTIC, 0)
    try:
        got = []
        t = threading.Thread(target=lambda: got.append(shim.tidal_torch_malloc(MiB, 0, None)))
        t.start()
        t.join()
        assert ctx.query(got[0]).tag == "torch"
        shim.tidal_torch_free(got[0], MiB, 0, None)
    finally:
        shim.tidal_torch_scope_set(None, 0, 0)


def test_without_virtual_memory_a_scope_falls_back_to_auto(shim_path, tmp_path):
    fake = os.environ.get("TIDAL_TEST_RUNTIME_DIR_FAKE")
    if not fake:
        pytest.skip("TIDAL_TEST_RUNTIME_DIR_FAKE (the fake runtime with no virtual-memory group) is not set")
    shim = load_shim(shim_path, tmp_path / "shim-fake.so")
    with tidal.Context(f'runtime = "hip"\nruntime_path = ["{fake}"]\n') as ctx:
        shim.tidal_torch_attach(ctx.handle)
        shim.tidal_torch_scope_set(b"weights", _torch_scope.PREFER_ELASTIC, 0)
        try:
            ptrs = [shim.tidal_torch_malloc(MiB, 0, None) for _ in range(2)]
            for p in ptrs:
                info = ctx.query(p)
                assert info.kind != tidal.Kind.ELASTIC and info.tag == "weights"
            assert ctx.offload("weights").allocations == 0
            for p in ptrs:
                shim.tidal_torch_free(p, MiB, 0, None)
        finally:
            shim.tidal_torch_scope_set(None, 0, 0)
            shim.tidal_torch_attach(None)
