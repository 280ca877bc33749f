"""The C ABI through ctypes: finding libtidal, the structs of tidal.h, every function's types.

Everything here mirrors api/tidal/tidal.h one to one; the Pythonic layer is in context.py.
tests/python/test_abi.py compares these structs with the C compiler's layout and checks that
every function of the header has a prototype here.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

from .errors import NotSupportedError

# ----------------------------------------------------------------------------- constants
# Numbers that are not enumerators of an IntEnum in enums.py.
DEVICE_DEFAULT = -1
DEVICE_HOST = -2
LOCATION_NONE = -3
TAG_MAX = 64
ATOMIC_SET_BYTES = 304  # the least an ATOMIC_SET check's target holds
KIND_COUNT = 8

c_status = ctypes.c_int  # tidal_status, a C enum
c_enum = ctypes.c_int    # tidal_kind, tidal_xnack, tidal_coherency, tidal_check_kind


# ----------------------------------------------------------------------------- structs
class AllocDesc(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("kind", c_enum),
        ("device", ctypes.c_int32),
        ("alignment", ctypes.c_size_t),
        ("tag", ctypes.c_char_p),
        ("hints", ctypes.c_uint32),
    ]


class PointerInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("base", ctypes.c_void_p),
        ("size", ctypes.c_size_t),
        ("kind", c_enum),
        ("device", ctypes.c_int32),
        ("hints", ctypes.c_uint32),
        ("advice", ctypes.c_uint32),
        ("alignment", ctypes.c_size_t),
        ("tag", ctypes.c_char * TAG_MAX),
        ("placed_by", ctypes.c_char * 32),
        ("resident_bytes", ctypes.c_uint64),
        ("offloaded_bytes", ctypes.c_uint64),
        ("discarded_bytes", ctypes.c_uint64),
    ]


class PoolStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("reserved_bytes", ctypes.c_uint64),
        ("reserved_high_water", ctypes.c_uint64),
        ("in_use_bytes", ctypes.c_uint64),
        ("in_use_high_water", ctypes.c_uint64),
        ("allocations", ctypes.c_uint64),
        ("frees", ctypes.c_uint64),
        ("cache_hits", ctypes.c_uint64),
        ("runtime_allocations", ctypes.c_uint64),
        ("runtime_frees", ctypes.c_uint64),
        ("fragmentation", ctypes.c_double),
    ]


class RangeInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("last_prefetch_location", ctypes.c_int32),
        ("preferred_location", ctypes.c_int32),
        ("read_mostly", ctypes.c_int32),
        ("coherency", c_enum),
        ("resident_bytes", ctypes.c_uint64),
        ("offloaded_bytes", ctypes.c_uint64),
        ("discarded_bytes", ctypes.c_uint64),
    ]


class Access(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("ptr", ctypes.c_void_p),
        ("size", ctypes.c_size_t),
        ("device", ctypes.c_int32),
        ("mode", ctypes.c_uint32),
    ]


class CopyItem(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("dst", ctypes.c_void_p),
        ("src", ctypes.c_void_p),
        ("size", ctypes.c_size_t),
    ]


class MigrationStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("budget", ctypes.c_uint64),
        ("resident_bytes", ctypes.c_uint64),
        ("resident_high_water", ctypes.c_uint64),
        ("protected_bytes", ctypes.c_uint64),
        ("declared_ranges", ctypes.c_uint64),
        ("migrated_bytes", ctypes.c_uint64),
        ("resident_hits", ctypes.c_uint64),
        ("migration_calls", ctypes.c_uint64),
        ("noops", ctypes.c_uint64),
        ("evictions", ctypes.c_uint64),
        ("evicted_bytes", ctypes.c_uint64),
        ("dropped_bytes", ctypes.c_uint64),
        ("budget_refusals", ctypes.c_uint64),
        ("elastic_offloads", ctypes.c_uint64),
        ("elastic_restores", ctypes.c_uint64),
        ("elastic_copied_out", ctypes.c_uint64),
        ("elastic_copied_in", ctypes.c_uint64),
        ("elastic_discarded", ctypes.c_uint64),
    ]


class ElasticResult(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("allocations", ctypes.c_uint64),
        ("copied_bytes", ctypes.c_uint64),
        ("discarded_bytes", ctypes.c_uint64),
        ("released_bytes", ctypes.c_uint64),
        ("pooled_bytes", ctypes.c_uint64),
        ("mapped_bytes", ctypes.c_uint64),
        ("home_seconds", ctypes.c_double),
        ("move_seconds", ctypes.c_double),
    ]


class Check(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("kind", c_enum),
        ("device", ctypes.c_int32),
        ("target", ctypes.c_void_p),
        ("source", ctypes.c_void_p),
        ("source2", ctypes.c_void_p),
        ("size", ctypes.c_size_t),
        ("seed", ctypes.c_uint64),
        ("scalar", ctypes.c_double),
        ("repeat", ctypes.c_uint32),
        ("result", ctypes.c_uint64),
        ("elapsed_ms", ctypes.c_double),
        ("stream", ctypes.c_void_p),
    ]


class SystemInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("runtime", ctypes.c_char * 16),
        ("runtime_detail", ctypes.c_char * 128),
        ("device_count", ctypes.c_int32),
        ("default_device", ctypes.c_int32),
        ("local_rank", ctypes.c_int32),
        ("rank", ctypes.c_int32),
    ]


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("index", ctypes.c_int32),
        ("name", ctypes.c_char * 128),
        ("arch", ctypes.c_char * 64),
        ("total_memory", ctypes.c_uint64),
        ("free_memory", ctypes.c_uint64),
        ("page_size", ctypes.c_uint64),
        ("l2_size", ctypes.c_uint64),
        ("flags", ctypes.c_uint32),
        ("xnack", c_enum),
        ("numa_node", ctypes.c_int32),
        ("pci_bus_id", ctypes.c_char * 32),
        ("local_cpus", ctypes.c_char * 128),
        ("peer_mask", ctypes.c_uint64),
    ]


class PeerInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("device", ctypes.c_int32),
        ("peer", ctypes.c_int32),
        ("can_access", ctypes.c_int32),
        ("link", c_enum),
        ("hops", ctypes.c_int32),
        ("performance_rank", ctypes.c_int32),
        ("enabled", ctypes.c_int32),
        ("bandwidth", ctypes.c_double),
        ("latency_us", ctypes.c_double),
    ]


def new(struct_type):
    """A struct with struct_size set, as the C *_INIT macros do (all other fields zero)."""
    s = struct_type()
    s.struct_size = ctypes.sizeof(struct_type)
    return s


# ----------------------------------------------------------------------------- prototypes
_P = ctypes.POINTER
_ctx = ctypes.c_void_p  # tidal_context *, opaque
_vp = ctypes.c_void_p

# name: (restype, argtypes). Exactly the functions of tidal.h (test_abi.py checks both ways).
PROTOTYPES = {
    "tidal_version_number": (ctypes.c_uint, []),
    "tidal_version_string": (ctypes.c_char_p, []),
    "tidal_status_name": (ctypes.c_char_p, [c_status]),
    "tidal_status_string": (ctypes.c_char_p, [c_status]),
    "tidal_last_error": (ctypes.c_char_p, []),
    "tidal_context_create": (c_status, [_P(_ctx)]),
    "tidal_context_create_from_file": (c_status, [ctypes.c_char_p, _P(_ctx)]),
    "tidal_context_create_from_string": (c_status, [ctypes.c_char_p, _P(_ctx)]),
    "tidal_context_destroy": (c_status, [_ctx]),
    "tidal_kind_name": (ctypes.c_char_p, [c_enum]),
    "tidal_alloc": (c_status, [_ctx, ctypes.c_size_t, _P(AllocDesc), _P(_vp)]),
    "tidal_free": (c_status, [_ctx, _vp]),
    "tidal_alloc_async": (c_status, [_ctx, ctypes.c_size_t, _P(AllocDesc), _vp, _P(_vp)]),
    "tidal_free_async": (c_status, [_ctx, _vp, _vp]),
    "tidal_pointer_query": (c_status, [_ctx, _vp, _P(PointerInfo)]),
    "tidal_pool_stats_get": (c_status, [_ctx, c_enum, ctypes.c_int32, _P(PoolStats)]),
    "tidal_pool_trim": (c_status, [_ctx, _P(ctypes.c_uint64)]),
    "tidal_prefetch": (c_status, [_ctx, _vp, ctypes.c_size_t, ctypes.c_int32]),
    "tidal_range_query": (c_status, [_ctx, _vp, ctypes.c_size_t, _P(RangeInfo)]),
    "tidal_advise": (c_status, [_ctx, _vp, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint32]),
    "tidal_declare": (c_status, [_ctx, _vp, _P(Access), ctypes.c_size_t, ctypes.c_uint32]),
    "tidal_budget_set": (c_status, [_ctx, ctypes.c_int32, ctypes.c_uint64]),
    "tidal_migration_stats_get": (c_status, [_ctx, ctypes.c_int32, _P(MigrationStats)]),
    "tidal_clock": (c_status, [_ctx, _P(ctypes.c_double)]),
    "tidal_offload": (c_status, [_ctx, ctypes.c_char_p, ctypes.c_uint32, _vp, _P(ElasticResult)]),
    "tidal_offload_range": (c_status, [_ctx, _vp, ctypes.c_size_t, ctypes.c_uint32, _vp, _P(ElasticResult)]),
    "tidal_restore": (c_status, [_ctx, ctypes.c_char_p, ctypes.c_uint32, _vp, _P(ElasticResult)]),
    "tidal_restore_range": (c_status, [_ctx, _vp, ctypes.c_size_t, ctypes.c_uint32, _vp, _P(ElasticResult)]),
    "tidal_stream_create": (c_status, [_ctx, ctypes.c_int32, _P(_vp)]),
    "tidal_stream_destroy": (c_status, [_ctx, _vp]),
    "tidal_stream_forget": (c_status, [_ctx, _vp]),
    "tidal_stream_synchronize": (c_status, [_ctx, _vp]),
    "tidal_copy": (c_status, [_ctx, _vp, _vp, ctypes.c_size_t]),
    "tidal_copy_async": (c_status, [_ctx, _vp, _vp, ctypes.c_size_t, _vp]),
    "tidal_copy_batch": (c_status, [_ctx, _P(CopyItem), ctypes.c_size_t, _vp]),
    "tidal_register": (c_status, [_ctx, _vp, ctypes.c_size_t]),
    "tidal_unregister": (c_status, [_ctx, _vp]),
    "tidal_check_run": (c_status, [_ctx, _P(Check)]),
    "tidal_system_info_get": (c_status, [_ctx, _P(SystemInfo)]),
    "tidal_device_info_get": (c_status, [_ctx, ctypes.c_int32, _P(DeviceInfo)]),
    "tidal_peer_info_get": (c_status, [_ctx, ctypes.c_int32, ctypes.c_int32, _P(PeerInfo)]),
    "tidal_config_describe": (c_status, [_ctx, ctypes.c_char_p, ctypes.c_size_t, _P(ctypes.c_size_t)]),
    "tidal_file_name_expand": (c_status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, _P(ctypes.c_size_t)]),
    "tidal_stats_json": (c_status, [_ctx, ctypes.c_char_p, ctypes.c_size_t, _P(ctypes.c_size_t)]),
    "tidal_allocations_list": (c_status, [_ctx, _P(PointerInfo), ctypes.c_size_t, _P(ctypes.c_size_t)]),
}

# Functions of the newest part of the header. A library built before them still loads; calling
# one of them then raises NotSupportedError naming the library (see Library.__getattr__).
NEWER_FUNCTIONS = frozenset({
    "tidal_alloc_async", "tidal_free_async", "tidal_advise", "tidal_declare",
    "tidal_budget_set", "tidal_migration_stats_get", "tidal_clock", "tidal_copy_batch",
    "tidal_offload", "tidal_offload_range", "tidal_restore", "tidal_restore_range",
    "tidal_peer_info_get",
    "tidal_stats_json", "tidal_allocations_list",
})


# ----------------------------------------------------------------------------- loading
def _installed_libdir():
    # Written by meson at install time (bindings/python/meson.build); absent in the source tree.
    try:
        from . import _install_paths  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _install_paths.LIBDIR


def _candidates():
    """Where libtidal may be, in the order tried: (description, path or soname)."""
    found = []
    explicit = os.environ.get("TIDAL_LIBRARY", "")
    if explicit:
        # An explicit choice is never silently replaced by another library.
        return [("TIDAL_LIBRARY", explicit)]
    package_dir = os.path.dirname(os.path.abspath(__file__))
    for name in ("libtidal.so.0", "libtidal.so"):
        found.append(("next to the package", os.path.join(package_dir, name)))
    libdir = _installed_libdir()
    if libdir:
        found.append(("the installed libdir", os.path.join(libdir, "libtidal.so.0")))
    by_search = ctypes.util.find_library("tidal")
    if by_search:
        found.append(("ctypes.util.find_library('tidal')", by_search))
    found.append(("the dynamic linker's search path", "libtidal.so.0"))
    return found


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _file_of(function):
    """The file the dynamic linker loaded `function` from (dladdr), or None."""
    try:
        libc = ctypes.CDLL(None)
        dladdr = libc.dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    dladdr.restype = ctypes.c_int
    info = _DlInfo()
    if dladdr(ctypes.cast(function, ctypes.c_void_p), ctypes.byref(info)) == 0 or not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode())


class Library:
    """libtidal loaded once per process, with each function's argtypes and restype set.

    Functions are bound on first use, so a library older than this package imports fine and
    only the missing function fails, with a message naming the library.
    """

    def __init__(self):
        tried = []
        self.cdll = None
        for where, path in _candidates():
            try:
                self.cdll = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"  {where}: {path}: {e}")
                continue
            break
        if self.cdll is None:
            raise ImportError(
                "tidal: cannot load libtidal. Tried:\n" + "\n".join(tried) +
                "\nSet TIDAL_LIBRARY to the full path of libtidal.so (e.g. build/core/libtidal.so "
                "in a meson build tree), or install tidal (meson install) where the dynamic linker "
                "finds it.")
        if not hasattr(self.cdll, "tidal_version_number"):
            raise ImportError(f"tidal: {self.cdll._name} is not libtidal (no tidal_version_number)")
        self.path = _file_of(self.cdll.tidal_version_number) or os.path.realpath(self.cdll._name)
        self._lock = threading.Lock()

    def has(self, name):
        """Whether this library exports `name` (one of PROTOTYPES)."""
        return hasattr(self.cdll, name)

    def address_of(self, name):
        """The address of a function in this library, e.g. to compare with another module's view."""
        return ctypes.cast(getattr(self, name), ctypes.c_void_p).value

    def __getattr__(self, name):
        if name not in PROTOTYPES:
            raise AttributeError(f"tidal has no C function {name!r}")
        with self._lock:
            if name in self.__dict__:
                return self.__dict__[name]
            try:
                function = getattr(self.cdll, name)
            except AttributeError:
                version = self.cdll.tidal_version_string
                version.restype = ctypes.c_char_p
                raise NotSupportedError(
                    3, "TIDAL_ERROR_NOT_SUPPORTED",
                    f"{name} is not exported by {self.path} (tidal {version().decode()}): that "
                    f"libtidal predates this Python package; build and load a newer one "
                    f"(TIDAL_LIBRARY)") from None
            restype, argtypes = PROTOTYPES[name]
            function.restype = restype
            function.argtypes = argtypes
            self.__dict__[name] = function
            return function


lib = Library()
