"""What training and evaluation report: plain, frozen dataclasses copied out of the C structs
(``tft_metrics``, ``tft_memory_report``, ``tft_train_report``'s three getters)."""

from __future__ import annotations

from dataclasses import dataclass

from . import _capi
from ._capi import lib, read_struct


@dataclass(frozen=True)
class Metrics:
    """Forecast quality of a set of windows; NaN where a figure does not exist."""

    loss: float
    """Quantile (pinball) loss on the scaled target, the training objective."""
    q_risk_p50: float
    """Normalised quantile risk at 0.5, original units (Lim et al. 2021)."""
    q_risk_p90: float
    """The same at 0.9."""
    mae_p50: float
    """Mean absolute error of the median forecast, original units."""
    windows: int
    """Windows evaluated; 0 without a validation set."""

    @classmethod
    def from_struct(cls, m: _capi.Metrics) -> "Metrics":
        """Copies ``tft_metrics``."""
        return cls(m.loss, m.q_risk_p50, m.q_risk_p90, m.mae_p50, m.windows)


@dataclass(frozen=True)
class MemoryReport:
    """One training step's activation memory, measured with checkpointing as configured and
    with it off, beside the strategy's closed-form estimates."""

    checkpointed_peak_bytes: int
    unchecked_peak_bytes: int
    measured_savings: float
    """1 - checkpointed / unchecked."""
    predicted_savings: float
    """``CheckpointConfig.memory_savings`` of the model's units."""
    predicted_compute_overhead: float
    num_units: int
    """Checkpointable units of the model."""

    @classmethod
    def from_struct(cls, m: _capi.MemoryReport) -> "MemoryReport":
        """Copies ``tft_memory_report``."""
        return cls(
            m.checkpointed_peak_bytes,
            m.unchecked_peak_bytes,
            m.measured_savings,
            m.predicted_savings,
            m.predicted_compute_overhead,
            m.num_units,
        )

    def __str__(self) -> str:
        mib = 1024.0 * 1024.0
        return (
            f"activation memory per step: {self.checkpointed_peak_bytes / mib:.2f} MiB "
            f"checkpointed, {self.unchecked_peak_bytes / mib:.2f} MiB without; saved "
            f"{100 * self.measured_savings:.1f}% measured, {100 * self.predicted_savings:.1f}% "
            f"predicted ({self.num_units} units, predicted compute x"
            f"{self.predicted_compute_overhead:.2f})"
        )


@dataclass(frozen=True)
class TrainReport:
    """How a training run ended (``tft_train_summary``, the kept weights' validation metrics
    and the memory measured at the end)."""

    epochs_run: int
    """Completed epochs, resumed ones included."""
    best_epoch: int
    """The epoch whose weights the model keeps (0: the initial ones)."""
    resumed_from_epoch: int
    """Epochs a resumed snapshot held (0: a fresh run)."""
    early_stopped: bool
    initial_validation_loss: float
    best_validation_loss: float
    final_validation_loss: float
    """The last epoch's."""
    final_train_loss: float
    """The last epoch's mean training loss."""
    train_seconds: float
    """Training steps only."""
    samples_per_second: float
    peak_activation_bytes: int
    """Largest training step's."""
    validation: Metrics
    memory: MemoryReport

    @classmethod
    def take(cls, report: int) -> "TrainReport":
        """Reads a ``tft_train_report`` handle through its three getters, and frees it."""
        try:
            s = read_struct(lib.tft_train_report_get_summary, report, _capi.TrainSummary)
            v = read_struct(lib.tft_train_report_get_validation, report, _capi.Metrics)
            m = read_struct(lib.tft_train_report_get_memory, report, _capi.MemoryReport)
        finally:
            lib.tft_train_report_free(report)
        return cls(
            epochs_run=s.epochs_run,
            best_epoch=s.best_epoch,
            resumed_from_epoch=s.resumed_from_epoch,
            early_stopped=bool(s.early_stopped),
            initial_validation_loss=s.initial_validation_loss,
            best_validation_loss=s.best_validation_loss,
            final_validation_loss=s.final_validation_loss,
            final_train_loss=s.final_train_loss,
            train_seconds=s.train_seconds,
            samples_per_second=s.samples_per_second,
            peak_activation_bytes=s.peak_activation_bytes,
            validation=Metrics.from_struct(v),
            memory=MemoryReport.from_struct(m),
        )
