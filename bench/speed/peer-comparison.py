#!/usr/bin/env python3
"""Side-by-side table of tft-bench and the peer benchmark (bench/peer/peer_bench.py).

    bench/speed/peer-comparison.py OURS.json PEER.json [--title TITLE]

OURS.json is tft-bench's --json output, PEER.json peer_bench.py's. Prints a Markdown table:
step time, peak activation memory and memory saved of ours (`none`, `full`) and the peer's
(`none`, `naive`), and each step time as a ratio of the peer's `none`, the issue's yardstick;
with operator counts in both files (tft-bench always, peer_bench.py --count-ops), the step's
ATen operator calls and host syncs too, each call count as a ratio of the peer's `none`; and on a
CUDA device, where both files count them, the kernels each step ran (each a launch the host paid
for) and their ratio to the peer's `none`.
Warns (stderr, and under the title) when the two runs differ in device, thread count, batch
size or torch version: such a ratio compares machines, not trainers.
"""
import argparse
import json

from run_comparison import by_strategy, print_heading, run_differences


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ours")
    parser.add_argument("peer")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    with open(args.ours) as f:
        ours_json = json.load(f)
    with open(args.peer) as f:
        peer_json = json.load(f)
    ours = by_strategy(ours_json["results"], args.ours)
    peer = by_strategy(peer_json["results"], args.peer)
    yardstick = peer["none"]["step_seconds_median"]
    differences = [f"the runs differ in {d}" for d in run_differences(ours_json, peer_json)]
    print_heading("peer-comparison", args.title, ours_json, peer_json, differences)
    rows = [("tftrain", ours, s) for s in ("none", "full") if s in ours]
    rows += [("pytorch-forecasting", peer, s) for s in ("none", "naive") if s in peer]
    ops = all("op_calls" in table[strategy] for _, table, strategy in rows)
    kernels = ops and all("device_kernels" in table[strategy] for _, table, strategy in rows)
    print("| run | step ms | / peer `none` | peak activations MiB | memory saved | max abs grad diff |"
          + (" operator calls | / peer `none` | host syncs |" if ops else "")
          + (" kernels | / peer `none` |" if kernels else ""))
    print("|---|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if ops else "")
          + ("---:|---:|" if kernels else ""))
    for who, table, strategy in rows:
        r = table[strategy]
        saved = 1 - r["peak_activation_bytes"] / table["none"]["peak_activation_bytes"]
        counts = ""
        if ops:
            counts = (f" {r['op_calls']} | {r['op_calls'] / peer['none']['op_calls']:.2f} "
                      f"| {r['host_syncs']} |")
        if kernels:
            launched = r["device_kernels"]["kernels"]
            counts += f" {launched} | {launched / peer['none']['device_kernels']['kernels']:.2f} |"
        print(f"| {who} `{strategy}` | {1e3 * r['step_seconds_median']:.1f} "
              f"| {r['step_seconds_median'] / yardstick:.2f} "
              f"| {r['peak_activation_bytes'] / 2**20:.1f} | {100 * saved:.1f}% "
              f"| {r['grad_max_abs_diff']:.3g} |" + counts)


if __name__ == "__main__":
    main()
