"""The base of every class that owns a libtftrain handle: freed once, by ``close()``, by a
``with`` block's end, or when the object is collected."""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Any, Callable, Iterator, Optional, TypeVar

from .errors import InvalidArgumentError

_Self = TypeVar("_Self", bound="NativeObject")


class NativeObject:
    """Owns one native handle and the ``tft_T_free`` that releases it."""

    def __init__(self, handle: int, free: Callable[[int], None]) -> None:
        if not handle:
            raise InvalidArgumentError(f"{type(self).__name__}: the library returned no handle")
        self._handle: Optional[int] = handle
        self._finalizer = weakref.finalize(self, free, handle)
        # Not at interpreter exit: a daemon thread may still be inside the library then, and the
        # process's end releases everything anyway.
        self._finalizer.atexit = False
        self._in_use = threading.Lock()

    @property
    def _live(self) -> int:
        """The handle, or ``InvalidArgumentError`` once closed (the C API's "dead handle")."""
        if self._handle is None:
            raise InvalidArgumentError(f"{type(self).__name__} is closed")
        return self._handle

    @property
    def closed(self) -> bool:
        """Whether ``close()`` released the handle."""
        return self._handle is None

    @contextlib.contextmanager
    def _exclusive(self, action: str) -> Iterator[int]:
        """The handle, held by one call at a time (the C API's rule for a handle): a call while
        another runs, on any thread, raises ``InvalidArgumentError`` rather than wait."""
        if not self._in_use.acquire(blocking=False):
            raise InvalidArgumentError(
                f"{type(self).__name__}.{action}: the object is in use by another call (training, "
                f"or another thread); Trainer.cancel() alone may be called meanwhile"
            )
        try:
            yield self._live
        finally:
            self._in_use.release()

    def close(self) -> None:
        """Releases the native object now; later calls raise ``InvalidArgumentError``. A second
        ``close()`` does nothing; ``close()`` during a call (training) raises."""
        with self._exclusive("close") if self._handle is not None else contextlib.nullcontext():
            self._handle = None
            self._finalizer()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
