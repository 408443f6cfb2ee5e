#!/usr/bin/env python3
"""peer_accuracy: trains the peer, pytorch-forecasting's TemporalFusionTransformer, on the data and
with the hyper-parameters of a tft-train YAML, and scores it on the same validation windows.

    $(bench/peer/setup.sh | tail -n 1) bench/peer/peer_accuracy.py --config CONFIG.yaml \\
        [--data FILE.csv] [--threads 1] [--json OUT.json]

Run it with the peer venv's python (bench/peer/setup.sh); bench/accuracy_benchmark.py does. What
is the same as tft-train's run of that YAML:

- the data file, its columns and their roles (group columns are the series; calendar features
  such as `hour` and `day_of_week` are derived from the time column as tft-train derives them,
  from the wall-clock time as written; `relative_time_idx` is the peer's add_relative_time_idx);
- the split: the last `split.validation_steps` (or `validation_fraction`) rows of each series;
  training windows lie entirely before it, validation windows forecast only inside it;
- the windows: encoder and prediction lengths fixed, and `windows.stride` kept by filtering the
  peer's windows (TimeSeriesDataSet.filter) to the starts tft-train uses, in training and in
  validation, so both train on the same windows and are scored on the same ones;
- the model: hidden size (also hidden_continuous_size), attention heads, dropout, LSTM layers,
  quantiles (QuantileLoss);
- the training: epochs, batch size, Adam's learning rate, gradient clipping by norm, the
  reduce-on-plateau schedule's factor, patience and floor (the schedules still differ: the
  peer's ReduceLROnPlateau cuts after more than `patience` bad epochs, with a cooldown of
  `patience` epochs and a relative threshold of 1e-4, where tft-train cuts after `patience`
  bad epochs with no cooldown or threshold; issue 39's note), early stopping on the validation loss
  with the YAML's patience, the best epoch's weights kept (ModelCheckpoint), the seed, and one
  intra-op thread per `--threads`.

The rest is the peer's ordinary usage, its defaults: the target normaliser ("auto": an
EncoderNormalizer, with a relu or log transformation for positive targets), add_target_scales,
a StandardScaler for other reals, its own embedding sizes, Lightning's Trainer.

Scores, as tft-train's summary.json defines them (docs/outputs.md): q-risk 2 * sum QL_q / sum |y|
in original units for P50 and P90, coverage per quantile (targets at or below the forecast),
interval coverage (targets between the lowest and highest quantiles' forecasts).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_bench import import_peer  # noqa: E402  (loads the CUDA stand-ins before torch)

CALENDAR = ("day_of_week", "month", "day_of_month", "hour")


def names(entries):
    """Column names of a list of categoricals (a name, or {name, embedding_dim})."""
    result = []
    for entry in entries or []:
        if isinstance(entry, dict):
            if entry.get("embedding_dim", 0):
                sys.exit(f"peer_accuracy: embedding_dim for {entry['name']} is not mapped")
            result.append(entry["name"])
        else:
            result.append(entry)
    return result


def load_config(path: Path) -> dict:
    import yaml
    config = yaml.safe_load(path.read_text())
    data, windows = config["data"], config["windows"]
    split = config.get("split") or {}
    model = config.get("model") or {}
    training = config.get("training") or {}
    schedule = training.get("lr_schedule") or {}
    if "validation_steps" in split and "validation_fraction" in split:
        sys.exit("peer_accuracy: split gives both validation_steps and validation_fraction")
    if int(model.get("decoder_layers", 1)) != 1:
        sys.exit("peer_accuracy: the peer has one attention block (model.decoder_layers 1)")
    if schedule.get("kind", "reduce_on_plateau") not in ("reduce_on_plateau", "none"):
        sys.exit(f"peer_accuracy: lr_schedule.kind {schedule['kind']!r} is not mapped")
    return {
        "path": (path.parent / data["path"]).resolve(),
        "delimiter": data.get("delimiter", ","),
        "time_column": data["time_column"],
        "group_columns": list(data.get("group_columns") or []),
        "target": data["target"],
        "static_reals": list(data.get("static_reals") or []),
        "static_categoricals": names(data.get("static_categoricals")),
        "known_reals": list(data.get("known_reals") or []),
        "known_categoricals": names(data.get("known_categoricals")),
        "unknown_reals": list(data.get("unknown_reals") or []),
        "unknown_categoricals": names(data.get("unknown_categoricals")),
        "encoder_length": int(windows["encoder_length"]),
        "prediction_length": int(windows["prediction_length"]),
        "stride": int(windows.get("stride", 1)),
        "validation_steps": split.get("validation_steps"),
        "validation_fraction": split.get("validation_fraction",
                                         None if "validation_steps" in split else 0.2),
        "hidden_size": int(model.get("hidden_size", 64)),
        "attention_heads": int(model.get("attention_heads", 4)),
        "dropout": float(model.get("dropout", 0.1)),
        "lstm_layers": int(model.get("lstm_layers", 1)),
        "quantiles": [float(q) for q in model.get("quantiles", [0.1, 0.5, 0.9])],
        "epochs": int(training.get("epochs", 20)),
        "batch_size": int(training.get("batch_size", 64)),
        "learning_rate": float(training.get("learning_rate", 0.001)),
        "gradient_clip_norm": float(training.get("gradient_clip_norm", 1.0)),
        "lr_schedule": schedule.get("kind", "reduce_on_plateau"),
        "lr_factor": float(schedule.get("factor", 0.5)),
        "lr_patience": int(schedule.get("patience", 3)),
        "lr_min": float(schedule.get("min_lr", 1e-6)),
        "early_stopping_patience": int(training.get("early_stopping_patience", 10)),
        "seed": int(training.get("seed", 42)),
    }


def validation_rows(length: int, c: dict) -> int:
    """tft's validation_rows (src/data/window_sampler.cpp)."""
    if c["validation_steps"] is not None:
        return min(int(c["validation_steps"]), length)
    return int(math.floor(float(c["validation_fraction"]) * length))


