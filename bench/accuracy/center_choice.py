#!/usr/bin/env python3
"""Every target center on every public accuracy set, over seeds: what center auto chooses, and
what each fixed choice would have scored (issue 39).

    python3 bench/accuracy/center_choice.py TFT_TRAIN OUTPUT_DIR [--set NAME ...] [--seeds 7,2,3]
        [--variant NAME ...] [--jobs 2] [--json FILE] [--from-json FILE] [--update BENCHMARKS.md]

For each set of bench/configs/accuracy/ (its CSV written and checked by bench/accuracy/accuracy_data.py),
each variant and each seed, one `tft-train --config SET.yaml --threads 1 --seed N` run with the
variant's flags:

  auto       the defaults (center auto, scope auto: the pilot fits choose)
  last       data.target_normalizer.center=last (scope encoder)
  seasonal   data.target_normalizer.center=seasonal (scope encoder; the config's or inferred season)
  seasonal_week  the same one week back (model.seasonality 168 for hourly, 336 for half-hourly
             data; sub-daily sets only)
  statistic  data.target_normalizer.scope=series, center=statistic (per-series standardisation)
  statistic_encoder  data.target_normalizer.scope=encoder, center=statistic (each window's own
             encoder mean and standard deviation: pytorch-forecasting's EncoderNormalizer)

Runs go `--jobs` at a time (one intra-op thread each), interleaved set by set and seed by seed.
Figures come from each run's summary.json: the validation P50 and P90 q-risk of the saved
model, the conformal-calibrated P10-P90 coverage scored cross-fitted, the best epoch, and the
naive and best seasonal naive forecasts of the same windows. The table gives, per set, each
variant's mean ± sample standard deviation over the seeds, what auto chose on each seed, how far
auto's mean P50 is from the best fixed center's, and the pilots' share of auto's wall time.
`--update` writes the BENCHMARKS.md section between <!-- center-choice:begin --> and
<!-- center-choice:end -->; with `--from-json` and no runs left to do, nothing is trained.
"""
import argparse
import concurrent.futures
import datetime
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import accuracy_data  # bench/accuracy/accuracy_data.py, beside this file
import runs  # bench/accuracy/runs.py, beside this file
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: marked_section
import marked_section  # noqa: E402  (bench/marked_section.py, shared by the drivers)

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "bench" / "configs" / "accuracy"
DATA_DIR = ROOT / "build" / "accuracy-data"
VARIANTS = {
    "auto": [],
    "last": ["--set", "data.target_normalizer.center=last"],
    "seasonal": ["--set", "data.target_normalizer.center=seasonal"],
    "seasonal_week": ["--set", "data.target_normalizer.center=seasonal"],
    "statistic": ["--set", "data.target_normalizer.scope=series",
                  "--set", "data.target_normalizer.center=statistic"],
    "statistic_encoder": ["--set", "data.target_normalizer.scope=encoder",
                          "--set", "data.target_normalizer.center=statistic"],
}
# seasonal_week: center seasonal one week back (sub-daily sets only; a daily set's season is
# its week already).
WEEK_ROWS = {"hourly": 168, "half-hourly": 336}
FIXED = ["last", "seasonal", "seasonal_week", "statistic", "statistic_encoder"]
PILOT_SECONDS = re.compile(r"won \(([0-9.]+) s\)")


def frequency(name):
    return accuracy_data.SETS[name]["frequency"]


def applies(name, variant):
    return variant != "seasonal_week" or frequency(name) in WEEK_ROWS


def run_one(tft_train, name, variant, seed, output_dir):
    out = output_dir / name / variant / f"seed-{seed}"
    flags = list(VARIANTS[variant])
    if variant == "seasonal_week":
        flags += ["--set", f"model.seasonality={WEEK_ROWS[frequency(name)]}"]
    command = [tft_train, "--config", str(CONFIGS / f"{name}.yaml"), "--data",
               str(DATA_DIR / f"{name}.csv"), "--output", str(out), "--threads", "1",
               "--seed", str(seed), *flags]
    s, wall = runs.run_training(command, out)
    calibrated = runs.calibrated_metrics(s)
    baselines = s["baselines"]
    center = s["target_center"]
    pilot = PILOT_SECONDS.search(center["reason"])
    return {
        "set": name, "variant": variant, "seed": seed,
        "q_risk_p50": s["validation"]["q_risk_p50"], "q_risk_p90": s["validation"]["q_risk_p90"],
        "coverage": calibrated["interval_coverage"],
        "best_epoch": s["best_epoch"], "epochs_run": s["epochs_run"],
        "center": center["center"], "scope": center.get("scope"), "season": center["season"],
        "reason": center["reason"],
        "pilot_seconds": float(pilot.group(1)) if pilot else 0.0,
        "train_seconds": s["train_seconds"], "wall_seconds": wall,
        "naive_p50": baselines["naive"]["q_risk_p50"],
        "seasonal_naive_p50": (baselines["seasonal_naive"] or {}).get("q_risk_p50"),
        "seasonal_naive_m": baselines["seasonality"],
        "command": " ".join(command),
    }


def mean_sd(values):
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, sd


def center_label(run):
    label = run["center"]
    if label == "seasonal":
        label += f" {run['season']}"
    if label == "statistic":
        # Runs stored before summary.json named the scope were all per series.
        label += f" ({run.get('scope') or 'series'})"
    return label


