"""``Data``: a table in memory handed to the library as an Arrow C stream
(``tft_data_create_from_arrow_stream``), without a temporary file."""

from __future__ import annotations

import contextlib
import ctypes
import sys
from typing import Any, Iterator

from ._capi import check, create, lib
from ._native import NativeObject

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def arrow_stream_capsule(table: Any) -> Any:
    """The PyCapsule "arrow_array_stream" of a table: a pandas DataFrame through pyarrow (without
    its index), anything else through its ``__arrow_c_stream__`` (pyarrow tables and readers,
    polars, pandas >= 2.2, duckdb relations, ...)."""
    pandas = sys.modules.get("pandas")  # a DataFrame means pandas is imported already
    if pandas is not None and isinstance(table, pandas.DataFrame):
        import pyarrow

        # Explicitly, not pandas' own __arrow_c_stream__: its index would become a column.
        table = pyarrow.Table.from_pandas(table, preserve_index=False)
    export = getattr(table, "__arrow_c_stream__", None)
    if export is None:
        raise TypeError(
            f"tftrain: data must be a table exposing __arrow_c_stream__ (pyarrow, polars, "
            f"pandas >= 2.2, duckdb) or a pandas DataFrame, got {type(table).__name__}"
        )
    return export()


class Data(NativeObject):
    """A table laid out like a data file (one row per series and time step), read whole and
    eagerly into the library. Its columns are read as a Parquet file's, with the same types,
    null rules and messages ("arrow stream: row 11: column 'y': ..."); training from it is
    bitwise equal to training from the same rows in a file.

    The library keeps the producer's buffers, not copies, until this object and every trainer
    or forecast reading it are done. Trainers and models accept tables directly; make a
    ``Data`` to hand one table to several of them without exporting it again.
    """

    def __init__(self, table: Any) -> None:
        capsule = arrow_stream_capsule(table)
        stream = _capsule_pointer(capsule, b"arrow_array_stream")
        # The library moves the stream out (the capsule's struct is left released) in success
        # and failure alike; the capsule's destructor then frees only the empty struct.
        handle = create(lib.tft_data_create_from_arrow_stream, stream)
        super().__init__(handle, lib.tft_data_free)

    @property
    def num_rows(self) -> int:
        """The number of rows the stream held."""
        out = ctypes.c_int64()
        check(lib.tft_data_get_num_rows(self._live, ctypes.byref(out)))
        return out.value

    def __repr__(self) -> str:
        return "Data(<closed>)" if self.closed else f"Data(num_rows={self.num_rows})"


@contextlib.contextmanager
def borrowed(table: Any) -> Iterator[Data]:
    """``table`` as a ``Data`` for one call: itself, or one made here and freed after."""
    if isinstance(table, Data):
        yield table
        return
    with Data(table) as data:
        yield data