def module_safe(name: str) -> str:
    """A column name the peer can embed: it registers each categorical's nn.Embedding in a
    ModuleDict under the column's name, which must not be an nn.Module attribute (a column
    `type`, pizza_types' series, fails with "attribute 'type' already exists"); a user of the
    peer renames such a column, and so does this harness."""
    import torch
    return f"{name}_" if hasattr(torch.nn.Module, name) else name


def rename_for_the_peer(c: dict, frame):
    """Every categorical and group column under module_safe's name, in `c` and the frame."""
    keys = ("group_columns", "static_categoricals", "known_categoricals", "unknown_categoricals")
    renamed = {n: module_safe(n) for k in keys for n in c[k] if module_safe(n) != n}
    for k in keys:
        c[k] = [renamed.get(n, n) for n in c[k]]
    return frame.rename(columns=renamed)


def read_frame(c: dict):
    """The CSV with a series id, a per-series time index and the derived features."""
    import pandas as pd
    frame = pd.read_csv(c["path"], sep=c["delimiter"], dtype={g: str for g in c["group_columns"]})
    frame = rename_for_the_peer(c, frame)
    if c["group_columns"]:
        frame["_series"] = frame[c["group_columns"]].astype(str).agg("|".join, axis=1)
    else:
        frame["_series"] = c["target"]
    frame["time_idx"] = frame.groupby("_series", sort=False).cumcount()
    # Calendar features from the wall-clock time as written (an offset or Z does not move it).
    text = frame[c["time_column"]].astype(str)
    wall = pd.to_datetime(text.str.replace(r"(Z|[+-]\d\d(:?\d\d)?)$", "", regex=True),
                          format="ISO8601")
    derived = {"day_of_week": wall.dt.dayofweek, "month": wall.dt.month,
               "day_of_month": wall.dt.day, "hour": wall.dt.hour}
    for name in c["known_categoricals"] + c["known_reals"] + c["unknown_categoricals"]:
        if name not in frame.columns and name in derived:
            frame[name] = derived[name]
    for name in (c["static_categoricals"] + c["known_categoricals"] +
                 c["unknown_categoricals"]):
        frame[name] = frame[name].astype(str)
    frame[c["target"]] = frame[c["target"]].astype("float64")
    return frame


def tft_windows(frame, c: dict):
    """tft's window starts per series (append_series_windows): training and validation."""
    span = c["encoder_length"] + c["prediction_length"]
    training, validation, train_rows = set(), set(), {}
    for series, length in frame.groupby("_series", sort=False).size().items():
        rows = length - validation_rows(length, c)
        train_rows[series] = rows
        for start in range(0, rows - span + 1, c["stride"]):
            training.add((series, start))
        if rows < length:
            for start in range(max(0, rows - c["encoder_length"]), length - span + 1, c["stride"]):
                validation.add((series, start))
    return training, validation, train_rows


def keep(windows, index):
    """A mask over a decoded index: the windows (series, start) of tft."""
    return [(s, int(t)) in windows for s, t in zip(index["_series"], index["time_idx_first"])]


def scores(prediction, actual, quantiles):
    """summary.json's validation figures from [windows, horizon, quantile] and [windows, horizon]."""
    import numpy as np
    p, y = np.asarray(prediction, dtype=np.float64), np.asarray(actual, dtype=np.float64)
    denominator = np.abs(y).sum()

    def q_risk(level):
        column = p[..., quantiles.index(level)]
        error = y - column
        return float(2.0 * np.maximum(level * error, (level - 1.0) * error).sum() / denominator)

    lowest, highest = quantiles.index(min(quantiles)), quantiles.index(max(quantiles))
    return {
        "q_risk_p50": q_risk(0.5) if 0.5 in quantiles else None,
        "q_risk_p90": q_risk(0.9) if 0.9 in quantiles else None,
        "mae_p50": float(np.abs(y - p[..., quantiles.index(0.5)]).mean()) if 0.5 in quantiles else None,
        "coverage": [float((y <= p[..., i]).mean()) for i in range(len(quantiles))],
        "interval_coverage": float(((p[..., lowest] <= y) & (y <= p[..., highest])).mean()),
        "windows": int(p.shape[0]),
    }


