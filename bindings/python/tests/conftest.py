"""Fixtures shared by the tests: tiny.yaml (what every binding's tests train: a few seconds),
its CSV, a Parquet copy of it, and one reference run from the file that others compare to.

Environment (set by ctest, bindings/CMakeLists.txt): TFTRAIN_LIBRARY (the build's
libtftrain), TFTRAIN_TINY_CONFIG, TFTRAIN_TINY_PARQUET (written by a ctest fixture); without
the last two the repository's tiny.yaml is used and the Parquet copy is written here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import tftrain

if TYPE_CHECKING:
    import pyarrow

REPOSITORY = Path(__file__).resolve().parents[3]
TINY_CONFIG = Path(os.environ.get("TFTRAIN_TINY_CONFIG", REPOSITORY / "examples/configs/tiny.yaml"))


def tiny(output: Path, **overrides: object) -> tftrain.Config:
    """tiny.yaml writing into ``output``, with dotted-key overrides."""
    config = tftrain.Config(TINY_CONFIG)
    config["output.directory"] = str(output)
    config.update(overrides)
    return config


@pytest.fixture(scope="session")
def tiny_csv() -> Path:
    """tiny.yaml's data file (data.path as the library resolved it)."""
    return Path(tftrain.Config(TINY_CONFIG)["data.path"])


@pytest.fixture(scope="session")
def tiny_parquet(tiny_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same rows as Parquet (pyarrow's type inference, as scripts/csv_to_parquet.py)."""
    given = os.environ.get("TFTRAIN_TINY_PARQUET")
    if given:
        return Path(given)
    import pyarrow.csv
    import pyarrow.parquet

    path = tmp_path_factory.mktemp("parquet") / "multiseries.parquet"
    pyarrow.parquet.write_table(pyarrow.csv.read_csv(tiny_csv), path)
    return path


@dataclass(frozen=True)
class ReferenceRun:
    """tiny.yaml trained once from its CSV file: the figures other runs must equal."""

    report: tftrain.TrainReport
    output: Path
    forecasts: "pyarrow.Table"
    """``Trainer.predict()`` right after training."""
    steps: int
    """Progress records of kind STEP the run reported."""


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> ReferenceRun:
    output = tmp_path_factory.mktemp("reference") / "run"
    steps = []
    with tftrain.Trainer(tiny(output)) as trainer:
        report = trainer.train(progress=lambda p: steps.append(p.kind) and False)
        forecasts = trainer.predict()
    return ReferenceRun(report, output, forecasts, steps.count(tftrain.ProgressKind.STEP))
