#!/usr/bin/env python3
"""Synthetic multi-series retail data for tftrain (long format, one row per store and step).

Deterministic: the same arguments give the same bytes (Python's `random.Random(seed)`, a
Mersenne Twister whose `random()` and `gauss()` are stable across Python 3 versions; no numpy).

Columns
  store       series id (group column)                  store_00 .. store_NN
  region      static categorical                        north, south, east, west
  store_size  static real                               floor area, 1000 sq ft
  date        ISO 8601 date (daily) or date-time (--freq hourly, UTC with Z)
  price       known real: shelf price, changes now and then
  promo       known categorical: 1 on promotion days, else 0
  footfall    unknown real: visitors (known only after the fact)
  sales       target: level x weekly and yearly season x promo lift x price effect + AR(1) noise

The default output (12 stores x 1096 days) is examples/data/multiseries.csv:

    python3 examples/data/generate_multiseries.py --out examples/data/multiseries.csv

Bigger files for benchmarks, e.g. about 100 MB:

    python3 examples/data/generate_multiseries.py --stores 200 --length 9000 --out /tmp/big.csv
"""

import argparse
import datetime as dt
import math
import random
import sys

REGIONS = ["north", "south", "east", "west"]


def generate(out, stores, length, seed, start, freq):
    rng = random.Random(seed)
    step = dt.timedelta(days=1) if freq == "daily" else dt.timedelta(hours=1)
    period_week = 7 if freq == "daily" else 24 * 7
    period_year = 365.25 if freq == "daily" else 24 * 365.25
    out.write("store,region,store_size,date,price,promo,footfall,sales\n")
    for s in range(stores):
        store = "store_%02d" % s if stores <= 100 else "store_%04d" % s
        region = REGIONS[rng.randrange(len(REGIONS))]
        size = round(rng.uniform(5.0, 40.0), 1)
        level = size * rng.uniform(8.0, 14.0)
        weekly = rng.uniform(0.05, 0.25)
        yearly = rng.uniform(0.05, 0.30)
        phase = rng.uniform(0.0, 2.0 * math.pi)
        price = round(rng.uniform(2.0, 6.0), 2)
        noise = 0.0
        t = dt.datetime.combine(start, dt.time())
        for i in range(length):
            if rng.random() < 0.02:  # a price change now and then
                price = round(max(1.0, price * rng.uniform(0.9, 1.1)), 2)
            promo = 1 if rng.random() < 0.1 else 0
            season = (1.0 + weekly * math.sin(2.0 * math.pi * i / period_week + phase)
                      + yearly * math.sin(2.0 * math.pi * i / period_year))
            noise = 0.7 * noise + rng.gauss(0.0, 0.05)
            demand = level * season * (1.35 if promo else 1.0) * (4.0 / price) ** 0.5
            sales = max(0.0, demand * (1.0 + noise))
            footfall = max(0.0, sales * rng.uniform(2.5, 3.5))
            stamp = t.strftime("%Y-%m-%d") if freq == "daily" else t.strftime("%Y-%m-%dT%H:%M:%SZ")
            out.write("%s,%s,%.1f,%s,%.2f,%d,%.1f,%.3f\n"
                      % (store, region, size, stamp, price, promo, footfall, sales))
            t += step


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=int, default=12, help="number of series (default 12)")
    parser.add_argument("--length", type=int, default=1096, help="rows per series (default 1096)")
    parser.add_argument("--seed", type=int, default=20240229, help="random seed (default 20240229)")
    parser.add_argument("--start", default="2021-01-01", help="first date (default 2021-01-01)")
    parser.add_argument("--freq", choices=["daily", "hourly"], default="daily")
    parser.add_argument("--out", default="-", help="output file (default: stdout)")
    args = parser.parse_args()
    start = dt.date.fromisoformat(args.start)
    if args.out == "-":
        generate(sys.stdout, args.stores, args.length, args.seed, start, args.freq)
    else:
        with open(args.out, "w", newline="\n") as out:
            generate(out, args.stores, args.length, args.seed, start, args.freq)


if __name__ == "__main__":
    main()
