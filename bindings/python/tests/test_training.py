"""Training: progress, cancelling (the callback, cancel() from another thread, Ctrl-C) with the
trainer left usable and its snapshot intact, and two trainers training at once in two Python
threads (ctypes releases the GIL), each ending bitwise as it would alone."""

from __future__ import annotations

import os
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import List

import pytest

import tftrain
from conftest import ReferenceRun, tiny
from tftrain import Progress, ProgressKind

SNAPSHOT_EVERY_STEP = {"training.snapshot_every_steps": 1}


def test_progress_reports_every_step_and_epoch(reference: ReferenceRun) -> None:
    assert reference.steps > 2 * 2  # tiny.yaml: 2 epochs of several steps
    assert reference.report.epochs_run == 2


def resumes_to_the_reference(trainer: tftrain.Trainer, reference: ReferenceRun) -> None:
    report = trainer.resume()
    assert report.resumed_from_epoch >= 1 or report.epochs_run == reference.report.epochs_run
    assert report.final_validation_loss.hex() == reference.report.final_validation_loss.hex()
    assert report.final_train_loss.hex() == reference.report.final_train_loss.hex()


def test_a_true_return_cancels_and_resume_finishes_bitwise(
    tmp_path: Path, reference: ReferenceRun
) -> None:
    seen: List[Progress] = []

    def stop_in_epoch_two(p: Progress) -> bool:
        seen.append(p)
        return p.epoch == 2 and p.step == 2

    with tftrain.Trainer(tiny(tmp_path, **SNAPSHOT_EVERY_STEP)) as trainer:
        with pytest.raises(tftrain.CancelledError):
            trainer.train(progress=stop_in_epoch_two)
        assert (seen[-1].epoch, seen[-1].step) == (2, 2)
        resumes_to_the_reference(trainer, reference)


def test_an_exception_in_the_callback_cancels_and_is_raised(tmp_path: Path) -> None:
    def fail(p: Progress) -> None:
        raise ValueError(f"stop at step {p.step}")

    with tftrain.Trainer(tiny(tmp_path)) as trainer:
        with pytest.raises(ValueError, match="stop at step 1"):
            trainer.train(progress=fail)


def test_cancel_from_another_thread(tmp_path: Path, reference: ReferenceRun) -> None:
    started = threading.Event()
    with tftrain.Trainer(tiny(tmp_path, **SNAPSHOT_EVERY_STEP)) as trainer:
        canceller = threading.Thread(target=lambda: started.wait() and trainer.cancel())
        canceller.start()
        with pytest.raises(tftrain.CancelledError):
            trainer.train(progress=lambda p: started.set())
        canceller.join()
        resumes_to_the_reference(trainer, reference)


def test_ctrl_c_cancels_cleanly(tmp_path: Path, reference: ReferenceRun) -> None:
    assert threading.current_thread() is threading.main_thread()
    in_epoch_two = threading.Event()
    steps: List[Progress] = []

    def record(p: Progress) -> None:
        steps.append(p)
        if p.epoch == 2:
            in_epoch_two.set()

    def press_ctrl_c() -> None:
        in_epoch_two.wait()
        os.kill(os.getpid(), signal.SIGINT)

    with tftrain.Trainer(tiny(tmp_path, **SNAPSHOT_EVERY_STEP)) as trainer:
        interrupter = threading.Thread(target=press_ctrl_c)
        interrupter.start()
        with pytest.raises(KeyboardInterrupt):
            trainer.train(progress=record)
        interrupter.join()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
        stopped_at = sum(p.kind == ProgressKind.STEP for p in steps)
        assert stopped_at < reference.steps  # it did stop early
        assert trainer.evaluate().windows > 0  # still usable
        resumes_to_the_reference(trainer, reference)


def test_two_trainers_train_at_once(tmp_path: Path, reference: ReferenceRun) -> None:
    calls = {"a": [], "b": []}
    reports = {}

    def train(name: str) -> None:
        with tftrain.Trainer(tiny(tmp_path / name)) as trainer:
            reports[name] = trainer.train(progress=lambda p: calls[name].append(time.monotonic()))

    threads = [threading.Thread(target=train, args=(name,)) for name in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(reports) == {"a", "b"}
    # Each one's callbacks fall inside the other's run: neither waited for the other to end.
    a, b = calls["a"], calls["b"]
    assert a[0] < b[-1] and b[0] < a[-1]
    assert sum(a[0] < t < a[-1] for t in b) > len(b) // 2
    for report in reports.values():
        assert report.final_validation_loss.hex() == reference.report.final_validation_loss.hex()


def test_training_releases_the_gil(tmp_path: Path) -> None:
    """Another Python thread runs between two steps. With a switch interval too long to ever
    force a GIL hand-over, it can only run when the training call itself released the GIL
    (ctypes.CDLL; under PyDLL it would tick zero times during the run)."""
    ticks: List[float] = []
    steps: List[float] = []
    done = threading.Event()

    def tick() -> None:
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)  # a blocking call: releases the GIL

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        ticker = threading.Thread(target=tick)
        ticker.start()
        with tftrain.Trainer(tiny(tmp_path)) as trainer:
            trainer.train(progress=lambda p: steps.append(time.monotonic()))
        done.set()
        ticker.join()
    finally:
        sys.setswitchinterval(interval)
    between_steps = [sum(a < t < b for t in ticks) for a, b in zip(steps, steps[1:])]
    assert statistics.median(between_steps) >= 2, between_steps


