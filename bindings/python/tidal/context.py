"""tidal.Context and tidal.Allocation: the C ABI in Python terms.

Pointers travel as ints. Wherever a pointer is taken, an int, a tidal.Allocation, a
ctypes.c_void_p or an object with a data_ptr() method (a torch.Tensor) is accepted; copies
also take Python buffers (bytes, bytearray, memoryview, array.array...). Errors are the
exceptions of tidal.errors; mistakes caught before reaching the library (a negative size, a
read-only destination) raise the same classes with the binding's own message.
"""
from __future__ import annotations

import ctypes
import dataclasses
import operator
import os
import threading
import weakref

from . import _native
from ._native import DEVICE_DEFAULT, DEVICE_HOST, lib
from .enums import Access, Advice, Coherency, DeviceFlag, Hint, Kind, Offload, Restore, Xnack
from .errors import InvalidArgumentError, TidalError, UnknownPointerError, error_for


# ----------------------------------------------------------------------------- plumbing
def _check(status: int) -> None:
    """Raises the exception of a failed call. Must run right after the call, on its thread:
    tidal_last_error() is per thread and only lasts until the thread's next tidal call."""
    if status != 0:
        message = lib.tidal_last_error().decode("utf-8", "replace")
        raise error_for(status, status_name(status), message)


def _invalid(function: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(1, "TIDAL_ERROR_INVALID_ARGUMENT", f"{function}: {message}")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _enum(enum_type, value):
    # A newer library may report a value this package does not know yet: keep the number.
    try:
        return enum_type(value)
    except ValueError:
        return value


def _size(function: str, name: str, value) -> int:
    n = operator.index(value)
    if n < 0:
        raise _invalid(function, f"{name} is {n}; it must be >= 0")
    return n


def status_name(status: int) -> str:
    """tidal_status_name(): e.g. "TIDAL_ERROR_OUT_OF_MEMORY"."""
    return _text(lib.tidal_status_name(int(status)))


def status_string(status: int) -> str:
    """tidal_status_string(): a short English description of a status."""
    return _text(lib.tidal_status_string(int(status)))


def kind_name(kind) -> str:
    """tidal_kind_name(): "device", "managed", "device-fine"..., "unknown" otherwise."""
    return _text(lib.tidal_kind_name(int(Kind.parse(kind))))


def version() -> str:
    """The loaded library's version string, e.g. "0.1.0"."""
    return _text(lib.tidal_version_string())


def version_number() -> int:
    """The loaded library's TIDAL_VERSION_NUMBER (major * 10000 + minor * 100 + patch)."""
    return int(lib.tidal_version_number())


def file_name_expand(pattern: str) -> str:
    """tidal_file_name_expand: %r (the job-wide rank), %p (the process id), %% expanded."""
    raw = pattern.encode()
    needed = ctypes.c_size_t()
    status = lib.tidal_file_name_expand(raw, None, 0, ctypes.byref(needed))
    if status not in (0, 13):  # 13: BUFFER_TOO_SMALL, which asks for the length
        _check(status)
    buf = ctypes.create_string_buffer(needed.value)
    _check(lib.tidal_file_name_expand(raw, buf, len(buf), ctypes.byref(needed)))
    return _text(buf.value)


def library_path() -> str:
    """The libtidal file this process loaded."""
    return lib.path


def _address(value, what: str = "ptr"):
    """An int address (or None for NULL) from anything that names memory."""
    if value is None:
        return None
    if isinstance(value, Allocation):
        return value._live_address(what)
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an address, not a bool")
    if isinstance(value, int):
        return value
    if isinstance(value, ctypes.c_void_p):
        return value.value
    if isinstance(value, (ctypes.Array, ctypes.Structure, ctypes.Union)):
        return ctypes.addressof(value)
    data_ptr = getattr(value, "data_ptr", None)
    if callable(data_ptr):
        return int(data_ptr())
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an address (int), a tidal.Allocation, a ctypes object or "
                        f"an object with data_ptr(), not {type(value).__name__}") from None


