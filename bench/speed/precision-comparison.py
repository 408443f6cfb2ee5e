#!/usr/bin/env python3
"""Mixed precision against float32, tftrain and the peer side by side, for one configuration.

    bench/speed/precision-comparison.py OURS32.json OURSBF16.json PEER32.json PEERBF16.json [--title T]

OURS*.json are tft-bench's --json output at `--precision 32` and `--precision bf16-mixed`
(strategies `none` and `full`), PEER*.json peer_bench.py's at the same precisions (`none`,
optionally `naive`; with --count-flops for the FLOP columns). Prints a Markdown table: step
time, its ratio to the peer's float32 `none` and to the peer's `none` at the row's precision,
peak activation memory and the memory saved against `none` of the same tool and precision,
FLOPs per step, achieved GFLOP/s and the share of the GEMM peak at the row's precision (the
peer's against the peak measured in tft-bench's run of the same precision), and the gradient
difference against `none`. Under it: the measured GEMM peaks and the issue's targets, each with
its measured value and whether it is met. Warns (stderr, and under the title) when the runs
differ in device, thread count, batch size, configuration or torch version: such a ratio
compares machines, not trainers.
"""
import argparse
import json
import sys

from run_comparison import by_strategy, print_heading, run_differences

# The GEMM peak tft-bench measures for each precision: the dtype its matrix products run in.
PEAK_DTYPE = {"32": "float32", "bf16-mixed": "bfloat16", "16-mixed": "float16"}


def load(path, expected_precision=None):
    with open(path) as f:
        run = json.load(f)
    precision = str(run.get("precision", "32"))
    if expected_precision is not None and precision != expected_precision:
        sys.exit(f"{path}: a run at precision {precision}, expected {expected_precision}")
    table = by_strategy(run["results"], path)
    run["by_strategy"] = table
    return run


def gemm_peak(ours, precision):
    """(GFLOP/s, n) of the GEMM peak at `precision` in our run, or None."""
    peak = ours.get("gemm_peak", {}).get(PEAK_DTYPE.get(precision, ""))
    if not peak or not peak.get("gflops_per_second"):
        return None
    return peak["gflops_per_second"], peak.get("size")


def flops(result, run):
    """FLOPs per step of a result (the peer records them only with --count-flops)."""
    value = result.get("flops_per_step", run.get("flops_per_step"))
    return float(value) if value else None


def ratio(value):
    return f"{value:.2f}"


