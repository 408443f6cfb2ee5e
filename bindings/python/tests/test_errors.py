"""Errors: one exception class per tft_status, each a TftError and the built-in exception
closest to it, carrying the library's message (read on the thread that failed)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

import tftrain
from conftest import tiny
from tftrain import Status
from tftrain.errors import error_for

CLASSES = {
    Status.ERROR_INVALID_ARGUMENT: (tftrain.InvalidArgumentError, ValueError),
    Status.ERROR_CONFIG: (tftrain.ConfigError, ValueError),
    Status.ERROR_DATA: (tftrain.DataError, ValueError),
    Status.ERROR_IO: (tftrain.FileError, OSError),
    Status.ERROR_NUMERICAL: (tftrain.NumericalError, ArithmeticError),
    Status.ERROR_CANCELLED: (tftrain.CancelledError, tftrain.TftError),
    Status.ERROR_UNSUPPORTED: (tftrain.UnsupportedError, NotImplementedError),
    Status.ERROR_INTERNAL: (tftrain.InternalError, RuntimeError),
    Status.ERROR_BUFFER_TOO_SMALL: (tftrain.BufferTooSmallError, tftrain.TftError),
    Status.ERROR_OUT_OF_MEMORY: (tftrain.OutOfMemoryError, MemoryError),
}


@pytest.mark.parametrize("status", [s for s in Status if s != Status.OK])
def test_every_status_has_its_class(status: Status) -> None:
    cls, builtin = CLASSES[status]
    error = error_for(status, "the message")
    assert type(error) is cls and isinstance(error, (tftrain.TftError, builtin))
    assert error.status == status and error.message == str(error) == "the message"
    # The names mirror the library's own (tft_status_name).
    assert tftrain._capi.lib.tft_status_name(status).decode() == status.name


def test_an_unknown_status_keeps_its_number() -> None:
    error = error_for(-99, "news")
    assert type(error) is tftrain.TftError and error.status == -99 and "news" in error.message


def test_library_failures_map_to_their_classes(tmp_path: Path, tiny_csv: Path) -> None:
    import pandas

    with pytest.raises(tftrain.FileError, match="nowhere.yaml"):
        tftrain.Config(tmp_path / "nowhere.yaml")
    with pytest.raises(tftrain.ConfigError, match="training.batch_size"):
        tiny(tmp_path)["training.batch_size"] = 0
    with pytest.raises(tftrain.UnsupportedError, match="cuda"):
        tftrain.Trainer(tiny(tmp_path, **{"training.device": "cuda"}))
    frame = pandas.read_csv(tiny_csv).drop(columns=["footfall"])
    with pytest.raises(tftrain.DataError, match="footfall"):
        tftrain.Trainer(tiny(tmp_path), data=frame)
    with pytest.raises(tftrain.FileError, match="no-model"):
        tftrain.Model.load(tmp_path / "no-model")


def test_a_diverging_run_is_a_numerical_error(tmp_path: Path) -> None:
    config = tiny(tmp_path, **{"training.learning_rate": 1e30, "training.gradient_clip_norm": 0})
    with tftrain.Trainer(config) as trainer, pytest.raises(tftrain.NumericalError) as error:
        trainer.train()
    # The loss or the gradient norm, whichever is read first, is NaN or infinite.
    assert re.search(r"(loss|gradient norm) is -?(inf|nan)\b", error.value.message)


def test_each_thread_reads_its_own_message(tmp_path: Path) -> None:
    barrier = threading.Barrier(2)
    messages = {}

    def fail(key: str) -> None:
        config = tiny(tmp_path)
        barrier.wait()
        for _ in range(50):
            with pytest.raises(tftrain.ConfigError) as error:
                config[key] = -5
            assert key in error.value.message, error.value.message
        messages[key] = error.value.message

    threads = [threading.Thread(target=fail, args=(k,)) for k in ("training.epochs", "training.seed")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(messages) == {"training.epochs", "training.seed"}
