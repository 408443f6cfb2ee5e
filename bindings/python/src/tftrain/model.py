"""``Model``: a saved model folder, loaded to forecast (``tft_model``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Union

from ._capi import create, lib
from ._native import NativeObject
from .data import borrowed
from .predictions import forecast_table

if TYPE_CHECKING:
    import pyarrow

PathLike = Union[str, "os.PathLike[str]"]


class Model(NativeObject):
    """A model folder written by training or ``Trainer.save``: weights, the model's and the
    data transforms' settings, the training configuration."""

    def __init__(self, directory: PathLike) -> None:
        """Loads a model folder. ``FileError`` when a file is missing or unreadable (or fails
        its checksum), ``ConfigError`` when its settings are wrong."""
        handle = create(lib.tft_model_create_from_directory, os.fsencode(directory))
        super().__init__(handle, lib.tft_model_free)

    @classmethod
    def load(cls, directory: PathLike) -> "Model":
        """``Model(directory)``."""
        return cls(directory)

    def predict(self, data: Union[PathLike, Any, None] = None) -> "pyarrow.Table":
        """Forecasts as a ``pyarrow.Table`` (forecast.csv's columns), with the transforms fitted
        in training (nothing is refitted), for: None, the training data file (``ConfigError``
        for a model trained from memory, which has none); a path, a CSV or Parquet file laid
        out like it; or a table (a pandas DataFrame, anything exposing ``__arrow_c_stream__``).
        The training configuration's validation split applies."""
        with self._exclusive("predict") as handle:
            if data is None or isinstance(data, (str, os.PathLike)):
                path = None if data is None else os.fsencode(data)
                return forecast_table(create(lib.tft_model_predict, handle, path))
            with borrowed(data) as table:
                return forecast_table(create(lib.tft_model_predict_data, handle, table._live))

    def __repr__(self) -> str:
        return "Model(<closed>)" if self.closed else "Model()"
