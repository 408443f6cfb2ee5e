#!/usr/bin/env python3
"""Samples/s of tft-train as one process and as N local ranks (tft-train --nproc N), one
intra-op thread per process, and the gradient all-reduce's share of each step.

    bench/speed/data-parallel.py TFT_TRAIN CONFIG [--nproc 2] [--epochs 3] [--json PATH]

Each rank takes the config's batch_size windows per step (as in PyTorch DDP), so N ranks make
N times fewer steps per epoch. Figures are medians over the epochs after the first (the first
pays for allocations and the rendezvous). Prints a Markdown table.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(tft_train, config, nproc, epochs, out):
    cmd = [tft_train, "--config", config, "--epochs", str(epochs), "--threads", "1",
           "--output", out]
    if nproc > 1:
        cmd += ["--nproc", str(nproc)]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"data-parallel.py: {' '.join(cmd)} exited {done.returncode}: {done.stderr}")
    with open(os.path.join(out, "metrics.jsonl")) as f:
        epochs_seen = [json.loads(line) for line in f]
    later = epochs_seen[1:] or epochs_seen
    steps = statistics.median(e["steps"] for e in later)
    seconds = statistics.median(e["seconds"] for e in later)
    allreduce = statistics.median(e.get("allreduce_seconds", 0.0) for e in later)
    return {
        "processes": nproc,
        "command": " ".join(cmd),
        "samples_per_second": statistics.median(e["samples_per_second"] for e in later),
        "steps_per_epoch": steps,
        "step_ms": 1e3 * seconds / steps,
        "allreduce_ms_per_step": 1e3 * allreduce / steps,
        "train_loss_last": epochs_seen[-1]["train_loss"],
        "validation_loss_last": epochs_seen[-1]["validation_loss"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tft_train")
    parser.add_argument("config")
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for nproc in (1, args.nproc):
            rows.append(run(args.tft_train, args.config, nproc, args.epochs,
                            os.path.join(tmp, f"n{nproc}")))
    base = rows[0]["samples_per_second"]
    print("| processes | samples/s | speed-up | steps/epoch | step ms | all-reduce ms/step | "
          "last train loss | last validation loss |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['processes']} | {r['samples_per_second']:.0f} | "
              f"{r['samples_per_second'] / base:.2f}x | {r['steps_per_epoch']:.0f} | "
              f"{r['step_ms']:.1f} | {r['allreduce_ms_per_step']:.2f} | "
              f"{r['train_loss_last']:.5f} | {r['validation_loss_last']:.5f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": args.config, "epochs": args.epochs, "runs": rows}, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
