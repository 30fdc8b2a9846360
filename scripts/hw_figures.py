#!/usr/bin/env python3
"""Hardware figures: synthesis results and testbench measurements.

    scripts/hw_figures.py synth [BLOCK ...]   (make synth)
    scripts/hw_figures.py bench               (make bench-hw)

synth: synthesises each block of BLOCKS at each of its widths with Yosys,
generic 6-input LUTs:

    read_verilog -defer -sv -DRNIC_SYNTH_ESTIMATE hw/rtl/*.v; chparam -set <param> <width> <top>
    synth -flatten -top <top>; abc -lut 6; ltp -noff; stat; write_json ...

and reports the LUT count, the flip-flops, and the longest path between
registers in LUT levels (ltp -noff; ports count as registers). It also
reports the deepest feedback loop, a register back into itself, read from the
netlist: a block's throughput rests on that loop, which no pipelining can
shorten. Prints a table and writes build/synth/report.json:

    {"tool": "Yosys 0.23 ...", "records": [{"block", "width", "luts", "ffs",
     "levels", "loop_levels", "loop_register", "deep", "timing"}, ...]}

"timing" is the FPGA timing estimate (hw/timing.md): each block at each
width is also synthesised with

    synth_xilinx -family xcup -abc9 -flatten -noiopad -noclkbuf -nosrl

(sdp_ram read as a box, timed as a block RAM) and scripts/fpga_timing.py
times the netlist with UltraScale+ -2 delays and a routing allowance per
routed net: {"period_ns", "fmax_mhz", "target_mhz", "synth_seconds",
"critical": {start, end, luts, carry4, hops, path: [steps]}}. The target
is 322 MHz (a 100 Gb/s MAC's clock) at W=512: a block whose estimate is
slower makes the command fail after the report is written. The three
worst paths, cell by cell, are in build/synth/<block>-W<width>-timing.txt.
`synth --no-timing` leaves the estimate out (and with it the target);
`timing BLOCK W` runs the estimate alone. synth_xilinx takes from 30 s
(crc32c at W=64) to many minutes per block (hw/timing.md has the times).

"deep" lists the registers (and output ports) whose inputs are more than 5
LUT levels from any register or input port, deepest first, as [levels,
name]: ltp names only one path, this names the others. Read it with care:
ABC recovers area on every path shorter than the block's longest, up to
that length, so a register listed a little below the top may need far
fewer levels of its own (hw/README.md, "LUT levels").
`synth --deep N` prints the N deepest of each record under the table;
`synth --width W` synthesises only that width. A block named
<module>/<variant> (ddp_rx/2x, rnic_rx/2x, ddp_rx/req, rnic_rx/req) is the
module with some parameters set to a multiple of the width (AXI_W = 2
DATA_W: the write port twice the data width) or to a constant (WR_REQ = 1:
the write-request stream).

path: reads a netlist that synth wrote (build/synth/<block>-W<width>.json)
and prints the deepest LUT path into one register or output port, from the
register or input port it starts at, one net a line with its depth: what to
cut when a register shows up under --deep.

    scripts/hw_figures.py path ddp_rx 512 chk_ok_reg

cross: reads the same netlist and groups the registers (and output ports)
at the block's deepest level by the submodule their deepest path starts in
and the one it ends in, most first, with an example path for each pair that
crosses from one submodule into another. (A register is named by the net
it drives, so an output register of a submodule wired to the top level
counts as "(top)".) Inside a large flattened block ABC
maps many paths up to the longest one, so --deep there lists mostly
relaxed paths; the pairs that cross submodules (or start at a port) are
usually the ones to cut.

    scripts/hw_figures.py cross mpa_rx 512

floor: synthesises one block at one width again with ABC mapping for the
average level (`if -t`) rather than the largest, so that every register's
input is as shallow as the mapper can make it, and lists the register bits
at the deepest level (or at --level N and deeper) by the register their
path starts at and the one it ends in. These are the paths that hold the
block's depth; what synth's --deep lists beside them is mostly paths ABC
slowed to the longest to save area. (ddp_rx at W=512: synth showed 16284
register bits at 7 levels, floor showed the one at 7, a 32-bit counter's
increment, and a few at 6.) Its netlist is build/synth/<block>-W<w>-floor.json.

    scripts/hw_figures.py floor ddp_rx 512 --level 5

LUT levels were the issue's first target (at most 5 at W=512); they are
still reported, and the target is now the estimate's 322 MHz. Yosys runs
in parallel, one job per core.

bench: collects what the cocotb testbenches measured (build/bench/*.json,
one record per block, width and simulator, in the shape "bench" below
documents: block, width, simulator, beats_per_clock, latency_clocks and
named figures), compares every figure with its recorded value in
hw/bench-baseline.json, prints a table with each record's status (and
each figure that is not ok; --all: every figure), writes the records and
the comparison to build/bench/hw.json, and fails naming every figure that
got worse than its baseline and every baseline figure not measured
(baseline records of simulators SIMS leaves out are not counted).
`bench --update` rewrites the baseline from the measurements, for an
intended change. make test-hw runs it after the testbenches.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fpga_timing  # noqa: E402  (scripts/, beside this file)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import widths  # noqa: E402  (tests/widths.py: the widths make test runs)
SYNTH_DIR = REPO_ROOT / "build" / "synth"
BENCH_DIR = REPO_ROOT / "build" / "bench"


@dataclass(frozen=True)
class Block:
    name: str  # the top module (hw/rtl/<name>.v), or a variant's label: <module>/<variant>
    width_param: str
    widths: tuple[int, ...]
    # Parameters set to a multiple of the width (a variant): (name, factor)
    scaled: tuple[tuple[str, int], ...] = ()
    # Parameters set to a constant (a variant): (name, value)
    fixed: tuple[tuple[str, int], ...] = ()
    # Modules read as boxes (read_verilog -lib): their own figures are
    # their own lines; the variant counts what is around them.
    boxes: tuple[str, ...] = ()

    @property
    def top(self) -> str:
        return self.name.split("/")[0]

    @property
    def tag(self) -> str:
        return self.name.replace("/", "-")


def block_named(name: str) -> Block | None:
    return next((b for b in BLOCKS if b.name == name), None)


# One line per datapath block.
BLOCKS = [
    Block("crc32c", "DATA_W", (64, 512)),
    Block("mpa_tx", "DATA_W", (64, 512)),
    Block("mpa_tx_frame", "DATA_W", (64, 512)),
    Block("mpa_tx_mark", "DATA_W", (64, 512)),
    Block("tuf_tx", "DATA_W", (64, 512)),
    Block("ddp_tx", "DATA_W", (64, 512)),
    Block("rnic_tx", "DATA_W", (64, 512)),
    Block("mpa_rx_lane", "DATA_W", (64, 512)),
    Block("rx_join", "DATA_W", (64, 512)),
    Block("mpa_rx_ooo", "DATA_W", (64, 512)),
    # The arithmetic shapes alone (hw/synth/arith_probe.v), at operand
    # width 72: inside a block they map deeper than their own depth.
    Block("arith_probe", "W", (72,)),
    Block("ddp_rx", "DATA_W", (64, 512)),
    # With its write port twice the data width (AXI_W = 2 DATA_W).
    Block("ddp_rx/2x", "DATA_W", (64, 512), (("AXI_W", 2),)),
    # With the write-request stream in its place (WR_REQ = 1, two lines a request).
    Block("ddp_rx/req", "DATA_W", (64, 512), (("AXI_W", 2),), (("WR_REQ", 1),)),
    Block("mpa_rx", "DATA_W", (64, 512)),
    Block("mpa_rx_align", "DATA_W", (64, 512)),
    Block("mpa_rx_walk", "DATA_W", (64, 512)),
    Block("tuf_rx", "DATA_W", (64, 512)),
    Block("rnic_rx", "DATA_W", (64, 512)),
    # The 100 Gb/s build: W=512 with the 1024-bit write port.
    Block("rnic_rx/2x", "DATA_W", (512,), (("AXI_W", 2),)),
    # The same with the write-request stream (WR_REQ = 1).
    Block("rnic_rx/req", "DATA_W", (512,), (("AXI_W", 2),), (("WR_REQ", 1),)),
    # The device top (hw/rtl/rnic_dev.v): the datapath above with the
    # admin block, the queue engines, the DMA engines and the register
    # block, at its default parameters.
    Block("rnic_dev", "DATA_W", (64, 512)),
    # The device's shell alone: rnic_dev with the datapath (rnic_tx and
    # rnic_rx, whose lines are above) as boxes. Its synthesis is what
    # the device adds to the datapath, and takes minutes where the whole
    # top takes over an hour on Yosys 0.23.
    Block("rnic_dev/shell", "DATA_W", (64, 512), boxes=("rnic_tx", "rnic_rx")),
    # The datapath as rnic_dev instantiates it (64 connections, 1024
    # STags, 16 receive buffers a connection, 64-bit IDs): with the shell,
    # the whole device's figures, block by block (no optimisation across
    # the three boundaries).
    Block("rnic_tx/dev", "DATA_W", (64, 512), fixed=(("CONN_W", 6),)),
    Block("rnic_rx/dev", "DATA_W", (64, 512),
          fixed=(("CONN_W", 6), ("STAG_AW", 10), ("RQ_AW", 4), ("ID_W", 64))),
]


# --- synth -------------------------------------------------------------------


# ABC's LUT mapping as Yosys's `abc -lut 6` runs it, with `if -t` (map for
# the average level rather than the largest) and no mfs2: every register's
# input as shallow as the mapper can make it, so that the paths left deep
# are the logic's own and not ones ABC slowed to save area ("floor").
FLOOR_ABC = "abc -lut 6 -script +strash;&get,-n;&fraig,-x;&put;scorr;dc2;dretime;strash;dch,-f;if,-t"


def yosys_script(block: Block, width: int, netlist: Path, abc: str = "abc -lut 6") -> str:
    # Every file, for the block's submodules; RNIC_SYNTH_ESTIMATE makes
    # sdp_ram a stand-in with block RAM timing and no LUTs (see sdp_ram.v).
    srcs = " ".join(str(p) for p in sorted((REPO_ROOT / "hw" / "rtl").glob("*.v"))
                    + sorted((REPO_ROOT / "hw" / "synth").glob("*.v")) if p.stem not in block.boxes)
    boxes = [f"read_verilog -lib -sv -I {REPO_ROOT / 'hw' / 'rtl'} {REPO_ROOT / 'hw' / 'rtl' / (b + '.v')}"
             for b in block.boxes]
    return "; ".join(
        [
            f"read_verilog -defer -sv -I {REPO_ROOT / 'hw' / 'rtl'} -DRNIC_SYNTH_ESTIMATE {srcs}",
            *boxes,
            f"chparam -set {block.width_param} {width} {block.top}",
            *[f"chparam -set {p} {k * width} {block.top}" for p, k in block.scaled],
            *[f"chparam -set {p} {v} {block.top}" for p, v in block.fixed],
            f"synth -flatten -top {block.top}",
            abc,
            "ltp -noff",
            "stat",
            f"write_json {netlist}",
        ]
    )


# The FPGA timing estimate's flow (scripts/fpga_timing.py, hw/timing.md):
# Xilinx UltraScale+ cells with carry chains. sdp_ram is read as a box
# (read_verilog -lib), timed as a block RAM (or, 64 words deep or fewer, LUT
# RAM read into a flip-flop).
XILINX_SYNTH = fpga_timing.XILINX_SYNTH
# The target under that estimate: a 100 Gb/s MAC's clock, at W=512.
TARGET_MHZ = {512: 322.0}


def timing_script(block: Block, width: int, netlist: Path) -> str:
    srcs = " ".join(str(p) for p in sorted((REPO_ROOT / "hw" / "rtl").glob("*.v"))
                    + sorted((REPO_ROOT / "hw" / "synth").glob("*.v"))
                    if p.name != "sdp_ram.v" and p.stem not in block.boxes)
    boxes = [f"read_verilog -lib -sv -I {REPO_ROOT / 'hw' / 'rtl'} {REPO_ROOT / 'hw' / 'rtl' / (b + '.v')}"
             for b in block.boxes]
    return "; ".join(
        [
            f"read_verilog -defer -sv -I {REPO_ROOT / 'hw' / 'rtl'} {srcs}",
            *boxes,
            f"read_verilog -lib -sv {REPO_ROOT / 'hw' / 'rtl' / 'sdp_ram.v'}",
            f"chparam -set {block.width_param} {width} {block.top}",
            *[f"chparam -set {p} {k * width} {block.top}" for p, k in block.scaled],
            *[f"chparam -set {p} {v} {block.top}" for p, v in block.fixed],
            f"{XILINX_SYNTH} -top {block.top}",
            "stat",
            f"write_json {netlist}",
        ]
    )


def run_yosys(tag: str, script: str, log: Path) -> str:
    """Run a Yosys script quietly with its log in `log`; the log's text,
    or RuntimeError naming the run, its log and Yosys's errors."""
    proc = subprocess.run(["yosys", "-q", "-l", str(log), "-p", script], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"yosys failed for {tag} (log: {log}):\n{proc.stderr}")
    return log.read_text()