def run(c: dict, threads: int) -> dict:
    import torch
    import lightning.pytorch as pl
    from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
    import pytorch_forecasting
    from pytorch_forecasting import TemporalFusionTransformer, TimeSeriesDataSet
    from pytorch_forecasting.metrics import QuantileLoss

    torch.set_num_threads(threads)
    frame = read_frame(c)
    training_windows, validation_windows, train_rows = tft_windows(frame, c)
    in_training = frame["time_idx"] < frame["_series"].map(train_rows)
    known_reals = [r for r in c["known_reals"] if r != "relative_time_idx"]
    static_categoricals = list(c["static_categoricals"])
    if not c["group_columns"]:
        static_categoricals = []
    pl.seed_everything(c["seed"], workers=True, verbose=False)
    training = TimeSeriesDataSet(
        frame[in_training],
        time_idx="time_idx",
        target=c["target"],
        group_ids=["_series"],
        min_encoder_length=c["encoder_length"],
        max_encoder_length=c["encoder_length"],
        min_prediction_length=c["prediction_length"],
        max_prediction_length=c["prediction_length"],
        static_categoricals=static_categoricals,
        static_reals=c["static_reals"],
        time_varying_known_categoricals=c["known_categoricals"],
        time_varying_known_reals=known_reals,
        time_varying_unknown_categoricals=c["unknown_categoricals"],
        time_varying_unknown_reals=c["unknown_reals"] + [c["target"]],
        add_relative_time_idx="relative_time_idx" in c["known_reals"],
        add_target_scales=True,
    )
    validation = TimeSeriesDataSet.from_dataset(
        training, frame, min_prediction_idx=min(train_rows.values()), stop_randomization=True)
    training = training.filter(lambda index: keep(training_windows, index))
    validation = validation.filter(lambda index: keep(validation_windows, index))
    if len(validation) != len(validation_windows) or len(training) != len(training_windows):
        sys.exit(f"peer_accuracy: the peer has {len(training)} training and {len(validation)} "
                 f"validation windows, tft {len(training_windows)} and {len(validation_windows)}")
    train_loader = training.to_dataloader(train=True, batch_size=c["batch_size"], num_workers=0)
    validation_loader = validation.to_dataloader(train=False, batch_size=4 * c["batch_size"],
                                                 num_workers=0)
    model = TemporalFusionTransformer.from_dataset(
        training,
        hidden_size=c["hidden_size"],
        attention_head_size=c["attention_heads"],
        dropout=c["dropout"],
        hidden_continuous_size=c["hidden_size"],
        lstm_layers=c["lstm_layers"],
        output_size=len(c["quantiles"]),
        loss=QuantileLoss(quantiles=c["quantiles"]),
        learning_rate=c["learning_rate"],
        optimizer="adam",
        reduce_on_plateau_patience=(c["lr_patience"] if c["lr_schedule"] == "reduce_on_plateau"
                                    else 10**9),
        reduce_on_plateau_reduction=1.0 / c["lr_factor"],
        reduce_on_plateau_min_lr=c["lr_min"],
        log_interval=-1,
    )
    with tempfile.TemporaryDirectory(prefix="peer-accuracy-") as directory:
        best = ModelCheckpoint(dirpath=directory, monitor="val_loss", mode="min", save_top_k=1)
        callbacks = [best]
        if c["early_stopping_patience"] > 0:
            callbacks.append(EarlyStopping(monitor="val_loss", mode="min",
                                           patience=c["early_stopping_patience"]))
        trainer = pl.Trainer(
            max_epochs=c["epochs"], accelerator="cpu", devices=1,
            gradient_clip_val=c["gradient_clip_norm"] or None, gradient_clip_algorithm="norm",
            callbacks=callbacks, logger=False, enable_progress_bar=False,
            enable_model_summary=False, num_sanity_val_steps=0)
        started = time.monotonic()
        trainer.fit(model, train_dataloaders=train_loader, val_dataloaders=validation_loader)
        train_seconds = time.monotonic() - started
        epochs_run = trainer.current_epoch
        best_epoch = int(re.search(r"epoch=(\d+)", Path(best.best_model_path).name).group(1)) + 1
        model = TemporalFusionTransformer.load_from_checkpoint(best.best_model_path)
        prediction = model.predict(
            validation_loader, mode="quantiles", return_y=True,
            trainer_kwargs={"accelerator": "cpu", "logger": False, "enable_progress_bar": False})
    result = scores(prediction.output, prediction.y[0], c["quantiles"])
    result.update({
        "peer": "pytorch-forecasting", "peer_version": pytorch_forecasting.__version__,
        "torch_version": torch.__version__, "threads": threads,
        "training_windows": len(training), "best_epoch": best_epoch, "epochs_run": epochs_run,
        "best_validation_loss": float(best.best_model_score), "train_seconds": train_seconds,
        "target_normalizer": repr(training.target_normalizer),
    })
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--data", type=Path, help="the CSV instead of data.path (as tft-train's)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    config = load_config(args.config)
    if args.data:
        config["path"] = args.data.resolve()
    import_peer()
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    result = run(config, args.threads)
    result["config"] = str(args.config)
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
