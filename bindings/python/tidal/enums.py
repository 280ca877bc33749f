"""tidal.h's enums and bit sets as IntEnum / IntFlag, with the values of the header."""
from __future__ import annotations

import enum


class Kind(enum.IntEnum):
    """tidal_kind: where memory lives. AUTO lets the policy chain decide."""
    AUTO = 0
    DEVICE = 1
    MANAGED = 2
    PINNED = 3
    PAGEABLE = 4
    DEVICE_FINE = 5
    MANAGED_COARSE = 6
    ELASTIC = 7

    @property
    def label(self) -> str:
        """The name tidal uses in configurations and messages: "device-fine", "managed"..."""
        return self.name.lower().replace("_", "-")

    @classmethod
    def parse(cls, value) -> "Kind":
        """A Kind from a Kind, an int, or a configuration name such as "managed" or "device-fine"."""
        if isinstance(value, str):
            key = value.strip().upper().replace("-", "_")
            if key not in cls.__members__:
                names = ", ".join(k.label for k in cls)
                raise ValueError(f"unknown memory kind {value!r}; expected one of {names}")
            return cls[key]
        return cls(value)


class Hint(enum.IntFlag):
    """TIDAL_HINT_*: what the caller knows about how a buffer will be used."""
    NONE = 0
    READ_MOSTLY = 0x01
    HOST_READ = 0x02
    HOST_WRITE = 0x04
    DEVICE_ONLY = 0x08
    STREAMING = 0x10
    TEMPORARY = 0x20
    ALL = 0x3F


class Advice(enum.IntFlag):
    """TIDAL_ADVICE_*: advice on managed memory."""
    NONE = 0
    READ_MOSTLY = 0x01
    PREFERRED_DEVICE = 0x02
    PREFERRED_HOST = 0x04
    ACCESSED_BY_DEVICE = 0x08
    COARSE_GRAIN = 0x10
    ALL = 0x1F


class Access(enum.IntFlag):
    """TIDAL_ACCESS_*: what work declared with Context.declare does to a range."""
    READ = 0x1
    WRITE = 0x2
    READ_WRITE = 0x3


class Offload(enum.IntFlag):
    """TIDAL_OFFLOAD_*: how Context.offload / offload_range treat what they take away."""
    NONE = 0
    DISCARD = 0x1         # drop the contents instead of copying them (a KV cache)
    KEEP_PHYSICAL = 0x2   # keep the physical chunks in tidal's pool instead of freeing them
    FLAGS_ALL = 0x3


class Restore(enum.IntFlag):
    """TIDAL_RESTORE_*: flags of Context.restore / restore_range."""
    NONE = 0
    READ_ONLY = 0x1       # not written while resident: the next offload copies nothing
    FLAGS_ALL = 0x1


class DeviceFlag(enum.IntFlag):
    """TIDAL_DEVICE_FLAG_*: a device's capabilities (DeviceInfo.flags)."""
    NONE = 0
    SIMULATED = 0x01
    MANAGED = 0x02
    CONCURRENT_MANAGED = 0x04
    PAGEABLE_ACCESS = 0x08
    MIGRATES_ON_FAULT = 0x10
    HOST_NATIVE_ATOMICS = 0x20
    FINE_GRAINED = 0x40


class Xnack(enum.IntEnum):
    """tidal_xnack: whether an AMD device retries faulting accesses."""
    NOT_APPLICABLE = 0
    ON = 1
    OFF = 2
    UNKNOWN = 3


class LinkType(enum.IntEnum):
    """tidal_link_type: how two devices are linked (tidal_peer_info.link)."""
    UNKNOWN = 0
    SAME = 1
    PCIE = 2
    XGMI = 3
    NVLINK = 4
    NONE = 5


class Coherency(enum.IntEnum):
    """tidal_coherency: fine or coarse-grained coherence of a managed range (AMD)."""
    UNKNOWN = 0
    FINE = 1
    COARSE = 2
    INDETERMINATE = 3


class CheckKind(enum.IntEnum):
    """tidal_check_kind: the validation kernels of Context.check."""
    TOUCH_READ = 1
    TOUCH_WRITE = 2
    PATTERN_FILL = 3
    PATTERN_VERIFY = 4
    COPY = 5
    TRIAD = 6
    ATOMIC_ADD = 7
    RUNTIME_COPY = 8
    SPIN = 9
    ATOMIC_SET = 10
    ATOMIC_SET_SHARED = 11


class AtomicOp(enum.IntFlag):
    """TIDAL_ATOMIC_*: the atomic set's operations (CheckResult.result of an ATOMIC_SET check:
    the operations whose word came out wrong)."""
    NONE = 0
    AND32 = 0x00001
    OR32 = 0x00002
    XOR32 = 0x00004
    ADD32 = 0x00008
    SUB32 = 0x00010
    MIN32 = 0x00020
    MAX32 = 0x00040
    EXCH32 = 0x00080
    CAS32 = 0x00100
    AND64 = 0x00200
    OR64 = 0x00400
    XOR64 = 0x00800
    ADD64 = 0x01000
    SUB64 = 0x02000
    MIN64 = 0x04000
    MAX64 = 0x08000
    EXCH64 = 0x10000
    CAS64 = 0x20000
    FADD32 = 0x40000
    ALL = 0x7FFFF


class Status(enum.IntEnum):
    """tidal_status numbers (the exceptions of tidal.errors carry them)."""
    OK = 0
    ERROR_INVALID_ARGUMENT = 1
    ERROR_OUT_OF_MEMORY = 2
    ERROR_NOT_SUPPORTED = 3
    ERROR_NO_DEVICE = 4
    ERROR_UNKNOWN_POINTER = 5
    ERROR_CONFIG = 6
    ERROR_PLUGIN = 7
    ERROR_RUNTIME = 8
    ERROR_BUDGET_EXCEEDED = 9
    ERROR_ILLEGAL_ACCESS = 10
    ERROR_INTERNAL = 11
    ERROR_NOT_FOUND = 12
    ERROR_BUFFER_TOO_SMALL = 13
