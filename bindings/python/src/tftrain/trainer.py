"""``Trainer``: trains, resumes, cancels, evaluates, forecasts, saves and measures memory, over
the C API's ``tft_trainer``. Training runs in the library with the GIL released; Ctrl-C
cancels it through ``tft_trainer_cancel``."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Union

from . import _capi
from ._capi import Handle, ProgressFunction, check, create, last_error, lib, read_struct
from ._native import NativeObject
from .config import ConfigSource, as_config
from .data import borrowed
from .errors import error_for
from .predictions import forecast_table
from .progress import Progress, ProgressCallback, reporter_for
from .reports import MemoryReport, Metrics, TrainReport

if TYPE_CHECKING:
    import pyarrow

ProgressOption = Union[bool, ProgressCallback, None]

#: A NULL ``tft_progress_fn``: clears the callback.
_NO_CALLBACK = ProgressFunction()


class Trainer(NativeObject):
    """A model, its data and its training state, made from a configuration.

    ``Trainer(config)`` reads ``data.path``; ``Trainer(config, data=table)`` takes the data in
    memory instead (a pandas DataFrame, or anything exposing ``__arrow_c_stream__``), copied
    into the trainer, so the table may go right after. ``config`` is a ``Config``, a YAML
    file's path or a mapping; it is copied.

    ``init_from``: a saved model's folder (``model/`` of an earlier run) to refit, the config
    key ``training.init_from``: the run starts from its weights and fitted transforms, with its
    architecture (docs/refit.md). ``ConfigError`` names a config key that contradicts it.

    One call at a time per trainer (``InvalidArgumentError`` otherwise), except ``cancel()``,
    which any thread may call at any time. Distinct trainers train in parallel threads: ctypes
    releases the GIL while the library trains.
    """

    def __init__(
        self,
        config: ConfigSource,
        data: Any = None,
        init_from: Union[str, "os.PathLike[str]", None] = None,
    ) -> None:
        cfg = as_config(config)
        if init_from is not None:  # training.init_from on a copy: the caller's config stays
            cfg = cfg.copy() if cfg is config else cfg
            cfg["training.init_from"] = os.fspath(init_from)
        try:
            if data is None:
                handle = create(lib.tft_trainer_create, cfg._live)
            else:
                with borrowed(data) as table:
                    handle = create(lib.tft_trainer_create_from_data, cfg._live, table._live)
        finally:
            if cfg is not config:
                cfg.close()
        super().__init__(handle, lib.tft_trainer_free)

    def train(self, progress: ProgressOption = None) -> TrainReport:
        """Trains from the initial weights for ``training.epochs`` epochs (fewer with early
        stopping), keeps the best epoch's weights and writes the run's files to
        ``output.directory`` (model/, forecast.csv, summary.json, ...).

        ``progress``: True for a tqdm bar (a line per epoch on stderr without tqdm), or a
        callable taking a ``Progress`` after every step and epoch, whose true return value
        cancels. Raises ``CancelledError`` when cancelled (``cancel()`` or the callback), the
        callback's own exception if it raised, ``KeyboardInterrupt`` after Ctrl-C (which
        cancels the run at the next step); the last snapshot stays for ``resume()``.
        ``NumericalError`` on NaN or infinity; ``FileError`` when a file cannot be written.
        """
        return self._run("train", lib.tft_trainer_train, progress)

    def resume(self, progress: ProgressOption = None) -> TrainReport:
        """The same, continuing from the snapshot of an earlier run with this
        ``output.directory`` (a fresh run when there is none); it ends bitwise like a run that
        never stopped."""
        return self._run("resume", lib.tft_trainer_resume, progress)

    def cancel(self) -> None:
        """Asks a running ``train``/``resume`` to stop at the next step. Safe from any thread;
        a request made while not training is kept for the next run."""
        handle = self._handle
        if handle is not None:
            check(lib.tft_trainer_cancel(handle))

    def evaluate(self) -> Metrics:
        """The current weights on the validation windows."""
        with self._exclusive("evaluate") as handle:
            return Metrics.from_struct(read_struct(lib.tft_trainer_evaluate, handle, _capi.Metrics))

    def predict(self, data: Any = None) -> "pyarrow.Table":
        """Forecasts of the current weights as a ``pyarrow.Table`` with forecast.csv's columns:
        of the training data (None), or of another table laid out like it, seen through the
        transforms fitted in training (its validation windows, then the window after it)."""
        with self._exclusive("predict") as handle:
            if data is None:
                return forecast_table(create(lib.tft_trainer_predict, handle))
            with borrowed(data) as table:
                return forecast_table(create(lib.tft_trainer_predict_data, handle, table._live))

    def save(self, directory: Union[str, "os.PathLike[str]", None] = None) -> None:
        """Writes the current weights as a model folder (``Model.load`` reads it), replacing
        one that exists; None: ``output.directory``/model."""
        path = None if directory is None else os.fsencode(directory)
        with self._exclusive("save") as handle:
            check(lib.tft_trainer_save(handle, path))

    def measure_memory(self) -> MemoryReport:
        """Measures one training step's activation peak with checkpointing as configured and
        with it off (the training state is left as it was)."""
        with self._exclusive("measure_memory") as handle:
            report = read_struct(lib.tft_trainer_measure_memory, handle, _capi.MemoryReport)
            return MemoryReport.from_struct(report)

    def _run(
        self, action: str, start: Callable[..., int], progress: ProgressOption
    ) -> TrainReport:
        callback, close_reporter = reporter_for(progress)
        raised: List[BaseException] = []

        def on_progress(record: Any, _user: Any) -> int:
            # Installed even without a callback: the main thread's Python signal handlers run
            # here, between steps (see _sigint_cancels). Nothing may unwind into C.
            try:
                if callback is not None and callback(Progress.from_struct(record.contents)):
                    return 1
                return 0
            except BaseException as error:
                raised.append(error)
                return 1

        trampoline = ProgressFunction(on_progress)  # alive until the callback is cleared
        report = Handle()
        with self._exclusive(action) as handle:
            check(lib.tft_trainer_set_progress_callback(handle, trampoline, None))
            try:
                with _sigint_cancels(self) as interrupted:
                    status = start(handle, ctypes.byref(report))
                    error = error_for(status, last_error()) if status else None
            finally:
                lib.tft_trainer_set_progress_callback(handle, _NO_CALLBACK, None)
                close_reporter()
        if raised or interrupted:
            if report.value:
                lib.tft_train_report_free(report.value)
            if raised:
                raise raised[0]
            raise KeyboardInterrupt
        if error is not None:
            raise error
        return TrainReport.take(report.value or 0)


@contextlib.contextmanager
def _sigint_cancels(trainer: Trainer) -> Iterator[List[bool]]:
    """While training on the main thread with Python's default SIGINT handling, Ctrl-C calls
    ``trainer.cancel()`` instead of raising at once: the run stops cleanly at the next step,
    its snapshot intact, and ``train`` raises ``KeyboardInterrupt`` afterwards. Python runs the
    handler when the main thread next runs bytecode: in the progress trampoline, every step."""
    interrupted: List[bool] = []
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield interrupted
        return

    def cancel(_signum: int, _frame: Optional[Any]) -> None:
        interrupted.append(True)
        trainer.cancel()

    previous = signal.signal(signal.SIGINT, cancel)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)
