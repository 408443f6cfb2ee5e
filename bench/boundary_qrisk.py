#!/usr/bin/env python3
"""q-risk after training with compressed checkpoint boundaries (checkpoint.boundary_dtype).

Trains each example config with every unit checkpointed (strategy uniform, interval 1) and
boundary_dtype float32, bfloat16 and int8 (same seed, epochs and threads), plus float32 with
another seed: how far two float32 runs that differ only in their seed land apart, the scale
against which the compressed runs' differences are to be read. Prints a Markdown table of the
saved model's validation q-risk P50/P90 (summary.json), relative to float32 with the config's
own seed.

    bench/boundary_qrisk.py TFT_TRAIN OUT_DIR [--configs examples/configs/sp500.yaml ...]
    bench/boundary_qrisk.py TFT_TRAIN OUT_DIR --table-only   # the table of runs already there
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

DTYPES = ["float32", "bfloat16", "int8"]


def write_config(source: pathlib.Path, dtype: str, out_dir: pathlib.Path) -> pathlib.Path:
    """The example with its data path made absolute and the checkpoint section replaced."""
    text = source.read_text()
    text = re.sub(r"(\n  path: )(\S+)",
                  lambda m: m.group(1) + str((source.parent / m.group(2)).resolve()), text)
    section = f"\ncheckpoint:\n  strategy: uniform\n  interval: 1\n  boundary_dtype: {dtype}\n"
    text = re.sub(r"\ncheckpoint:\n(  .*\n)+", section, text)
    path = out_dir / f"{source.stem}-{dtype}.yaml"
    path.write_text(text)
    return path


def seed_of(source: pathlib.Path) -> int:
    match = re.search(r"\n  seed: (\d+)", source.read_text())
    return int(match.group(1)) if match else 0


def runs(source: pathlib.Path):
    """(label, dtype, seed or None for the config's own) per run."""
    other = seed_of(source) + 1
    return [(dtype, dtype, None) for dtype in DTYPES] + [
        (f"float32, seed {other}", "float32", other)]


def run_dir(out_dir: pathlib.Path, source: pathlib.Path, dtype: str, seed) -> pathlib.Path:
    return out_dir / (f"run-{source.stem}-{dtype}" + (f"-seed{seed}" if seed is not None else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tft_train")
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--configs", nargs="+", type=pathlib.Path,
                        default=[pathlib.Path("examples/configs/sp500.yaml"),
                                 pathlib.Path("examples/configs/multiseries.yaml")])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--table-only", action="store_true")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)

    rows = []
    for source in args.configs:
        base = None
        for label, dtype, seed in runs(source):
            directory = run_dir(args.out_dir, source, dtype, seed)
            if not args.table_only:
                command = [args.tft_train, "--config", str(write_config(source, dtype, args.out_dir)),
                           "--threads", str(args.threads), "--output", str(directory)]
                if seed is not None:
                    command += ["--seed", str(seed)]
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            summary = json.loads((directory / "summary.json").read_text())
            v = summary["validation"]
            if base is None:
                base = v
            rel = lambda key: 100.0 * (v[key] / base[key] - 1.0)
            rows.append(f"| {source.stem} | {label} | {v['q_risk_p50']:.4f} | {rel('q_risk_p50'):+.2f}% "
                        f"| {v['q_risk_p90']:.4f} | {rel('q_risk_p90'):+.2f}% "
                        f"| {summary['best_epoch']} of {summary['epochs_run']} "
                        f"| {summary['memory']['checkpointed_peak_bytes'] / 1048576:.2f} |")
    print("| config | boundaries | q-risk P50 | vs float32 | q-risk P90 | vs float32 "
          "| best epoch | step peak MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
