"""The files generated from the register map (hw/regs/rnic.rdl) are current.

scripts/regs.py --check regenerates hw/rtl/rnic_regs.v, driver/regs/regs.go
and docs/registers.md into a temporary directory and fails, naming each
stale file and the command that refreshes it (`make regs`). The second test
shows that check failing on a tree with one generated file changed.
"""

import re
import subprocess
import sys
from pathlib import Path

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
