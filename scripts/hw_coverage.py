#!/usr/bin/env python3
"""RTL coverage per block, from the Verilator cases of the testbenches.

    scripts/hw_coverage.py [--json OUT] [--min-lines PCT] [DIR]   (make coverage-hw)

`make coverage-hw` runs the Verilator cases of `make test-hw` with
HW_COVERAGE=1 (tests/hdlsim.py): each is built with --coverage-line and
--coverage-toggle into build/coverage/<test>/<case>/, and writes
coverage.dat there when it ends. This script reads every coverage.dat
under DIR (default build/coverage), merges them, and reports for each RTL
file of hw/rtl (a block):

  lines     source lines inside a statement block Verilator instruments
            (its v_line points: the lines each block's S field lists); a
            line is covered when some run reached a block holding it, in
            any instance, at any width;
  branches  the arms of every if and case (v_branch points), each arm a
            point;
  toggles   every bit of every signal seen going 0->1 and 1->0 (v_toggle
            points; a bit counts once however many instances have it).

Points are merged across runs by what they are (file, line, column, kind,
name), not by instance: a block instantiated in several tops, or built at
several widths, is covered by any of them. Code a testbench cannot reach
by design (a parameter check's error branch, a width's other generate arm)
is kept out of the count in the RTL itself, between `// verilator
coverage_off` and `// verilator coverage_on`, with a comment that says why.

Prints the table and the uncovered lines of each block (file:line), writes
build/coverage/report.json (schema rnic-coverage/1) and an annotated copy of
each source under build/coverage/annotated/ (verilator_coverage --annotate:
lines marked % were not reached). Exits 1 when a block's line coverage is
below --min-lines (default 90), naming the blocks.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RTL = ROOT / "hw" / "rtl"
DEFAULT_DIR = ROOT / "build" / "coverage"
SCHEMA = "rnic-coverage/1"

# One point of a Verilator coverage.dat ("SystemC::Coverage-3"):
#   C '<\x01key\x02value>...' <count>
_POINT = re.compile(r"^C '(.*)' (\d+)\s*$")


class CoverageError(Exception):
    """A coverage file this script cannot read."""


def parse_point(line: str) -> tuple[dict[str, str], int] | None:
    """The fields and count of one coverage.dat line; None for a line that
    is not a point (the header comment)."""
    if not line.startswith("C "):
        return None
    m = _POINT.match(line)
    if not m:
        raise CoverageError(f"not a coverage point: {line[:120]!r}")
    fields = {}
    for item in m.group(1).split("\x01"):
        if not item:
            continue
        key, sep, value = item.partition("\x02")
        if not sep:
            raise CoverageError(f"coverage point field without a value: {item!r}")
        fields[key] = value
    return fields, int(m.group(2))


def _lines(spec: str) -> list[int]:
    """Verilator's S field: "130,133-136,144" -> [130, 133, 134, 135, 136, 144]."""
    out = []
    for part in spec.split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        elif part:
            out.append(int(part))
    return out


@dataclass
class Block:
    """One RTL file's merged points."""

    lines: dict[int, int] = field(default_factory=dict)  # line -> best count
    branches: dict[tuple, int] = field(default_factory=dict)
    toggles: dict[tuple, int] = field(default_factory=dict)

    @staticmethod
    def _ratio(points: dict) -> tuple[int, int]:
        return sum(1 for c in points.values() if c > 0), len(points)

    def summary(self) -> dict:
        out = {}
        for kind in ("lines", "branches", "toggles"):
            hit, total = self._ratio(getattr(self, kind))
            out[kind] = {"covered": hit, "total": total, "percent": round(100.0 * hit / total, 1) if total else None}
        out["uncovered_lines"] = sorted(n for n, c in self.lines.items() if c == 0)
        return out


