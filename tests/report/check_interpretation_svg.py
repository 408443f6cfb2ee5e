#!/usr/bin/env python3
"""Checks interpretation.svg files as XML against the interpretation they draw.

Usage: check_interpretation_svg.py DIR_OR_SVG...

Each NAME.svg is checked against NAME.json beside it (Interpretation::to_json: importances by
name, NaN and infinities as null), or interpretation.svg against interpretation.json. For each:
  - it parses (xml.etree: well-formed XML) and its root is an <svg>;
  - the panels attention, static_importance, encoder_importance and decoder_importance are
    there, in that order;
  - each group's bars: one per input, named in full in their <title>, largest first and
    non-finite ones last, each <rect>'s width proportional to the importance;
  - a group without inputs says so and has no bars;
  - the attention polyline has encoder_length points, all in the plot;
  - no number anywhere is NaN or infinite.
Exits 1 with a line per failure.
"""
import json
import math
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
PANELS = ["attention", "static_importance", "encoder_importance", "decoder_importance"]
GROUP_WORD = {"static_importance": "static", "encoder_importance": "encoder",
              "decoder_importance": "decoder"}


def as_xml_holds(name):
    """The name with the characters XML cannot hold as U+FFFD, as svg::xml_escape writes it."""
    return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", "\ufffd", name)


def text_of(element):
    """The element's own text and its children's, <title> left out."""
    parts = [element.text or ""]
    for child in element:
        if child.tag != NS + "title":
            parts.append(text_of(child))
        parts.append(child.tail or "")
    return "".join(parts)


def check(svg_path, json_path, errors):
    def fail(message):
        errors.append(f"{svg_path}: {message}")

    try:
        root = ET.parse(svg_path).getroot()
    except ET.ParseError as e:
        fail(f"not well-formed XML: {e}")
        return
    expected = json.loads(json_path.read_text())
    if root.tag != NS + "svg":
        fail(f"root is {root.tag}")
    for element in root.iter():
        for key, value in element.attrib.items():
            for token in value.replace(",", " ").split():
                try:
                    number = float(token)
                except ValueError:
                    continue
                if not math.isfinite(number):
                    fail(f"<{element.tag}> {key}={value!r} is not finite")
    panels = [g.get("id") for g in root.iter(NS + "g") if g.get("class") == "panel"]
    if panels != PANELS:
        fail(f"panels {panels}, expected {PANELS}")
        return
    panel = {g.get("id"): g for g in root.iter(NS + "g") if g.get("class") == "panel"}

    for group, word in GROUP_WORD.items():
        importances = {as_xml_holds(k): v for k, v in expected[group].items()}
        bars = [g for g in panel[group].iter(NS + "g") if g.get("class") == "bar"]
        if not importances:
            if bars or f"no {word} variables" not in text_of(panel[group]):
                fail(f"{group}: an empty group needs its note and no bars")
            continue
        if len(bars) != len(importances):
            fail(f"{group}: {len(bars)} bars for {len(importances)} inputs")
            continue
        names, widths = [], []
        for bar in bars:
            title = bar.find(NS + "title").text
            names.append(title.rsplit(": ", 1)[0])
            widths.append(float(bar.find(NS + "rect").get("width")))
            label = bar.find(NS + "text").text
            if len(label) > 32 or not (label == names[-1] or label.endswith("\u2026")):
                fail(f"{group}: label {label!r} for {names[-1]!r}")
        if sorted(names) != sorted(importances):
            fail(f"{group}: names {names}, expected {list(importances)}")
            continue
        values = [importances[n] for n in names]
        finite = [v for v in values if v is not None]
        if values[: len(finite)] != finite or finite != sorted(finite, reverse=True):
            fail(f"{group}: bars not largest first, non-finite last: {values}")
        largest = max(finite, default=0.0)
        for name, value, width in zip(names, values, widths):
            if value is None:
                if width != 0:
                    fail(f"{group}: non-finite {name!r} has a bar")
            elif largest > 0 and abs(width / max(widths) - value / largest) > 1e-3:
                fail(f"{group}: {name!r}: width {width} of {max(widths)} for {value} of {largest}")

    lines = list(panel["attention"].iter(NS + "polyline"))
    points = [tuple(map(float, p.split(","))) for p in lines[0].get("points").split()] if lines else []
    if len(lines) != 1 or len(points) != expected["encoder_length"]:
        fail(f"attention: {len(lines)} lines, {len(points)} points for "
             f"encoder_length {expected['encoder_length']}")
    else:
        frame = panel["attention"].find(NS + "rect")
        x0, y0 = float(frame.get("x")), float(frame.get("y"))
        x1, y1 = x0 + float(frame.get("width")), y0 + float(frame.get("height"))
        if any(not (x0 <= x <= x1 and y0 <= y <= y1) for x, y in points):
            fail("attention: a point outside the plot")
        if points != sorted(points):
            fail("attention: points not in time order")


def main(args):
    svgs = []
    for arg in map(pathlib.Path, args):
        svgs += sorted(arg.glob("*.svg")) if arg.is_dir() else [arg]
    svgs = [s for s in svgs if s.name != "forecast.svg"]
    if not svgs:
        print("check_interpretation_svg: no SVG files", file=sys.stderr)
        return 1
    errors = []
    for svg in svgs:
        check(svg, svg.with_suffix(".json"), errors)
    for line in errors:
        print(line, file=sys.stderr)
    print(f"check_interpretation_svg: {len(svgs)} files, {len(errors)} failures")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
