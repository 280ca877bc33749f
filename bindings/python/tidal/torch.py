"""PyTorch on a tidal policy: tidal as PyTorch's CUDA allocator.

    import torch, tidal.torch
    tidal.torch.install()             # before PyTorch initialises CUDA
    x = torch.randn(4096, 4096, device="cuda")   # placed by tidal's policy chain
    print(tidal.torch.memory_stats())

install() creates a tidal context from the configuration (TOML text or a file; by default
the file named by TIDAL_CONFIG) — its policies decide whether tensors become device or managed
memory, and [migration] budget limits managed memory — then hands PyTorch the allocator of
torch_allocator.cpp through torch.cuda.memory.CUDAPluggableAllocator. That small C++ file is
compiled on first use against the installed torch (cached in $TIDAL_CACHE_DIR or
~/.cache/tidal), so a C++ compiler is needed once.

Running out of memory raises torch.OutOfMemoryError carrying tidal's message. PyTorch's own
torch.cuda.memory_stats() does not work with a pluggable allocator: use memory_stats() here.

Offload and restore by tag, every tensor keeping its data_ptr():

    with tidal.torch.tag("weights"):          # elastic memory where the runtime can
        model = MyModel().cuda()
    tidal.torch.offload("weights")            # the device memory is free for anything else
    tidal.torch.offload("kv", discard=True)   # drops the contents instead
    tidal.torch.restore("weights")            # same addresses, same bytes

How a scope chooses each tensor's kind is said in tidal/_torch_scope.py (and the README).
"""
from __future__ import annotations

import atexit
import ctypes
import dataclasses
import os
import threading

try:
    import torch
except ImportError as _e:
    raise ImportError(f"tidal.torch needs PyTorch, which could not be imported ({_e}); install "
                      "torch, or use the tidal package alone") from _e

from . import _torch_build, _torch_scope
from ._native import lib
from .context import Context, ElasticResult
from .enums import Kind, Offload, Restore

__all__ = ["install", "is_installed", "context", "memory_stats", "reset_peak_memory_stats",
           "empty_cache", "tag", "offload", "restore", "BuildError"]

BuildError = _torch_build.BuildError


class _ShimStats(ctypes.Structure):
    # Mirrors struct tidal_torch_stats in torch_allocator.cpp.
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "allocations", "frees", "ooms", "failures", "free_failures", "current_bytes",
        "peak_bytes", "allocated_bytes", "freed_bytes")]


class _Installed:
    def __init__(self, config, ctx, shim, allocator, path):
        self.config = config
        self.context = ctx
        self.shim = shim
        self.allocator = allocator   # PyTorch keeps only a C++ reference: keep the Python one too
        self.path = path


_lock = threading.Lock()
_installed = None


def _shim_inputs() -> _torch_build.ShimInputs:
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    try:
        # Imports setuptools in some torch versions; torch/include is the answer it gives anyway.
        from torch.utils import cpp_extension
        include_dirs = tuple(cpp_extension.include_paths())
    except Exception:
        include_dirs = (os.path.join(torch_dir, "include"),)
    return _torch_build.ShimInputs(
        compiler=tuple(_torch_build.find_compiler()),
        torch_version=str(torch.__version__),
        cxx11_abi=int(torch._C._GLIBCXX_USE_CXX11_ABI),
        torch_include_dirs=include_dirs,
        torch_lib_dir=os.path.join(torch_dir, "lib"),
        libtidal=lib.path,
        tidal_include_dir=_torch_build.find_tidal_include(lib.path),
        cxx_std=os.environ.get("TIDAL_TORCH_CXX_STD", "c++20"),
    )


def _load_shim(path: str):
    shim = ctypes.CDLL(path)
    shim.tidal_torch_attach.argtypes = [ctypes.c_void_p]
    shim.tidal_torch_attach.restype = None
    shim.tidal_torch_libtidal_entry.argtypes = []
    shim.tidal_torch_libtidal_entry.restype = ctypes.c_void_p
    shim.tidal_torch_stats_get.argtypes = [ctypes.c_int, ctypes.POINTER(_ShimStats)]
    shim.tidal_torch_stats_get.restype = ctypes.c_int
    shim.tidal_torch_reset_peak.argtypes = [ctypes.c_int]
    shim.tidal_torch_reset_peak.restype = ctypes.c_int
    shim.tidal_torch_shutdown.argtypes = []
    shim.tidal_torch_shutdown.restype = None
    shim.tidal_torch_scope_set.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64]
    shim.tidal_torch_scope_set.restype = None
    mine = lib.address_of("tidal_alloc_async")
    theirs = shim.tidal_torch_libtidal_entry()
    if mine != theirs:
        raise RuntimeError(f"tidal.torch: the allocator {path} loaded a second libtidal instead of "
                           f"{lib.path}; point TIDAL_LIBRARY and LD_LIBRARY_PATH at the same build")
    return shim


