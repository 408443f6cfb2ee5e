"""train.py: train a Temporal Fusion Transformer from a YAML file with the Python package,
as the C runner tft_train_yaml does (the same summary lines, the same numbers).

    python examples/python/train.py [--memory] CONFIG.yaml [KEY=VALUE ...]

KEY=VALUE pairs override the file (YAML text, as tft_config_set_value reads it), e.g.
training.epochs=3 or output.directory=/tmp/run. --memory reads data.path's CSV into a
pyarrow table first (the target and configured reals as float64, every other column as text,
data.na_values as nulls) and trains from it instead of letting the library read the file.
Progress goes to stderr, one line per epoch; the summary to stdout as "name: value" lines.
Exit status: 0 on success, 1 on any error (its message on stderr), 2 on bad usage.
"""

from __future__ import annotations

import csv
import sys
from typing import TYPE_CHECKING, List, Optional

import tftrain

if TYPE_CHECKING:
    import pyarrow


def memory_table(config: tftrain.Config) -> "pyarrow.Table":
    """data.path's CSV as a pyarrow table, typed as the other runners' --memory type it."""
    import pyarrow
    import pyarrow.csv

    path = config["data.path"]
    if not path:
        raise SystemExit("train.py: --memory needs data.path, the CSV file to read into memory")
    reals = [config["data.target"]]
    for group in ("static_reals", "known_reals", "unknown_reals"):
        reals += config[f"data.{group}"]
    delimiter = config["data.delimiter"]
    with open(path, newline="", encoding="utf-8") as file:
        header = next(csv.reader(file, delimiter=delimiter))
    types = {name: pyarrow.float64() if name in reals else pyarrow.string() for name in header}
    options = pyarrow.csv.ConvertOptions(
        column_types=types,
        null_values=config["data.na_values"],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
    )
    return pyarrow.csv.read_csv(
        path, parse_options=pyarrow.csv.ParseOptions(delimiter=delimiter), convert_options=options
    )


def print_epoch(p: tftrain.Progress) -> None:
    if p.kind == tftrain.ProgressKind.EPOCH:
        print(
            f"epoch {p.epoch}/{p.epochs}  train loss {p.train_loss:.6f}  validation loss "
            f"{p.validation_loss:.6f}  {p.samples_per_second:.0f} samples/s",
            file=sys.stderr,
        )


def print_summary(r: tftrain.TrainReport) -> None:
    """The fields every runner prints, formatted as the C runner's printf does."""
    print(f"epochs_run: {r.epochs_run}")
    print(f"best_epoch: {r.best_epoch}")
    print(f"early_stopped: {'true' if r.early_stopped else 'false'}")
    print(f"initial_validation_loss: {r.initial_validation_loss:.9g}")
    print(f"best_validation_loss: {r.best_validation_loss:.9g}")
    print(f"final_validation_loss: {r.final_validation_loss:.9g}")
    print(f"final_train_loss: {r.final_train_loss:.9g}")
    print(f"q_risk_p50: {r.validation.q_risk_p50:.9g}")
    print(f"q_risk_p90: {r.validation.q_risk_p90:.9g}")
    print(f"samples_per_second: {r.samples_per_second:.1f}")
    print(f"peak_activation_bytes: {r.peak_activation_bytes}")
    print(f"memory_savings_measured: {r.memory.measured_savings:.4f}")
    print(f"memory_savings_predicted: {r.memory.predicted_savings:.4f}")


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    memory = bool(args) and args[0] == "--memory"
    if memory:
        args.pop(0)
    if not args or args[0] in ("-h", "--help"):
        print("usage: train.py [--memory] CONFIG.yaml [KEY=VALUE ...]", file=sys.stderr)
        return 2
    config_path, overrides = args[0], args[1:]
    for assignment in overrides:
        if "=" not in assignment or assignment.startswith("="):
            print(f'train.py: expected KEY=VALUE, got "{assignment}"', file=sys.stderr)
            return 2
    stage = "config"
    try:
        config = tftrain.Config(config_path)
        for assignment in overrides:
            stage = "override"
            key, value = assignment.split("=", 1)
            config.set_yaml(key, value)
        stage = "config"
        config.validate()
        stage = "trainer"
        trainer = tftrain.Trainer(config, data=memory_table(config) if memory else None)
        stage = "training"
        print_summary(trainer.train(progress=print_epoch))
    except tftrain.TftError as error:
        status = getattr(error.status, "name", error.status)  # a newer library's: a number
        print(f"train.py: {stage}: {status}: {error.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
