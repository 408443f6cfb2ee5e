"""Forecasts out of the library as a ``pyarrow.Table`` (``tft_predictions_to_arrow_stream``)."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from ._capi import ArrowArrayStream, check, lib

if TYPE_CHECKING:
    import pyarrow


def forecast_table(predictions: int) -> "pyarrow.Table":
    """The forecasts of a ``tft_predictions`` handle, which this call frees: forecast.csv's
    columns, typed (kind, the series columns, origin, time, horizon, q0.1 ..., actual; see
    docs/outputs.md). Values equal forecast.csv's (float32 forecasts widened exactly)."""
    try:
        import pyarrow  # before the stream exists: nothing to release if it is missing

        stream = ArrowArrayStream()
        check(lib.tft_predictions_to_arrow_stream(predictions, ctypes.byref(stream)))
    finally:
        lib.tft_predictions_free(predictions)  # the stream holds its own copy
    try:
        # pyarrow moves the stream into its reader (marking ours released) and owns it.
        reader = pyarrow.RecordBatchReader._import_from_c(ctypes.addressof(stream))
    except BaseException:
        if stream.release:
            stream.release(ctypes.byref(stream))
        raise
    return reader.read_all()