def _expected_runtime() -> str:
    return "hip" if getattr(torch.version, "hip", None) else "cuda"


def install(config=None) -> Context:
    """Makes tidal PyTorch's CUDA allocator and returns the tidal Context behind it.

    `config`: TOML text or a file path (see tidal.Context); None reads the file named by
    TIDAL_CONFIG, or uses tidal's defaults (device memory, pooled). Must run before PyTorch
    initialises CUDA — before the first CUDA tensor, torch.cuda.init(), mem_get_info() and the
    like. Calling it again with the same configuration (or none) returns the same context.
    """
    global _installed
    with _lock:
        if _installed is not None:
            if config is None or config == _installed.config:
                return _installed.context
            raise RuntimeError("tidal.torch.install() already ran in this process with another "
                               "configuration; PyTorch's allocator can be chosen only once")
        if torch.cuda.is_initialized():
            raise RuntimeError("tidal.torch.install() must run before PyTorch initialises CUDA "
                               "(its first CUDA tensor, torch.cuda.init(), mem_get_info()...): "
                               "PyTorch cannot swap an allocator it has started using")
        ctx = Context(config)
        try:
            info = ctx.system_info()
            wanted = _expected_runtime()
            if info.runtime != wanted:
                raise RuntimeError(
                    f"tidal.torch: tidal's context runs on the {info.runtime} runtime "
                    f"({info.runtime_detail}), but PyTorch needs {wanted} memory: set runtime = "
                    f"\"{wanted}\" (or \"auto\" on a machine whose GPU tidal can use) in the "
                    "configuration")
            path = _torch_build.build(_shim_inputs())
            shim = _load_shim(path)
            shim.tidal_torch_attach(ctx.handle)
            try:
                allocator = torch.cuda.memory.CUDAPluggableAllocator(
                    path, "tidal_torch_malloc", "tidal_torch_free")
                torch.cuda.memory.change_current_allocator(allocator)
            except RuntimeError as e:
                shim.tidal_torch_attach(None)
                raise RuntimeError(f"tidal.torch: PyTorch refused the tidal allocator ({e}); "
                                   "install() must run before PyTorch initialises CUDA") from e
        except BaseException:
            ctx.close()
            raise
        # PyTorch frees tensors during interpreter teardown and from its static destructors,
        # possibly after libtidal's own: the context is never destroyed, and frees stop once
        # the interpreter exits (the process's end returns the memory).
        ctx.keep_alive_at_exit()
        atexit.register(shim.tidal_torch_shutdown)
        _installed = _Installed(config, ctx, shim, allocator, path)
        return ctx


def is_installed() -> bool:
    """Whether install() has made tidal PyTorch's allocator in this process."""
    return _installed is not None


def context() -> Context:
    """The tidal Context behind PyTorch's allocator."""
    return _require().context


def _require() -> _Installed:
    if _installed is None:
        raise RuntimeError("tidal.torch.install() has not been called in this process")
    return _installed


def _device_index(device) -> int:
    if device is None:
        return torch.cuda.current_device()
    if isinstance(device, int):
        return device
    d = torch.device(device)
    if d.type != "cuda":
        raise ValueError(f"tidal.torch: {device!r} is not a CUDA device")
    return torch.cuda.current_device() if d.index is None else d.index


def _pool_entries(prefix: str, stats) -> dict:
    return {f"{prefix}.{k}": v for k, v in dataclasses.asdict(stats).items()}