def timing_one(block: Block, width: int) -> dict:
    """Synthesise block at width to UltraScale+ cells and estimate its
    period (scripts/fpga_timing.py). Writes build/synth/<tag>-xcup.json
    (the netlist), .log, and -timing.json (this record)."""
    tag = f"{block.tag}-W{width}-xcup"
    log, netlist = SYNTH_DIR / f"{tag}.log", SYNTH_DIR / f"{tag}.json"
    t0 = time.monotonic()
    text = run_yosys(tag, timing_script(block, width, netlist), log)
    seconds = time.monotonic() - t0
    cells = dict((t, int(n)) for t, n in re.findall(r"^\s+(\w+)\s+(\d+)\s*$", text.split("Printing statistics")[-1], re.M))
    paths = fpga_timing.analyse(json.loads(netlist.read_text()), block.top, paths=3)
    worst = paths[0] if paths else None
    record = {
        "block": block.name,
        "width": width,
        "flow": XILINX_SYNTH,
        "synth_seconds": round(seconds, 1),
        "cells": {k: v for k, v in cells.items() if k[0].isupper() or k == "sdp_ram"},
        "period_ns": round(worst.delay, 3) if worst else 0.0,
        "fmax_mhz": round(worst.fmax_mhz, 1) if worst else None,
        "target_mhz": TARGET_MHZ.get(width),
        "critical": worst.as_record() | {"path": [fpga_timing.step_record(s) for s in worst.steps]} if worst else None,
        "next": [p.as_record() for p in paths[1:]],
    }
    (SYNTH_DIR / f"{tag[:-5]}-timing.json").write_text(json.dumps(record, indent=2) + "\n")
    (SYNTH_DIR / f"{tag[:-5]}-timing.txt").write_text(
        "\n\n".join(fpga_timing.format_path(p) for p in paths) + "\n")
    return record