def number(value):
    """One decimal, more below 10 (the host-bound step is a fraction of a GFLOP)."""
    if not value:
        return "n/a"
    return f"{value:.1f}" if value >= 10 else f"{value:.3g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ours32", metavar="OURS32.json")
    parser.add_argument("ours_reduced", metavar="OURSBF16.json")
    parser.add_argument("peer32", metavar="PEER32.json")
    parser.add_argument("peer_reduced", metavar="PEERBF16.json")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    ours32 = load(args.ours32, "32")
    ours_reduced = load(args.ours_reduced)
    reduced = str(ours_reduced["precision"])
    if reduced == "32":
        sys.exit(f"{args.ours_reduced}: a float32 run, expected a mixed-precision one")
    peer32 = load(args.peer32, "32")
    peer_reduced = load(args.peer_reduced, reduced)
    ours = {"32": ours32, reduced: ours_reduced}
    peer = {"32": peer32, reduced: peer_reduced}
    yardstick = peer32["by_strategy"]["none"]["step_seconds_median"]

    differences = []
    for name, other in (("tftrain " + reduced, ours_reduced), ("peer 32", peer32),
                        ("peer " + reduced, peer_reduced)):
        for difference in run_differences(ours32, other):
            differences.append(f"tftrain 32 and {name} differ in {difference}")
    print_heading("precision-comparison", args.title, ours32, peer32, differences)

    print("| run | precision | step ms | / peer 32 `none` | / peer same-precision `none` "
          "| peak activations MiB | memory saved | GFLOP/step | GFLOP/s | % of GEMM peak "
          "| max abs grad diff |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = [("tftrain", precision, ours[precision], strategy)
            for precision in ("32", reduced) for strategy in ("none", "full")
            if strategy in ours[precision]["by_strategy"]]
    rows += [("pytorch-forecasting", precision, peer[precision], strategy)
             for precision in ("32", reduced) for strategy in ("none", "naive")
             if strategy in peer[precision]["by_strategy"]]
    # The machine's peak per dtype: the best of the products timed in our two runs (float32 is
    # timed in both; a busy moment during one timing must not pass for the machine's limit).
    best_peak = {}
    for precision in ("32", reduced):
        measured = [p[0] for p in (gemm_peak(ours32, precision), gemm_peak(ours_reduced, precision))
                    if p]
        best_peak[precision] = max(measured) if measured else None
    peer_peak_used = False
    for who, precision, run, strategy in rows:
        table = run["by_strategy"]
        r = table[strategy]
        step = r["step_seconds_median"]
        same_precision = peer[precision]["by_strategy"]["none"]["step_seconds_median"]
        saved = 1 - r["peak_activation_bytes"] / table["none"]["peak_activation_bytes"]
        step_flops = flops(r, run)
        if who == "tftrain":
            gflops = r.get("achieved_gflops_per_second")
            marker = ""
        else:
            gflops = step_flops / step / 1e9 if step_flops else None
            marker = "¹"
        peak = best_peak[precision]
        fraction = gflops / peak if gflops is not None and peak else None
        peer_peak_used = peer_peak_used or (who != "tftrain" and fraction is not None)
        grad = r.get("grad_max_abs_diff")
        print(f"| {who} `{strategy}` | {precision} | {1e3 * step:.1f} | {ratio(step / yardstick)} "
              f"| {ratio(step / same_precision)} "
              f"| {r['peak_activation_bytes'] / 2**20:.1f} | {100 * saved:.1f}% "
              f"| {number(step_flops / 1e9 if step_flops else None)} | {number(gflops)} "
              f"| {f'{100 * fraction:.1f}%{marker}' if fraction is not None else 'n/a'} "
              f"| {f'{grad:.3g}' if grad is not None else 'n/a'} |")
    print()
    if peer_peak_used:
        print("¹ The peer's FLOPs are `torch.utils.flop_counter`'s plus an LSTM formula. Every "
              "row's share is its GFLOP/s over the best GEMM peak tft-bench measured at the row's "
              "precision in these runs (below).\n")

    peaks = []
    fp32 = gemm_peak(ours32, "32")
    if fp32:
        text = f"float32 {fp32[0]:.1f} GFLOP/s (n = {fp32[1]}"
        reduced_fp32 = gemm_peak(ours_reduced, "32")
        if reduced_fp32:
            text += f"; {reduced_fp32[0]:.1f} in the {reduced} run"
        peaks.append(text + ")")
    reduced_peak = gemm_peak(ours_reduced, reduced)
    if reduced_peak:
        peaks.append(f"{PEAK_DTYPE[reduced]} {reduced_peak[0]:.1f} GFLOP/s "
                     f"(n = {reduced_peak[1]}, in the {reduced} run)")
    if peaks:
        print(f"GEMM peaks measured by tft-bench (best n x n x n product, {ours32['threads']} "
              f"thread(s)): {', '.join(peaks)}.\n")
    if fp32 and reduced_peak:
        # The CPU decides what bf16-mixed buys: with bfloat16 dot-product instructions that
        # oneDNN uses (AVX512-BF16, AMX) its products run about twice the float32 rate; without
        # them they run at half of it, and bf16-mixed saves memory but not time.
        print(f"On this machine the {PEAK_DTYPE[reduced]} GEMM peak is "
              f"{reduced_peak[0] / fp32[0]:.2f}x the float32 one; the {reduced} step ratios "
              "follow it from machine to machine.\n")

    ours_none = ours_reduced["by_strategy"]["none"]
    ours_full = ours_reduced["by_strategy"].get("full")
    peer_reduced_none = peer_reduced["by_strategy"]["none"]["step_seconds_median"]
    ours32_none = ours32["by_strategy"]["none"]
    targets = [(f"{reduced} `none` ≤ 0.5x peer 32 `none`",
                ours_none["step_seconds_median"] / yardstick, 0.5, "x", "le"),
               (f"{reduced} `none` ≤ 0.8x peer {reduced} `none`",
                ours_none["step_seconds_median"] / peer_reduced_none, 0.8, "x", "le")]
    if ours_full:
        targets += [(f"{reduced} `full` ≤ 0.67x peer 32 `none`",
                     ours_full["step_seconds_median"] / yardstick, 0.67, "x", "le"),
                    (f"{reduced} `full` saves ≥ 88% of {reduced} `none`'s peak",
                     1 - ours_full["peak_activation_bytes"] / ours_none["peak_activation_bytes"],
                     0.88, "%", "ge")]
    if ours32_none.get("achieved_gflops_per_second") and best_peak["32"]:
        targets.append(("float32 `none` ≥ 60% of the float32 GEMM peak",
                        ours32_none["achieved_gflops_per_second"] / best_peak["32"], 0.60, "%",
                        "ge"))
    print("Targets (tftrain):\n")
    for label, value, bound, unit, sense in targets:
        met = value <= bound if sense == "le" else value >= bound
        shown = f"{value:.2f}x" if unit == "x" else f"{100 * value:.1f}%"
        print(f"- {label}: {shown}, {'met' if met else 'not met'}")


if __name__ == "__main__":
    main()
