#!/usr/bin/env python3
"""bench/speed/peer-comparison.py: the kernel columns (a CUDA run's, issue 40) appear when both
files count kernels, as ratios of the peer's `none`, and stay out when either lacks them (a CPU
run, or a GPU without CUPTI), rather than showing a count that was not measured."""
import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "speed" / "peer-comparison.py"

RUN = {"device": "cuda:0", "threads": 4, "batch_size": 64, "torch_version": "2.11.0"}
OURS = dict(RUN, results=[
    {"strategy": "none", "step_seconds_median": 0.060, "peak_activation_bytes": 400 << 20,
     "grad_max_abs_diff": 0, "op_calls": 4691, "host_syncs": 0,
     "device_kernels": {"kernels": 4500, "memcpys": 2, "memsets": 40}},
    {"strategy": "full", "step_seconds_median": 0.080, "peak_activation_bytes": 60 << 20,
     "grad_max_abs_diff": 0.03, "op_calls": 13543, "host_syncs": 0,
     "device_kernels": {"kernels": 11250, "memcpys": 2, "memsets": 40}}])
PEER = dict(RUN, peer="pytorch-forecasting", peer_version="1.8.0", results=[
    {"strategy": "none", "step_seconds_median": 0.050, "peak_activation_bytes": 900 << 20,
     "grad_max_abs_diff": 0, "op_calls": 14732, "host_syncs": 252,
     "device_kernels": {"kernels": 9000, "memcpys": 260, "memsets": 30}}])


def check(condition, message):
    if not condition:
        sys.exit(f"test_peer_comparison: {message}")


def table(ours, peer):
    with tempfile.TemporaryDirectory() as scratch:
        paths = [Path(scratch) / "ours.json", Path(scratch) / "peer.json"]
        for path, document in zip(paths, (ours, peer)):
            path.write_text(json.dumps(document))
        done = subprocess.run([sys.executable, str(SCRIPT), *map(str, paths)],
                              capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if line.startswith("| ")]


def main():
    rows = table(OURS, PEER)
    check(rows[0].endswith("| kernels | / peer `none` |"), f"no kernel columns: {rows[0]}")
    check(rows[1].startswith("| tftrain `none` |") and rows[1].endswith("| 4500 | 0.50 |"),
          f"ours `none`: {rows[1]}")
    check(rows[2].endswith("| 11250 | 1.25 |"), f"ours `full`: {rows[2]}")
    check(rows[3].endswith("| 9000 | 1.00 |"), f"the peer: {rows[3]}")

    uncounted = copy.deepcopy(PEER)
    del uncounted["results"][0]["device_kernels"]
    for ours, peer in ((OURS, uncounted), (dict(OURS, device="cpu"), uncounted)):
        rows = table(ours, peer)
        check("kernels" not in rows[0], f"kernel columns without the peer's count: {rows[0]}")
        check(rows[0].endswith("| host syncs |"), f"operator columns lost: {rows[0]}")
    print("test_peer_comparison: passed")


if __name__ == "__main__":
    main()