def synth_one(block: Block, width: int) -> dict:
    tag = f"{block.tag}-W{width}"
    log = SYNTH_DIR / f"{tag}.log"
    netlist = SYNTH_DIR / f"{tag}.json"
    text = run_yosys(tag, yosys_script(block, width, netlist), log)
    m = re.search(r"Longest topological path in \S+ \(length=(\d+)\)", text)
    luts = re.findall(r"^\s+\$lut\s+(\d+)\s*$", text, re.M)
    if not m or not luts:
        raise RuntimeError(f"{log}: no ltp or stat output")
    ffs, loop_levels, loop_reg, deep = netlist_figures(json.loads(netlist.read_text()), block.top)
    return {
        "block": block.name,
        "width": width,
        "luts": int(luts[-1]),
        "ffs": ffs,
        "levels": int(m.group(1)),
        "loop_levels": loop_levels,
        "loop_register": loop_reg,
        "deep": deep,
    }


@dataclass
class Netlist:
    """What the figures need from a Yosys JSON netlist's module."""
    names: dict  # bit -> (net name, index, width), preferring names without '$'
    drivers: dict  # bit -> the input bits of the cell that drives it
    ff_inputs: dict  # register name -> bits into its flip-flops (D, E, R, S)
    ff_outputs: dict  # register name -> its Q bits
    ffs: int
    in_bits: set  # bits of the input ports
    out_ports: dict  # "port <name>" -> bits of an output port


def read_netlist(netlist: dict, top: str) -> Netlist:
    mod = netlist["modules"][top]
    names = {}
    for name, net in mod["netnames"].items():
        for i, bit in enumerate(net["bits"]):
            if isinstance(bit, int) and (bit not in names or "$" in names[bit][0]):
                names[bit] = (name, i, len(net["bits"]))
    drivers, ff_inputs, ff_outputs, ffs = {}, {}, defaultdict(set), 0
    for cname, cell in mod["cells"].items():
        conns = cell["connections"]
        dirs = cell.get("port_directions", {})
        ins = [b for p, bits in conns.items() if dirs.get(p) == "input" for b in bits if isinstance(b, int)]
        outs = [b for p, bits in conns.items() if dirs.get(p) == "output" for b in bits if isinstance(b, int)]
        if "DFF" in cell["type"]:
            ffs += 1
            reg = names[conns["Q"][0]][0] if conns["Q"][0] in names else cname
            data = [b for p in ("D", "E", "R", "S") for b in conns.get(p, []) if isinstance(b, int)]
            ff_inputs.setdefault(reg, []).extend(data)
            ff_outputs[reg].update(b for b in conns["Q"] if isinstance(b, int))
        else:
            for b in outs:
                drivers[b] = ins
    in_bits, out_ports = set(), {}
    for pname, port in mod["ports"].items():
        bits = [b for b in port["bits"] if isinstance(b, int)]
        if port["direction"] == "input":
            in_bits.update(bits)
        else:
            out_ports["port " + pname] = bits
    return Netlist(names, drivers, ff_inputs, ff_outputs, ffs, in_bits, out_ports)


def depth_from(drivers: dict, sources: set, bit: int, memo: dict) -> int:
    """Most LUTs on a path from a source bit to bit (-1: none)."""
    stack = [bit]
    while stack:
        b = stack[-1]
        if b in memo:
            stack.pop()
            continue
        if b in sources:
            memo[b] = 0
            stack.pop()
            continue
        ins = drivers.get(b)
        if ins is None:
            memo[b] = -1
            stack.pop()
            continue
        todo = [i for i in ins if i not in memo]
        if todo:
            stack.extend(todo)
            continue
        best = max((memo[i] for i in ins), default=-1)
        memo[b] = best + 1 if best >= 0 else -1
        stack.pop()
    return memo[bit]


def netlist_figures(netlist: dict, top: str) -> tuple[int, int, str, list]:
    """Flip-flop count, the deepest register-to-itself loop in LUT levels
    with the register's name, and the registers and output ports whose
    inputs are more than 5 levels deep ([levels, name], deepest first), from
    a Yosys JSON netlist."""
    nl = read_netlist(netlist, top)
    worst, worst_reg = 0, ""
    for reg, bits in nl.ff_inputs.items():
        memo: dict = {}
        levels = max((depth_from(nl.drivers, nl.ff_outputs[reg], b, memo) for b in bits), default=-1)
        if levels > worst:
            worst, worst_reg = levels, reg

    # Input depths: from every register and input port, as ltp -noff counts.
    sources = set().union(*nl.ff_outputs.values()) if nl.ff_outputs else set()
    sources |= nl.in_bits
    memo = {}
    deep = []
    for name, bits in {**nl.ff_inputs, **nl.out_ports}.items():
        levels = max((depth_from(nl.drivers, sources, b, memo) for b in bits), default=-1)
        if levels > 5:
            deep.append([levels, name.lstrip("\\")])
    deep.sort(key=lambda x: (-x[0], x[1]))
    return nl.ffs, worst, worst_reg.lstrip("\\"), deep


