"""What the side-by-side tables (peer-comparison.py, precision-comparison.py) share: the
strategies of one benchmark run by name, and what makes two runs incomparable."""
import os
import sys


def by_strategy(results, path):
    """A run's results by strategy name; exits when there is no `none` to compare against."""
    table = {r["strategy"]: r for r in results}
    if "none" not in table:
        sys.exit(f"{path}: no 'none' strategy to compare against")
    return table


def run_differences(first, second):
    """What differs between two runs' settings, as readable phrases: such a ratio compares
    machines, not trainers."""
    differences = []
    for key in ("device", "threads", "batch_size"):
        if str(first.get(key)) != str(second.get(key)):
            differences.append(f"{key} ({first.get(key)} vs {second.get(key)})")
    if first.get("config") is not None and second.get("config") is not None:
        first_config = os.path.normpath(str(first["config"]))
        second_config = os.path.normpath(str(second["config"]))
        if first_config != second_config:
            differences.append(f"config ({first_config} vs {second_config})")
    # The peer's torch reports a local tag ("2.11.0+cu130"); LibTorch's version has none.
    first_torch = str(first.get("torch_version")).split("+")[0]
    second_torch = str(second.get("torch_version")).split("+")[0]
    if first_torch != second_torch:
        differences.append(f"torch version ({first_torch} vs {second_torch})")
    return differences


def print_heading(tool, title, ours, peer, differences):
    """The differences to stderr (prefixed by `tool`), then the table's title line naming the
    device and the peer's version and threads, and one '> Not comparable' line per difference."""
    for difference in differences:
        print(f"{tool}: {difference}", file=sys.stderr)
    if title:
        print(f"**{title}** (on {ours['device']}; peer: {peer['peer']} {peer['peer_version']}, "
              f"torch {peer['torch_version']}, {peer['threads']} thread(s))\n")
    for difference in differences:
        print(f"> Not comparable: {difference}.\n")
