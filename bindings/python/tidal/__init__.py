"""tidal decides where GPU memory lives and when it moves: Python over its C ABI.

    import tidal
    with tidal.Context('runtime = "sim"') as ctx:
        with ctx.alloc(1 << 20, kind="managed", tag="weights") as a:
            a.write(b"hello")
            print(ctx.query(a).kind, a.read(5))

The library is found through TIDAL_LIBRARY (a full path), then next to this package and in
the installed libdir, then by the dynamic linker. Failures raise the subclasses of
tidal.TidalError, which carry tidal's detailed message. tidal.torch installs tidal as
PyTorch's CUDA allocator.
"""
from ._native import ATOMIC_SET_BYTES, DEVICE_DEFAULT, DEVICE_HOST, KIND_COUNT, LOCATION_NONE, TAG_MAX
from .context import (AccessRange, Allocation, CheckResult, Context, DeviceInfo, ElasticResult,
                      MigrationStats,
                      PointerInfo, PoolStats, RangeInfo, SystemInfo, file_name_expand, kind_name, library_path,
                      status_name, status_string, version, version_number)
from .enums import (Access, Advice, AtomicOp, CheckKind, Coherency, DeviceFlag, Hint, Kind, LinkType, Offload,
                    Restore, Status, Xnack)
from .errors import (BudgetExceededError, BufferTooSmallError, ConfigError, DeviceRuntimeError,
                     IllegalAccessError, InternalError, InvalidArgumentError, NoDeviceError,
                     NotFoundError, NotSupportedError, OutOfMemoryError, PluginError, TidalError,
                     UnknownPointerError)

__version__ = "0.1.0"

__all__ = [
    "ATOMIC_SET_BYTES", "DEVICE_DEFAULT", "DEVICE_HOST", "KIND_COUNT", "LOCATION_NONE", "TAG_MAX",
    "AccessRange", "Allocation", "CheckResult", "Context", "DeviceInfo", "ElasticResult", "MigrationStats",
    "PointerInfo", "PoolStats", "RangeInfo", "SystemInfo",
    "file_name_expand", "kind_name", "library_path", "status_name", "status_string", "version", "version_number",
    "Access", "Advice", "AtomicOp", "CheckKind", "Coherency", "DeviceFlag", "Hint", "Kind", "Offload", "Restore", "Status",
    "Xnack", "LinkType",
    "TidalError", "InvalidArgumentError", "OutOfMemoryError", "NotSupportedError", "NoDeviceError",
    "UnknownPointerError", "ConfigError", "PluginError", "DeviceRuntimeError",
    "BudgetExceededError", "IllegalAccessError", "InternalError", "NotFoundError",
    "BufferTooSmallError",
]
