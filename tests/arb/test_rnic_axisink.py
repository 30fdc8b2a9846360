"""rnic_axisink (hw/rtl/rnic_axisink.v): the placement writes to the
device's own receive buffers (device addresses with bit 63 set) end there,
answered OKAY; every other burst reaches memory unchanged, and every B
response goes back in AW order.

cocotbext-axi's AxiMasterWrite plays ddp_rx (bursts of one ID, many in
flight, random sizes and offsets, about 40% to bit-63 addresses), its
AxiRamWrite the memory below, some of whose beats fail (SLVERR); random
back-pressure on every channel. Checked: each write's response (OKAY for an
absorbed one, SLVERR exactly for a passed one that touches a failing beat:
a response out of AW order would give some write another's), the whole
memory against the passed writes alone, and the protocol checkers on both
AXI4 ports.
"""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiMasterWrite, AxiRamWrite, AxiResp, AxiWriteBus

import hdlsim
import protocol
import tbutil

RAM_SIZE = 1 << 16
WRITES = 400
DATA_W = 64


class FailingRam(AxiRamWrite):
    """AxiRamWrite whose writes into the beats of `bad` fail (SLVERR)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.bad: set[int] = set()
        self.bytes = len(self.bus.w.wdata) // 8

    async def _write(self, address, data):
        if address - address % self.bytes in self.bad:
            raise ValueError("bench: a failing beat")
        await super()._write(address, data)


@cocotb.test()
async def mixed_bursts(dut):
    rng = random.Random(cocotb.RANDOM_SEED)
    cocotb.start_soon(Clock(dut.clk, 2, units="ns").start())
    ram = FailingRam(AxiWriteBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=RAM_SIZE)
    master = AxiMasterWrite(AxiWriteBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
    for ch in (ram.aw_channel, ram.w_channel, ram.b_channel, master.aw_channel, master.w_channel, master.b_channel):
        ch.set_pause_generator(tbutil.pauses(rng, 0.3))
    dut.rst.value = 1
    for _ in range(4):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    protocol.Monitor(dut, "rnic_axisink")
    beat = DATA_W // 8
    # Passed writes go to disjoint slices of memory, so the order among them
    # does not decide the memory's content; some slices hold failing beats.
    slice_len = RAM_SIZE // WRITES
    want = bytearray(RAM_SIZE)
    plan = []
    for k in range(WRITES):
        n = rng.randint(1, slice_len - beat)
        data = rng.randbytes(n)
        if rng.random() < 0.4:
            plan.append((1 << 63 | rng.getrandbits(40), data, False))
            continue
        addr = k * slice_len + rng.randrange(slice_len - n)
        fail = rng.random() < 0.15
        if fail:
            first, last = addr - addr % beat, (addr + n - 1) - (addr + n - 1) % beat
            ram.bad.add(rng.randrange(first, last + 1, beat))
        plan.append((addr, data, fail))
    tasks = [cocotb.start_soon(master.write(addr, data, awid=0)) for addr, data, _ in plan]
    absorbed = 0
    for (addr, data, fail), t in zip(plan, tasks):
        res = await t
        if addr >> 63:
            absorbed += 1
            assert res.resp == AxiResp.OKAY, f"absorbed write at {addr:#x}: response {res.resp}"
            continue
        want_resp = AxiResp.SLVERR if fail else AxiResp.OKAY
        assert res.resp == want_resp, f"write at {addr:#x} ({len(data)} octets): response {res.resp}, want {want_resp}"
        if not fail:
            want[addr:addr + len(data)] = data
    # A write with a failing beat may have put its other beats in memory
    # (AxiRamWrite writes beat by beat): its octets are not compared.
    failed = [(addr, len(data)) for addr, data, fail in plan if fail]
    got = ram.read(0, RAM_SIZE)
    for i in range(RAM_SIZE):
        if got[i] != want[i] and not any(a <= i < a + n for a, n in failed):
            raise AssertionError(f"memory octet {i:#x} is {got[i]:#04x}, want {want[i]:#04x}")
    dut._log.info("%d writes, %d absorbed, %d with a failing beat", WRITES, absorbed, len(failed))
    assert absorbed > WRITES // 4 and failed, "the bench did not mix its bursts"


CASES = [pytest.param(s.values[0], marks=s.marks, id=s.values[0]) for s in hdlsim.simulators(langs=("verilog",))]


@pytest.mark.parametrize("sim", CASES)
def test_rnic_axisink(sim):
    hdlsim.run(
        test="rnic_axisink",
        sim=sim,
        tag=f"W{DATA_W}",
        toplevel="rnic_axisink",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "rnic_axisink.v"],
        parameters={"DATA_W": DATA_W, "ID_W": 1},
    )
