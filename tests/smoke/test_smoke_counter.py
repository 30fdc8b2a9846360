"""Smoke test of the HDL toolchain: hw/rtl/smoke_counter.v and its VHDL twin.

Proves that cocotb, the three simulators and the build directories work
together, with assertions that fail if the counter misbehaves. Run with
`make test-hw`, or `.venv/bin/pytest tests/smoke` (SIMS=..., WAVES=1 and
RANDOM_SEED=... as described in tests/hdlsim.py).

The file holds both halves: the cocotb coroutines (run inside the simulator,
which imports this module by name) and the pytest test that builds and starts
each simulator. The coroutines are not named test_* so that pytest leaves
them alone.
"""

import os
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

import hdlsim

CLK_PERIOD_NS = 10


async def start(dut):
    """Start the clock, hold reset for three cycles with en high, release it.

    Returns the counter's width, checked against the WIDTH the pytest side
    asked for (so a parameter that never reached the design fails here).
    """
    width = len(dut.count)
    expected = int(os.environ["SMOKE_COUNTER_WIDTH"])
    assert width == expected, f"count is {width} bits wide, WIDTH was {expected}"

    cocotb.start_soon(Clock(dut.clk, CLK_PERIOD_NS, units="ns").start())
    # Inputs change on falling edges, so every rising edge samples settled
    # values and the count is read half a period after it changed.
    dut.rst.value = 1
    dut.en.value = 1
    for cycle in range(3):
        await FallingEdge(dut.clk)
        assert dut.count.value == 0, f"count not held at 0 in reset (cycle {cycle})"
    dut.rst.value = 0
    dut.en.value = 0
    return width


@cocotb.test()
async def writes_after_discovery(dut):
    """Inputs still take writes after the handles were found by iteration.

    cocotb-bus and cocotbext-axi list the design's children (dir(dut)) before
    the testbench drives anything. Under Verilator 5.006 that made writes to
    top-level inputs vanish, unless tests/verilator_top_ports.py had bound the
    ports by name first. It runs first, before any other test has looked
    a port up by name.
    """
    dir(dut)
    await start(dut)
    dut.en.value = 1
    for expected in range(1, 4):
        await FallingEdge(dut.clk)
        assert dut.count.value == expected, "a write to en was lost"


@cocotb.test()
async def reset_overrides_enable(dut):
    """Reset clears the count even while en is high; en low holds it at 0."""
    await start(dut)
    for cycle in range(4):
        await FallingEdge(dut.clk)
        assert dut.count.value == 0, f"count moved with en low (cycle {cycle})"


@cocotb.test()
async def counts_random_enable(dut):
    """A random en pattern, long enough to wrap the count several times."""
    width = await start(dut)
    modulus = 1 << width
    cycles = min(3 * modulus + 50, 2000)

    expected = 0
    enabled = 0
    for cycle in range(cycles):
        en = random.getrandbits(1)
        dut.en.value = en
        await FallingEdge(dut.clk)
        expected = (expected + en) % modulus
        enabled += en
        got = dut.count.value.integer
        assert got == expected, (
            f"cycle {cycle}: count {got}, expected {expected} (en was {en})"
        )
    dut._log.info("%d cycles, %d with en high, count %d", cycles, enabled, expected)
    if width <= 8:
        assert enabled >= modulus, "the count never wrapped; stimulus too short"


@cocotb.test()
async def reset_mid_count(dut):
    """Reset with en high clears a running count; counting resumes from 0."""
    await start(dut)
    dut.en.value = 1
    for _ in range(5):
        await FallingEdge(dut.clk)
    assert dut.count.value == 5

    dut.rst.value = 1
    await FallingEdge(dut.clk)
    assert dut.count.value == 0, "reset did not override en"

    dut.rst.value = 0
    await FallingEdge(dut.clk)
    assert dut.count.value == 1, "count did not resume from 0 after reset"


WIDTHS = (4, 8)


@pytest.mark.parametrize("width", WIDTHS, ids=[f"W{w}" for w in WIDTHS])
@pytest.mark.parametrize("sim", hdlsim.simulators())
def test_smoke_counter(sim, width):
    hdlsim.run(
        test="smoke_counter",
        sim=sim,
        tag=f"W{width}",
        toplevel="smoke_counter",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "smoke_counter.v"],
        vhdl_sources=[hdlsim.VHDL_DIR / "smoke_counter.vhd"],
        parameters={"WIDTH": width},
        extra_env={"SMOKE_COUNTER_WIDTH": str(width)},
    )