def memory_stats(device=None) -> dict:
    """Allocator statistics of one device, under torch.cuda.memory_stats()'s key names where the
    meaning is the same, plus tidal's own under "tidal.":

    allocated_bytes.all.{current,peak,allocated,freed}  bytes in tensors (as PyTorch asked for
        them; tidal rounds nothing PyTorch would see), also as requested_bytes.all.*
    reserved_bytes.all.{current,peak}  held from the runtime by the device and managed pools of
        the device (the peak is the sum of the two pools' high-water marks)
    allocation.all.{current,allocated,freed}, num_ooms, num_alloc_retries (always 0: tidal's
        policies retry inside one call)
    tidal.alloc_failures, tidal.free_failures, tidal.pool.{device,managed,pinned}.<field>,
    tidal.migration.<field> (see tidal.PoolStats and tidal.MigrationStats)
    """
    state = _require()
    index = _device_index(device)
    raw = _ShimStats()
    if state.shim.tidal_torch_stats_get(index, ctypes.byref(raw)) != 0:
        raise ValueError(f"tidal.torch: no counters for device {index}")
    ctx = state.context
    device_pool = ctx.pool_stats(Kind.DEVICE, index)
    managed_pool = ctx.pool_stats(Kind.MANAGED, index)
    stats = {
        "allocated_bytes.all.current": raw.current_bytes,
        "allocated_bytes.all.peak": raw.peak_bytes,
        "allocated_bytes.all.allocated": raw.allocated_bytes,
        "allocated_bytes.all.freed": raw.freed_bytes,
        "requested_bytes.all.current": raw.current_bytes,
        "requested_bytes.all.peak": raw.peak_bytes,
        "requested_bytes.all.allocated": raw.allocated_bytes,
        "requested_bytes.all.freed": raw.freed_bytes,
        "reserved_bytes.all.current": device_pool.reserved_bytes + managed_pool.reserved_bytes,
        "reserved_bytes.all.peak": device_pool.reserved_high_water + managed_pool.reserved_high_water,
        "allocation.all.current": raw.allocations - raw.frees,
        "allocation.all.allocated": raw.allocations,
        "allocation.all.freed": raw.frees,
        "num_alloc_retries": 0,
        "num_ooms": raw.ooms,
        "tidal.alloc_failures": raw.failures,
        "tidal.free_failures": raw.free_failures,
    }
    stats.update(_pool_entries("tidal.pool.device", device_pool))
    stats.update(_pool_entries("tidal.pool.managed", managed_pool))
    stats.update(_pool_entries("tidal.pool.pinned", ctx.pool_stats(Kind.PINNED)))
    # The scheduler's counters come with the newest libtidal; an older one simply has none.
    if lib.has("tidal_migration_stats_get"):
        stats.update(_pool_entries("tidal.migration", ctx.migration_stats(index)))
    return stats


def reset_peak_memory_stats(device=None) -> None:
    """Starts allocated_bytes.all.peak again from the current value (the pools' high-water
    marks behind reserved_bytes.all.peak cannot be reset)."""
    state = _require()
    index = _device_index(device)
    if state.shim.tidal_torch_reset_peak(index) != 0:
        raise ValueError(f"tidal.torch: no counters for device {index}")


def empty_cache() -> int:
    """Gives the pools' free memory back to the runtime (tidal_pool_trim) and returns the bytes
    released. torch.cuda.empty_cache() cannot reach a pluggable allocator's pools."""
    return _require().context.pool_trim()


# ----------------------------------------------------------------------------- elastic memory
_scopes = _torch_scope.ScopeStack()


def tag(name: str, kind=None, min_bytes: int = 0):
    """A `with` scope whose CUDA tensors (those allocated on this thread inside it) are tagged
    `name` for offload() and restore(). kind=None makes them elastic memory where the runtime
    has a virtual-memory API (else the policy chain decides and they cannot be offloaded);
    another kind ("auto", "device", "elastic"...) is used as given. Tensors smaller than
    `min_bytes` take kind "auto" (elastic memory is rounded up to 2 MiB on CUDA). Scopes nest:
    the innermost decides. Freeing an elastic tensor waits for its device (tidal unmaps only
    memory no queued work uses), so scope long-lived tensors (weights, caches), not
    activations."""
    state = _require()
    scope = _torch_scope.make_scope(name, kind, min_bytes)

    def apply(current):
        if current is None:
            state.shim.tidal_torch_scope_set(None, 0, 0)
        else:
            state.shim.tidal_torch_scope_set(current.tag.encode("utf-8"), current.kind, current.min_bytes)

    return _scopes.entered(scope, apply)


def _stream_of(stream):
    if stream is ...:
        return torch.cuda.current_stream().cuda_stream
    if isinstance(stream, torch.cuda.Stream):
        return stream.cuda_stream
    return stream


def offload(tag: str, discard: bool = False, keep_physical: bool = False, stream=...) -> ElasticResult:
    """Takes the device memory of the tensors tagged `tag` (an fnmatch glob: "layer*", "*")
    away, keeping every data_ptr(): it waits for the work queued on `stream` (default: the
    current stream; None: all work on the devices concerned), copies what the host homes lack
    (nothing with discard=True), unmaps, and gives the memory back to CUDA (keep_physical=True
    keeps it for tidal's own elastic allocations). Using such a tensor before restore() faults,
    as an illegal memory access. Returns tidal.ElasticResult."""
    flags = (Offload.DISCARD if discard else Offload.NONE) | (Offload.KEEP_PHYSICAL if keep_physical else Offload.NONE)
    return _require().context.offload(tag, flags, _stream_of(stream))


def restore(tag: str, read_only: bool = False, stream=...) -> ElasticResult:
    """Maps the tensors tagged `tag` again and copies their contents back, ordered on `stream`
    (default: the current stream, so the work queued after it sees them; None: complete on
    return). Data and data_ptr() are as before the offload (discarded tensors come back with
    undefined contents). read_only=True promises they are not written until the next offload,
    which then copies nothing. Raises tidal.OutOfMemoryError when the device has no room
    (nothing of that tensor's allocation is left mapped)."""
    flags = Restore.READ_ONLY if read_only else Restore.NONE
    return _require().context.restore(tag, flags, _stream_of(stream))
