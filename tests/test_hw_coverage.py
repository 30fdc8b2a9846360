"""scripts/hw_coverage.py (make coverage-hw) on hand-written coverage.dat
files in Verilator 5.006's format: how points merge across runs and
instances, what counts as a covered line, and the exit status. No
simulator."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("hw_coverage", ROOT / "scripts" / "hw_coverage.py")
hw_coverage = importlib.util.module_from_spec(_spec)
sys.modules["hw_coverage"] = hw_coverage  # (dataclasses looks its module up)
_spec.loader.exec_module(hw_coverage)


def point(file: str, line: int, col: int, page: str, o: str, count: int, s: str | None = None, h: str = ".top") -> str:
    """One coverage.dat line as Verilator 5.006 writes it."""
    fields = [("f", file), ("l", str(line)), ("n", str(col)), ("page", page), ("o", o)]
    if s is not None:
        fields.append(("S", s))
    fields.append(("h", h))
    body = "".join(f"\x01{k}\x02{v}" for k, v in fields)
    return f"C '{body}' {count}\n"


def write_dat(path: Path, points: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# SystemC::Coverage-3\n" + "".join(points))
    return path


BLK = str(ROOT / "hw" / "rtl" / "blk.v")


def test_lines_merge_across_runs_and_instances(tmp_path):
    # Run 1 reaches lines 10-12 in instance a; run 2 reaches 20 in instance
    # b; line 30's block is never reached; line 12 is also in a block run 2
    # did not reach, which does not undo run 1.
    a = write_dat(tmp_path / "r1" / "coverage.dat", [
        point(BLK, 10, 3, "v_line/blk", "block", 5, "10-12", ".top.a"),
        point(BLK, 20, 3, "v_line/blk", "block", 0, "20", ".top.a"),
        point(BLK, 30, 3, "v_line/blk", "block", 0, "30,32", ".top.a"),
    ])
    b = write_dat(tmp_path / "r2" / "coverage.dat", [
        point(BLK, 12, 5, "v_line/blk", "block", 0, "12", ".top.b"),
        point(BLK, 20, 3, "v_line/blk", "block", 7, "20", ".top.b"),
    ])
    blocks = hw_coverage.merge([a, b])
    s = blocks["hw/rtl/blk.v"].summary()
    assert s["lines"] == {"covered": 4, "total": 6, "percent": 66.7}
    assert s["uncovered_lines"] == [30, 32]


def test_branches_and_toggles_count_each_point_once(tmp_path):
    # The same toggle bit in two instances is one point, covered if either
    # toggled; branch arms are points of their own.
    a = write_dat(tmp_path / "coverage.dat", [
        point(BLK, 40, 7, "v_branch/blk", "if", 3, "40"),
        point(BLK, 40, 7, "v_branch/blk", "else", 0, "41"),
        point(BLK, 5, 9, "v_toggle/blk", "x[0]", 0, h=".top.a"),
        point(BLK, 5, 9, "v_toggle/blk", "x[0]", 2, h=".top.b"),
        point(BLK, 5, 9, "v_toggle/blk", "x[1]", 0, h=".top.a"),
    ])
    s = hw_coverage.merge([a])["hw/rtl/blk.v"].summary()
    assert s["branches"] == {"covered": 1, "total": 2, "percent": 50.0}
    assert s["toggles"] == {"covered": 1, "total": 2, "percent": 50.0}
    assert s["lines"]["total"] == 0 and s["lines"]["percent"] is None


def test_unreadable_points_are_refused(tmp_path):
    bad = write_dat(tmp_path / "coverage.dat", ["C 'garbage 12\n"])
    with pytest.raises(hw_coverage.CoverageError, match="not a coverage point"):
        hw_coverage.merge([bad])
    odd = write_dat(tmp_path / "odd" / "coverage.dat", [point(BLK, 1, 1, "v_user/blk", "x", 1, "1")])
    with pytest.raises(hw_coverage.CoverageError, match="unknown kind 'v_user/blk'"):
        hw_coverage.merge([odd])


def test_exit_status_and_report(tmp_path, capsys):
    write_dat(tmp_path / "t" / "case" / "coverage.dat", [
        point(BLK, 10, 3, "v_line/blk", "block", 1, "10-18"),
        point(BLK, 30, 3, "v_line/blk", "block", 0, "30"),
    ])
    # 9 of 10 lines: meets 90, not 95.
    assert hw_coverage.main([str(tmp_path), "--min-lines", "90"]) == 0
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["schema"] == "rnic-coverage/1"
    assert doc["blocks"]["hw/rtl/blk.v"]["lines"]["percent"] == 90.0
    assert doc["blocks"]["hw/rtl/blk.v"]["uncovered_lines"] == [30]
    assert hw_coverage.main([str(tmp_path), "--min-lines", "95"]) == 1
    err = capsys.readouterr().err
    assert "below 95% in blk.v" in err
    # No runs at all: says what to run.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert hw_coverage.main([str(empty)]) == 2
    assert "make coverage-hw" in capsys.readouterr().err


def test_runs_of_lines():
    assert hw_coverage._runs([3, 4, 5, 9, 11, 12]) == "3-5, 9, 11-12"
