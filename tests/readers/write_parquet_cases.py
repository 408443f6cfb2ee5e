"""Writes the Parquet files (and the CSVs with the same content) that test_parquet reads.

Run by ctest as a fixture with the Python whose pyarrow the build uses (TFT_ARROW_PYTHON):
    python write_parquet_cases.py OUT_DIR

Every pair NAME.csv / NAME.parquet holds the same values, the CSV written the way pandas'
to_csv would (numbers as their shortest round-trip text, times in ISO 8601), so the dataset
read from either must be bit for bit the same.
"""
import datetime as dt
import math
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq


def number_text(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def write_pair(out, name, table, csv_columns, row_group_size):
    """The table as NAME.parquet and, with csv_columns (name -> text of a value), NAME.csv."""
    pq.write_table(table, os.path.join(out, name + ".parquet"), row_group_size=row_group_size)
    columns = list(csv_columns)
    rows = table.to_pylist()
    with open(os.path.join(out, name + ".csv"), "w", encoding="utf-8") as f:
        f.write(",".join(columns) + "\n")
        for row in rows:
            f.write(",".join(csv_columns[c](row[c]) for c in columns) + "\n")


def shop(out):
    """Daily sales of 3 stores x 2 items: a dictionary-encoded store, an int64 item, a float32
    price with nulls, a boolean promotion, date32 days; 4 row groups of 50 rows."""
    stores, items, days = ["north", "south", "east"], [7, 11], 40
    start = dt.date(2021, 1, 1)
    data = {"store": [], "item": [], "day": [], "price": [], "promo": [], "sales": []}
    for s, store in enumerate(stores):
        for item in items:
            for d in range(days):
                data["store"].append(store)
                data["item"].append(item)
                data["day"].append(start + dt.timedelta(days=d))
                data["price"].append(None if (d + s) % 9 == 4 else 1.5 + 0.25 * ((d * item) % 5))
                data["promo"].append(d % 7 == 5)
                data["sales"].append(round(20 + 3 * s + item * math.sin(d / 3.0) + 0.1 * d, 6))
    table = pa.table({
        "store": pa.array(data["store"]).dictionary_encode(),
        "item": pa.array(data["item"], pa.int64()),
        "day": pa.array(data["day"], pa.date32()),
        "price": pa.array(data["price"], pa.float32()),
        "promo": pa.array(data["promo"], pa.bool_()),
        "sales": pa.array(data["sales"], pa.float64()),
    })
    float32 = lambda v: "" if v is None else repr(float(pa.scalar(v, pa.float32()).as_py()))
    pq.write_table(table, os.path.join(out, "shop_crc.parquet"), row_group_size=50,
                   write_page_checksum=True)
    write_pair(out, "shop", table, {
        "store": str, "item": str, "day": lambda v: v.isoformat(), "price": float32,
        "promo": number_text, "sales": number_text}, row_group_size=50)


SHOP_YAML = """\
# shop's columns, and a data.path that does not exist: only --parquet-file (or --data) can make
# it train.
data:
  path: not_here.csv
  time_column: day
  group_columns: [store, item]
  target: sales
  static_categoricals: [store, item]
  known_reals: [price, promo, relative_time_idx]
  known_categoricals: [day_of_week]
  missing_values: forward_fill
windows: {encoder_length: 7, prediction_length: 3}
split: {validation_steps: 6}
model: {hidden_size: 8, attention_heads: 2}
training: {epochs: 1, batch_size: 16, seed: 3, threads: 1}
"""


def hourly(out):
    """One series of hourly values across the spring-forward night in Paris, time stamped in
    nanoseconds with the zone; the CSV writes the local time with its offset."""
    first = dt.datetime(2021, 3, 27, 12, tzinfo=dt.timezone.utc)
    times = [first + dt.timedelta(hours=h) for h in range(48)]
    values = [float(h % 24) + 0.5 * math.cos(h) for h in range(48)]
    table = pa.table({
        "when": pa.array(times, pa.timestamp("ns", tz="Europe/Paris")),
        "load": pa.array(values, pa.float64()),
    })

    def paris(t):
        # CET (+01:00) until 2021-03-28 01:00 UTC, CEST (+02:00) after.
        offset = 2 if t >= dt.datetime(2021, 3, 28, 1, tzinfo=dt.timezone.utc) else 1
        local = t.astimezone(dt.timezone(dt.timedelta(hours=offset)))
        return local.isoformat()

    write_pair(out, "hourly", table, {"when": paris, "load": number_text}, row_group_size=20)


def units(out):
    """The same instants as timestamp[s], [ms], [us], [ns] without a zone, and as date64."""
    times = [dt.datetime(2022, 5, 1) + dt.timedelta(days=d) for d in range(12)]
    for unit in ["s", "ms", "us", "ns"]:
        table = pa.table({"t": pa.array(times, pa.timestamp(unit)),
                          "y": pa.array([float(d) for d in range(12)])})
        pq.write_table(table, os.path.join(out, "units_" + unit + ".parquet"))
    table = pa.table({"t": pa.array([t.date() for t in times], pa.date64()),
                      "y": pa.array([float(d) for d in range(12)])})
    pq.write_table(table, os.path.join(out, "units_date64.parquet"))


def faults(out):
    """Files with one problem each."""
    n = 12
    base = {"t": pa.array(list(range(n)), pa.int32()), "y": pa.array([float(i) for i in range(n)])}

    def write(name, **columns):
        pq.write_table(pa.table({**base, **columns}), os.path.join(out, name + ".parquet"),
                       row_group_size=5)

    write("null_target", y=pa.array([1.0] * 7 + [None] + [1.0] * 4))
    write("nan_target", y=pa.array([1.0] * 3 + [float("nan")] + [1.0] * 8))
    write("decimal_real", x=pa.array([1] * n, pa.decimal128(10, 2)))
    write("float_category", c=pa.array([0.5] * n))
    write("string_real", x=pa.array(["1.5"] * n))
    write("float_time", t=pa.array([0.5 + i for i in range(n)]))
    write("nanosecond_fraction",
          t=pa.array([1_600_000_000_000_000_000 + 1000 * i + (7 if i == 9 else 0)
                      for i in range(n)], pa.timestamp("ns")))
    write("duplicate_time", t=pa.array([0, 1, 2, 3, 4, 5, 6, 6, 8, 9, 10, 11], pa.int64()))
    write("null_time", t=pa.array([0, 1, 2, None, 4, 5, 6, 7, 8, 9, 10, 11], pa.int64()))
    write("list_column", x=pa.array([[1.0]] * n, pa.list_(pa.float64())))
    with open(os.path.join(out, "not_parquet.parquet"), "wb") as f:
        f.write(b"t,y\n1,2\n" * 100)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    shop(out)
    with open(os.path.join(out, "shop.yaml"), "w", encoding="utf-8") as f:
        f.write(SHOP_YAML)
    hourly(out)
    units(out)
    faults(out)


if __name__ == "__main__":
    main()
