"""The S&P 500 example from Python: the bundled CSV read with pandas, trained in memory with
every unit gradient-checkpointed (examples/configs/sp500.yaml), then the forecast of the next
5 trading days' close (P10, P50, P90) and the measured activation memory.

    pip install ./bindings/python pandas      # after ./scripts/setup-deps.sh
    python examples/python/sp500.py [OUTPUT_DIR]

The run's files (model/, forecast.csv, summary.json, ...) go to OUTPUT_DIR, default
build/runs/sp500-python.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas

import tftrain

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build/runs/sp500-python"
    prices = pandas.read_csv(ROOT / "examples/data/sp500-2000.csv")

    config = tftrain.Config(ROOT / "examples/configs/sp500.yaml")
    config["output.directory"] = str(output)
    config.checkpoint = tftrain.CheckpointConfig.uniform(1)  # every unit recomputes in backward
    print(config.checkpoint.summary(), file=sys.stderr)

    with tftrain.Trainer(config, data=prices) as trainer:
        report = trainer.train(progress=True)
        forecasts = trainer.predict().to_pandas()

    future = forecasts[forecasts["kind"] == "future"]
    print(future[["origin", "time", "horizon", "q0.1", "q0.5", "q0.9"]].to_string(index=False))
    print(
        f"\nvalidation loss {report.final_validation_loss:.6f} (initial "
        f"{report.initial_validation_loss:.6f}), q-risk P50 {report.validation.q_risk_p50:.4f}, "
        f"P90 {report.validation.q_risk_p90:.4f}; {report.epochs_run} epochs, "
        f"{report.samples_per_second:.0f} samples/s"
    )
    print(report.memory)
    print(f"outputs: {output}")


if __name__ == "__main__":
    main()
