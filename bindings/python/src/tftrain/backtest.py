"""A rolling-origin backtest of a config (``tft_backtest_run``, docs/backtest.md)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, List, Tuple

from . import _capi
from ._capi import Handle, ProgressFunction, last_error, lib, read_struct
from .config import ConfigSource, as_config
from .errors import error_for
from .progress import Progress, ProgressCallback
from .reports import Metrics


@dataclass(frozen=True)
class Forecasts:
    """One fold's figures, or every fold's pooled: the model's and both baselines'."""

    model: Metrics
    naive: Metrics
    seasonal_naive: Metrics
    """``windows`` 0: not scored."""


@dataclass(frozen=True)
class BacktestReport:
    """How a backtest went."""

    folds: int
    """``backtest.folds``."""
    finished_folds: int
    folds_beating_naive: int
    """Finished folds whose P50 q-risk is below the naive forecast's."""
    interval_coverage: float
    """The model's, lowest to highest quantile, over every fold."""
    seconds: float
    overall: Forecasts
    """Every fold pooled."""
    per_fold: Tuple[Forecasts, ...]
    """Fold 1 first."""


def _forecasts(handle: int, fold: int) -> Forecasts:
    metrics: List[Metrics] = []
    for which in range(3):
        m = _capi.Metrics()
        m.struct_size = ctypes.sizeof(_capi.Metrics)
        status = lib.tft_backtest_report_get_metrics(handle, fold, which, ctypes.byref(m))
        if status:
            raise error_for(status, last_error())
        metrics.append(Metrics.from_struct(m))
    return Forecasts(*metrics)


def backtest(config: ConfigSource, progress: ProgressCallback | None = None) -> BacktestReport:
    """Runs the rolling-origin backtest ``config`` describes (``backtest.folds``,
    ``backtest.mode``, ``backtest.refit_epochs``) on ``data.path``, writing each fold's run and
    backtest.csv, backtest.json and backtest.svg under ``output.directory``.

    ``progress``: called with a ``Progress`` (``fold`` and ``folds`` set) after every step and
    epoch; a true return cancels (``CancelledError``, the finished folds' files stay), and an
    exception it raises (``KeyboardInterrupt`` included) cancels and is raised."""
    cfg = as_config(config)
    raised: List[BaseException] = []

    def on_progress(record: Any, _user: Any) -> int:
        try:  # nothing may unwind into C
            cancel = progress is not None and progress(Progress.from_struct(record.contents))
            return 1 if cancel else 0
        except BaseException as error:
            raised.append(error)
            return 1

    trampoline = ProgressFunction(on_progress)
    report = Handle()
    try:
        status = lib.tft_backtest_run(cfg._live, trampoline, None, ctypes.byref(report))
    finally:
        if cfg is not config:
            cfg.close()
    if raised:
        raise raised[0]
    if status:
        raise error_for(status, last_error())
    try:
        s = read_struct(lib.tft_backtest_report_get_summary, report.value, _capi.BacktestSummary)
        return BacktestReport(
            s.folds,
            s.finished_folds,
            s.folds_beating_naive,
            s.interval_coverage,
            s.seconds,
            _forecasts(report.value, 0),
            tuple(_forecasts(report.value, f) for f in range(1, s.finished_folds + 1)),
        )
    finally:
        lib.tft_backtest_report_free(report.value)
