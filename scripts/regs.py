#!/usr/bin/env python3
"""Generate everything that comes from the register map, hw/regs/rnic.rdl.

    .venv/bin/python scripts/regs.py            (make regs) write the files
    .venv/bin/python scripts/regs.py --check    regenerate into a temporary
                                                directory and fail, naming
                                                each stale file, if any
                                                checked-in file differs
    .venv/bin/python scripts/regs.py --out DIR  write the files under DIR
                                                (with --check: compare DIR's)

Outputs (checked in, never edited by hand):
    hw/rtl/rnic_regs.v      the register block, peakrdl-etana, AXI4-Lite
    driver/regs/regs.go     Go constants (scripts/regs_go.py, the project's
                            own exporter on systemrdl-compiler's API)
    docs/registers.md       the documentation, peakrdl-markdown

Before writing, the chain is checked: every block (a regfile at the top of
the map) starts with blk_type, blk_version, blk_next at +0, +4, +8; the
first block is at 0; each blk_next is the address of the block that follows
and the last one's is 0.
"""

from __future__ import annotations

import argparse
import difflib
import filecmp
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from systemrdl import RDLCompiler
from systemrdl.node import AddrmapNode, RegfileNode, RegNode

from peakrdl_etana import RegblockExporter
from peakrdl_etana.cpuif.axi4lite import AXI4Lite_Cpuif_flattened
from peakrdl_etana.udps import ALL_UDPS
from peakrdl_markdown import MarkdownExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import regs_go  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RDL = Path("hw/regs/rnic.rdl")
VERILOG = Path("hw/rtl/rnic_regs.v")
GO = Path("driver/regs/regs.go")
DOC = Path("docs/registers.md")
OUTPUTS = (VERILOG, GO, DOC)
MODULE = "rnic_regs"
REFRESH = "make regs (or .venv/bin/python scripts/regs.py)"

HEADER = ("blk_type", "blk_version", "blk_next")


def compile_map(path: Path | None = None) -> AddrmapNode:
    """Compile the map (path: another RDL file, for tests)."""
    rdlc = RDLCompiler()
    for udp in ALL_UDPS:
        rdlc.register_udp(udp, soft=False)
    rdlc.compile_file(str(path or ROOT / RDL))
    return rdlc.elaborate(top_def_name=MODULE).top


def constant(reg: RegNode, field: str) -> int:
    f = reg.get_child_by_name(field)
    if f is None or f.is_hw_writable or f.is_sw_writable:
        raise SystemExit(f"regs: {reg.get_path()}.{field} must be a constant (sw=r, hw=na)")
    return f.get_property("reset")


def check_chain(top: AddrmapNode) -> None:
    """Refuse a map that is not a well-formed chain (see the module doc)."""
    blocks = list(top.children())
    if not blocks or blocks[0].address_offset != 0:
        raise SystemExit("regs: the first block must be at offset 0")
    for i, blk in enumerate(blocks):
        if not isinstance(blk, RegfileNode):
            raise SystemExit(f"regs: {blk.inst_name}: every block of the chain is a regfile")
        for j, name in enumerate(HEADER):
            reg = blk.get_child_by_name(name)
            if reg is None or reg.address_offset != 4 * j:
                raise SystemExit(f"regs: {blk.inst_name}: {name} must be at +{4 * j:#x}")
        nxt = constant(blk.get_child_by_name("blk_next"), "blk_next")
        want = blocks[i + 1].absolute_address if i + 1 < len(blocks) else 0
        if nxt != want:
            raise SystemExit(
                f"regs: {blk.inst_name}.blk_next is {nxt:#x}, the next block is at {want:#x}")
        for node in blk.descendants():
            # peakrdl-etana hands an external region the low log2(size)
            # bits of the bus address: they are the offset within the region
            # only when the region starts at a multiple of its size.
            if isinstance(node, RegfileNode) and node.external:
                size = node.total_size
                if size & (size - 1) or node.absolute_address % size:
                    raise SystemExit(
                        f"regs: external {node.get_path()} at {node.absolute_address:#x} "
                        f"({size:#x} octets): an external region must be a power of two "
                        "in size and start at a multiple of it")
    types = [constant(b.get_child_by_name("blk_type"), "blk_type") for b in blocks]
    if len(set(types)) != len(types):
        raise SystemExit("regs: two blocks have the same type")


def gofmt(src: str) -> str:
    """The Go source as gofmt lays it out (the Go toolchain is a build
    dependency already: scripts/deps.sh)."""
    exe = shutil.which("gofmt")
    if exe is None:
        goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True,
                                check=True).stdout.strip()
        exe = str(Path(goroot) / "bin" / "gofmt")
    return subprocess.run([exe], input=src, capture_output=True, text=True, check=True).stdout


# peakrdl-etana 0.8.0 checks the external acknowledges (the admin CMD, the
# vectors and doorbells regions) with labelled immediate assertions,
# `name: assert (...) else $error(...)`, inside `ifndef SYNTHESIS.
# Icarus 11 does not parse a label on an immediate assertion; it parses the
# same assertion unlabelled, so the labels are dropped (the only change made
# to peakrdl-etana's output; the checks stay).
ASSERT_LABEL = re.compile(r"^(\s*)assert_\w+:\s*(assert\s*\()", re.M)


def icarus_assertions(text: str) -> str:
    return ASSERT_LABEL.sub(r"\1\2", text)


def generate(out: Path) -> None:
    top = compile_map()
    check_chain(top)
    with tempfile.TemporaryDirectory() as tmp:
        RegblockExporter().export(
            top, tmp, cpuif_cls=AXI4Lite_Cpuif_flattened, module_name=MODULE,
            flatten_nested_blocks=False)
        text = (Path(tmp) / f"{MODULE}.sv").read_text()
    text = icarus_assertions(text)
    v = out / VERILOG
    v.parent.mkdir(parents=True, exist_ok=True)
    v.write_text(
        f"// Code generated by scripts/regs.py from {RDL} (peakrdl-etana). DO NOT EDIT.\n"
        f"// Refresh with: {REFRESH}\n" + text)

    g = out / GO
    g.parent.mkdir(parents=True, exist_ok=True)
    g.write_text(gofmt(regs_go.export(top, source=str(RDL), refresh=REFRESH)))

    d = out / DOC
    d.parent.mkdir(parents=True, exist_ok=True)
    # depth 3: the map, its blocks, their registers and fields. Deeper, the
    # exporter writes a section for every element of the vector and
    # doorbell arrays (8192 doorbells: a 6 MB page that says nothing more).
    MarkdownExporter().export(top, str(d), input_files=[str(RDL)], depth=3)


def check(tree: Path = ROOT) -> int:
    """Regenerate into a temporary directory and compare with tree's files."""
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        for rel in OUTPUTS:
            have, want = tree / rel, Path(tmp) / rel
            if not have.exists() or not filecmp.cmp(have, want, shallow=False):
                stale.append(rel)
                if have.exists():
                    diff = difflib.unified_diff(
                        have.read_text().splitlines(), want.read_text().splitlines(),
                        str(rel), f"{rel} (regenerated)", lineterm="", n=1)
                    print("\n".join(list(diff)[:20]), file=sys.stderr)
    for rel in stale:
        print(f"regs: {rel} is stale or missing: run {REFRESH}", file=sys.stderr)
    return 1 if stale else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT,
                    help="write under this directory (default: the repository); "
                         "with --check, the tree to compare")
    args = ap.parse_args()
    if args.check:
        return check(args.out)
    generate(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
