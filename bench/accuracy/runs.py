"""One tft-train run as the accuracy drivers need it (center_choice.py, refit.py,
backtest_cost.py): the command run to completion, its wall time, and its summary.json."""
import json
import subprocess
import time
from pathlib import Path


def run_timed(command):
    """Runs `command`; its wall time in seconds. RuntimeError with stderr's tail when it fails."""
    started = time.monotonic()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed ({done.returncode}): "
                           f"{done.stderr.strip()[-2000:]}")
    return wall


def run_training(command, output):
    """Runs a training `command` writing into `output`; (summary.json as a dict, wall seconds)."""
    wall = run_timed(command)
    return json.loads((Path(output) / "summary.json").read_text()), wall


def calibrated_metrics(summary):
    """The calibrated forecasts' cross-fitted metrics, or the model's own without calibration."""
    return (summary.get("calibration") or {}).get("cross_fitted") or summary["validation"]
