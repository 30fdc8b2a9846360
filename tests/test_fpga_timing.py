"""scripts/fpga_timing.py on small hand-built netlists (no simulator, no Yosys).

Each expected period is worked out by hand from the delays that
hw/timing.md documents (fpga_timing.DEFAULT):

    FDRE C->Q 0.08, D setup 0.03, CE setup 0.06, LUT 0.10, MUXF7/8 data 0.09,
    select 0.15, CARRY4 S/DI->CO/O 0.16, CI->CO[3] 0.015, CI->O 0.10,
    CO[3]->CI 0.01, LUT->MUXF and LUT->CARRY4 S 0.01 (dedicated),
    routed net 0.20 + 0.03 per doubling of its fanout, RAMB36E2 CLK->DOUT
    0.85 (0.35 with the output register), RAM input setup 0.45,
    clock allowance 0.05.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import fpga_timing as ft  # noqa: E402

DIRS = {
    "FDRE": {"C": "input", "CE": "input", "R": "input", "D": "input", "Q": "output"},
    "CARRY4": {"CI": "input", "CYINIT": "input", "DI": "input", "S": "input", "CO": "output", "O": "output"},
    "MUXF7": {"I0": "input", "I1": "input", "S": "input", "O": "output"},
    "MUXF8": {"I0": "input", "I1": "input", "S": "input", "O": "output"},
}


class Builder:
    """A Yosys-JSON-shaped module built cell by cell; nets are ints."""

    def __init__(self):
        self.next_bit = 2  # Yosys numbers bits from 2 (0 and 1 are constants' spots)
        self.cells: dict = {}
        self.netnames: dict = {}
        self.ports: dict = {"clk": {"direction": "input", "bits": [self.bit()]}}

    def bit(self) -> int:
        b = self.next_bit
        self.next_bit += 1
        return b

    def bits(self, n: int) -> list[int]:
        return [self.bit() for _ in range(n)]

    def cell(self, name: str, typ: str, dirs: dict | None = None, params: dict | None = None, **conns):
        conns = {p: (v if isinstance(v, list) else [v]) for p, v in conns.items()}
        self.cells[name] = {
            "type": typ,
            "parameters": params or {},
            "port_directions": dirs if dirs is not None else DIRS.get(typ, {
                p: ("output" if p == "O" else "input") for p in conns}),
            "connections": conns,
        }

    def ff(self, name: str, d, q=None) -> int:
        q = self.bit() if q is None else q
        self.cell(name, "FDRE", C=self.ports["clk"]["bits"][0], CE="1", R="0", D=d, Q=q)
        self.netnames[name] = {"bits": [q]}
        return q

    def lut(self, name: str, *ins) -> int:
        o = self.bit()
        self.cell(name, f"LUT{len(ins)}", **{f"I{i}": b for i, b in enumerate(ins)}, O=o)
        return o

    def port(self, name: str, direction: str, bits: list[int]):
        self.ports[name] = {"direction": direction, "bits": bits}

    def netlist(self) -> dict:
        return {"modules": {"top": {"ports": self.ports, "cells": self.cells, "netnames": self.netnames}}}


def worst(b: Builder, **kw) -> ft.Path:
    return ft.analyse(b.netlist(), "top", **kw)[0]


def test_lut_chain():
    b = Builder()
    x = b.ff("a_reg", b.bit())
    for i in range(3):
        x = b.lut(f"l{i}", x)
    b.ff("b_reg", x)
    p = worst(b, ports=False)
    # 0.08 + 3 * (0.20 route + 0.10 LUT) + 0.20 route + 0.03 setup + 0.05 clock
    assert p.delay == pytest.approx(1.26)
    assert (p.start, p.end, p.luts, p.hops, p.carries) == ("a_reg", "b_reg", 3, 4, 0)
    assert p.fmax_mhz == pytest.approx(1000 / 1.26)
    assert [s.what for s in p.steps] == ["FDRE C->Q", "LUT1 I0->O", "LUT1 I0->O", "LUT1 I0->O", "FDRE D (setup)"]


def test_fanout_adds_per_doubling():
    b = Builder()
    x = b.ff("a_reg", b.bit())
    y = b.lut("l0", x)
    for i in range(8):  # y drives 8 flip-flops: 3 doublings
        b.ff(f"b{i}_reg", y)
    p = worst(b, ports=False)
    # 0.08 + 0.20 + 0.10 + (0.20 + 3 * 0.03) + 0.03 + 0.05
    assert p.delay == pytest.approx(0.75)


def test_carry4_chain_32_bit_adder():
    # s = a + b, 32 bits: a LUT2 (a ^ b) into each CARRY4 S, a into DI,
    # 8 CARRY4 cascaded CO[3] -> CI, every O into a flip-flop.
    b = Builder()
    a = [b.ff(f"a_reg[{i}]", b.bit()) for i in range(32)]
    bb = [b.ff(f"b_reg[{i}]", b.bit()) for i in range(32)]
    ci = "0"
    for k in range(8):
        s = [b.lut(f"x{4 * k + j}", a[4 * k + j], bb[4 * k + j]) for j in range(4)]
        o, co = b.bits(4), b.bits(4)
        b.cell(f"c{k}", "CARRY4", CI=ci, CYINIT="0" if k == 0 else "0", DI=a[4 * k:4 * k + 4], S=s, O=o, CO=co)
        for j in range(4):
            b.ff(f"s_reg[{4 * k + j}]", o[j])
        ci = co[3]
    p = worst(b, ports=False)
    # a[0]: 0.08, routed to its LUT2 and to DI[0] (fanout 2): 0.20 + 0.03;
    # LUT2 0.10; into S[0] of the first CARRY4 (dedicated) 0.01; S -> CO[3]
    # 0.16 (0.58); six CARRY4s CI -> CO[3], each 0.01 cascade + 0.015
    # (0.73); the last one's CI -> O[3] 0.01 + 0.10 (0.84); routed into
    # the flip-flop 0.20, setup 0.03, clock 0.05.
    assert p.delay == pytest.approx(1.12)
    # The last CARRY4's CI reaches each of its O in 0.10: any of bits 28-31.
    assert p.end in {f"s_reg[{i}]" for i in range(28, 32)}
    assert p.carries == 8 and p.luts == 1
    assert p.hops == 2  # a -> LUT2 and O[3] -> s_reg; the rest is dedicated


def test_muxf_tree():
    # Four LUT6 into two MUXF7 into a MUXF8 into a flip-flop.
    b = Builder()
    d = [b.ff(f"d_reg[{i}]", b.bit()) for i in range(6)]
    s7 = b.ff("s7_reg", b.bit())
    s8 = b.ff("s8_reg", b.bit())
    l = [b.lut(f"l{i}", *d) for i in range(4)]  # each d_reg bit drives 4 LUTs
    m = []
    for i in range(2):
        o = b.bit()
        b.cell(f"m7_{i}", "MUXF7", I0=l[2 * i], I1=l[2 * i + 1], S=s7, O=o)
        m.append(o)
    o8 = b.bit()
    b.cell("m8", "MUXF8", I0=m[0], I1=m[1], S=s8, O=o8)
    b.ff("q_reg", o8)
    p = worst(b, ports=False)
    # d_reg: 0.08, fanout 4: 0.20 + 2 * 0.03; LUT6 0.10; dedicated 0.01 +
    # MUXF7 0.09; dedicated 0.01 + MUXF8 0.09; routed 0.20; 0.03 + 0.05.
    assert p.delay == pytest.approx(0.92)
    assert p.start.startswith("d_reg[")
    assert [s.what for s in p.steps][2:4] == ["MUXF7 I0->O", "MUXF8 I0->O"]
    # (Through a select instead: s7, fanout 2, 0.08 + 0.23 + 0.15, then
    # 0.01 + 0.09 and 0.20 + 0.08: 0.84, below the data path.)


def test_bram_paths():
    b = Builder()
    clk = b.ports["clk"]["bits"][0]
    addr = [b.ff(f"addr_reg[{i}]", b.bit()) for i in range(2)]
    dout_a, dout_b = b.bits(2), b.bits(2)
    dirs = {"CLKARDCLK": "input", "CLKBWRCLK": "input", "ADDRARDADDR": "input",
            "ADDRBWRADDR": "input", "DOUTADOUT": "output", "DOUTBDOUT": "output"}
    b.cell("ram", "RAMB36E2", dirs, {"DOA_REG": 0, "DOB_REG": 1}, CLKARDCLK=clk, CLKBWRCLK=clk,
           ADDRARDADDR=addr, ADDRBWRADDR=addr, DOUTADOUT=dout_a, DOUTBDOUT=dout_b)
    b.ff("qa_reg", b.lut("la", dout_a[0]))
    b.ff("qb_reg", b.lut("lb", dout_b[0]))
    paths = ft.analyse(b.netlist(), "top", ports=False, paths=3)
    got = {p.end: p.delay for p in paths}
    # Port A, no output register: 0.85 + 0.20 + 0.10 + 0.20 + 0.03 + 0.05
    assert got["qa_reg"] == pytest.approx(1.43)
    # Port B with its output register: 0.35 instead of 0.85
    assert got["qb_reg"] == pytest.approx(0.93)
    # Into the RAM: 0.08 + (0.20 + 0.03: fanout 2) + 0.45 setup + 0.05
    assert got["ram (block RAM) ADDRARDADDR[0]"] == pytest.approx(0.81)
    assert paths[0].start == "ram (block RAM)"


def test_sdp_ram_box_deep_and_shallow():
    for aw, launch in ((10, 0.85), (5, 0.08)):
        b = Builder()
        clk = b.ports["clk"]["bits"][0]
        out = b.bits(4)
        b.cell("tbl", "sdp_ram", {"clk": "input", "rd_addr": "input", "rd_data": "output"},
               clk=clk, rd_addr=[b.ff(f"ra[{i}]", b.bit()) for i in range(aw)], rd_data=out)
        b.ff("q_reg", b.lut("l", out[0]))
        p = [p for p in ft.analyse(b.netlist(), "top", ports=False, paths=3) if p.end == "q_reg"][0]
        assert p.delay == pytest.approx(launch + 0.20 + 0.10 + 0.20 + 0.03 + 0.05)


def test_sdp_ram_box_lutram():
    """An sdp_ram box with LUTRAM = 1, 1024 deep: its read word launches
    from the rd_data flip-flop; its read address reaches that flip-flop
    through the 512-deep read port (0.30) and one LUT6 4:1 mux with its
    routing (0.20 + 0.10), then D setup (0.03); its write pins take the
    LUT RAM's setup (0.40); rd_en is the flip-flop's CE (0.06). (A box
    counts once as an end: each pin is tried on a box of its own.)"""
    def box(pin: str | None):
        b = Builder()
        clk = b.ports["clk"]["bits"][0]
        out = b.bits(4)
        widths = {"rd_addr": 10, "rd_en": 1, "wr_data": 1}
        conns = {p: (b.bits(n) if p != pin else [b.ff(f"{p}_reg{i}", b.bit()) for i in range(n)])
                 for p, n in widths.items()}
        b.cell("tbl", "sdp_ram", {"clk": "input", "rd_addr": "input", "rd_en": "input",
                                  "wr_data": "input", "rd_data": "output"},
               {"LUTRAM": 1}, clk=clk, rd_data=out, **conns)
        b.ff("q_reg", b.lut("l", out[0]))
        return {p.end: p for p in ft.analyse(b.netlist(), "top", ports=False, paths=20)}

    got = box(None)
    assert got["q_reg"].delay == pytest.approx(0.08 + 0.20 + 0.10 + 0.20 + 0.03 + 0.05)
    assert got["q_reg"].start == "tbl (LUT RAM)"
    # 0.08 + 0.20 route + (0.30 + 0.20 + 0.10 + 0.03) + 0.05
    assert box("rd_addr")["tbl (LUT RAM) rd_addr[0]"].delay == pytest.approx(0.96)
    assert box("wr_data")["tbl (LUT RAM) wr_data"].delay == pytest.approx(0.08 + 0.20 + 0.40 + 0.05)
    assert box("rd_en")["tbl (LUT RAM) rd_en"].delay == pytest.approx(0.08 + 0.20 + 0.06 + 0.05)


def test_ports_count_as_registers():
    b = Builder()
    i = b.bit()
    b.port("x", "input", [i])
    o = b.lut("l", i)
    b.port("y", "output", [o])
    p = worst(b)
    # input port as a register 0.08, 0.20 + 0.10, 0.20 to the port, 0.03 + 0.05
    assert p.delay == pytest.approx(0.66)
    assert (p.start, p.end) == ("port x", "port y")
    assert ft.analyse(b.netlist(), "top", ports=False) == []


def test_a_register_counts_once():
    b = Builder()
    x = b.ff("a_reg", b.bit())
    for i in range(4):
        b.ff(f"r_reg[{i}]", b.lut(f"l{i}", x))
    b.ff("s_reg", x)
    paths = ft.analyse(b.netlist(), "top", ports=False, paths=5)
    assert [p.end for p in paths][:1] in (["r_reg[0]"], ["r_reg[1]"], ["r_reg[2]"], ["r_reg[3]"])
    assert len(paths) == 2 and paths[1].end == "s_reg"


def test_unknown_cell_is_an_error():
    b = Builder()
    x = b.ff("a_reg", b.bit())
    o = b.bit()
    b.cell("dsp", "DSP48E2", {"A": "input", "P": "output"}, A=x, P=o)
    b.ff("b_reg", o)
    with pytest.raises(ft.TimingError, match="DSP48E2"):
        ft.analyse(b.netlist(), "top")


def test_combinational_loop_is_an_error():
    b = Builder()
    x = b.ff("a_reg", b.bit())
    loop = b.bit()
    y = b.lut("l0", x, loop)
    b.cell("l1", "LUT1", I0=y, O=loop)
    b.ff("b_reg", y)
    with pytest.raises(ft.TimingError, match="combinational loop"):
        ft.analyse(b.netlist(), "top")


def test_unknown_module_is_an_error():
    with pytest.raises(ft.TimingError, match="no module"):
        ft.analyse({"modules": {}}, "top")
