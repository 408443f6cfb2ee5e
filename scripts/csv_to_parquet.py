"""Converts a CSV file to Parquet with pyarrow (its type inference: integers, doubles, strings,
ISO dates as date32 and date-times as timestamps), e.g. to train from Parquet:

    ~/.cache/tftrain/venv-torch/bin/python scripts/csv_to_parquet.py data.csv data.parquet
"""
import sys

import pyarrow.csv as csv
import pyarrow.parquet as parquet


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: csv_to_parquet.py IN.csv OUT.parquet")
    parquet.write_table(csv.read_csv(sys.argv[1]), sys.argv[2])


if __name__ == "__main__":
    main()
