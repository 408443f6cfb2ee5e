"""tftrain: train Temporal Fusion Transformers with gradient checkpointing, from Python.

A thin layer over libtftrain's C API (``capi/include/tftrain.h``) through ctypes. Importing it
loads the library, which loads LibTorch and Arrow C++ as shared libraries; the torch and
pyarrow Python packages are not imported (pyarrow is, on first use of data in memory or
forecasts)::

    import pandas as pd
    import tftrain

    df = pd.read_csv("examples/data/multiseries.csv")
    config = tftrain.Config("examples/configs/tiny.yaml")
    trainer = tftrain.Trainer(config, data=df)
    report = trainer.train(progress=True)
    forecasts = trainer.predict()          # a pyarrow.Table
"""

from __future__ import annotations

from ._capi import lib as _lib
from .backtest import BacktestReport, Forecasts, backtest
from .checkpoint import CheckpointConfig, Strategy
from .config import Config
from .data import Data
from .errors import (
    BufferTooSmallError,
    CancelledError,
    ConfigError,
    DataError,
    FileError,
    InternalError,
    InvalidArgumentError,
    NumericalError,
    OutOfMemoryError,
    Status,
    TftError,
    UnsupportedError,
)
from .model import Model
from .progress import Progress, ProgressCallback, ProgressKind
from .reports import MemoryReport, Metrics, TrainReport
from .trainer import Trainer

#: The library's version, "MAJOR.MINOR.PATCH" (``tft_version_string``); the package's is the same.
__version__: str = _lib.tft_version_string().decode("ascii")


def api_version() -> int:
    """``tft_api_version()``: the library's version as MAJOR * 10000 + MINOR * 100 + PATCH."""
    return int(_lib.tft_api_version())


__all__ = [
    "BacktestReport",
    "BufferTooSmallError",
    "CancelledError",
    "CheckpointConfig",
    "Config",
    "ConfigError",
    "Data",
    "DataError",
    "FileError",
    "Forecasts",
    "InternalError",
    "InvalidArgumentError",
    "MemoryReport",
    "Metrics",
    "Model",
    "NumericalError",
    "OutOfMemoryError",
    "Progress",
    "ProgressCallback",
    "ProgressKind",
    "Status",
    "Strategy",
    "TftError",
    "TrainReport",
    "Trainer",
    "UnsupportedError",
    "api_version",
    "backtest",
    "__version__",
]
