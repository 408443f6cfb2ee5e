"""Reading 10^7 rows: the CSV reader against the Parquet reader and against the same table
handed over in memory as an Arrow C stream (tft-read-bench, --memory).

Writes one long-format table (1,000 series x 10,000 days: store, day, price, promo, sales) as
CSV and as Parquet (pyarrow's defaults: row groups of 1 Mi rows, Snappy, the store column
dictionary-encoded), then loads each with tft-read-bench in its own process, alternating the
formats, and prints a Markdown table (medians of the runs; peak RSS is the largest). The
in-memory row reads the Parquet file into an Arrow table first, untimed (a host's dataframe),
then times what the C API does with its C stream.

    python data_reading.py TFT_READ_BENCH WORK_DIR [--rows-per-series N] [--runs K] [--json OUT]

Run with the Python that has pyarrow (the build's TFT_ARROW_PYTHON).
"""
import argparse
import datetime as dt
import json
import os
import statistics
import subprocess

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

SERIES = 1000

CONFIG = """\
data:
  path: {path}
  time_column: day
  group_columns: [store]
  target: sales
  known_reals: [price]
  known_categoricals: [promo]
windows: {{encoder_length: 28, prediction_length: 7, stride: 7}}
split: {{validation_steps: 14}}
"""


def write_files(work, rows_per_series):
    csv_path = os.path.join(work, "rows.csv")
    parquet_path = os.path.join(work, "rows.parquet")
    if os.path.exists(csv_path) and os.path.exists(parquet_path):
        return csv_path, parquet_path
    n = SERIES * rows_per_series
    index = pa.array(range(n), pa.int64())
    series = pc.divide(index, rows_per_series)
    step = pc.subtract(index, pc.multiply(series, rows_per_series))
    first = dt.date(1990, 1, 1).toordinal() - dt.date(1970, 1, 1).toordinal()
    day = pc.cast(pc.add(step, first), pa.int32()).cast(pa.date32())
    store = pc.binary_join_element_wise("store_", pc.cast(series, pa.string()), "")
    price = pc.add(pc.multiply(pc.cast(pc.bit_wise_and(step, 15), pa.float64()), 0.25), 1.0)
    promo = pc.cast(pc.equal(pc.bit_wise_and(step, 7), 5), pa.int8())
    sales = pc.add(pc.multiply(pc.sin(pc.divide(pc.cast(step, pa.float64()), 7.0)), 10.0),
                   pc.cast(series, pa.float64()))
    table = pa.table({"store": store, "day": day, "price": price, "promo": promo,
                      "sales": sales})
    pacsv.write_csv(table, csv_path,
                    pacsv.WriteOptions(quoting_style="none", include_header=True))
    pq.write_table(table.set_column(0, "store", pc.dictionary_encode(store)), parquet_path)
    return csv_path, parquet_path


def run(bench, config, data, *flags):
    out = subprocess.run([bench, config, data, *flags], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bench")
    parser.add_argument("work")
    parser.add_argument("--rows-per-series", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    csv_path, parquet_path = write_files(args.work, args.rows_per_series)
    config = os.path.join(args.work, "rows.yaml")
    with open(config, "w", encoding="utf-8") as f:
        f.write(CONFIG.format(path=csv_path))

    runs = {"csv": [], "parquet": [], "arrow stream (in memory)": []}
    for _ in range(args.runs):
        runs["csv"].append(run(args.bench, config, csv_path))
        runs["parquet"].append(run(args.bench, config, parquet_path))
        runs["arrow stream (in memory)"].append(run(args.bench, config, parquet_path, "--memory"))
    summary = {}
    for name, results in runs.items():
        summary[name] = {
            "rows": results[0]["rows"],
            "file_mb": results[0]["file_bytes"] / 2**20,
            "seconds": statistics.median(r["seconds"] for r in results),
            "mb_per_s": statistics.median(r["mb_per_s"] for r in results),
            "rows_per_s": results[0]["rows"] / statistics.median(r["seconds"] for r in results),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in results),
            "rss_before_mb": results[0]["rss_before_mb"],
            "storage_mb": results[0]["storage_mb"],
            "table_mb": results[0].get("table_mb"),
            "runs": results,
        }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)

    print("| input | rows | file MB | seconds | file MB/s | rows/s | peak RSS MB | dataset MB "
          "| host table MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, s in summary.items():
        table = f"{s['table_mb']:.0f}" if s["table_mb"] is not None else "-"
        print(f"| {name} | {s['rows']:,} | {s['file_mb']:.0f} | {s['seconds']:.2f} | "
              f"{s['mb_per_s']:.0f} | {s['rows_per_s'] / 1e6:.2f} M | {s['peak_rss_mb']:.0f} | "
              f"{s['storage_mb']:.0f} | {table} |")


if __name__ == "__main__":
    main()