def _buffer(value, writable: bool, function: str, what: str):
    """(address, keep-alive, byte length or None) for a copy operand: a pointer or a buffer."""
    if isinstance(value, Allocation):
        return value._live_address(what), value, value.size
    if value is None or isinstance(value, (int, ctypes.c_void_p)) and not isinstance(value, bool):
        return _address(value, what), None, None
    if isinstance(value, (ctypes.Array, ctypes.Structure, ctypes.Union)):
        return ctypes.addressof(value), value, ctypes.sizeof(value)
    if callable(getattr(value, "data_ptr", None)):
        return int(value.data_ptr()), value, getattr(value, "nbytes", None)
    try:
        view = memoryview(value)
    except TypeError:
        raise TypeError(f"{function}: {what} must be an address, a tidal.Allocation or a buffer, "
                        f"not {type(value).__name__}") from None
    if not view.contiguous:
        raise _invalid(function, f"{what} is a non-contiguous buffer")
    if view.readonly:
        if writable:
            raise _invalid(function, f"{what} is a read-only buffer ({type(value).__name__})")
        # ctypes cannot take the address of read-only memory; c_char_p points into a bytes
        # object's own storage, so only other read-only buffers are copied first.
        data = value if isinstance(value, bytes) else view.tobytes()
        return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value, data, len(data)
    array = (ctypes.c_char * view.nbytes).from_buffer(view)
    return ctypes.addressof(array), (array, view), view.nbytes


# ----------------------------------------------------------------------------- records
@dataclasses.dataclass(frozen=True)
class PointerInfo:
    """What tidal knows about one allocation (tidal_pointer_info)."""
    base: int
    size: int
    kind: Kind
    device: int          # or DEVICE_HOST for host kinds without one
    hints: Hint
    advice: Advice
    alignment: int
    tag: str
    placed_by: str       # the policy that decided, or "core"
    # Elastic memory (0 for other kinds), in bytes of whole chunks:
    resident_bytes: int = 0    # mapped on the device
    offloaded_bytes: int = 0   # not mapped; the contents are in the host home
    discarded_bytes: int = 0   # not mapped; the contents were dropped


@dataclasses.dataclass(frozen=True)
class SystemInfo:
    """The runtime in use and how many devices it has (tidal_system_info)."""
    runtime: str         # "sim", "hip" or "cuda"
    runtime_detail: str
    device_count: int
    default_device: int  # an index with device_selection = "local-rank", else -1 (DEVICE_DEFAULT)
    local_rank: int      # from the launcher's environment, -1 when none
    rank: int


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """One device's capabilities (tidal_device_info)."""
    index: int
    name: str
    arch: str
    total_memory: int
    free_memory: int
    page_size: int
    l2_size: int
    flags: DeviceFlag
    xnack: Xnack
    numa_node: int
    pci_bus_id: str = ""     # "" when unknown
    local_cpus: str = ""     # the CPUs of numa_node, "0-15,32-47"; "" when unknown
    peer_mask: int = 0       # bit p: this device reaches device p's memory directly

    @property
    def simulated(self) -> bool:
        return bool(self.flags & DeviceFlag.SIMULATED)


@dataclasses.dataclass(frozen=True)
class PoolStats:
    """One pool's counters (tidal_pool_stats)."""
    reserved_bytes: int
    reserved_high_water: int
    in_use_bytes: int
    in_use_high_water: int
    allocations: int
    frees: int
    cache_hits: int
    runtime_allocations: int
    runtime_frees: int
    fragmentation: float


@dataclasses.dataclass(frozen=True)
class RangeInfo:
    """The runtime's own view of a managed range (tidal_range_info)."""
    last_prefetch_location: int   # device index, DEVICE_HOST or LOCATION_NONE
    preferred_location: int
    read_mostly: bool
    coherency: Coherency
    # Elastic memory (0 for managed memory): bytes of the chunks the range touches.
    resident_bytes: int = 0
    offloaded_bytes: int = 0
    discarded_bytes: int = 0


@dataclasses.dataclass(frozen=True)
class MigrationStats:
    """What the migration scheduler did on one device (tidal_migration_stats)."""
    budget: int
    resident_bytes: int
    resident_high_water: int
    protected_bytes: int
    declared_ranges: int
    migrated_bytes: int
    resident_hits: int
    migration_calls: int
    noops: int
    evictions: int
    evicted_bytes: int
    dropped_bytes: int
    budget_refusals: int
    # Elastic memory on this device (offload / restore):
    elastic_offloads: int = 0      # chunks unmapped
    elastic_restores: int = 0      # chunks mapped again
    elastic_copied_out: int = 0    # bytes copied to host homes
    elastic_copied_in: int = 0     # bytes copied back from host homes
    elastic_discarded: int = 0     # bytes unmapped with their contents dropped


