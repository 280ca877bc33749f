"""tidal.torch without a GPU: the import's behaviour, and the shim's build (compiler and header
lookup, command line, cache key) — everything that does not need torch itself. The allocator
proper runs on a GPU machine: tools/bench/torch_training.py."""
import importlib
import importlib.util
import os
import pathlib
import re
import sys

import pytest
import tidal
from tidal import _torch_build

HAVE_TORCH = importlib.util.find_spec("torch") is not None


@pytest.mark.skipif(HAVE_TORCH, reason="torch is installed: the missing-torch message cannot be seen")
def test_import_without_torch_says_what_is_missing():
    with pytest.raises(ImportError, match="tidal.torch needs PyTorch"):
        importlib.import_module("tidal.torch")
    assert tidal.Context  # the package itself stays usable


def test_shim_source_ships_with_the_package():
    source = pathlib.Path(_torch_build.SOURCE)
    assert source.parent == pathlib.Path(tidal.__file__).parent
    text = source.read_text()
    for symbol in ("tidal_torch_malloc", "tidal_torch_free", "tidal_torch_attach",
                   "tidal_torch_stats_get", "tidal_torch_reset_peak", "tidal_torch_libtidal_entry",
                   "tidal_torch_shutdown"):
        assert re.search(r"TIDAL_TORCH_EXPORT [^(]*\b" + symbol + r"\(", text), symbol
    assert "OutOfMemoryError" in text and "tidal_alloc_async" in text and "tidal_free_async" in text


def test_compiler_from_cxx_with_flags(tmp_path):
    fake = tmp_path / "my-c++"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert _torch_build.find_compiler({"CXX": f"{fake} -fno-plt"}) == [str(fake), "-fno-plt"]


def test_missing_compiler_is_a_clear_error(monkeypatch):
    with pytest.raises(_torch_build.BuildError, match="names no executable compiler"):
        _torch_build.find_compiler({"CXX": "/nonexistent/c++"})
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(_torch_build.BuildError, match="no C\\+\\+ compiler was found"):
        _torch_build.find_compiler({})


def test_header_lookup(include_dir):
    lib = tidal.library_path()
    assert _torch_build.find_tidal_include(lib, {"TIDAL_INCLUDE_DIR": str(include_dir)}) == str(include_dir)
    # Without the variable, the source tree the package sits in has api/tidal/tidal.h.
    found = pathlib.Path(_torch_build.find_tidal_include(lib, {}))
    assert (found / "tidal" / "tidal.h").is_file()


def test_missing_header_is_a_clear_error(tmp_path):
    # The module copied away from any source tree or install, beside a library with no include/.
    copy = tmp_path / "site" / "tidal" / "_torch_build.py"
    copy.parent.mkdir(parents=True)
    copy.write_text(pathlib.Path(_torch_build.__file__).read_text())
    spec = importlib.util.spec_from_file_location("tidal_build_copy", copy)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    with pytest.raises(module.BuildError, match="set TIDAL_INCLUDE_DIR"):
        module.find_tidal_include(str(tmp_path / "lib" / "libtidal.so"), {"TIDAL_INCLUDE_DIR": str(tmp_path)})


def test_cache_dir(tmp_path):
    assert _torch_build.cache_dir({"TIDAL_CACHE_DIR": str(tmp_path)}) == str(tmp_path)
    assert _torch_build.cache_dir({"XDG_CACHE_HOME": "/x"}) == "/x/tidal"
    assert _torch_build.cache_dir({}).endswith(os.path.join(".cache", "tidal"))


def inputs(include_dir, **changes):
    base = dict(compiler=("g++",), torch_version="2.11.0+cu130", cxx11_abi=1,
                torch_include_dirs=("/t/include", "/t/include/torch/csrc/api/include"),
                torch_lib_dir="/t/lib", libtidal=tidal.library_path(),
                tidal_include_dir=str(include_dir))
    base.update(changes)
    return _torch_build.ShimInputs(**base)


def test_build_command(include_dir):
    argv = _torch_build.command(inputs(include_dir), "/cache/out.so")
    joined = " ".join(argv)
    assert argv[0] == "g++"
    for flag in ("-std=c++20", "-O2", "-fPIC", "-shared", "-D_GLIBCXX_USE_CXX11_ABI=1", "-lc10",
                 "-isystem /t/include", "-L /t/lib", "-Wl,-rpath,/t/lib", "-o /cache/out.so",
                 f"-I {include_dir}", _torch_build.SOURCE):
        assert flag in joined, flag
    libtidal = os.path.realpath(tidal.library_path())
    assert libtidal in argv and f"-Wl,-rpath,{os.path.dirname(libtidal)}" in argv
    old_abi = _torch_build.command(inputs(include_dir, cxx11_abi=0, cxx_std="c++17"), "o.so")
    assert "-D_GLIBCXX_USE_CXX11_ABI=0" in old_abi and "-std=c++17" in old_abi


def test_cache_key_follows_every_input(include_dir):
    key = inputs(include_dir).key()
    assert key == inputs(include_dir).key()
    for change in ({"torch_version": "2.12.0"}, {"cxx11_abi": 0}, {"compiler": ("clang++",)},
                   {"torch_lib_dir": "/u/lib"}, {"cxx_std": "c++17"}):
        assert inputs(include_dir, **change).key() != key, change


def test_failed_build_reports_the_command_and_leaves_no_file(tmp_path, include_dir):
    # `false` stands in for a compiler that fails: the error must carry the command line.
    with pytest.raises(_torch_build.BuildError, match="compiling the PyTorch allocator shim failed"):
        _torch_build.build(inputs(include_dir, compiler=("false",)), {"TIDAL_CACHE_DIR": str(tmp_path)})
    assert list(tmp_path.iterdir()) == []
