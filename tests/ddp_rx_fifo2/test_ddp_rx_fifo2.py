"""ddp_rx_fifo2 (hw/rtl/ddp_rx_fifo2.v and its VHDL twin) against a Python
deque: random pushes of zero, one or two words and pops of zero, one or two
every clock, at random fill levels (bursts of pushing and of draining), with
every output and ready checked every clock.

Run with `.venv/bin/pytest tests/ddp_rx_fifo2` (SIMS=..., RANDOM_SEED=... as
in tests/hdlsim.py).
"""

from __future__ import annotations

import random
from collections import deque

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

import hdlsim

CLOCKS = 20000


@cocotb.test()
async def matches_deque(dut):
    """Every clock: out/out2 and their valids are the two oldest words of the
    model, in_ready/in_ready2 say whether one/two words are free, and the
    pushes and pops the bench makes move both the same way."""
    width = len(dut.in_data)
    cap = 2 + (1 << int(dut.AW.value))
    rng = random.Random(random.getrandbits(64))
    cocotb.start_soon(Clock(dut.clk, 2, units="ns").start())
    for s in (dut.in_valid, dut.in_valid2, dut.out_ready, dut.out_ready2):
        s.value = 0
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    model: deque[int] = deque()
    pushed = popped = twos_in = twos_out = 0
    fill_bias = 0.5
    for clk in range(CLOCKS):
        if clk % 500 == 0:
            fill_bias = rng.choice((0.1, 0.5, 0.9))  # drain, balance, fill
        a, b = rng.getrandbits(width), rng.getrandbits(width)
        want_in = rng.random() < fill_bias
        want_in2 = want_in and rng.random() < 0.5
        want_out = rng.random() < 1 - fill_bias + 0.1
        want_out2 = want_out and rng.random() < 0.6
        dut.in_data.value, dut.in_data2.value = a, b
        dut.in_valid.value, dut.in_valid2.value = int(want_in), int(want_in2)
        dut.out_ready.value, dut.out_ready2.value = int(want_out), int(want_out2)
        await ReadOnly()
        free = cap - len(model)
        assert int(dut.in_ready.value) == (free >= 1), f"clock {clk}: in_ready with {len(model)} of {cap}"
        assert int(dut.in_ready2.value) == (free >= 2), f"clock {clk}: in_ready2 with {len(model)} of {cap}"
        assert int(dut.out_valid.value) == (len(model) >= 1), f"clock {clk}: out_valid with {len(model)}"
        assert int(dut.out_valid2.value) == (len(model) >= 2), f"clock {clk}: out_valid2 with {len(model)}"
        if model:
            assert int(dut.out_data.value) == model[0], f"clock {clk}: out_data {int(dut.out_data.value):#x}, want {model[0]:#x}"
        if len(model) >= 2:
            assert int(dut.out_data2.value) == model[1], f"clock {clk}: out_data2 {int(dut.out_data2.value):#x}, want {model[1]:#x}"
        # What the FIFO does at this edge (its own rule: pops, then pushes
        # into the room there was before them).
        pop = want_out and len(model) >= 1
        pop2 = pop and want_out2 and len(model) >= 2
        push = want_in and free >= 1
        push2 = push and want_in2 and free >= 2
        for _ in range(pop + pop2):
            model.popleft()
            popped += 1
        for w in (a, b)[: push + push2]:
            model.append(w)
            pushed += 1
        twos_in += push2
        twos_out += pop2
        await RisingEdge(dut.clk)
    dut._log.info("%d words through (%d clocks pushed two, %d popped two), %d left", popped, twos_in, twos_out,
                  len(model))
    assert twos_in > CLOCKS // 20 and twos_out > CLOCKS // 20, "the bench did not exercise double pushes and pops"


@pytest.mark.parametrize("sim", hdlsim.simulators())
@pytest.mark.parametrize("aw", (2, 4))
def test_ddp_rx_fifo2(sim, aw):
    hdlsim.run(
        test="ddp_rx_fifo2",
        sim=sim,
        tag=f"AW{aw}",
        toplevel="ddp_rx_fifo2",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "ddp_rx_fifo2.v"],
        vhdl_sources=[hdlsim.VHDL_DIR / "ddp_rx_fifo2.vhd"],
        parameters={"WIDTH": 24, "AW": aw},
    )
