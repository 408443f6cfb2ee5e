#!/usr/bin/env python3
"""Checks that a regenerated BENCHMARKS.md keeps every section of the one it replaces: each
"## " and "### " heading and each <!-- NAME:begin --> marker of OLD must also be in NEW.

bench/run-benchmarks.sh writes the file whole, from its own runs and the marked sections it
carries over. Sections that other scripts or notes added since (the accuracy studies, refit,
backtest, notes between the generated tables) would be lost without a word; with this check the
script leaves BENCHMARKS.md as it was and says which sections the new file lacks.

  bench/kept_sections.py OLD NEW    exit 0 when NEW keeps them all, 1 naming each one it lacks
"""
import argparse
import re
import sys
from pathlib import Path

SECTION = re.compile(r"^(?:#{2,3} .+|<!-- [\w.-]+:begin -->)$", re.M)


def sections(text):
    """The headings and begin markers of TEXT, in order, each once."""
    return list(dict.fromkeys(m.group(0).strip() for m in SECTION.finditer(text)))


def missing_sections(old_text, new_text):
    """The sections of OLD_TEXT that NEW_TEXT lacks, in OLD_TEXT's order."""
    kept = set(sections(new_text))
    return [s for s in sections(old_text) if s not in kept]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args()
    missing = missing_sections(args.old.read_text(), args.new.read_text())
    for section in missing:
        print(f"{args.new}: lacks {args.old}'s section {section!r}", file=sys.stderr)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
