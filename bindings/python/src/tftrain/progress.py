"""Training progress: the record the library reports after every step and epoch, and the two
ready-made reporters ``Trainer.train(progress=True)`` uses (a tqdm bar, else a line per
epoch on stderr)."""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass
from typing import Callable, Optional, Tuple, Union

from . import _capi


class ProgressKind(enum.IntEnum):
    """``tft_progress_kind``."""

    STEP = 0
    """After an optimisation step."""
    EPOCH = 1
    """After an epoch's validation (``validation_loss`` is set)."""


@dataclass(frozen=True)
class Progress:
    """What the library reports after a step or an epoch (``tft_progress``)."""

    kind: ProgressKind
    epoch: int
    """1-based."""
    epochs: int
    """``training.epochs``."""
    step: int
    """1-based within the epoch."""
    steps_per_epoch: int
    train_loss: float
    """Mean training loss of the epoch so far."""
    validation_loss: float
    """Epoch records only; NaN otherwise and without validation."""
    samples_per_second: float
    peak_activation_bytes: int
    """Largest step of the epoch so far."""
    learning_rate: float
    fold: int = 0
    """``backtest()``: the fold training (1-based); 0 in a trainer's run."""
    folds: int = 0
    """``backtest()``: ``backtest.folds``; 0 in a trainer's run."""

    @classmethod
    def from_struct(cls, p: _capi.Progress) -> "Progress":
        """Copies ``tft_progress`` (valid during the callback only)."""
        return cls(
            ProgressKind(p.kind),
            p.epoch,
            p.epochs,
            p.step,
            p.steps_per_epoch,
            p.train_loss,
            p.validation_loss,
            p.samples_per_second,
            p.peak_activation_bytes,
            p.learning_rate,
            p.fold,
            p.folds,
        )


#: A progress callback: a true return value cancels training (``CancelledError``); an
#: exception cancels it too, and ``train`` raises that exception.
ProgressCallback = Callable[[Progress], Optional[bool]]


class _TqdmBar:
    """One tqdm bar over every step of the run, with the losses beside it."""

    def __init__(self, tqdm: Callable[..., object]) -> None:
        self._tqdm = tqdm
        self._bar = None

    def __call__(self, p: Progress) -> None:
        if self._bar is None:
            done = (p.epoch - 1) * p.steps_per_epoch + p.step - (p.kind == ProgressKind.STEP)
            self._bar = self._tqdm(
                total=p.epochs * p.steps_per_epoch, initial=done, unit="step", file=sys.stderr
            )
        if p.kind == ProgressKind.STEP:
            self._bar.set_postfix(epoch=p.epoch, loss=f"{p.train_loss:.4f}", refresh=False)
            self._bar.update(1)
        else:
            self._bar.set_postfix(
                epoch=p.epoch, loss=f"{p.train_loss:.4f}", val=f"{p.validation_loss:.4f}"
            )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class _EpochLines:
    """A line per epoch on stderr, as the C runner prints them (tqdm not installed)."""

    def __call__(self, p: Progress) -> None:
        if p.kind == ProgressKind.EPOCH:
            print(
                f"epoch {p.epoch}/{p.epochs}  train loss {p.train_loss:.6f}  validation loss "
                f"{p.validation_loss:.6f}  {p.samples_per_second:.0f} samples/s",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        pass


def reporter_for(
    progress: Union[bool, ProgressCallback, None],
) -> Tuple[Optional[ProgressCallback], Callable[[], None]]:
    """The callback for ``train(progress=...)`` and what closes it after the run: None or False
    report nothing, True a tqdm bar (a line per epoch without tqdm), a callable is called."""
    if progress is None or progress is False:
        return None, lambda: None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            reporter: Union[_TqdmBar, _EpochLines] = _EpochLines()
        else:
            reporter = _TqdmBar(tqdm)
        return reporter, reporter.close
    if callable(progress):
        return progress, lambda: None
    raise TypeError(f"progress: expected True, False, None or a callable, got {progress!r}")