def test_one_call_at_a_time(tmp_path: Path) -> None:
    with tftrain.Trainer(tiny(tmp_path)) as trainer:
        def predict_meanwhile(p: Progress) -> None:
            trainer.predict()

        with pytest.raises(tftrain.InvalidArgumentError, match="Trainer.predict: the object is in use"):
            trainer.train(progress=predict_meanwhile)
        with pytest.raises(tftrain.InvalidArgumentError, match="Trainer.close"):
            trainer.train(progress=lambda p: trainer.close())
        assert not trainer.closed


def test_save_and_load(tmp_path: Path, reference: ReferenceRun) -> None:
    with tftrain.Trainer(tiny(tmp_path)) as trainer:
        trainer.train()
        trainer.save(tmp_path / "saved")
        assert tftrain.Model(tmp_path / "saved").predict().equals(reference.forecasts)
        memory = trainer.measure_memory()
    assert memory.num_units == 6
    assert 0 < memory.checkpointed_peak_bytes < memory.unchecked_peak_bytes
    assert memory.measured_savings == pytest.approx(
        1 - memory.checkpointed_peak_bytes / memory.unchecked_peak_bytes
    )
    assert reference.report.memory.num_units == 6


def test_a_memory_budget_by_dotted_key(tmp_path: Path) -> None:
    """checkpoint.memory_budget through the C API: below every plan, Trainer() fails with the
    planner's line and writes nothing; between every unit checkpointed and none, the training
    step's measured peak stays within it."""
    every_unit = {"strategy": "uniform", "interval": 1}
    with tftrain.Trainer(tiny(tmp_path / "measured", checkpoint=every_unit)) as trainer:
        memory = trainer.measure_memory()
    budget = (memory.checkpointed_peak_bytes + memory.unchecked_peak_bytes) // 2

    unfit = tmp_path / "unfit"
    config = tiny(unfit, checkpoint={"strategy": "none"})
    config["checkpoint.memory_budget"] = "1KiB"
    with pytest.raises(tftrain.ConfigError, match="1 KiB fits no checkpoint plan at training.batch"):
        tftrain.Trainer(config)
    assert not unfit.exists()

    config = tiny(tmp_path / "fit", checkpoint={"strategy": "none"})
    config["checkpoint.memory_budget"] = 3 * 2**20  # read back in the largest exact unit
    assert config["checkpoint.memory_budget"] == "3MiB"
    config["checkpoint.memory_budget"] = None
    assert "memory_budget" not in config["checkpoint"]
    config["checkpoint.memory_budget"] = budget
    with tftrain.Trainer(config) as trainer:
        report = trainer.train()
    assert 0 < report.peak_activation_bytes <= budget


def test_init_from_refits_a_saved_model_from_a_file_or_a_table(
    tmp_path: Path, tiny_csv: Path
) -> None:
    """A refit (docs/refit.md) starts from the saved model: its first validation loss is the
    saved model's best, whether the rows come from data.path or a table in memory."""
    pandas = pytest.importorskip("pandas")
    with tftrain.Trainer(tiny(tmp_path / "first")) as trainer:
        saved = trainer.train()
    model = tmp_path / "first" / "model"
    config = tiny(tmp_path / "refit")
    with tftrain.Trainer(config, init_from=model) as trainer:
        report = trainer.train()
    assert report.initial_validation_loss.hex() == saved.best_validation_loss.hex()
    assert config["training.init_from"] == ""  # the caller's config is left alone
    summary = (tmp_path / "refit" / "summary.json").read_text()
    assert '"init_from"' in summary
    table = pandas.read_csv(tiny_csv)
    with tftrain.Trainer(tiny(tmp_path / "table"), data=table, init_from=model) as trainer:
        assert trainer.train().initial_validation_loss.hex() == saved.best_validation_loss.hex()
    with pytest.raises(tftrain.ConfigError, match="model.hidden_size is 16 here but 8"):
        tftrain.Trainer(tiny(tmp_path / "bad", **{"model.hidden_size": 16}), init_from=model)


def test_backtest_reports_every_fold_and_cancels_from_the_callback(tmp_path: Path) -> None:
    """A refit backtest of tiny.yaml over two folds (docs/backtest.md); a true return from the
    progress callback in fold 2 cancels, and fold 1's files stay."""
    overrides = {"backtest.folds": 2, "backtest.mode": "refit", "backtest.refit_epochs": 1}
    folds_seen: List[int] = []
    report = tftrain.backtest(
        tiny(tmp_path / "all", **overrides), progress=lambda p: folds_seen.append(p.fold)
    )
    assert report.finished_folds == 2 and len(report.per_fold) == 2
    assert sorted(set(folds_seen)) == [1, 2]
    assert report.overall.model.windows == sum(f.model.windows for f in report.per_fold)
    assert report.overall.model.q_risk_p50 > 0 and report.overall.naive.q_risk_p50 > 0
    assert (tmp_path / "all" / "backtest.csv").exists()
    with pytest.raises(tftrain.CancelledError, match="the 1 finished folds are in"):
        tftrain.backtest(tiny(tmp_path / "stopped", **overrides), progress=lambda p: p.fold == 2)
    assert '"finished_folds": 1' in (tmp_path / "stopped" / "backtest.json").read_text()
    with pytest.raises(tftrain.ConfigError, match="backtest.folds 500"):
        tftrain.backtest(tiny(tmp_path / "bad", **{"backtest.folds": 500}))