@dataclasses.dataclass(frozen=True)
class ElasticResult:
    """What one offload or restore did (tidal_elastic_result)."""
    allocations: int       # elastic allocations the tag or range matched
    copied_bytes: int      # copied to (offload) or from (restore) host homes
    discarded_bytes: int   # unmapped with their contents dropped
    released_bytes: int    # physical memory given back to the runtime (offload)
    pooled_bytes: int      # physical memory kept in, or taken from, tidal's chunk pool
    mapped_bytes: int      # physical memory mapped (restore)
    home_seconds: float    # spent making host homes, on the runtime's clock
    move_seconds: float    # the rest of the call


@dataclasses.dataclass(frozen=True)
class AccessRange:
    """One range of a Context.declare call (tidal_access)."""
    ptr: object
    size: int
    device: int = 0
    mode: Access = Access.READ


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The outputs of a validation kernel (tidal_check)."""
    result: int          # PATTERN_VERIFY: mismatching words of the last run
    elapsed_ms: float    # device time of all runs


def _fields(struct, record_type, **converters):
    values = {}
    for field in dataclasses.fields(record_type):
        raw = getattr(struct, field.name)
        convert = converters.get(field.name)
        values[field.name] = convert(raw) if convert else raw
    return record_type(**values)


# ----------------------------------------------------------------------------- allocation
class Allocation:
    """Memory returned by Context.alloc / alloc_async.

    `address` (also int(allocation)) and `size` say where it is. It is freed by free(),
    free_async(), Context.free, the end of a `with` block, or the context's destruction — not
    by garbage collection, since the address may still be in use by device work or by code
    that only kept the int.
    """

    __slots__ = ("context", "address", "size", "stream", "_freed", "__weakref__")

    def __init__(self, context: "Context", address: int, size: int, stream=None):
        self.context = context
        self.address = address
        self.size = size
        self.stream = stream
        self._freed = False

    def __int__(self) -> int:
        return self.address

    __index__ = __int__

    def __repr__(self) -> str:
        state = "freed" if self._freed else "live"
        return f"<tidal.Allocation 0x{self.address:x}, {self.size} bytes, {state}>"

    def __enter__(self) -> "Allocation":
        return self

    def __exit__(self, *exc) -> None:
        if not self._freed:
            self.free()

    @property
    def freed(self) -> bool:
        """Whether this object has been freed (through itself or Context.free(self))."""
        return self._freed

    def _live_address(self, what: str) -> int:
        if self._freed:
            # Refused here rather than passed on: the address may already belong to a newer
            # allocation, and freeing or copying into that one would be silent corruption.
            raise UnknownPointerError(5, "TIDAL_ERROR_UNKNOWN_POINTER",
                                      f"{what} 0x{self.address:x} was already freed through its "
                                      f"tidal.Allocation")
        return self.address

    def free(self) -> None:
        """tidal_free."""
        self.context.free(self)

    def free_async(self, stream=...) -> None:
        """tidal_free_async, by default on the stream it was allocated on."""
        self.context.free_async(self, self.stream if stream is ... else stream)

    def info(self) -> PointerInfo:
        """tidal_pointer_query."""
        return self.context.query(self)

    def _range(self, function: str, offset: int, size, limit_name: str = "size"):
        offset = _size(function, "offset", offset)
        n = self.size - offset if size is None else _size(function, limit_name, size)
        if offset + n > self.size:
            raise _invalid(function, f"offset {offset} + {n} bytes runs past the allocation's "
                                     f"{self.size} bytes")
        return offset, n

    def read(self, size=None, offset: int = 0) -> bytes:
        """Copies bytes out through tidal_copy, so it works for every kind, device memory on a
        GPU included."""
        offset, n = self._range("Allocation.read", offset, size)
        out = bytearray(n)
        self.context.copy(out, self._live_address("ptr") + offset, n)
        return bytes(out)

    def write(self, data, offset: int = 0) -> None:
        """Copies a buffer in through tidal_copy (every kind)."""
        view = memoryview(data)
        offset, n = self._range("Allocation.write", offset, view.nbytes, "len(data)")
        self.context.copy(self._live_address("ptr") + offset, data, n)

    def view(self) -> memoryview:
        """A writable memoryview straight onto the memory, for kinds the host can touch: pinned,
        pageable, managed, and every kind on the simulated device. The view dangles once the
        allocation is freed; touching it then is undefined behaviour, as in C."""
        address = self._live_address("ptr")
        kind = self.context.query(self).kind
        host_reachable = kind in (Kind.PINNED, Kind.PAGEABLE, Kind.MANAGED, Kind.MANAGED_COARSE)
        if not host_reachable and self.context.system_info().runtime != "sim":
            raise _invalid("Allocation.view", f"{Kind(kind).label} memory is not reachable from the "
                                              "host; use read() and write(), which copy")
        return memoryview((ctypes.c_char * self.size).from_address(address)).cast("B")


# ----------------------------------------------------------------------------- context
def _destroy(handle: int) -> None:
    lib.tidal_context_destroy(handle)


def _looks_like_toml(text: str) -> bool:
    return "\n" in text or "=" in text or text.lstrip().startswith("[")


class Context:
    """A tidal context: a configuration, a runtime, a policy chain and the allocations.

    Context()                 TIDAL_CONFIG's file, or built-in defaults when it is unset
    Context('runtime = "sim"')   TOML text (anything with a newline, '=' or a leading '[')
    Context("tidal.toml")     a file; also any os.PathLike. Context.from_file and
                              Context.from_string say which explicitly.

    Use it as a context manager, or call close(). An unclosed context is destroyed when it is
    garbage collected (allocations keep it alive) or at interpreter exit. All methods are
    thread-safe, as the C functions are.
    """

    def __init__(self, config=None):
        handle = ctypes.c_void_p()
        if config is None:
            _check(lib.tidal_context_create(ctypes.byref(handle)))
        elif isinstance(config, os.PathLike) or (isinstance(config, str) and not _looks_like_toml(config)):
            _check(lib.tidal_context_create_from_file(os.fsencode(config), ctypes.byref(handle)))
        elif isinstance(config, (str, bytes)):
            text = config.encode("utf-8") if isinstance(config, str) else config
            if b"\0" in text:
                raise _invalid("tidal.Context", "the configuration text contains a NUL byte")
            _check(lib.tidal_context_create_from_string(text, ctypes.byref(handle)))
        else:
            raise TypeError(f"tidal.Context: config must be None, TOML text or a path, not "
                            f"{type(config).__name__}")
        self._adopt(handle.value)

    @classmethod
    def from_file(cls, path) -> "Context":
        """tidal_context_create_from_file: relative paths inside are taken from its folder."""
        self = cls.__new__(cls)
        handle = ctypes.c_void_p()
        _check(lib.tidal_context_create_from_file(os.fsencode(path), ctypes.byref(handle)))
        self._adopt(handle.value)
        return self

    @classmethod
    def from_string(cls, toml: str) -> "Context":
        """tidal_context_create_from_string: relative paths inside are taken from the current
        directory."""
        text = toml.encode("utf-8")
        if b"\0" in text:
            raise _invalid("tidal.Context.from_string", "the configuration text contains a NUL byte")
        self = cls.__new__(cls)
        handle = ctypes.c_void_p()
        _check(lib.tidal_context_create_from_string(text, ctypes.byref(handle)))
        self._adopt(handle.value)
        return self

    def _adopt(self, handle: int) -> None:
        self._handle = handle
        self._finalizer = weakref.finalize(self, _destroy, handle)
        self._registered = {}
        self._registered_lock = threading.Lock()

    # -- lifetime
    @property
    def handle(self) -> int:
        """The tidal_context * as an int, for other code that calls the C ABI."""
        if self._handle is None:
            raise _invalid("tidal.Context", "the context is closed")
        return self._handle

    @property
    def closed(self) -> bool:
        return self._handle is None

    def close(self) -> None:
        """tidal_context_destroy: frees what is still live (each reported as a leak on the log).
        Allocations of this context must not be used afterwards. A second close does nothing."""
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        self._finalizer.detach()
        _check(lib.tidal_context_destroy(handle))

    def keep_alive_at_exit(self) -> None:
        """Never destroy this context, not even at interpreter exit: for a context that outlives
        Python's own teardown (the PyTorch allocator frees tensors after atexit handlers ran)."""
        self._finalizer.detach()

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._handle is None:
            return "<tidal.Context closed>"
        return f"<tidal.Context 0x{self._handle:x}>"

    # -- allocation
    def _desc(self, function, kind, device, alignment, tag, hints):
        desc = _native.new(_native.AllocDesc)
        desc.kind = int(Kind.parse(kind)) if isinstance(kind, str) else operator.index(kind)
        desc.device = operator.index(device)
        desc.alignment = _size(function, "alignment", alignment)
        if tag is not None:
            raw = tag.encode("utf-8") if isinstance(tag, str) else bytes(tag)
            if b"\0" in raw:
                raise _invalid(function, "the tag contains a NUL byte")
            desc.tag = raw
        desc.hints = operator.index(hints)
        return desc

    def alloc(self, size: int, kind=Kind.AUTO, device: int = DEVICE_DEFAULT, alignment: int = 0,
              tag=None, hints=Hint.NONE) -> Allocation:
        """tidal_alloc: `size` bytes where the policy chain places them. `kind` may be a Kind, its
        number or its name ("managed"); `hints` Hint bits; `tag` a str of at most 63 bytes."""
        size = _size("tidal_alloc", "size", size)
        desc = self._desc("tidal_alloc", kind, device, alignment, tag, hints)
        out = ctypes.c_void_p()
        _check(lib.tidal_alloc(self.handle, size, ctypes.byref(desc), ctypes.byref(out)))
        return Allocation(self, out.value, size)

    def alloc_async(self, size: int, stream=None, kind=Kind.AUTO, device: int = DEVICE_DEFAULT,
                    alignment: int = 0, tag=None, hints=Hint.NONE) -> Allocation:
        """tidal_alloc_async: as alloc, for work ordered on `stream` (None = the default stream);
        may reuse a block freed with free_async on the same stream while its work is queued."""
        size = _size("tidal_alloc_async", "size", size)
        desc = self._desc("tidal_alloc_async", kind, device, alignment, tag, hints)
        out = ctypes.c_void_p()
        s = _address(stream, "stream")
        _check(lib.tidal_alloc_async(self.handle, size, ctypes.byref(desc), s, ctypes.byref(out)))
        return Allocation(self, out.value, size, stream)

    def free(self, ptr) -> None:
        """tidal_free. An interior pointer is InvalidArgumentError (nothing is freed), a pointer
        tidal never returned or already freed UnknownPointerError. None does nothing."""
        address = _address(ptr)
        _check(lib.tidal_free(self.handle, address))
        if isinstance(ptr, Allocation):
            ptr._freed = True

    def free_async(self, ptr, stream=None) -> None:
        """tidal_free_async: frees once the work queued on `stream` so far has finished."""
        address = _address(ptr)
        _check(lib.tidal_free_async(self.handle, address, _address(stream, "stream")))
        if isinstance(ptr, Allocation):
            ptr._freed = True

    def query(self, ptr) -> PointerInfo:
        """tidal_pointer_query: the allocation containing `ptr` (interior pointers included)."""
        info = _native.new(_native.PointerInfo)
        _check(lib.tidal_pointer_query(self.handle, _address(ptr), ctypes.byref(info)))
        return _fields(info, PointerInfo, base=lambda v: v or 0, kind=lambda v: _enum(Kind, v),
                       hints=Hint, advice=Advice, tag=_text, placed_by=_text)

    # -- pools
    def pool_stats(self, kind, device=None) -> PoolStats:
        """tidal_pool_stats_get for the pool of `kind` on `device` (default: the host for pinned
        memory, device 0 otherwise)."""
        k = int(Kind.parse(kind)) if isinstance(kind, str) else operator.index(kind)
        if device is None:
            device = DEVICE_HOST if k == Kind.PINNED else 0
        stats = _native.new(_native.PoolStats)
        _check(lib.tidal_pool_stats_get(self.handle, k, operator.index(device), ctypes.byref(stats)))
        return _fields(stats, PoolStats)

    def pool_trim(self) -> int:
        """tidal_pool_trim: gives the pools' spare memory back; returns the bytes released."""
        released = ctypes.c_uint64()
        _check(lib.tidal_pool_trim(self.handle, ctypes.byref(released)))
        return released.value

    # -- migration
    def _span(self, function, ptr, size):
        address = _address(ptr)
        if size is not None:
            return address, _size(function, "size", size)
        if isinstance(ptr, Allocation):
            return address, ptr.size
        info = self.query(address)
        return address, info.base + info.size - address

    def prefetch(self, ptr, size=None, device: int = 0) -> None:
        """tidal_prefetch: makes the range resident on `device` (or DEVICE_HOST) and waits.
        `size` None means up to the end of the allocation. Kinds that cannot move are a no-op."""
        address, n = self._span("tidal_prefetch", ptr, size)
        _check(lib.tidal_prefetch(self.handle, address, n, operator.index(device)))

    def range_query(self, ptr, size=None) -> RangeInfo:
        """tidal_range_query: the runtime's view of a managed range."""
        address, n = self._span("tidal_range_query", ptr, size)
        info = _native.new(_native.RangeInfo)
        _check(lib.tidal_range_query(self.handle, address, n, ctypes.byref(info)))
        return _fields(info, RangeInfo, read_mostly=bool, coherency=lambda v: _enum(Coherency, v))

    def advise(self, ptr, size=None, set=Advice.NONE, unset=Advice.NONE) -> None:
        """tidal_advise: sets the Advice bits `set` and clears `unset` on a managed range (other
        kinds: a counted no-op)."""
        address, n = self._span("tidal_advise", ptr, size)
        _check(lib.tidal_advise(self.handle, address, n, operator.index(set), operator.index(unset)))

    def declare(self, stream, accesses, lookahead: bool = False) -> None:
        """tidal_declare: starts a phase of work on `stream` touching `accesses` (AccessRange
        objects or (ptr, size, device, mode) tuples; device and mode may be left out). Managed
        ranges are made resident first; an empty list just ends the phase. `lookahead` declares
        the stream's next phase instead."""
        items = list(accesses)
        array = (_native.Access * max(len(items), 1))()
        for i, item in enumerate(items):
            if not isinstance(item, AccessRange):
                item = AccessRange(*item)
            a = array[i]
            a.struct_size = ctypes.sizeof(_native.Access)
            a.ptr = _address(item.ptr)
            a.size = _size("tidal_declare", "size", item.size)
            a.device = operator.index(item.device)
            a.mode = operator.index(item.mode)
        flags = 0x1 if lookahead else 0
        _check(lib.tidal_declare(self.handle, _address(stream, "stream"), array, len(items), flags))

    def budget_set(self, device: int, nbytes: int) -> None:
        """tidal_budget_set: limits the managed bytes kept resident on `device`; 0 = no limit."""
        _check(lib.tidal_budget_set(self.handle, operator.index(device),
                                    _size("tidal_budget_set", "bytes", nbytes)))

    def migration_stats(self, device: int = 0) -> MigrationStats:
        """tidal_migration_stats_get."""
        stats = _native.new(_native.MigrationStats)
        _check(lib.tidal_migration_stats_get(self.handle, operator.index(device), ctypes.byref(stats)))
        return _fields(stats, MigrationStats)

    # -- elastic memory
    def _elastic(self, function, call, target, flags, allowed, stream) -> ElasticResult:
        flags = operator.index(flags)
        if flags & ~int(allowed):
            raise _invalid(function, f"unknown flags 0x{flags & ~int(allowed):x}")
        out = _native.new(_native.ElasticResult)
        status = call(*target, flags, _address(stream, "stream"), ctypes.byref(out))
        try:
            _check(status)
        except TidalError as e:
            # The C call says what it did before failing (allocations offloaded before it stay so).
            e.elastic_result = _fields(out, ElasticResult)
            raise
        return _fields(out, ElasticResult)

    @staticmethod
    def _glob(function, tag) -> bytes:
        raw = tag.encode("utf-8") if isinstance(tag, str) else bytes(tag)
        if b"\0" in raw:
            raise _invalid(function, "the tag glob contains a NUL byte")
        return raw

    def offload(self, tag="*", flags=Offload.NONE, stream=None) -> ElasticResult:
        """tidal_offload: takes away the device memory of every elastic allocation whose tag
        matches the fnmatch glob `tag` ("" matches untagged ones), keeping every address valid:
        waits for `stream` (None: all work on the devices concerned), copies to the host homes
        what they lack, then unmaps. `flags`: Offload bits (DISCARD, KEEP_PHYSICAL). A tag that
        matches nothing is no error (ElasticResult.allocations == 0). A failure's exception
        carries `elastic_result`, what was done before it."""
        glob = self._glob("tidal_offload", tag)
        return self._elastic("tidal_offload", lib.tidal_offload, (self.handle, glob), flags,
                             Offload.FLAGS_ALL, stream)

    def offload_range(self, ptr, size=None, flags=Offload.NONE, stream=None) -> ElasticResult:
        """tidal_offload_range: as offload, for the chunks [ptr, ptr + size) touches in one
        elastic allocation (`size` None: to the allocation's end)."""
        address, n = self._span("tidal_offload_range", ptr, size)
        return self._elastic("tidal_offload_range", lib.tidal_offload_range, (self.handle, address, n),
                             flags, Offload.FLAGS_ALL, stream)

    def restore(self, tag="*", flags=Restore.NONE, stream=None) -> ElasticResult:
        """tidal_restore: maps the elastic allocations whose tag matches `tag` again and copies
        their offloaded chunks back, ordered on `stream` (None: complete on return): same
        addresses, same bytes. `flags`: Restore.READ_ONLY. OutOfMemoryError when the device
        has no room (nothing of that allocation is left mapped)."""
        glob = self._glob("tidal_restore", tag)
        return self._elastic("tidal_restore", lib.tidal_restore, (self.handle, glob), flags,
                             Restore.FLAGS_ALL, stream)

    def restore_range(self, ptr, size=None, flags=Restore.NONE, stream=None) -> ElasticResult:
        """tidal_restore_range: as restore, for the chunks [ptr, ptr + size) touches."""
        address, n = self._span("tidal_restore_range", ptr, size)
        return self._elastic("tidal_restore_range", lib.tidal_restore_range, (self.handle, address, n),
                             flags, Restore.FLAGS_ALL, stream)

    def clock(self) -> float:
        """tidal_clock: seconds on the runtime's clock (the simulated clock on the simulated
        device)."""
        seconds = ctypes.c_double()
        _check(lib.tidal_clock(self.handle, ctypes.byref(seconds)))
        return seconds.value

    # -- streams and copies
    def stream_create(self, device: int = 0) -> int:
        """tidal_stream_create: a non-blocking stream on `device`, as an int handle."""
        out = ctypes.c_void_p()
        _check(lib.tidal_stream_create(self.handle, operator.index(device), ctypes.byref(out)))
        return out.value

    def stream_destroy(self, stream) -> None:
        """tidal_stream_destroy (None does nothing)."""
        _check(lib.tidal_stream_destroy(self.handle, _address(stream, "stream")))

    def stream_forget(self, stream) -> None:
        """tidal_stream_forget: call before destroying, with the GPU runtime, a stream tidal
        has seen (e.g. a torch.cuda.Stream); settles what tidal holds for it. None does nothing."""
        _check(lib.tidal_stream_forget(self.handle, _address(stream, "stream")))

    def stream_synchronize(self, stream=None) -> None:
        """tidal_stream_synchronize (None = the default stream)."""
        _check(lib.tidal_stream_synchronize(self.handle, _address(stream, "stream")))

    def _copy_operands(self, function, dst, src, size):
        d, keep_d, d_len = _buffer(dst, True, function, "dst")
        s, keep_s, s_len = _buffer(src, False, function, "src")
        if size is None:
            known = [n for n in (d_len, s_len) if n is not None]
            if not known:
                raise _invalid(function, "size is needed when neither side is a buffer or a "
                                         "tidal.Allocation")
            size = min(known)
        size = _size(function, "size", size)
        for name, length in (("dst", d_len), ("src", s_len)):
            if length is not None and size > length:
                raise _invalid(function, f"size {size} is larger than {name}'s {length} bytes")
        return d, s, size, (keep_d, keep_s)

    def copy(self, dst, src, size=None) -> None:
        """tidal_copy: any kinds, any direction; returns when done. Operands are addresses,
        Allocations or Python buffers; `size` defaults to the smaller known length."""
        d, s, n, keep = self._copy_operands("tidal_copy", dst, src, size)
        _check(lib.tidal_copy(self.handle, d, s, n))
        del keep

    def copy_async(self, dst, src, size=None, stream=None) -> None:
        """tidal_copy_async: as copy, ordered on `stream`. Python buffers given here must stay
        alive until the stream is synchronised."""
        d, s, n, keep = self._copy_operands("tidal_copy_async", dst, src, size)
        _check(lib.tidal_copy_async(self.handle, d, s, n, _address(stream, "stream")))
        del keep

    def copy_batch(self, items, stream=None) -> None:
        """tidal_copy_batch: many copies in few runtime calls. `items` holds (dst, src) or
        (dst, src, size) tuples with operands as for copy. With a stream, it returns once the
        sources may be reused (and, when an item goes device->host, once every host
        destination holds its bytes): Python buffers given as destinations must stay alive until
        the stream is synchronised. Without one, the batch is complete on return."""
        entries = [tuple(item) for item in items]
        array = (_native.CopyItem * max(len(entries), 1))()
        keep = []
        for i, entry in enumerate(entries):
            if len(entry) not in (2, 3):
                raise _invalid("tidal_copy_batch", f"item {i} is not (dst, src) or (dst, src, size)")
            d, s, n, alive = self._copy_operands("tidal_copy_batch", entry[0], entry[1],
                                                 entry[2] if len(entry) == 3 else None)
            array[i].struct_size = ctypes.sizeof(_native.CopyItem)
            array[i].dst, array[i].src, array[i].size = d, s, n
            keep.append(alive)
        _check(lib.tidal_copy_batch(self.handle, array, len(entries), _address(stream, "stream")))
        del keep

    def register(self, buffer, size=None) -> int:
        """tidal_register: page-locks host memory (a writable Python buffer, or an address with
        `size`) until unregister; returns its address. The context keeps a Python buffer alive
        while it is registered."""
        address, keep, length = _buffer(buffer, True, "tidal_register", "buffer")
        n = length if size is None else _size("tidal_register", "size", size)
        if n is None:
            raise _invalid("tidal_register", "size is needed with an address")
        _check(lib.tidal_register(self.handle, address, n))
        with self._registered_lock:
            self._registered[address] = keep
        return address

    def unregister(self, ptr) -> None:
        """tidal_unregister: `ptr` is what register returned (or the buffer itself)."""
        address = _buffer(ptr, True, "tidal_unregister", "ptr")[0] if not isinstance(ptr, int) else ptr
        _check(lib.tidal_unregister(self.handle, address))
        with self._registered_lock:
            self._registered.pop(address, None)

    # -- validation kernels
    def check(self, kind, target, size=None, *, device: int = 0, source=None, source2=None,
              seed: int = 0, scalar: float = 0.0, repeat: int = 1, stream=None) -> CheckResult:
        """tidal_check_run: runs a validation kernel (CheckKind) on `device` and waits."""
        c = _native.new(_native.Check)
        c.kind = operator.index(kind)
        c.device = operator.index(device)
        c.target = _address(target, "target")
        c.source = _address(source, "source")
        c.source2 = _address(source2, "source2")
        if size is None:
            if not isinstance(target, Allocation):
                raise _invalid("tidal_check_run", "size is needed unless target is a tidal.Allocation")
            size = target.size
        c.size = _size("tidal_check_run", "size", size)
        c.seed = operator.index(seed)
        c.scalar = float(scalar)
        c.repeat = operator.index(repeat)
        c.stream = _address(stream, "stream")
        _check(lib.tidal_check_run(self.handle, ctypes.byref(c)))
        return CheckResult(result=c.result, elapsed_ms=c.elapsed_ms)

    # -- description
    def system_info(self) -> SystemInfo:
        """tidal_system_info_get."""
        info = _native.new(_native.SystemInfo)
        _check(lib.tidal_system_info_get(self.handle, ctypes.byref(info)))
        return _fields(info, SystemInfo, runtime=_text, runtime_detail=_text)

    def device_info(self, device: int = 0) -> DeviceInfo:
        """tidal_device_info_get; NotFoundError for a bad index."""
        info = _native.new(_native.DeviceInfo)
        _check(lib.tidal_device_info_get(self.handle, operator.index(device), ctypes.byref(info)))
        return _fields(info, DeviceInfo, name=_text, arch=_text, flags=DeviceFlag,
                       xnack=lambda v: _enum(Xnack, v), pci_bus_id=_text, local_cpus=_text)

    def devices(self) -> list:
        """device_info of every device."""
        return [self.device_info(i) for i in range(self.system_info().device_count)]

    def _text_call(self, function) -> str:
        """A text result (tidal_config_describe, tidal_stats_json): length first, then the text."""
        needed = ctypes.c_size_t()
        status = function(self.handle, None, 0, ctypes.byref(needed))
        # Asking with no buffer answers BUFFER_TOO_SMALL and the length; the text can grow
        # between the two calls (another thread's work), so retry until it fits.
        while True:
            if status not in (0, 13):
                _check(status)
            buf = ctypes.create_string_buffer(needed.value)
            status = function(self.handle, buf, len(buf), ctypes.byref(needed))
            if status == 0:
                return _text(buf.value)

    def config_describe(self) -> str:
        """tidal_config_describe: the resolved settings and policy chain as TOML."""
        return self._text_call(lib.tidal_config_describe)

    def stats(self) -> dict:
        """tidal_stats_json: one statistics snapshot (schema docs/stats.schema.json), parsed."""
        import json
        return json.loads(self._text_call(lib.tidal_stats_json))

    def allocations(self) -> list:
        """tidal_allocations_list: every live allocation, by address, as query() describes it."""
        count = ctypes.c_size_t()
        status = lib.tidal_allocations_list(self.handle, None, 0, ctypes.byref(count))
        while True:  # more may go live between the two calls
            if status not in (0, 13):
                _check(status)
            infos = (_native.PointerInfo * max(count.value, 1))()
            infos[0] = _native.new(_native.PointerInfo)
            status = lib.tidal_allocations_list(self.handle, infos, count.value, ctypes.byref(count))
            if status == 0:
                return [_fields(infos[i], PointerInfo, base=lambda v: v or 0, kind=lambda v: _enum(Kind, v),
                                hints=Hint, advice=Advice, tag=_text, placed_by=_text) for i in range(count.value)]