def synth(args) -> int:
    blocks = [b for b in BLOCKS if not args.blocks or b.name in args.blocks]
    unknown = set(args.blocks) - {b.name for b in BLOCKS}
    if unknown:
        print(f"synth: unknown blocks {sorted(unknown)}; known: {[b.name for b in BLOCKS]}", file=sys.stderr)
        return 2
    SYNTH_DIR.mkdir(parents=True, exist_ok=True)
    jobs = [(b, w) for b in blocks for w in b.widths if not args.width or w == args.width]
    if not jobs:
        print(f"synth: no block has width {args.width}", file=sys.stderr)
        return 2
    # The two flows of each job run side by side, the slow (timing) ones first.
    tasks = ([(timing_one, b, w) for b, w in jobs] if not args.no_timing else []) + \
        [(synth_one, b, w) for b, w in jobs]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        done = list(pool.map(lambda t: t[0](t[1], t[2]), tasks))
    timings = {(r["block"], r["width"]): r for r in done[: len(tasks) - len(jobs)]}
    records = done[len(tasks) - len(jobs):]
    for r in records:
        t = timings.get((r["block"], r["width"]))
        if t is not None:
            r["timing"] = {k: t[k] for k in ("period_ns", "fmax_mhz", "target_mhz", "synth_seconds", "critical")}
    tool = subprocess.run(["yosys", "-V"], capture_output=True, text=True).stdout.strip()
    report = {"tool": tool, "levels_flow": "synth -flatten; abc -lut 6; ltp -noff",
              "timing_flow": XILINX_SYNTH + " (scripts/fpga_timing.py, hw/timing.md)", "records": records}
    (SYNTH_DIR / "report.json").write_text(json.dumps(report, indent=2) + "\n")

    print(f"{tool}: LUTs and levels from synth -flatten; abc -lut 6; ltp -noff")
    print(f"  estimate from {XILINX_SYNTH} and scripts/fpga_timing.py (UltraScale+ -2, hw/timing.md)")
    print(f"{'block':<12} {'width':>5} {'LUTs':>7} {'FFs':>6} {'levels':>6}  {'loop':>4}  "
          f"{'ns':>6} {'MHz':>6}  {'target':<14}  critical path (start -> end: LUTs, CARRY4, routed nets)")
    missed = []
    for r in records:
        t = r.get("timing")
        est, verdict, crit = f"{'-':>6} {'-':>6}", "", ""
        if t is not None:
            est = f"{t['period_ns']:>6.3f} {t['fmax_mhz']:>6.0f}"
            if t["target_mhz"] is not None:
                ok = t["fmax_mhz"] >= t["target_mhz"]
                verdict = f">= {t['target_mhz']:.0f} " + ("met" if ok else "MISSED")
                if not ok:
                    missed.append(r)
            c = t["critical"]
            if c:
                crit = f"{c['start']} -> {c['end']}: {c['luts']}, {c['carry4']}, {c['hops']}"
        print(
            f"{r['block']:<12} {r['width']:>5} {r['luts']:>7} {r['ffs']:>6} {r['levels']:>6}  "
            f"{r['loop_levels']:>4}  {est}  {verdict:<14}  {crit}"
        )
    if args.deep:
        for r in records:
            if r["deep"]:
                print(f"{r['block']} W={r['width']}: deepest inputs (LUT levels, register or port)")
                for levels, name in r["deep"][: args.deep]:
                    print(f"  {levels:>3}  {name}")
    print(f"report: {(SYNTH_DIR / 'report.json').relative_to(REPO_ROOT)}")
    print("paths: build/synth/<block>-W<width>-timing.txt (the three worst, cell by cell)")
    if missed:
        print("synth: 322 MHz target missed under the estimate: "
              + ", ".join(f"{r['block']} W={r['width']}" for r in missed), file=sys.stderr)
        return 1
    return 0


def timing(args) -> int:
    b = block_named(args.block)
    if b is None or args.width not in b.widths:
        known = ", ".join(f"{b.name} {list(b.widths)}" for b in BLOCKS)
        print(f"timing: no block {args.block} at width {args.width}; known: {known}", file=sys.stderr)
        return 2
    SYNTH_DIR.mkdir(parents=True, exist_ok=True)
    r = timing_one(b, args.width)
    print(f"{r['block']} W={r['width']}: {r['period_ns']:.3f} ns, {r['fmax_mhz']} MHz "
          f"(yosys {r['synth_seconds']} s)")
    print((SYNTH_DIR / f"{b.tag}-W{args.width}-timing.txt").read_text())
    return 0


