"""Data in memory: a pandas DataFrame trains bitwise like the same rows in a Parquet file;
polars, duckdb and pyarrow readers are read as the file is; forecasts come back as a
pyarrow.Table equal to forecast.csv; bad tables give the library's DataError."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy
import pandas
import pyarrow
import pyarrow.csv
import pytest

import tftrain
from conftest import ReferenceRun, tiny


def test_a_dataframe_trains_bitwise_like_the_parquet_file(
    tmp_path: Path, tiny_csv: Path, tiny_parquet: Path
) -> None:
    frame = pandas.read_csv(tiny_csv)  # strings, floats, int64 promo; dates as text
    with tftrain.Trainer(tiny(tmp_path / "frame"), data=frame) as trainer:
        from_frame = trainer.train()
        frame_forecasts = trainer.predict()
    parquet = tiny(tmp_path / "parquet", **{"data.path": str(tiny_parquet)})
    with tftrain.Trainer(parquet) as trainer:
        from_parquet = trainer.train()
        parquet_forecasts = trainer.predict()
    assert from_frame.final_validation_loss.hex() == from_parquet.final_validation_loss.hex()
    assert from_frame.final_train_loss.hex() == from_parquet.final_train_loss.hex()
    timings = {"train_seconds": 0.0, "samples_per_second": 0.0}
    assert dataclasses.replace(from_frame, **timings) == dataclasses.replace(from_parquet, **timings)
    # The Parquet date column is date32, the frame's text: the forecasts' times are the same.
    assert frame_forecasts.drop(["origin", "time"]).equals(parquet_forecasts.drop(["origin", "time"]))


def test_forecasts_equal_forecast_csv(reference: ReferenceRun, tiny_csv: Path) -> None:
    table = reference.forecasts
    text = pyarrow.csv.read_csv(
        reference.output / "forecast.csv",
        convert_options=pyarrow.csv.ConvertOptions(
            column_types={name: pyarrow.string() for name in table.schema.names},
            strings_can_be_null=True,
        ),
    )
    assert table.schema.names == text.schema.names
    assert table.num_rows == text.num_rows > 0
    for name in ("kind", "store", "horizon"):
        assert table[name].cast(pyarrow.string()).equals(text[name]), name
    for name in ("origin", "time"):
        assert table[name].type == pyarrow.date32()
        assert table[name].cast(pyarrow.string()).equals(text[name]), name
    for name in ("q0.1", "q0.5", "q0.9", "actual"):
        column = table[name].to_numpy(zero_copy_only=False)
        written = text[name].to_numpy(zero_copy_only=False)
        known = numpy.array([value is not None for value in written])
        # The CSV holds each float32 in its shortest form; the table, the float32 widened.
        expected = numpy.array([float(v) for v in written[known]], dtype=numpy.float32)
        assert numpy.array_equal(column[known], expected.astype(numpy.float64)), name
        assert numpy.isnan(column[~known]).all(), name
    saved = tftrain.Model.load(reference.output / "model")
    assert saved.predict().equals(table)  # the training data file
    assert saved.predict(tiny_csv).equals(table)  # a file named


def test_other_arrow_producers_read_as_the_file(tmp_path: Path, tiny_csv: Path) -> None:
    import duckdb
    import polars

    with tftrain.Trainer(tiny(tmp_path / "file")) as trainer:
        initial = trainer.evaluate()  # the seed's initial weights on the validation windows
        forecasts = trainer.predict()
    table = pyarrow.csv.read_csv(tiny_csv)
    uneven = pyarrow.RecordBatchReader.from_batches(
        table.schema, table.to_batches(max_chunksize=97)
    )
    producers = {
        "polars": polars.read_csv(tiny_csv),
        "duckdb": duckdb.sql(f"select * from read_csv_auto('{tiny_csv}')"),
        "pyarrow reader, 97-row batches": uneven,
        "tftrain.Data": tftrain.Data(table),
    }
    for name, producer in producers.items():
        with tftrain.Trainer(tiny(tmp_path / "memory"), data=producer) as trainer:
            assert trainer.evaluate() == initial, name
            assert trainer.predict().drop(["origin", "time"]).equals(
                forecasts.drop(["origin", "time"])
            ), name


def test_one_data_serves_several_calls(reference: ReferenceRun, tiny_csv: Path) -> None:
    data = tftrain.Data(pandas.read_csv(tiny_csv))
    assert data.num_rows == sum(1 for _ in open(tiny_csv)) - 1
    model = tftrain.Model.load(reference.output / "model")
    first, second = model.predict(data), model.predict(data)
    assert first.equals(second) and first.num_rows > 0
    data.close()
    with pytest.raises(tftrain.InvalidArgumentError, match="Data is closed"):
        model.predict(data)


def test_bad_tables_name_row_and_column(tmp_path: Path, tiny_csv: Path) -> None:
    frame = pandas.read_csv(tiny_csv)
    frame.loc[11, "sales"] = None
    with pytest.raises(tftrain.DataError, match=r"row 11: column 'sales'"):
        tftrain.Trainer(tiny(tmp_path), data=frame)
    with pytest.raises(tftrain.DataError, match="column 'store'"):
        tftrain.Trainer(tiny(tmp_path), data=frame.drop(columns=["store"]))
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        tftrain.Data([1, 2, 3])
