"""The exceptions: one class per ``tft_status`` error, each carrying the library's message."""

from __future__ import annotations

import enum
from typing import Dict, Type


class Status(enum.IntEnum):
    """``tft_status``, the result of every fallible C call (names as ``tft_status_name``)."""

    OK = 0
    ERROR_INVALID_ARGUMENT = -1
    ERROR_CONFIG = -2
    ERROR_DATA = -3
    ERROR_IO = -4
    ERROR_NUMERICAL = -5
    ERROR_CANCELLED = -6
    ERROR_UNSUPPORTED = -7
    ERROR_INTERNAL = -8
    ERROR_BUFFER_TOO_SMALL = -9
    ERROR_OUT_OF_MEMORY = -10


class TftError(Exception):
    """A failed call into libtftrain: ``status`` says which kind, ``message`` what went wrong
    (the library's ``tft_last_error()`` text, naming the file, line, key or column).

    Each subclass stands for one status and also derives from the built-in exception closest
    to it (``ConfigError`` is a ``ValueError``, ``FileError`` an ``OSError``), so either may be
    caught. Built with the message as its only argument (``OSError`` reads two arguments as
    errno and text); the status is a class attribute.
    """

    status: int = Status.ERROR_INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgumentError(TftError, ValueError):
    """``TFT_ERROR_INVALID_ARGUMENT``: a bad argument, a closed object, an index out of range."""

    status = Status.ERROR_INVALID_ARGUMENT


class ConfigError(TftError, ValueError):
    """``TFT_ERROR_CONFIG``: a configuration value, key or file is wrong."""

    status = Status.ERROR_CONFIG


class DataError(TftError, ValueError):
    """``TFT_ERROR_DATA``: input data is wrong (a missing column, a bad value, ...)."""

    status = Status.ERROR_DATA


class FileError(TftError, OSError):
    """``TFT_ERROR_IO``: a file could not be read or written."""

    status = Status.ERROR_IO


class NumericalError(TftError, ArithmeticError):
    """``TFT_ERROR_NUMERICAL``: NaN or infinity in training (the best weights so far are kept)."""

    status = Status.ERROR_NUMERICAL


class CancelledError(TftError):
    """``TFT_ERROR_CANCELLED``: ``Trainer.cancel()`` or the progress callback stopped training;
    the last snapshot stays on disk for ``Trainer.resume()``."""

    status = Status.ERROR_CANCELLED


class UnsupportedError(TftError, NotImplementedError):
    """``TFT_ERROR_UNSUPPORTED``: not available in this build (CUDA, Parquet)."""

    status = Status.ERROR_UNSUPPORTED


class InternalError(TftError, RuntimeError):
    """``TFT_ERROR_INTERNAL``: a bug or an unexpected failure inside the library."""

    status = Status.ERROR_INTERNAL


class BufferTooSmallError(TftError):
    """``TFT_ERROR_BUFFER_TOO_SMALL``: a caller buffer was too small (this package sizes its
    buffers first, so seeing it means the library broke its own size query)."""

    status = Status.ERROR_BUFFER_TOO_SMALL


class OutOfMemoryError(TftError, MemoryError):
    """``TFT_ERROR_OUT_OF_MEMORY``: an allocation failed."""

    status = Status.ERROR_OUT_OF_MEMORY


_BY_STATUS: Dict[int, Type[TftError]] = {
    cls.status: cls
    for cls in (
        InvalidArgumentError,
        ConfigError,
        DataError,
        FileError,
        NumericalError,
        CancelledError,
        UnsupportedError,
        InternalError,
        BufferTooSmallError,
        OutOfMemoryError,
    )
}


def error_for(status: int, message: str) -> TftError:
    """The exception for a failed call's ``status`` and message; a status this package does not
    know (a newer library's) gives a plain ``TftError`` whose ``status`` is that number."""
    cls = _BY_STATUS.get(status)
    if cls is not None:
        return cls(message)
    error = TftError(f"{message} (status {status})")
    error.status = status
    return error
