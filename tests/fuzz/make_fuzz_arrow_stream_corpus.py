"""Writes the seed corpus of fuzz_arrow_stream (tests/fuzz/corpus/fuzz_arrow_stream/): small
Arrow IPC streams laid out like the harness's config (g, t, y, z, x, c, u), some that load and
some that the library rejects. Run with the pyarrow of the project's venv:

    ~/.cache/tftrain/venv-torch/bin/python tests/fuzz/make_fuzz_arrow_stream_corpus.py
"""
import datetime
import pathlib

import pyarrow as pa

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "fuzz_arrow_stream"


def write(name, schema, batches):
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
    (OUT / name).write_bytes(sink.getvalue().to_pybytes())


def columns(series=2, steps=5, time=None):
    g, t, y, z, x, c, u = [], [], [], [], [], [], []
    for s in range(series):
        for i in range(steps):
            g.append(f"s{s}")
            t.append(i if time is None else time(i))
            y.append(float(s * 10 + i))
            z.append(float(s))
            x.append(i * 0.5)
            c.append("ab"[i % 2])
            u.append(float(i) if i != 2 else float("nan"))
    return dict(g=g, t=t, y=y, z=z, x=x, c=c, u=u)


def table(cols, types):
    return pa.table({k: pa.array(v, type=types.get(k)) for k, v in cols.items()})


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    # Integer time, one batch.
    t = table(columns(), {"t": pa.int64(), "u": pa.float32()})
    write("int_time.arrows", t.schema, t.to_batches())
    # Timestamps (us) in batches of 3 rows, a dictionary-encoded category.
    day = datetime.datetime(2024, 1, 1)
    t = table(columns(time=lambda i: day + datetime.timedelta(days=i)),
              {"t": pa.timestamp("us")})
    t = t.set_column(5, "c", t.column("c").dictionary_encode())
    write("timestamp_batches.arrows", t.schema, t.to_batches(max_chunksize=3))
    # Zoned timestamps (s), large strings, int32 reals, a null in the target.
    cols = columns(time=lambda i: day + datetime.timedelta(hours=i))
    cols["y"][3] = None
    t = table(cols, {"t": pa.timestamp("s", tz="Europe/Paris"), "g": pa.large_string(),
                     "x": pa.int32()})
    write("zoned_nulls.arrows", t.schema, t.to_batches())
    # Dates, a boolean category.
    cols = columns(time=lambda i: datetime.date(2024, 1, 1) + datetime.timedelta(days=i))
    cols["c"] = [i % 2 == 0 for i in range(len(cols["c"]))]
    t = table(cols, {"t": pa.date32()})
    write("date_bool.arrows", t.schema, t.to_batches())
    # Rejected: no batches; a column missing; a column of a type not read.
    t = table(columns(), {})
    write("empty.arrows", t.schema, [])
    without_u = t.drop_columns(["u"])
    write("missing_column.arrows", without_u.schema, without_u.to_batches())
    t = t.set_column(4, "x", pa.array([b"\x00"] * t.num_rows, type=pa.binary()))
    write("binary_column.arrows", t.schema, t.to_batches())


if __name__ == "__main__":
    main()
