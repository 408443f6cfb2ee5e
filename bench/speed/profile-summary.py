#!/usr/bin/env python3
"""Summarises a Chrome trace written by `tft-bench --profile` (LibTorch's RecordProfile).

    bench/speed/profile-summary.py TRACE.json [--top 25]

Prints, per operator name, how often it ran, its self time (its own duration less that of the
operators it called) and its total time, sorted by self time; and the share of the step taken
by the few operators on top. Self times add up to the step, so they say where time goes.
"""
import argparse
import collections
import json
import sys


def load_events(path):
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    complete = [e for e in events if e.get("ph") == "X" and "dur" in e]
    if not complete:
        sys.exit(f"{path}: no complete ('ph': 'X') events: not a tft-bench --profile trace?")
    return complete


def self_times(events):
    """Yields (event, self duration) with nesting found per thread from start and end times."""
    by_thread = collections.defaultdict(list)
    for e in events:
        by_thread[e.get("tid")].append(e)
    for thread_events in by_thread.values():
        thread_events.sort(key=lambda e: (float(e["ts"]), -float(e["dur"])))
        stack = []  # [event, end, children's time]
        for e in thread_events:
            start, dur = float(e["ts"]), float(e["dur"])
            while stack and stack[-1][1] <= start:
                done = stack.pop()
                yield done[0], float(done[0]["dur"]) - done[2]
            if stack:
                stack[-1][2] += dur
            stack.append([e, start + dur, 0.0])
        while stack:
            done = stack.pop()
            yield done[0], float(done[0]["dur"]) - done[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()

    events = load_events(args.trace)
    count = collections.Counter()
    self_us = collections.Counter()
    total_us = collections.Counter()
    for event, own in self_times(events):
        name = event["name"]
        count[name] += 1
        self_us[name] += own
        total_us[name] += float(event["dur"])
    step_us = sum(self_us.values())
    print(f"{args.trace}: {len(events)} operator calls, {step_us / 1e3:.1f} ms of self time")
    print(f"{'operator':<44} {'calls':>7} {'self ms':>9} {'self %':>7} {'total ms':>9}")
    shown = 0.0
    for name, own in self_us.most_common(args.top):
        shown += own
        print(f"{name[:44]:<44} {count[name]:>7} {own / 1e3:>9.1f} {100 * own / step_us:>6.1f}% "
              f"{total_us[name] / 1e3:>9.1f}")
    print(f"top {args.top}: {100 * shown / step_us:.1f}% of the self time")


if __name__ == "__main__":
    main()
