"""rnic_rdarb, the arbiter that shares rnic_admin's one-clock table read
ports among the device's engines (hw/rtl/rnic_rdarb.v).

Random requests from every client, each held with its index until granted
(the port's rule), and checked every clock against the arbiter's contract:
at most one grant, only to a client that asks, always to client 0 when it
asks, to some client whenever any asks (no clock lost), rd_index the granted
client's index; clients 1..N-1 in turn: none waits while one rival is
granted twice. Client 0 asks often (up to every clock for stretches), so the bench
also sees the others wait behind it and then go on in turn.
"""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

import hdlsim

CLOCKS = 20000
IDX_W = 10


@cocotb.test()
async def random_requests(dut):
    n = len(dut.req)
    rng = random.Random(cocotb.RANDOM_SEED)
    cocotb.start_soon(Clock(dut.clk, 2, units="ns").start())
    dut.rst.value = 1
    dut.req.value = 0
    dut.idx.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    asking = [False] * n
    index = [0] * n
    # Per client, the grants to each rival (1..N-1) since it began to wait.
    rivals_while_waiting = [[0] * n for _ in range(n)]
    granted = [0] * n
    p0 = 0.3
    for clk in range(CLOCKS):
        if clk % 500 == 0:
            p0 = rng.choice((0.0, 0.3, 0.5, 0.95))
        for c in range(n):
            if not asking[c] and rng.random() < (p0 if c == 0 else 0.4):
                asking[c], index[c] = True, rng.getrandbits(IDX_W)
        dut.req.value = sum(1 << c for c in range(n) if asking[c])
        dut.idx.value = sum(index[c] << (c * IDX_W) for c in range(n))
        await ReadOnly()
        gnt = int(dut.gnt.value)
        who = [c for c in range(n) if gnt >> c & 1]
        assert len(who) <= 1, f"clock {clk}: grants to {who}"
        assert int(dut.rd_en.value) == any(asking), f"clock {clk}: rd_en {dut.rd_en.value} with requests {asking}"
        if any(asking):
            assert who, f"clock {clk}: requests {asking} and no grant"
            g = who[0]
            assert asking[g], f"clock {clk}: grant to client {g}, which does not ask"
            assert int(dut.rd_index.value) == index[g], f"clock {clk}: rd_index {int(dut.rd_index.value)} for client {g}'s {index[g]}"
            if asking[0]:
                assert g == 0, f"clock {clk}: client 0 asks and client {g} is granted"
            asking[g] = False
            granted[g] += 1
            if g != 0:
                rivals_while_waiting[g] = [0] * n
                for c in range(1, n):
                    if asking[c]:
                        rivals_while_waiting[c][g] += 1
                        assert rivals_while_waiting[c][g] < 2, (
                            f"clock {clk}: client {c} waits while client {g} is granted a second time")
        await RisingEdge(dut.clk)
    dut._log.info("grants per client: %s", granted)
    assert all(g > CLOCKS // (4 * n) for g in granted), f"a client was hardly ever granted: {granted}"


# Icarus at every N (cheap to build); Verilator at one.
CASES = [pytest.param(s.values[0], n, marks=s.marks, id=f"{s.values[0]}-N{n}")
         for s in hdlsim.simulators(langs=("verilog",)) for n in (2, 3, 5) if s.values[0] != "verilator" or n == 3]


@pytest.mark.parametrize("sim,n", CASES)
def test_rnic_rdarb(sim, n):
    hdlsim.run(
        test="rnic_rdarb",
        sim=sim,
        tag=f"N{n}",
        toplevel="rnic_rdarb",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "rnic_rdarb.v"],
        parameters={"N": n, "IDX_W": IDX_W},
    )
