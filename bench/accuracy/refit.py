#!/usr/bin/env python3
"""A refit against training from scratch (issue 42, docs/refit.md): does a model trained on
yesterday's rows and refitted on today's forecast as well as one trained on all rows from
scratch, in a fraction of the time?

    python3 bench/accuracy/refit.py TFT_TRAIN OUTPUT_DIR [--set NAME ...] [--seeds 7,2,3]
        [--epoch-shares 0.15,0.25] [--jobs 2] [--json FILE] [--from-json FILE]
        [--update BENCHMARKS.md]

For each set (sp500: examples/configs/sp500.yaml; the others from bench/configs/accuracy/, their
CSVs written by bench/accuracy/accuracy_data.py) and seed, three `tft-train --threads 1` runs:

  scratch   all rows, from fresh weights
  old       every series without its last 10% of rows ("yesterday"), from fresh weights
  refit     all rows, --init-from old's model, with --epochs round(share x training.epochs), for
            each share of --epoch-shares (at least one epoch)

The figures are each run's validation P50 and P90 q-risk (the last rows of every series, the
config's split) and calibrated P10-P90 coverage from summary.json, its training time
(train_seconds) and its wall time. The table gives each set's mean ± sample standard deviation
over the seeds, and the refit's time as a share of the scratch run's. `--update` writes the
BENCHMARKS.md section between <!-- refit:begin --> and <!-- refit:end -->.
"""
import argparse
import concurrent.futures
import csv
import datetime
import json
import statistics
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: marked_section
import marked_section  # noqa: E402
import runs  # noqa: E402  (bench/accuracy/runs.py, beside this file)

ROOT = Path(__file__).resolve().parents[2]
SETS = {
    "sp500": (ROOT / "examples" / "configs" / "sp500.yaml",
              ROOT / "examples" / "data" / "sp500-2000.csv"),
    **{name: (ROOT / "bench" / "configs" / "accuracy" / f"{name}.yaml",
              ROOT / "build" / "accuracy-data" / f"{name}.csv")
       for name in ("births_states", "elec_daily", "nyc_flights", "nyc_carriers", "pizza_types",
                    "taylor")},
}
HELD_BACK = 0.10