def table(runs, variants):
    sets = sorted({r["set"] for r in runs})
    head = ("| set | " + " | ".join(f"{v} P50 / P90, coverage" for v in variants) +
            " | auto chose | auto vs best fixed | pilots / auto's wall | naive P50 | "
            "best seasonal naive P50 |")
    lines = [head, "|---|" + "---|" * len(variants) + "---|---:|---:|---:|---:|"]
    notes = []
    for name in sets:
        cells, means = [], {}
        for v in variants:
            rs = [r for r in runs if r["set"] == name and r["variant"] == v]
            if not rs:
                cells.append("")
                continue
            p50, p50_sd = mean_sd([r["q_risk_p50"] for r in rs])
            p90, p90_sd = mean_sd([r["q_risk_p90"] for r in rs])
            cov = statistics.fmean(r["coverage"] for r in rs)
            means[v] = p50
            seeds = "" if len(rs) > 1 else " (1 seed)"
            cells.append(f"{p50:.4f} ± {p50_sd:.4f} / {p90:.4f} ± {p90_sd:.4f}, "
                         f"{100 * cov:.0f}%{seeds}")
        auto = [r for r in runs if r["set"] == name and r["variant"] == "auto"]
        chose = ", ".join(center_label(r) for r in sorted(auto, key=lambda r: r["seed"]))
        fixed = {v: m for v, m in means.items() if v in FIXED}
        gap = ""
        if "auto" in means and fixed:
            best = min(fixed, key=fixed.get)
            gap = f"{100 * (means['auto'] / fixed[best] - 1):+.1f}% ({best})"
        share = ""
        if auto:
            share = (f"{statistics.fmean(r['pilot_seconds'] for r in auto):.0f} s / "
                     f"{statistics.fmean(r['wall_seconds'] for r in auto):.0f} s")
        first = next(r for r in runs if r["set"] == name)
        seasonal = (f"{first['seasonal_naive_p50']:.4f} (m = {first['seasonal_naive_m']})"
                    if first["seasonal_naive_p50"] is not None else "n/a")
        lines.append(f"| {name} | " + " | ".join(cells) +
                     f" | {chose} | {gap} | {share} | {first['naive_p50']:.4f} | {seasonal} |")
        epochs = "; ".join(
            f"{v} " + ", ".join(f"{r['best_epoch']}/{r['epochs_run']}" for r in
                                sorted((r for r in runs if r["set"] == name and r["variant"] == v),
                                       key=lambda r: r["seed"]))
            for v in variants if any(r["set"] == name and r["variant"] == v for r in runs))
        notes.append(f"- {name}, best epoch / epochs run per seed: {epochs}.")
    return "\n".join(lines + [""] + notes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tft_train")
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--set", action="append", dest="sets")
    parser.add_argument("--seeds", default="7,2,3")
    parser.add_argument("--variant", action="append", dest="variants", choices=list(VARIANTS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--from-json", type=Path, help="runs done before; only the rest are run")
    parser.add_argument("--update", type=Path, metavar="FILE")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    sets = args.sets or sorted(p.stem for p in CONFIGS.glob("*.yaml"))
    variants = args.variants or list(VARIANTS)
    seeds = [int(s) for s in args.seeds.split(",")]
    subprocess.run([sys.executable, str(ROOT / "bench" / "accuracy" / "accuracy_data.py"), *sum(
        (["--set", s] for s in sets), [])], check=True)

    runs = json.loads(args.from_json.read_text())["runs"] if args.from_json else []
    done = {(r["set"], r["variant"], r["seed"]) for r in runs}
    pending = [(name, v, seed) for name in sets for seed in seeds for v in variants
            if (name, v, seed) not in done and applies(name, v)]
    started = time.monotonic()
    load = Path("/proc/loadavg").read_text().split()[0]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, args.tft_train, *job, args.output_dir) for job in pending]
        for future in concurrent.futures.as_completed(futures):
            r = future.result()
            runs.append(r)
            print(f"center_choice: {r['set']} {r['variant']} seed {r['seed']}: P50 "
                  f"{r['q_risk_p50']:.4f} ({center_label(r)}, {r['wall_seconds']:.0f} s)",
                  file=sys.stderr, flush=True)
            if args.json:
                args.json.write_text(json.dumps({"runs": runs}, indent=1) + "\n")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    text = table([r for r in runs if r["set"] in sets and r["variant"] in variants], variants)
    if pending:
        header = (f"{args.label + ' ' if args.label else ''}(tftrain at {commit}, "
                  f"{datetime.date.today()}, seeds {args.seeds}, {args.jobs} runs at a time of "
                  f"one thread each, load average {load} at the start, {len(pending)} runs in "
                  f"{(time.monotonic() - started) / 60:.1f} min)")
    else:
        header = (f"{args.label + ' ' if args.label else ''}(the {len(runs)} stored runs of "
                  f"{args.from_json.name}, seeds {args.seeds}; each run's command is in it)")
    print(header + "\n\n" + text)
    if args.update:
        command = ("`python3 bench/accuracy/center_choice.py ./build/bin/tft-train build/center-choice "
                   f"--seeds {args.seeds} --json bench/results/center-choice.json "
                   "--update BENCHMARKS.md`")
        marked_section.update_file(
            args.update, "center-choice", header + "\n\n" + text + "\n\nCommand: " + command,
            end_of="### Regularisation on the same sets")


if __name__ == "__main__":
    main()
