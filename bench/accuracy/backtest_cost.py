#!/usr/bin/env python3
"""What a rolling-origin backtest costs against one training run, from scratch and with refit
between folds (issue 42, docs/backtest.md).

    python3 bench/accuracy/backtest_cost.py TFT_TRAIN OUTPUT_DIR [--config FILE] [--folds 5]
        [--refit-epochs 3] [--json FILE] [--update BENCHMARKS.md] [--from-json FILE]

Runs, one after the other with --threads 1: one `tft-train --config FILE` (the full training),
then `tft-train backtest --folds K --mode scratch` and `--mode refit --refit-epochs N`. Reports
each backtest's wall time as a multiple of the full training's, how many folds beat the naive
forecast, and the pooled q-risk and coverage against both baselines, from backtest.json.
`--update` writes the BENCHMARKS.md section between <!-- backtest:begin --> and
<!-- backtest:end -->.
"""
import argparse
import datetime
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: marked_section
import marked_section  # noqa: E402
import runs  # noqa: E402  (bench/accuracy/runs.py, beside this file)

ROOT = Path(__file__).resolve().parents[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tft_train")
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--config", type=Path, default=ROOT / "examples/configs/sp500.yaml")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--refit-epochs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--update", type=Path)
    parser.add_argument("--from-json", type=Path,
                        help="write the section from a stored --json file instead of running")
    args = parser.parse_args()
    if args.from_json:
        results = json.loads(args.from_json.read_text())
    else:
        results = measure(args)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1) + "\n")
    text = section(results, args)
    print(text)
    if args.update:
        marked_section.update_file(args.update, "backtest", text)


def measure(args) -> dict:
    out = args.output_dir
    base = [args.tft_train]
    common = ["--config", str(args.config), "--threads", "1"]
    full = runs.run_timed(base + common + ["--output", str(out / "full")])
    results = {"full_training_seconds": full, "date": str(datetime.date.today())}
    for mode, extra in (("scratch", []), ("refit", ["--refit-epochs", str(args.refit_epochs)])):
        wall = runs.run_timed(base + ["backtest"] + common + ["--folds", str(args.folds), "--mode",
                                                          mode, "--output", str(out / mode)] + extra)
        report = json.loads((out / mode / "backtest.json").read_text())
        results[mode] = {"wall_seconds": wall, "report": report}
    return results


def section(results: dict, args) -> str:
    full = results["full_training_seconds"]

    def row(mode):
        r = results[mode]["report"]
        o = r["overall"]
        seasonal = o["seasonal_naive"]["q_risk_p50"] if o["seasonal_naive"] else float("nan")
        plural = "epoch" if args.refit_epochs == 1 else "epochs"
        label = mode if mode == "scratch" else f"refit ({args.refit_epochs} {plural} per refit)"
        return (f"| {label} | {results[mode]['wall_seconds']:.1f} | "
                f"{results[mode]['wall_seconds'] / full:.2f}x | {r['folds_beating_naive']} of "
                f"{r['finished_folds']} | {o['model']['q_risk_p50']:.4f} | "
                f"{o['naive']['q_risk_p50']:.4f} | {seasonal:.4f} | "
                f"{o['model']['q_risk_p90']:.4f} | {o['model']['interval_coverage']:.1%} |")

    config = args.config.resolve()
    shown = config.relative_to(ROOT) if config.is_relative_to(ROOT) else config
    return (f"`python3 bench/accuracy/backtest_cost.py build/bin/tft-train OUT --config "
            f"{shown} --folds {args.folds} --refit-epochs "
            f"{args.refit_epochs}` ({results.get('date', datetime.date.today())}, `--threads 1`, "
            f"one run at a time). One full training took {full:.1f} s.\n\n"
            "| backtest | wall s | / one training | folds beating naive | P50 q-risk | naive P50 | "
            "seasonal naive P50 | P90 q-risk | P10-P90 coverage |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
            + row("scratch") + "\n" + row("refit"))


if __name__ == "__main__":
    main()
