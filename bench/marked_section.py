#!/usr/bin/env python3
"""Replaces one generated section of a Markdown file (BENCHMARKS.md) between its markers,
<!-- NAME:begin --> and <!-- NAME:end -->, so each benchmark script can regenerate its own
section alone. Where the markers are absent, the section goes in at the given place.

  bench/marked_section.py FILE NAME SECTION_FILE [--before HEADING | --end-of HEADING]

--before HEADING: in front of the line HEADING; --end-of HEADING: after HEADING's section (in
front of the next "## " heading, or at the end); neither: at the end of FILE. A marker
without the other, or a heading that is not there, is an error and FILE is left as it was.
"""
import argparse
import re
import sys
from pathlib import Path


def replace_marked_section(text, name, section, before=None, end_of=None):
    """TEXT with SECTION between NAME's markers; raises ValueError when it cannot place it."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n{section.strip(chr(10))}\n{end}"
    if begin in text and end in text and text.index(begin) < text.index(end):
        return text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    if begin in text or end in text:
        raise ValueError(f"one {name} marker without the other")
    heading = before or end_of
    if heading is None:
        return text.rstrip("\n") + "\n\n" + block + "\n"
    if heading not in text:
        raise ValueError(f"no '{heading}' section to put the {name} markers "
                         f"{'before' if before else 'after'}")
    if before:
        at = text.index(heading)
    else:
        following = re.compile(r"^## ", re.M).search(text, text.index(heading) + len(heading))
        if not following:
            return text.rstrip("\n") + "\n\n" + block + "\n"
        at = following.start()
    return text[:at] + block + "\n\n" + text[at:]


def update_file(path, name, section, before=None, end_of=None):
    path = Path(path)
    try:
        text = replace_marked_section(path.read_text(), name, section, before, end_of)
    except ValueError as e:
        sys.exit(f"{path}: {e}")
    path.write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("name")
    parser.add_argument("section_file")
    place = parser.add_mutually_exclusive_group()
    place.add_argument("--before")
    place.add_argument("--end-of")
    args = parser.parse_args()
    update_file(args.file, args.name, Path(args.section_file).read_text(), args.before,
                args.end_of)


if __name__ == "__main__":
    main()
