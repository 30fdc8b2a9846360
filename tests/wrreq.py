"""The host side of ddp_rx's write-request stream (hw/rtl/ddp_rx.v, WR_REQ = 1).

A request, <prefix>_{addr, data, strb, last, valid, ready}: octet j of data
goes to addr + j where strobe j is set; addr is a multiple of half the data
width (a line); writes are posted (nothing answers them). WriteRequestRam
takes a request a clock, with ready low on the clocks its pause generator
says (set_pause_generator, as cocotbext-axi's channels), and writes the
strobed octets into a cocotbext-axi memory (the AxiRamWrite the AXI4 tests
use, so a test reads one memory whichever port the block has). It fails the
test on a request that is not line-aligned or writes an octet outside the
memory, and records the clock of every request taken (clocks, while
measure is set) and its last flag.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import RisingEdge

import tbutil


class WriteRequestError(AssertionError):
    pass


class WriteRequestRam:
    def __init__(self, dut, prefix: str, mem, clock=None):
        self.dut = dut
        self.clk = clock if clock is not None else dut.clk
        self.addr = getattr(dut, f"{prefix}_addr")
        self.data = getattr(dut, f"{prefix}_data")
        self.strb = getattr(dut, f"{prefix}_strb")
        self.last = getattr(dut, f"{prefix}_last")
        self.valid = getattr(dut, f"{prefix}_valid")
        self.ready = getattr(dut, f"{prefix}_ready")
        self.mem = mem
        self.octets = len(self.strb)
        self.line = self.octets // 2
        self.pause = None
        self.measure = False
        self.clocks: list[int] = []
        self.requests = 0
        self.bursts = 0
        self.cycle = 0
        self.ready.value = 1
        cocotb.start_soon(self._run())

    def set_pause_generator(self, gen):
        self.pause = gen

    async def _run(self):
        n = self.octets
        while True:
            await RisingEdge(self.clk)
            self.cycle += 1
            if self.valid.value and self.ready.value:
                addr, strb = int(self.addr.value), int(self.strb.value)
                data = int(self.data.value).to_bytes(n, "little")
                if addr % self.line:
                    raise WriteRequestError(f"write request at {addr:#x}: not a multiple of the line, {self.line}")
                for j, k in tbutil.strobe_runs(strb):
                    if addr + k > self.mem.size:
                        raise WriteRequestError(f"write request at {addr:#x} writes octets {addr + j:#x}.."
                                                f"{addr + k - 1:#x}, outside the {self.mem.size:#x}-octet memory")
                    self.mem.write(addr + j, data[j:k])
                self.requests += 1
                self.bursts += int(self.last.value)
                if self.measure:
                    self.clocks.append(self.cycle)
            self.ready.value = 0 if self.pause is not None and next(self.pause) else 1
