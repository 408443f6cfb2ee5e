#!/usr/bin/env python3
"""Accuracy and time of training variants on the example configs, or of tftrain on public data.

    bench/accuracy/example_accuracy.py TFT_TRAIN OUTPUT_DIR --config examples/configs/sp500.yaml \
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

With `--public` it scores tftrain on public data sets with strong seasonality instead, against
the naive and seasonal naive forecasts and pytorch-forecasting (no --config or --variant; see
bench/accuracy/public_accuracy.py):

    bench/accuracy/example_accuracy.py TFT_TRAIN OUTPUT_DIR --public [--set NAME ...] [--threads 1] \
        [--peer PYTHON | --no-peer] [--label TEXT] [--json FILE] [--markdown FILE] \
        [--from-json EARLIER.json ...] [--no-run] [--update BENCHMARKS.md]
"""
import argparse
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
    parser.add_argument("--label", help="with --public: this run's name in the section "
                        "(default: 'tftrain at COMMIT')")
    parser.add_argument("--from-json", action="append", type=Path, metavar="JSON",
                        help="with --public: an earlier run's --json, shown before this one in "
                        "the --update section (repeatable)")
    parser.add_argument("--no-run", action="store_true",
                        help="with --public: train nothing; rewrite the section from --from-json")
    parser.add_argument("--update", type=Path, metavar="FILE", help="with --public: write the "
                        "section between <!-- public-accuracy:begin/end --> in FILE")
    args = parser.parse_args()
    if args.public:
        import public_accuracy  # bench/accuracy/public_accuracy.py, beside this file
        args.threads = 1 if args.threads is None else args.threads
        public_accuracy.main(args)
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
