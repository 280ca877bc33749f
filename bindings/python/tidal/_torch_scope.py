"""tidal.torch.tag's scopes without torch: the per-thread stack of scopes and the rule that
chooses each tensor's kind. tidal.torch hands the scope in force to its allocator shim
(tidal_torch_scope_set); the tests drive this module with no torch at all.

The kind rule, applied by the shim to each tensor allocated inside a scope:
  kind=None (the default)  elastic memory where the runtime has a virtual-memory API (CUDA,
                           HIP where hipMemCreate works, the simulated device); where it
                           answers NOT_SUPPORTED, kind AUTO (the policy chain decides) and the
                           tensors cannot be offloaded;
  kind="auto"              the policy chain decides, seeing the tag (a `rules` entry may
                           match it); offload only takes what it made elastic;
  kind=<any other>         exactly that kind ("elastic", "device", "managed"...).
Tensors smaller than min_bytes take kind AUTO: an elastic allocation is rounded up to the
runtime's granularity (2 MiB on CUDA), which small tensors (biases, norms) would waste.
The innermost scope decides; leaving it brings back the one around it. Scopes are per
thread, as PyTorch allocates on the thread that creates a tensor (gradients made by
backward() on autograd's threads get the default tag "torch").
"""
from __future__ import annotations

import contextlib
import dataclasses
import operator
import threading

from ._native import TAG_MAX
from .enums import Kind

PREFER_ELASTIC = -1   # the shim's kind for kind=None


@dataclasses.dataclass(frozen=True)
class Scope:
    tag: str
    kind: int        # a tidal_kind, or PREFER_ELASTIC
    min_bytes: int


def make_scope(tag, kind=None, min_bytes: int = 0) -> Scope:
    """A checked Scope: ValueError for a tag that is not a str, holds a NUL or is too long
    (TAG_MAX - 1 bytes in UTF-8), an unknown kind, or a negative min_bytes."""
    if not isinstance(tag, str):
        raise TypeError(f"tidal.torch.tag: the tag must be a str, not {type(tag).__name__}")
    raw = tag.encode("utf-8")
    if b"\0" in raw:
        raise ValueError("tidal.torch.tag: the tag contains a NUL byte")
    if len(raw) >= TAG_MAX:
        raise ValueError(f"tidal.torch.tag: the tag {tag!r} has {len(raw)} bytes; at most "
                         f"{TAG_MAX - 1} fit")
    try:
        chosen = PREFER_ELASTIC if kind is None else int(Kind.parse(kind))
    except ValueError as e:
        raise ValueError(f"tidal.torch.tag: {e}") from None
    if chosen == Kind.PAGEABLE:
        raise ValueError("tidal.torch.tag: pageable host memory cannot hold CUDA tensors")
    n = operator.index(min_bytes)
    if n < 0:
        raise ValueError(f"tidal.torch.tag: min_bytes is {n}; it must be >= 0")
    return Scope(tag, chosen, n)


class ScopeStack:
    """The scopes entered on each thread, innermost last."""

    def __init__(self):
        self._local = threading.local()

    def _scopes(self) -> list:
        scopes = getattr(self._local, "scopes", None)
        if scopes is None:
            scopes = self._local.scopes = []
        return scopes

    def current(self):
        """The scope in force on this thread, or None."""
        scopes = self._scopes()
        return scopes[-1] if scopes else None

    @contextlib.contextmanager
    def entered(self, scope: Scope, apply):
        """Makes `scope` the one in force on this thread for the `with` block; `apply(scope or
        None)` tells the allocator each time the scope in force changes."""
        scopes = self._scopes()
        scopes.append(scope)
        try:
            apply(scope)
            yield scope
        finally:
            scopes.pop()
            apply(scopes[-1] if scopes else None)
