"""The files generated from the register map (hw/regs/rnic.rdl) are current.

scripts/regs.py --check regenerates hw/rtl/rnic_regs.v, driver/regs/regs.go
and docs/registers.md into a temporary directory and fails, naming each
stale file and the command that refreshes it (`make regs`). The second test
shows that check failing on a tree with one generated file changed. The
last two hold the generator's own rules for peakrdl-etana's output
(docs/registers-design.md, "Regions the device implements"): an external
region must start at a multiple of its size, and the generated Verilog
keeps its acknowledge assertions without the labels Icarus 11 cannot parse.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REGS = ROOT / "scripts" / "regs.py"


def run_check(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REGS), "--check", "--out", str(tree)],
                          capture_output=True, text=True, cwd=ROOT)


def test_generated_register_files_are_current():
    r = run_check(ROOT)
    assert r.returncode == 0, r.stderr


def test_check_names_a_stale_file(tmp_path):
    subprocess.run([sys.executable, str(REGS), "--out", str(tmp_path)], check=True, cwd=ROOT)
    assert run_check(tmp_path).returncode == 0
    go = tmp_path / "driver" / "regs" / "regs.go"
    text = go.read_text()
    edited = re.sub(r"(CountersBase\s+uint32 = )0x100", r"\g<1>0x200", text)
    assert edited != text
    go.write_text(edited)
    (tmp_path / "docs" / "registers.md").unlink()
    r = run_check(tmp_path)
    assert r.returncode == 1
    assert "driver/regs/regs.go is stale or missing: run make regs" in r.stderr
    assert "docs/registers.md is stale or missing" in r.stderr
    assert "hw/rtl/rnic_regs.v is stale" not in r.stderr


def test_external_region_off_its_size_refused(tmp_path):
    """The doorbells block moved to 0x2000 puts the CQ doorbells (16 KiB) at
    0x6000: the generated block would hand them address bits 13:0 of
    0x6000, 0x2000, as the offset of CQ 0's doorbell. regs.py refuses it."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import regs

    rdl = (ROOT / "hw" / "regs" / "rnic.rdl").read_text()
    moved = rdl.replace("doorbells_block doorbells @ 0x8000;", "doorbells_block doorbells @ 0x2000;")
    moved = moved.replace("block_next_r #(.NEXT(0x8000))", "block_next_r #(.NEXT(0x2000))")
    assert moved.count("0x2000;") > rdl.count("0x2000;")
    bad = tmp_path / "moved.rdl"
    bad.write_text(moved)
    regs.check_chain(regs.compile_map())  # the real map passes
    with pytest.raises(SystemExit) as e:
        regs.check_chain(regs.compile_map(bad))
    assert "doorbells.cq_db at 0x6000" in str(e.value)
    assert "start at a multiple of it" in str(e.value)


def test_generated_assertions_unlabelled():
    text = (ROOT / "hw" / "rtl" / "rnic_regs.v").read_text()
    assert re.search(r"^\s*assert\s*\(", text, re.M), "the external acknowledge checks are gone"
    labelled = re.findall(r"^\s*\w+:\s*assert\b", text, re.M)
    assert not labelled, f"labelled assertions Icarus 11 cannot parse: {labelled}"