def held_back_csv(name, out_dir):
    """The set's CSV without the last 10% of each series' rows (file order is time order)."""
    config_path, data_path = SETS[name]
    groups = yaml.safe_load(config_path.read_text())["data"].get("group_columns") or []
    with open(data_path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    columns = [header.index(g) for g in groups]
    by_series = {}
    for row in body:
        by_series.setdefault(tuple(row[c] for c in columns), []).append(row)
    kept = []
    for series_rows in by_series.values():
        kept += series_rows[: len(series_rows) - int(len(series_rows) * HELD_BACK)]
    path = out_dir / f"{name}-held-back.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(kept)
    return path


def train(tft_train, name, out, data, seed, extra=()):
    config_path, _ = SETS[name]
    command = [tft_train, "--config", str(config_path), "--data", str(data), "--output", str(out),
               "--threads", "1", "--seed", str(seed), *extra]
    s, wall = runs.run_training(command, out)
    calibrated = runs.calibrated_metrics(s)
    validation = s["validation"]
    return {"q_risk_p50": validation["q_risk_p50"], "q_risk_p90": validation["q_risk_p90"],
            "coverage": calibrated["interval_coverage"], "epochs_run": s["epochs_run"],
            "best_epoch": s["best_epoch"], "train_seconds": s["train_seconds"],
            "wall_seconds": wall, "naive_p50": s["baselines"]["naive"]["q_risk_p50"],
            "command": " ".join(command)}


def run_seed(tft_train, name, seed, out_dir, shares):
    _, data = SETS[name]
    base = out_dir / name / f"seed-{seed}"
    epochs = yaml.safe_load(SETS[name][0].read_text())["training"]["epochs"]
    result = {"set": name, "seed": seed, "epochs": epochs,
              "scratch": train(tft_train, name, base / "scratch", data, seed),
              "old": train(tft_train, name, base / "old", held_back_csv(name, out_dir), seed),
              "refits": []}
    for refit_epochs in sorted({max(1, round(share * epochs)) for share in shares}):
        refit = train(tft_train, name, base / f"refit-{refit_epochs}", data, seed,
                      ["--init-from", str(base / "old" / "model"), "--epochs", str(refit_epochs)])
        result["refits"].append({"epochs": refit_epochs, **refit})
    return result


def mean_sd(values):
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def table(results):
    lines = ["| set | run | P50 q-risk | P90 q-risk | P10-P90 coverage | epochs run | training s | "
             "wall s | time / scratch |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name in dict.fromkeys(r["set"] for r in results):
        runs = [r for r in results if r["set"] == name]
        scratch_train = statistics.fmean(r["scratch"]["train_seconds"] for r in runs)
        scratch_wall = statistics.fmean(r["scratch"]["wall_seconds"] for r in runs)
        kinds = [(lambda r: r["scratch"], "from scratch, all rows"),
                 (lambda r: r["old"], "yesterday: without the last 10%")]
        for i, refit in enumerate(runs[0]["refits"]):
            kinds.append((lambda r, i=i: r["refits"][i],
                          f"refit on all rows, {refit['epochs']} of {runs[0]['epochs']} epochs"))
        for pick, label in kinds:
            p50 = mean_sd([pick(r)["q_risk_p50"] for r in runs])
            p90 = mean_sd([pick(r)["q_risk_p90"] for r in runs])
            cov = statistics.fmean(pick(r)["coverage"] for r in runs)
            epochs = statistics.fmean(pick(r)["epochs_run"] for r in runs)
            train_s = statistics.fmean(pick(r)["train_seconds"] for r in runs)
            wall = statistics.fmean(pick(r)["wall_seconds"] for r in runs)
            share = (f"{train_s / scratch_train:.0%} (wall {wall / scratch_wall:.0%})"
                     if label.startswith("refit") else "")
            lines.append(f"| {name} | {label} | {p50[0]:.4f} ± {p50[1]:.4f} | "
                         f"{p90[0]:.4f} ± {p90[1]:.4f} | {cov:.1%} | {epochs:.1f} | "
                         f"{train_s:.1f} | {wall:.1f} | {share} |")
        naive = statistics.fmean(r["scratch"]["naive_p50"] for r in runs)
        lines.append(f"| {name} | naive forecast of the same windows | {naive:.4f} "
                     "| | | | | | |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tft_train")
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--set", action="append", dest="sets", choices=sorted(SETS))
    parser.add_argument("--seeds", default="7,2,3")
    parser.add_argument("--epoch-shares", default="0.15,0.25")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--from-json", type=Path)
    parser.add_argument("--update", type=Path)
    args = parser.parse_args()
    names = args.sets or ["sp500", "births_states", "elec_daily"]
    seeds = [int(s) for s in args.seeds.split(",")]
    args.output_dir.mkdir(parents=True, exist_ok=True)
    results = json.loads(args.from_json.read_text())["runs"] if args.from_json else []
    done = {(r["set"], r["seed"]) for r in results}
    pending = [(n, s) for n in names for s in seeds if (n, s) not in done]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        shares = [float(s) for s in args.epoch_shares.split(",")]
        futures = [pool.submit(run_seed, args.tft_train, n, s, args.output_dir, shares)
                   for n, s in pending]
        for future in concurrent.futures.as_completed(futures):
            r = future.result()
            refits = ", ".join(f"refit {f['epochs']} epochs {f['q_risk_p50']:.4f} in "
                               f"{f['train_seconds']:.1f} s" for f in r["refits"])
            print(f"refit: {r['set']} seed {r['seed']}: scratch P50 "
                  f"{r['scratch']['q_risk_p50']:.4f} in {r['scratch']['train_seconds']:.1f} s, "
                  f"{refits}", file=sys.stderr)
            results.append(r)
    order = {n: i for i, n in enumerate(names)}
    results.sort(key=lambda r: (order.get(r["set"], 99), r["seed"]))
    if args.json:
        args.json.write_text(json.dumps({"runs": results}, indent=1) + "\n")
    set_flags = "".join(f"--set {n} " for n in args.sets or [])
    text = (f"`python3 bench/accuracy/refit.py build/bin/tft-train OUT {set_flags}--seeds {args.seeds} "
            f"--epoch-shares {args.epoch_shares}` ({datetime.date.today()}, one intra-op "
            f"thread per run, {'one run' if args.jobs == 1 else f'{args.jobs} runs'} at a time). Mean ± standard deviation over seeds "
            f"{args.seeds}.\n\n" + table(results))
    print(text)
    if args.update:
        marked_section.update_file(args.update, "refit", text)


if __name__ == "__main__":
    main()