def merge(files: list[Path], root: Path = ROOT) -> dict[str, Block]:
    """Every point of every file, merged per RTL source (path relative to
    root) by what the point is."""
    blocks: dict[str, Block] = defaultdict(Block)
    for path in files:
        with path.open(errors="replace") as fh:
            for line in fh:
                got = parse_point(line)
                if got is None:
                    continue
                f, count = got
                src = Path(f.get("f", ""))
                try:
                    name = str(src.resolve().relative_to(root))
                except ValueError:
                    name = str(src)
                b = blocks[name]
                kind = f.get("page", "").split("/", 1)[0]
                if kind == "v_line":
                    for n in _lines(f.get("S", f.get("l", "0"))):
                        b.lines[n] = max(b.lines.get(n, 0), count)
                elif kind == "v_branch":
                    key = (f.get("l"), f.get("n"), f.get("o"))
                    b.branches[key] = max(b.branches.get(key, 0), count)
                elif kind == "v_toggle":
                    key = (f.get("l"), f.get("n"), f.get("o"))
                    b.toggles[key] = max(b.toggles.get(key, 0), count)
                else:
                    raise CoverageError(f"{path}: a point of unknown kind {f.get('page')!r}")
    return dict(blocks)


def _runs(lines: list[int]) -> str:
    """[3, 4, 5, 9] -> "3-5, 9"."""
    out = []
    for n in lines:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in out)


def report(blocks: dict[str, Block], min_lines: float) -> tuple[dict, list[str]]:
    rows = {name: b.summary() for name, b in sorted(blocks.items())}
    low = [n for n, r in rows.items() if r["lines"]["total"] and r["lines"]["percent"] < min_lines]
    return {"schema": SCHEMA, "min_lines_percent": min_lines, "blocks": rows}, low


def _pct(r: dict) -> str:
    return "-" if r["percent"] is None else f"{r['percent']:5.1f}% ({r['covered']}/{r['total']})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR,
                    help="where the coverage.dat files are (default build/coverage)")
    ap.add_argument("--json", type=Path, help="report file (default DIR/report.json)")
    ap.add_argument("--min-lines", type=float, default=90.0, help="line coverage every block must reach, percent")
    args = ap.parse_args(argv)

    files = sorted(args.dir.glob("**/coverage.dat"))
    if not files:
        print(f"hw_coverage: no coverage.dat under {args.dir}: run `make coverage-hw` "
              "(the Verilator cases built with HW_COVERAGE=1) first", file=sys.stderr)
        return 2
    try:
        blocks = merge(files)
    except CoverageError as exc:
        print(f"hw_coverage: {exc}", file=sys.stderr)
        return 2
    blocks = {n: b for n, b in blocks.items() if n.startswith("hw/rtl/")}
    doc, low = report(blocks, args.min_lines)
    doc["runs"] = len(files)
    out = args.json or args.dir / "report.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")

    print(f"RTL coverage, {len(files)} Verilator runs (build/coverage/*/*/coverage.dat)\n")
    print(f"{'block':<22} {'lines':>22} {'branches':>22} {'toggles':>24}")
    for name, r in doc["blocks"].items():
        print(f"{Path(name).name:<22} {_pct(r['lines']):>22} {_pct(r['branches']):>22} {_pct(r['toggles']):>24}")
    print()
    for name, r in doc["blocks"].items():
        if r["uncovered_lines"]:
            print(f"{name}: lines not reached: {_runs(r['uncovered_lines'])}")

    annotated = args.dir / "annotated"
    merged = args.dir / "merged.dat"
    try:
        subprocess.run(["verilator_coverage", "--write", str(merged), *map(str, files)], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["verilator_coverage", "--annotate", str(annotated), "--annotate-min", "1", str(merged)],
                       check=True, stdout=subprocess.DEVNULL)
        print(f"\nannotated sources (lines marked % not reached): {annotated}/")
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"hw_coverage: verilator_coverage failed ({exc}); the table above stands", file=sys.stderr)
    print(f"report: {out}")
    if low:
        print(f"hw_coverage: line coverage below {args.min_lines:g}% in {', '.join(Path(n).name for n in low)}: "
              "cover the lines with a test, or keep code no test can reach out of the count "
              "(// verilator coverage_off ... coverage_on, with the reason)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
