"""tidal's statuses as Python exceptions.

Every failing call raises the subclass of TidalError for its status, carrying the status
number, its enumerator name and the detailed message tidal_last_error() held right after the
call (what failed, the native error, a hint). Where a Python built-in exception means the same
thing the class derives from it too, so `except MemoryError` or `except ValueError` also work.
"""
from __future__ import annotations


class TidalError(Exception):
    """A tidal call failed. `status` is the tidal_status number, `status_name` its enumerator
    name (e.g. "TIDAL_ERROR_OUT_OF_MEMORY") and `message` tidal's detailed message."""

    def __init__(self, status: int, status_name: str, message: str):
        super().__init__(f"{status_name}: {message}" if message else status_name)
        self.status = status
        self.status_name = status_name
        self.message = message

    def __reduce__(self):
        # Exceptions cross process boundaries (multiprocessing) by pickling their init args.
        return (type(self), (self.status, self.status_name, self.message))


class InvalidArgumentError(TidalError, ValueError):
    """TIDAL_ERROR_INVALID_ARGUMENT: a bad size, flag, alignment, pointer or struct."""


class OutOfMemoryError(TidalError, MemoryError):
    """TIDAL_ERROR_OUT_OF_MEMORY: the runtime or a device could not supply the bytes."""


class NotSupportedError(TidalError):
    """TIDAL_ERROR_NOT_SUPPORTED: the runtime or device lacks the asked capability (also raised
    when the loaded libtidal lacks a function this package binds)."""


class NoDeviceError(TidalError):
    """TIDAL_ERROR_NO_DEVICE: no usable GPU for the asked runtime."""


class UnknownPointerError(TidalError, LookupError):
    """TIDAL_ERROR_UNKNOWN_POINTER: a pointer tidal did not return, or already freed."""


class ConfigError(TidalError):
    """TIDAL_ERROR_CONFIG: the configuration is invalid; the message gives file:line:column."""


class PluginError(TidalError):
    """TIDAL_ERROR_PLUGIN: a policy plugin failed to load or decided badly."""


class DeviceRuntimeError(TidalError):
    """TIDAL_ERROR_RUNTIME: the device runtime failed in another way."""


class BudgetExceededError(TidalError):
    """TIDAL_ERROR_BUDGET_EXCEEDED: a device budget could not be honoured."""


class IllegalAccessError(TidalError):
    """TIDAL_ERROR_ILLEGAL_ACCESS: the device touched memory it must not."""


class InternalError(TidalError):
    """TIDAL_ERROR_INTERNAL: a bug in tidal; please report it with the message."""


class NotFoundError(TidalError, LookupError):
    """TIDAL_ERROR_NOT_FOUND: a looked-up key, device or name does not exist."""


class BufferTooSmallError(TidalError):
    """TIDAL_ERROR_BUFFER_TOO_SMALL: an output buffer is shorter than the result."""


# tidal_status number -> class. Statuses a newer library adds map to TidalError itself.
BY_STATUS = {
    1: InvalidArgumentError,
    2: OutOfMemoryError,
    3: NotSupportedError,
    4: NoDeviceError,
    5: UnknownPointerError,
    6: ConfigError,
    7: PluginError,
    8: DeviceRuntimeError,
    9: BudgetExceededError,
    10: IllegalAccessError,
    11: InternalError,
    12: NotFoundError,
    13: BufferTooSmallError,
}


def error_for(status: int, status_name: str, message: str) -> TidalError:
    """The exception for a status that is not TIDAL_OK."""
    return BY_STATUS.get(status, TidalError)(status, status_name, message)