def timing_table(args) -> int:
    """The estimates that `timing` and `synth` left in build/synth, as a
    Markdown table (hw/timing.md's results)."""
    rows = []
    for b in BLOCKS:
        for w in b.widths:
            f = SYNTH_DIR / f"{b.tag}-W{w}-timing.json"
            if f.exists():
                rows.append(json.loads(f.read_text()))
    rows.sort(key=lambda r: (-r["width"], [b.name for b in BLOCKS].index(r["block"])))
    print("| block | W | ns | MHz | 322 MHz | LUTs | CARRY4 | FFs | critical path (start -> end) | LUTs, CARRY4, routed nets on it | Yosys s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        c, cells = r["critical"], r["cells"]
        luts = sum(v for k, v in cells.items() if re.fullmatch(r"LUT[1-6]|INV", k))
        ffs = sum(v for k, v in cells.items() if k.startswith("FD"))
        verdict = "" if r["target_mhz"] is None else ("met" if r["fmax_mhz"] >= r["target_mhz"] else "**missed**")
        print(f"| {r['block']} | {r['width']} | {r['period_ns']:.3f} | {r['fmax_mhz']:.0f} | {verdict} | {luts} | "
              f"{cells.get('CARRY4', 0)} | {ffs} | `{c['start']}` -> `{c['end']}` | "
              f"{c['luts']}, {c['carry4']}, {c['hops']} | {r['synth_seconds']:.0f} |")
    return 0


# --- path --------------------------------------------------------------------


class Depths:
    """A synthesised block's netlist (build/synth/<block>-W<width>.json) with
    the LUT depth of every bit from the registers and input ports."""

    def __init__(self, cmd: str, block: str, width: int, tag: str = ""):
        b = block_named(block)
        top, ftag = (b.top, b.tag) if b else (block, block)
        netlist = SYNTH_DIR / f"{ftag}-W{width}{tag}.json"
        if not netlist.exists():
            raise LookupError(f"{cmd}: no netlist {netlist.relative_to(REPO_ROOT)}; run "
                              f"scripts/hw_figures.py synth {block} --width {width} first")
        data = json.loads(netlist.read_text())
        if top not in data["modules"]:
            raise LookupError(f"{cmd}: {netlist.name} has no module {top}")
        self.nl = read_netlist(data, top)
        # Registers and output ports, by name, and the bits their inputs are.
        self.ends = {name.lstrip("\\"): bits for name, bits in {**self.nl.ff_inputs, **self.nl.out_ports}.items()}
        self.sources = set().union(*self.nl.ff_outputs.values()) | self.nl.in_bits
        self.memo: dict = {}

    def depth(self, bit: int) -> int:
        return depth_from(self.nl.drivers, self.sources, bit, self.memo)

    def chain(self, bit: int) -> list[int]:
        """The deepest path into bit, from bit back to its register or port."""
        chain = [bit]
        while self.depth(chain[-1]) > 0:
            chain.append(max(self.nl.drivers[chain[-1]], key=self.depth))
        return chain

    def name_of(self, bit: int) -> str:
        if bit not in self.nl.names:
            return f"bit {bit}"
        return self.nl.names[bit][0].lstrip("\\")


def path(args) -> int:
    try:
        d = Depths("path", args.block, args.width, tag="-floor" if args.floor else "")
    except LookupError as e:
        print(e, file=sys.stderr)
        return 2
    nl, ends = d.nl, d.ends
    if args.register not in ends:
        close = sorted(n for n in ends if args.register in n)[:20]
        print(f"path: no register or output port {args.register!r} in {args.block} W={args.width}"
              + (f"; names containing it: {', '.join(close)}" if close else ""), file=sys.stderr)
        return 2
    depth = d.depth

    def label(bit: int) -> str:
        if bit not in nl.names:
            return f"bit {bit}"
        n, i, w = nl.names[bit]
        n = n.lstrip("\\")
        return n if w == 1 else f"{n}[{i}]"

    bit = max(ends[args.register], key=depth)
    print(f"{args.block} W={args.width}: {depth(bit)} LUT levels into {args.register}")
    for b in reversed(d.chain(bit)):
        print(f"  {depth(b):>3}  {label(b)}")
    return 0


def cross(args) -> int:
    try:
        d = Depths("cross", args.block, args.width)
    except LookupError as e:
        print(e, file=sys.stderr)
        return 2
    nl, ends, depth, name_of = d.nl, d.ends, d.depth, d.name_of

    def unit(name: str) -> str:
        # The submodule instance a net belongs to (ABC's own nets carry
        # the flattened instance path after a "\\").
        name = name.split("\\")[-1]
        return name.split(".")[0] if "." in name else "(top)"

    top = max((depth(b) for bits in ends.values() for b in bits), default=0)
    pairs: dict = defaultdict(int)
    example: dict = {}
    for name, bits in ends.items():
        for b in bits:
            if depth(b) != top:
                continue
            chain = d.chain(b)
            start = name_of(chain[-1])
            key = (unit(start) if chain[-1] not in nl.in_bits else "(input port)", unit(name))
            pairs[key] += 1
            example.setdefault(key, (start, name, [name_of(c) for c in reversed(chain[1:-1])]))
    print(f"{args.block} W={args.width}: {top} LUT levels; register bits at that depth, "
          "by where their deepest path starts -> ends")
    for (a, b), n in sorted(pairs.items(), key=lambda kv: -kv[1]):
        line = f"  {n:>6}  {a} -> {b}"
        if a != b:
            start, end, via = example[(a, b)]
            named = list(dict.fromkeys(v for v in via if not v.startswith("bit ") and "$" not in v))
            line += f"   e.g. {start} -> {end}" + (f" via {', '.join(named[:4])}" if named else "")
        print(line)
    return 0


def floor(args) -> int:
    blocks = {b.name: b for b in BLOCKS}
    if args.block not in blocks or args.width not in blocks[args.block].widths:
        known = ", ".join(f"{b.name} {list(b.widths)}" for b in BLOCKS)
        print(f"floor: no block {args.block} at width {args.width}; known: {known}", file=sys.stderr)
        return 2
    SYNTH_DIR.mkdir(parents=True, exist_ok=True)
    tag = f"{blocks[args.block].tag}-W{args.width}-floor"
    netlist, log = SYNTH_DIR / f"{tag}.json", SYNTH_DIR / f"{tag}.log"
    script = yosys_script(blocks[args.block], args.width, netlist, abc=FLOOR_ABC)
    proc = subprocess.run(["yosys", "-q", "-l", str(log), "-p", script], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"floor: yosys failed for {tag} (log: {log.relative_to(REPO_ROOT)}):\n{proc.stderr}", file=sys.stderr)
        return 1
    d = Depths("floor", args.block, args.width, tag="-floor")
    depths = {name: max((d.depth(b) for b in bits), default=-1) for name, bits in d.ends.items()}
    top = max(depths.values(), default=0)
    level = args.level or top
    groups: dict = defaultdict(list)
    for name, bits in d.ends.items():
        for b in bits:
            if d.depth(b) >= level:
                chain = d.chain(b)
                groups[(d.name_of(chain[-1]), name)].append(chain)
    print(f"{args.block} W={args.width}: {top} LUT levels mapped for the shallowest inputs "
          f"(abc if -t); register and port bits at {level} or more, by start -> end:")
    for (start, end), chains in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        via = [d.name_of(c) for c in reversed(chains[0][1:-1])]
        named = list(dict.fromkeys(v for v in via if not v.startswith("bit ") and "$" not in v))
        print(f"  {len(chains):>6}  {start} -> {end}" + (f"   via {', '.join(named[:4])}" if named else ""))
    return 0


# --- bench -------------------------------------------------------------------
#
# A bench record is what one cocotb bench measured for one block at one
# width on one simulator: build/bench/<block>-W<width>[-icarus|-ghdl].json
# (a variant <module>/<variant> as <module>-<variant>-W...), written by
# tests/hdlsim.py's write_bench through bench_record() below, the one place
# that knows the shape (schema 1):
#
#   {"schema": 1,
#    "block": "ddp_rx/2x",        a name of BLOCKS (a variant: <module>/<variant>)
#    "width": 512,                DATA_W
#    "simulator": "verilator",    verilator, icarus or ghdl (the names SIMS takes)
#    "beats_per_clock": 1.0,      the block's headline throughput, or null
#    "latency_clocks": 7,         its headline latency in clocks, or null
#    "figures": {"<name>": {"value": <number>, "better": "higher" | "lower"}, ...},
#    "details": {...}}            whatever else the bench keeps; never compared
#
# Figure names are lower case, "<case>.<quantity>" where a bench measures
# several cases ("64.fpdus_per_clock": 64-octet FPDUs; "split_1460.9000.
# beats_per_clock"), and every record has the headline figures under their
# own names ("beats_per_clock", "latency_clocks") unless they are null.
# "better" says which way is an improvement: rates are "higher", latencies
# and clocks per unit of work "lower".
#
# The baseline, hw/bench-baseline.json, holds the value each figure had when
# it was last recorded (bench --update), with a tolerance:
#
#   {"schema": 1, "about": "...",
#    "records": {"<block> W<width> <simulator>": {"<figure>": {"value": v, "better": "higher",
#                                                             "tolerance": 0.0}, ...}, ...}}
#
# A figure passes when it is no worse than its value by more than the
# tolerance, a fraction of the value (0: must match or improve): a "higher"
# figure when measured >= value * (1 - tolerance), a "lower" one when
# measured <= value * (1 + tolerance). The benches draw their traffic from
# a fixed seed, so a figure is a function of the RTL and the bench alone and
# every tolerance is 0; a bench whose figure moves with its traffic may set
# one by hand (bench --update keeps it).

BENCH_SCHEMA = 1
BASELINE = REPO_ROOT / "hw" / "bench-baseline.json"
SIM_NAMES = ("verilator", "icarus", "ghdl")
BETTER = ("higher", "lower")
_FIGURE_NAME = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")


class BenchError(ValueError):
    """A bench record or baseline that is not in the documented shape."""


def simulator_name(sim: str) -> str:
    """The SIMS name of a simulator as cocotb names it ("Icarus Verilog",
    "GHDL", "Verilator")."""
    low = sim.lower()
    for name in SIM_NAMES:
        if low.startswith(name):
            return name
    raise BenchError(f"unknown simulator {sim!r}: a bench record names one of {', '.join(SIM_NAMES)}")


def bench_record(block: str, width: int, simulator: str, beats_per_clock: float | None,
                 latency_clocks: float | None, higher: dict | None = None, lower: dict | None = None,
                 details: dict | None = None) -> dict:
    """A bench record (schema 1, above). higher and lower: figure name ->
    value, for the figures where a higher and where a lower value is the
    better one. The headline figures join them under their own names.
    Raises BenchError if the result is not a valid record."""
    figures = {}
    for better, named in (("higher", higher or {}), ("lower", lower or {})):
        for name, value in named.items():
            if name in figures:
                raise BenchError(f"figure {name!r} is both higher- and lower-is-better")
            figures[name] = {"value": value, "better": better}
    for name, value, better in (("beats_per_clock", beats_per_clock, "higher"),
                                ("latency_clocks", latency_clocks, "lower")):
        if value is not None:
            if name in figures and figures[name] != {"value": value, "better": better}:
                raise BenchError(f"figure {name!r} given twice, with different values")
            figures[name] = {"value": value, "better": better}
    record = {"schema": BENCH_SCHEMA, "block": block, "width": width, "simulator": simulator_name(simulator),
              "beats_per_clock": beats_per_clock, "latency_clocks": latency_clocks,
              "figures": dict(sorted(figures.items())), "details": details or {}}
    problems = check_record(record)
    if problems:
        raise BenchError(f"bench record for {block} W={width}: " + "; ".join(problems))
    return record


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")


def check_record(r) -> list[str]:
    """What is wrong with a bench record (schema 1), one line per problem;
    empty if nothing."""
    if not isinstance(r, dict):
        return [f"a record is a JSON object, not {type(r).__name__}"]
    if r.get("schema") != BENCH_SCHEMA:
        # (The rest would be noise: an older record has none of it.)
        return [f"\"schema\" is {r.get('schema')!r}, not {BENCH_SCHEMA}"]
    out = []
    extra = set(r) - {"schema", "block", "width", "simulator", "beats_per_clock", "latency_clocks", "figures",
                      "details"}
    if extra:
        out.append(f"fields outside the schema: {sorted(extra)} (keep them under \"details\")")
    if not isinstance(r.get("block"), str) or not r.get("block"):
        out.append(f"block is {r.get('block')!r}, not a block name")
    if not isinstance(r.get("width"), int) or isinstance(r.get("width"), bool) or r.get("width", 0) <= 0:
        out.append(f"width is {r.get('width')!r}, not a positive integer")
    if r.get("simulator") not in SIM_NAMES:
        out.append(f"simulator is {r.get('simulator')!r}, not one of {', '.join(SIM_NAMES)}")
    for k in ("beats_per_clock", "latency_clocks"):
        if k not in r:
            out.append(f"{k} missing (null where the bench has none)")
        elif r[k] is not None and not _number(r[k]):
            out.append(f"{k} is {r[k]!r}, not a number or null")
    figs = r.get("figures")
    if not isinstance(figs, dict) or not figs:
        out.append("figures is not a non-empty object")
        figs = {}
    for name, f in figs.items():
        if not _FIGURE_NAME.match(name):
            out.append(f"figure name {name!r}: lower-case words and digits joined by '_' and '.'")
        if not isinstance(f, dict) or set(f) != {"value", "better"}:
            out.append(f"figure {name!r} is {f!r}, not {{\"value\": number, \"better\": \"higher\"|\"lower\"}}")
            continue
        if not _number(f["value"]):
            out.append(f"figure {name!r}: value {f['value']!r} is not a number")
        if f["better"] not in BETTER:
            out.append(f"figure {name!r}: better is {f['better']!r}, not \"higher\" or \"lower\"")
    for name, better in (("beats_per_clock", "higher"), ("latency_clocks", "lower")):
        if _number(r.get(name)) and figs.get(name) != {"value": r[name], "better": better}:
            out.append(f"the headline {name} is not the figure {name!r} ({better} is better)")
    if not isinstance(r.get("details", {}), dict):
        out.append("details is not an object")
    return out


def record_key(r: dict) -> str:
    return f"{r['block']} W{r['width']} {r['simulator']}"


def load_records(bench_dir: Path) -> list[dict]:
    """The bench records in bench_dir, sorted by block, width, simulator.
    Files without a "block" field are other measurements (the ddp_rx
    security soak's) and are left alone. Raises BenchError naming every
    file that is not a schema-1 record."""
    records, bad = [], []
    for p in sorted(bench_dir.glob("*.json")):
        if p.name == "hw.json":
            continue
        try:
            r = json.loads(p.read_text())
        except (OSError, ValueError) as e:
            bad.append(f"{p.name}: not readable JSON ({e})")
            continue
        if not isinstance(r, dict) or "block" not in r:
            continue
        problems = check_record(r)
        if problems:
            bad.append(f"{p.name}: " + "; ".join(problems))
        else:
            records.append(r)
    if bad:
        raise BenchError("bench records not in the schema (written by an older testbench? rerun the benches, "
                         "make test-hw, or delete them):\n  " + "\n  ".join(bad))
    seen = {}
    for r in records:
        k = record_key(r)
        if k in seen:
            raise BenchError(f"two records for {k}")
        seen[k] = r
    records.sort(key=lambda r: (r["block"], r["width"], SIM_NAMES.index(r["simulator"])))
    return records


def load_baseline(path: Path) -> dict:
    """The baseline's records: key -> figure -> {value, better, tolerance}.
    A missing file is an empty baseline. Raises BenchError on a malformed one."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError as e:
        raise BenchError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("schema") != BENCH_SCHEMA or not isinstance(data.get("records"), dict):
        raise BenchError(f"{path}: not a schema-{BENCH_SCHEMA} baseline ({{\"schema\": {BENCH_SCHEMA}, "
                         "\"records\": {...}})")
    for key, figs in data["records"].items():
        if not isinstance(figs, dict):
            raise BenchError(f"{path}: {key}: not an object of figures")
        for name, f in figs.items():
            if (not isinstance(f, dict) or set(f) != {"value", "better", "tolerance"} or not _number(f["value"])
                    or f["better"] not in BETTER or not _number(f["tolerance"]) or not 0 <= f["tolerance"] < 1):
                raise BenchError(f"{path}: {key} {name}: {f!r} is not {{\"value\": number, \"better\": "
                                 "\"higher\"|\"lower\", \"tolerance\": fraction in [0, 1)}")
    return data["records"]


@dataclass
class Row:
    key: str
    figure: str
    better: str
    baseline: float | None
    tolerance: float | None
    measured: float | None
    status: str  # ok, better, WORSE, MISSING, new, not run, DIRECTION

    @property
    def failed(self) -> bool:
        return self.status in ("WORSE", "MISSING", "DIRECTION")


def judge(better: str, baseline: float, tolerance: float, measured: float) -> str:
    """ok, better (an improvement past the baseline) or WORSE."""
    if better == "higher":
        if measured < baseline * (1 - tolerance):
            return "WORSE"
        return "better" if measured > baseline else "ok"
    if measured > baseline * (1 + tolerance):
        return "WORSE"
    return "better" if measured < baseline else "ok"


def compare(records: list[dict], baseline: dict, sims: set[str] | None = None) -> list[Row]:
    """Every measured and every baseline figure, with its status. Baseline
    figures of simulators outside sims (SIMS narrowed the run) and of widths
    make test does not run on their simulator (tests/widths.py; a bench that
    runs them anyway is compared) are "not run", not missing."""
    rows = []
    measured = {record_key(r): r for r in records}
    for key in sorted(set(measured) | set(baseline)):
        figs = measured[key]["figures"] if key in measured else {}
        base = baseline.get(key, {})
        sim = key.rsplit(" ", 1)[-1]
        for name in sorted(set(figs) | set(base)):
            f, b = figs.get(name), base.get(name)
            if b is None:
                rows.append(Row(key, name, f["better"], None, None, f["value"], "new"))
            elif f is None:
                width = int(key.split(" ")[-2][1:])
                not_run = (sims is not None and sim not in sims) or not widths.runs_by_default(sim, width)
                status = "not run" if not_run else "MISSING"
                rows.append(Row(key, name, b["better"], b["value"], b["tolerance"], None, status))
            elif f["better"] != b["better"]:
                rows.append(Row(key, name, f["better"], b["value"], b["tolerance"], f["value"], "DIRECTION"))
            else:
                rows.append(Row(key, name, b["better"], b["value"], b["tolerance"], f["value"],
                                judge(b["better"], b["value"], b["tolerance"], f["value"])))
    return rows


def updated_baseline(records: list[dict], old: dict, sims: set[str] | None = None) -> tuple[dict, list[str]]:
    """The baseline rewritten from the measured records: each measured
    record's figures with their values (tolerances kept from the old
    baseline, 0 for new figures); records of simulators outside sims, and of
    widths make test does not run on their simulator (tests/widths.py), kept
    as they were; every other old record dropped. Also the keys dropped."""
    new = {}
    for r in records:
        key = record_key(r)
        new[key] = {name: {"value": f["value"], "better": f["better"],
                           "tolerance": old.get(key, {}).get(name, {}).get("tolerance", 0.0)}
                    for name, f in r["figures"].items()}
    dropped = []
    for key, figs in old.items():
        if key in new:
            continue
        sim, width = key.rsplit(" ", 1)[-1], int(key.split(" ")[-2][1:])
        if (sims is not None and sim not in sims) or not widths.runs_by_default(sim, width):
            new[key] = figs
        else:
            dropped.append(key)
    return dict(sorted(new.items())), dropped


BASELINE_ABOUT = ("The recorded bench figures (scripts/hw_figures.py, 'bench'): per block, width and simulator, "
                  "each figure's value, which way is better, and the fraction it may fall short by. "
                  "make test-hw fails when a figure is worse or missing; rewrite with "
                  "`python3 scripts/hw_figures.py bench --update` after an intended change.")


def write_baseline(path: Path, records: dict) -> None:
    path.write_text(json.dumps({"schema": BENCH_SCHEMA, "about": BASELINE_ABOUT, "records": records},
                               indent=1) + "\n")


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, int) or float(v).is_integer():
        return str(int(v))
    return f"{v:.4g}"


def fpdus64(r: dict) -> str:
    """64-octet FPDUs a clock, with markers on, and (after '/') with markers
    off where the bench measures that too."""
    figs = r["figures"]
    on, off = figs.get("64.fpdus_per_clock"), figs.get("64_markers_off.fpdus_per_clock")
    if on is None:
        return "-"
    return f"{on['value']:.3f}" + (f" / {off['value']:.3f} off" if off else "")


def selected_sims() -> set[str] | None:
    """The simulators SIMS selects (tests/hdlsim.py), None for all."""
    wanted = {s.strip() for s in os.environ.get("SIMS", "").split(",") if s.strip()}
    return wanted or None


def bench(args) -> int:
    bench_dir = Path(args.dir)
    baseline_path = Path(args.baseline)
    try:
        records = load_records(bench_dir) if bench_dir.is_dir() else []
        baseline = load_baseline(baseline_path)
    except BenchError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    if not records:
        print(f"bench: no bench records in {bench_dir}/; the cocotb testbenches write them (make test-hw)",
              file=sys.stderr)
        return 1
    sims = selected_sims()
    if args.update:
        new, dropped = updated_baseline(records, baseline, sims)
        write_baseline(baseline_path, new)
        for key in dropped:
            print(f"bench: dropped from the baseline (not measured): {key}")
        print(f"bench: baseline written: {baseline_path} ({sum(len(f) for f in new.values())} figures "
              f"of {len(new)} records)")
        baseline = new
    rows = compare(records, baseline, sims)
    failed = [row for row in rows if row.failed]
    by_key: dict = defaultdict(list)
    for row in rows:
        by_key[row.key].append(row)
    report = {"schema": BENCH_SCHEMA, "baseline": str(baseline_path), "records": records,
              "comparison": [row.__dict__ for row in rows], "failed": [f"{r.key} {r.figure}" for r in failed]}
    (bench_dir / "hw.json").write_text(json.dumps(report, indent=1) + "\n")

    print(f"{'block':<12} {'width':>5} {'simulator':<9} {'beats/clock':>11} {'latency':>7} "
          f"{'64-octet FPDUs/clock':>20}  figures")
    measured = {record_key(r): r for r in records}
    for key, krows in by_key.items():
        counts = defaultdict(int)
        for row in krows:
            counts[row.status] += 1
        status = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        r = measured.get(key)
        if r is None:
            block, width, sim = key.rsplit(" ", 2)
            print(f"{block:<12} {width[1:]:>5} {sim:<9} {'-':>11} {'-':>7} {'-':>20}  {status}")
            continue
        print(f"{r['block']:<12} {r['width']:>5} {r['simulator']:<9} {_fmt(r['beats_per_clock']):>11} "
              f"{_fmt(r['latency_clocks']):>7} {fpdus64(r):>20}  {status}")
    shown = rows if args.all else [row for row in rows if row.status != "ok"]
    if shown:
        print(f"\n{'record':<26} {'figure':<44} {'baseline':>9} {'measured':>9}  status")
        for row in shown:
            tol = f" (-{row.tolerance:.0%})" if row.tolerance else ""
            print(f"{row.key:<26} {row.figure:<44} {_fmt(row.baseline):>9} {_fmt(row.measured):>9}  "
                  f"{row.status}{tol}" + ("" if row.status in ("ok", "new", "not run") else f" ({row.better} is better)"))
    print(f"report: {bench_dir / 'hw.json'}; baseline: {baseline_path}")
    if failed:
        worse = [f"{r.key} {r.figure} {_fmt(r.measured)} (baseline {_fmt(r.baseline)}, {r.better} is better)"
                 for r in failed if r.status == "WORSE"]
        missing = [f"{r.key} {r.figure}" for r in failed if r.status == "MISSING"]
        turned = [f"{r.key} {r.figure}" for r in failed if r.status == "DIRECTION"]
        msg = []
        if worse:
            msg.append(f"{len(worse)} figures worse than the baseline:\n  " + "\n  ".join(worse))
        if missing:
            msg.append(f"{len(missing)} baseline figures not measured (a bench that did not run, or stopped "
                       "writing them):\n  " + "\n  ".join(missing))
        if turned:
            msg.append("figures whose better direction differs from the baseline's:\n  " + "\n  ".join(turned))
        print("bench: " + "\n".join(msg) + f"\nbench: if the change is intended, record it: "
              f"python3 scripts/hw_figures.py bench --update (then commit {baseline_path.name})", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("synth", help="synthesise the blocks, report LUTs and levels")
    p.add_argument("blocks", nargs="*", help="block names (default: all)")
    p.add_argument("--deep", type=int, default=0, metavar="N",
                   help="also print the N registers of each block with the deepest inputs")
    p.add_argument("--width", type=int, default=0, help="only this width (default: every width of the block)")
    p.add_argument("--no-timing", action="store_true",
                   help="LUTs and levels only, without the FPGA timing estimate (and its target)")
    p.set_defaults(run=synth)
    p = sub.add_parser("timing", help="only the FPGA timing estimate of one block at one width "
                       "(build/synth/<block>-W<w>-timing.json and .txt)")
    p.add_argument("block")
    p.add_argument("width", type=int)
    p.set_defaults(run=timing)
    p = sub.add_parser("timing-table", help="the estimates in build/synth as a Markdown table")
    p.set_defaults(run=timing_table)
    p = sub.add_parser("path", help="print the deepest LUT path into a register of a synthesised block")
    p.add_argument("block")
    p.add_argument("width", type=int)
    p.add_argument("register", help="register or 'port <name>', as synth --deep names it")
    p.add_argument("--floor", action="store_true", help="read the netlist floor made (build/synth/<block>-W<w>-floor.json)")
    p.set_defaults(run=path)
    p = sub.add_parser("cross", help="group a synthesised block's deepest paths by the submodules they start and end in")
    p.add_argument("block")
    p.add_argument("width", type=int)
    p.set_defaults(run=cross)
    p = sub.add_parser("floor", help="synthesise a block mapped for its shallowest paths and list the deepest: "
                       "the logic's own depth, not ABC's area trade")
    p.add_argument("block")
    p.add_argument("width", type=int)
    p.add_argument("--level", type=int, default=0, help="list bits this deep or deeper (default: the deepest)")
    p.set_defaults(run=floor)
    p = sub.add_parser("bench", help="collect the testbenches' figures and compare them with the baseline")
    p.add_argument("--update", action="store_true",
                   help="rewrite the baseline from the measured records (an intended change), then compare")
    p.add_argument("--all", action="store_true", help="list every figure, not only those that are not ok")
    p.add_argument("--dir", default=str(BENCH_DIR), help="where the records are (default: build/bench)")
    p.add_argument("--baseline", default=str(BASELINE), help="the baseline (default: hw/bench-baseline.json)")
    p.set_defaults(run=bench)
    args = ap.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
