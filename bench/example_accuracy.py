#!/usr/bin/env python3
"""Accuracy and time of training variants on the example configs, against the first variant.

    bench/example_accuracy.py TFT_TRAIN OUTPUT_DIR --config examples/configs/sp500.yaml \
        --config examples/configs/multiseries.yaml \
        --variant 'float=' --variant 'qat=--use-qat' [--json FILE] [--threads N]

Each variant is LABEL=FLAGS: tft-train flags added to `--config C --output DIR`, e.g.
`qat=--use-qat` or `int8=--set checkpoint.boundary_dtype=int8`. Every run of one config uses the
YAML's seed and epochs, so the variants differ only in their flags. Runs alternate variant by
variant within a config, each in its own process. Prints a Markdown table: validation q-risk
P50 and P90 (summary.json), each relative to the first variant, the training seconds and
samples per second, and the step's activation peak.
"""
import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path


def parse_variant(text):
    label, separator, flags = text.partition("=")
    if not separator or not label:
        raise argparse.ArgumentTypeError(f"expected LABEL=FLAGS, got {text!r}")
    return label, shlex.split(flags)


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tft_train")
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--config", action="append", required=True, type=Path)
    parser.add_argument("--variant", action="append", required=True, type=parse_variant)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    labels = [label for label, _ in args.variant]
    if len(set(labels)) != len(labels):
        sys.exit("variant labels must differ")

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
