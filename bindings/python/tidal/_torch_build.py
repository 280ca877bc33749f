"""Compiles torch_allocator.cpp for tidal.torch, once per (source, torch, libtidal) combination.

It must be compiled against the torch package in use: the exception it throws for out of
memory has to be c10's own OutOfMemoryError (from torch's headers, linked with its libc10) for
PyTorch to raise torch.OutOfMemoryError, and c10::Error's std::string members must use torch's
_GLIBCXX_USE_CXX11_ABI. This module does not import torch; tidal.torch passes what it needs, so
the command and cache logic are testable without it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import shlex
import shutil
import subprocess

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_allocator.cpp")


class BuildError(RuntimeError):
    """The shim could not be compiled; the message says what to install or set."""


def find_compiler(env=None) -> list:
    """The C++ compiler as an argv prefix: $CXX (may carry flags), else c++, g++, clang++."""
    env = os.environ if env is None else env
    cxx = env.get("CXX", "").strip()
    if cxx:
        argv = shlex.split(cxx)
        if shutil.which(argv[0]) is None:
            raise BuildError(f"tidal.torch: CXX={cxx!r} names no executable compiler")
        return argv
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return [path]
    raise BuildError("tidal.torch compiles a small C++ file against PyTorch's headers on first use, "
                     "and no C++ compiler was found (c++, g++, clang++): install one (Debian: "
                     "apt install g++) or set CXX")


def _installed_includedir():
    try:
        from . import _install_paths  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _install_paths.INCLUDEDIR


def find_tidal_include(library_path: str, env=None) -> str:
    """The folder holding tidal/tidal.h: $TIDAL_INCLUDE_DIR, the source tree this package sits
    in, the installed includedir, or <libdir>/../include beside the loaded library."""
    env = os.environ if env is None else env
    package = os.path.dirname(os.path.abspath(__file__))
    candidates = []
    if env.get("TIDAL_INCLUDE_DIR"):
        candidates.append(env["TIDAL_INCLUDE_DIR"])
    candidates.append(os.path.normpath(os.path.join(package, "..", "..", "..", "api")))
    installed = _installed_includedir()
    if installed:
        candidates.append(installed)
    libdir = os.path.dirname(os.path.realpath(library_path))
    candidates.append(os.path.normpath(os.path.join(libdir, "..", "include")))
    candidates.append(os.path.normpath(os.path.join(libdir, "..", "..", "include")))
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "tidal", "tidal.h")):
            return folder
    raise BuildError("tidal.torch: tidal/tidal.h not found in " + ", ".join(candidates) +
                     "; set TIDAL_INCLUDE_DIR to the folder that holds tidal/tidal.h")


def cache_dir(env=None) -> str:
    """$TIDAL_CACHE_DIR, else $XDG_CACHE_HOME/tidal, else ~/.cache/tidal."""
    env = os.environ if env is None else env
    if env.get("TIDAL_CACHE_DIR"):
        return env["TIDAL_CACHE_DIR"]
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tidal")


@dataclasses.dataclass(frozen=True)
class ShimInputs:
    """Everything the compiled shim depends on."""
    compiler: tuple            # argv prefix
    torch_version: str
    cxx11_abi: int             # torch._C._GLIBCXX_USE_CXX11_ABI
    torch_include_dirs: tuple
    torch_lib_dir: str         # holds libc10.so
    libtidal: str              # the file the Python package loaded
    tidal_include_dir: str
    cxx_std: str = "c++20"     # torch >= 2.12 headers need C++20; older ones compile as C++20 too

    def key(self) -> str:
        """A hash of the inputs and of the files' contents, naming the cached build."""
        h = hashlib.sha256()
        with open(SOURCE, "rb") as f:
            h.update(f.read())
        with open(os.path.join(self.tidal_include_dir, "tidal", "tidal.h"), "rb") as f:
            h.update(f.read())
        stat = os.stat(self.libtidal)
        for part in (*self.compiler, self.torch_version, str(self.cxx11_abi), *self.torch_include_dirs,
                     self.torch_lib_dir, os.path.realpath(self.libtidal), str(stat.st_mtime_ns),
                     str(stat.st_size), self.cxx_std):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()[:20]


def command(inputs: ShimInputs, output: str) -> list:
    """The compiler command that builds the shim into `output`."""
    libtidal_dir = os.path.dirname(os.path.realpath(inputs.libtidal))
    argv = [*inputs.compiler, f"-std={inputs.cxx_std}", "-O2", "-fPIC", "-shared",
            f"-D_GLIBCXX_USE_CXX11_ABI={int(inputs.cxx11_abi)}"]
    for folder in inputs.torch_include_dirs:
        argv += ["-isystem", folder]   # torch's headers warn under -Wall; they are not ours to fix
    argv += ["-I", inputs.tidal_include_dir, SOURCE, "-o", output,
             "-L", inputs.torch_lib_dir, "-lc10",
             # The exact file the Python package loaded: the linker records its soname, and the
             # dynamic linker then reuses that already-loaded library instead of a second copy.
             os.path.realpath(inputs.libtidal),
             f"-Wl,-rpath,{inputs.torch_lib_dir}", f"-Wl,-rpath,{libtidal_dir}"]
    return argv


def build(inputs: ShimInputs, env=None) -> str:
    """The path of the compiled shim, compiling it unless the cache already holds it."""
    folder = cache_dir(env)
    output = os.path.join(folder, f"tidal_torch_allocator-{inputs.key()}.so")
    if os.path.isfile(output):
        return output
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise BuildError(f"tidal.torch: cannot create the cache folder {folder}: {e}; "
                         "set TIDAL_CACHE_DIR to a writable folder") from e
    # Built under a private name and renamed: processes starting together (one per GPU) may
    # build at once, and none must load a half-written file.
    partial = f"{output}.{os.getpid()}.tmp"
    argv = command(inputs, partial)
    try:
        result = subprocess.run(argv, capture_output=True, text=True)
    except OSError as e:
        raise BuildError(f"tidal.torch: cannot run the compiler {argv[0]}: {e}") from e
    if result.returncode != 0:
        try:
            os.unlink(partial)
        except OSError:
            pass
        raise BuildError("tidal.torch: compiling the PyTorch allocator shim failed:\n  " +
                         shlex.join(argv) + "\n" + (result.stderr or result.stdout)[-4000:])
    os.replace(partial, output)
    return output
