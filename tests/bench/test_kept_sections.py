#!/usr/bin/env python3
"""bench/kept_sections.py: a regenerated BENCHMARKS.md that drops a heading or a marked section
of the old one is caught, by name, and one that keeps them all (reordered, rewritten between
them, with new ones) passes; the command's exit status says which."""
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import kept_sections  # noqa: E402

OLD = """# Benchmarks

## Against pytorch-forecasting
table

<!-- precision:begin -->
## Mixed precision
### Quality
<!-- precision:end -->

### Longer pilots for close first rounds (issue 39)
notes
"""


def check(condition, message):
    if not condition:
        sys.exit(f"test_kept_sections: {message}")


def main():
    rewritten = OLD.replace("table", "a new table").replace("notes", "other notes")
    check(kept_sections.missing_sections(OLD, rewritten) == [], "rewritten text flagged")
    reordered = rewritten + "\n## A section the new run adds\n"
    check(kept_sections.missing_sections(OLD, reordered) == [], "an added section flagged")
    dropped = OLD.split("### Longer pilots")[0]
    check(kept_sections.missing_sections(OLD, dropped) ==
          ["### Longer pilots for close first rounds (issue 39)"], "a dropped heading missed")
    unmarked = OLD.replace("<!-- precision:begin -->\n", "")
    check(kept_sections.missing_sections(OLD, unmarked) == ["<!-- precision:begin -->"],
          "a dropped marker missed")
    # A heading inside the text, not at a line's start, does not count.
    check(kept_sections.sections("text ## not a heading\n") == [], "mid-line heading counted")

    with tempfile.TemporaryDirectory() as tmp:
        old, new = Path(tmp, "old.md"), Path(tmp, "new.md")
        old.write_text(OLD)
        script = [sys.executable, str(ROOT / "bench" / "kept_sections.py"), str(old), str(new)]
        new.write_text(reordered)
        check(subprocess.run(script, capture_output=True).returncode == 0, "exit status on a keep")
        new.write_text(dropped)
        run = subprocess.run(script, capture_output=True, text=True)
        check(run.returncode == 1 and "Longer pilots" in run.stderr,
              f"exit status or message on a drop: {run.returncode} {run.stderr!r}")
    print("test_kept_sections: passed")


if __name__ == "__main__":
    main()
