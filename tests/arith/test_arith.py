"""The datapath's carry-free arithmetic modules against Python integers.

hw/rtl/rnic_add.v (s, co = a + b + ci; a plain sum since the FPGA estimate,
hw/timing.md, replaced LUT levels as the target) and hw/rtl/rnic_incdec.v
(y = x + 1 or x - 1, a parallel-prefix tree), and hw/rtl/rnic_pick.v
(y = v[a]) a tree of 4-way picks, whose structure is written out by hand
(hw/README.md, "LUT levels"); the blocks that use them are checked against
the Go model, and these tests check the trees themselves, at every width
class their generate code has (one to four prefix levels, the widest
allowed), on operands that exercise every carry path: all ones, all zeros,
single bits, a carry rippling the whole width, and random ones.

Run with `.venv/bin/pytest tests/arith` (SIMS=..., RANDOM_SEED=... as in
tests/hdlsim.py).
"""

from __future__ import annotations

import os
import random

import cocotb
import pytest
from cocotb.triggers import Timer

import hdlsim

RANDOM_VECTORS = 3000


def operands(w: int, rng: random.Random):
    """Pairs (a, b) that drive every carry path of a w-bit sum."""
    top = (1 << w) - 1
    yield from ((0, 0), (top, 0), (0, top), (top, top), (top, 1), (1, top))
    for i in range(w):
        yield 1 << i, top ^ (1 << i)  # propagate everywhere but bit i
        yield 1 << i, (1 << i)  # one generate
        yield (1 << i) - 1, 1  # a carry up to bit i
    for _ in range(RANDOM_VECTORS):
        yield rng.getrandbits(w), rng.getrandbits(w)


@cocotb.test()
async def add_matches_python(dut):
    """rnic_add: {co, s} = a + b + ci for every operand pair, ci 0 and 1."""
    w = len(dut.a)
    assert w == int(os.environ["ARITH_W"])
    rng = random.Random(random.getrandbits(64))
    n = 0
    for a, b in operands(w, rng):
        for ci in (0, 1):
            dut.a.value, dut.b.value, dut.ci.value = a, b, ci
            await Timer(1, units="ns")
            want = a + b + ci
            got = int(dut.co.value) << w | int(dut.s.value)
            assert got == want, f"W={w}: {a:#x} + {b:#x} + {ci} = {got:#x}, want {want:#x}"
            n += 1
    dut._log.info("W=%d: %d sums checked", w, n)


@cocotb.test()
async def incdec_matches_python(dut):
    """rnic_incdec: y = x + 1 (DEC 0) or x - 1 (DEC 1) mod 2^W."""
    w = len(dut.x)
    assert w == int(os.environ["ARITH_W"])
    dec = int(os.environ["ARITH_DEC"])
    rng = random.Random(random.getrandbits(64))
    n = 0
    for a, b in operands(w, rng):
        for x in (a, b):
            dut.x.value = x
            await Timer(1, units="ns")
            want = (x - 1 if dec else x + 1) % (1 << w)
            got = int(dut.y.value)
            assert got == want, f"W={w} DEC={dec}: x={x:#x} gave {got:#x}, want {want:#x}"
            n += 1
    dut._log.info("W=%d DEC=%d: %d values checked", w, dec, n)


@cocotb.test()
async def pick_matches_python(dut):
    """rnic_pick: y = v[a] for every a, on vectors with one bit set, one bit
    clear, and random ones."""
    aw = len(dut.a)
    assert aw == int(os.environ["ARITH_W"])
    n_bits = 1 << aw
    top = (1 << n_bits) - 1
    rng = random.Random(random.getrandbits(64))
    vectors = [0, top] + [1 << i for i in range(0, n_bits, max(1, n_bits // 4))]
    vectors += [top ^ v for v in vectors[2:]] + [rng.getrandbits(n_bits) for _ in range(4)]
    n = 0
    for v in vectors:
        dut.v.value = v
        for a in range(n_bits):
            dut.a.value = a
            await Timer(1, units="ns")
            want = v >> a & 1
            assert int(dut.y.value) == want, f"AW={aw}: v[{a}] gave {int(dut.y.value)}, want {want}"
            n += 1
    dut._log.info("AW=%d: %d picks checked", aw, n)


# rnic_add: 1..3 positions (one prefix level), up to 9 (two), 27 (three),
# 28 and more (four), and the widest allowed.
ADD_WIDTHS = (1, 2, 8, 9, 26, 27, 32, 80)
# rnic_incdec: the narrowest, both sides of one and of two p2 words, widest.
INCDEC_WIDTHS = (2, 7, 36, 37, 58, 72)
# rnic_pick: a lone 2-way level, 4-way levels with and without a 2-way top,
# and the connection tables' 1024 bits.
PICK_WIDTHS = (1, 2, 5, 10)


def cases(widths, verilator_widths):
    """Verilator at a few widths (the widest among them), Icarus at the
    others (cheap to build, slow to run wide): every width on one simulator.
    Icarus takes the Verilator widths too under HW_ALL_WIDTHS=1 or when SIMS
    leaves Verilator out; its widest cases take a minute or two each."""
    sims = [p.values[0] for p in hdlsim.simulators(langs=("verilog",))]
    both = hdlsim.all_widths_requested() or "verilator" not in sims
    out = []
    for sim in sims:
        for w in widths:
            if w in verilator_widths if sim == "verilator" else (both or w not in verilator_widths):
                out.append(pytest.param(sim, w, id=f"{sim}-W{w}"))
    return out


@pytest.mark.parametrize("sim,width", cases(ADD_WIDTHS, (27, 80)))
def test_rnic_add(sim, width):
    hdlsim.run(test="arith", sim=sim, tag=f"add-W{width}", toplevel="rnic_add", test_module=__name__,
               verilog_sources=[hdlsim.RTL_DIR / "rnic_add.v"], parameters={"W": width},
               extra_env={"ARITH_W": str(width), "TESTCASE": "add_matches_python"})


@pytest.mark.parametrize("dec", (0, 1))
@pytest.mark.parametrize("sim,width", cases(INCDEC_WIDTHS, (58,)))
def test_rnic_incdec(sim, width, dec):
    hdlsim.run(test="arith", sim=sim, tag=f"incdec{dec}-W{width}", toplevel="rnic_incdec", test_module=__name__,
               verilog_sources=[hdlsim.RTL_DIR / "rnic_incdec.v"], parameters={"W": width, "DEC": dec},
               extra_env={"ARITH_W": str(width), "ARITH_DEC": str(dec), "TESTCASE": "incdec_matches_python"})


@pytest.mark.parametrize("sim,width", cases(PICK_WIDTHS, (10,)))
def test_rnic_pick(sim, width):
    hdlsim.run(test="arith", sim=sim, tag=f"pick-W{width}", toplevel="rnic_pick", test_module=__name__,
               verilog_sources=[hdlsim.RTL_DIR / "rnic_pick.v"], parameters={"AW": width},
               extra_env={"ARITH_W": str(width), "TESTCASE": "pick_matches_python"})
