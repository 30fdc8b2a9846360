"""rnic_recmux, the round-robin merge of valid/ready record streams
(hw/rtl/rnic_recmux.v: the engines' completion records, events and receive
buffers into one port each).

Every input offers numbered records with random gaps and holds each until
taken (AXI4-Stream's rule); the output is stalled at random. Checked every
clock: the output's record is one an input offers now, and the one that
input offers (s_ready only to it, only with m_ready); once offered and not
taken it stays on the output unchanged; each input's records come out in
order, none lost or doubled; while an input waits, no rival passes twice;
and the protocol checkers (tests/protocol.py) on every port.
"""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

import hdlsim
import protocol

CLOCKS = 20000
W = 24


@cocotb.test()
async def random_streams(dut):
    n = len(dut.s_valid)
    rng = random.Random(cocotb.RANDOM_SEED)
    cocotb.start_soon(Clock(dut.clk, 2, units="ns").start())
    dut.rst.value = 1
    dut.s_valid.value = 0
    dut.s_data.value = 0
    dut.m_ready.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    protocol.Monitor(dut, "rnic_recmux")
    seq = [0] * n                 # the next record number of each input
    offering = [False] * n
    waited = [[0] * n for _ in range(n)]
    out = [0] * n
    prev = None                   # (record) offered and not taken last clock
    p_valid, p_ready = 0.5, 0.5
    for clk in range(CLOCKS):
        if clk % 1000 == 0:
            p_valid, p_ready = rng.choice((0.2, 0.6, 1.0)), rng.choice((0.2, 0.7, 1.0))
        for i in range(n):
            if not offering[i] and rng.random() < p_valid:
                offering[i] = True
        rec = [i << (W - 3) | seq[i] for i in range(n)]
        dut.s_valid.value = sum(1 << i for i in range(n) if offering[i])
        dut.s_data.value = sum(rec[i] << (i * W) for i in range(n))
        ready = rng.random() < p_ready
        dut.m_ready.value = int(ready)
        await ReadOnly()
        mv, sr = int(dut.m_valid.value), int(dut.s_ready.value)
        assert mv == any(offering), f"clock {clk}: m_valid {mv} with offers {offering}"
        if prev is not None:
            assert mv and int(dut.m_data.value) == prev, f"clock {clk}: the stalled record {prev:#x} changed"
        if not mv:
            assert sr == 0, f"clock {clk}: s_ready {sr:b} with nothing offered"
            prev = None
        else:
            data = int(dut.m_data.value)
            src = data >> (W - 3)
            assert src < n and offering[src] and data == rec[src], f"clock {clk}: m_data {data:#x} is no input's offer"
            assert sr == ((1 << src) if ready else 0), f"clock {clk}: s_ready {sr:b} for input {src}, m_ready {ready}"
            if ready:
                offering[src] = False
                seq[src] += 1
                out[src] += 1
                waited[src] = [0] * n
                for i in range(n):
                    if offering[i]:
                        waited[i][src] += 1
                        assert waited[i][src] < 2, f"clock {clk}: input {i} waits while input {src} passes twice"
                prev = None
            else:
                prev = data
        await RisingEdge(dut.clk)
    dut._log.info("records per input: %s", out)
    assert all(o > CLOCKS // (10 * n) for o in out), f"an input hardly passed: {out}"


# Icarus at every N (cheap to build); Verilator at one.
CASES = [pytest.param(s.values[0], n, marks=s.marks, id=f"{s.values[0]}-N{n}")
         for s in hdlsim.simulators(langs=("verilog",)) for n in (2, 3, 5) if s.values[0] != "verilator" or n == 3]


@pytest.mark.parametrize("sim,n", CASES)
def test_rnic_recmux(sim, n):
    hdlsim.run(
        test="rnic_recmux",
        sim=sim,
        tag=f"N{n}",
        toplevel="rnic_recmux",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "rnic_recmux.v"],
        parameters={"N": n, "W": W},
    )
