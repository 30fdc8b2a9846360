"""What the transmit testbenches (tests/ddp_tx, tests/rnic_tx) share about
RDMAP messages: the opcodes, the header sizes, ddp_tx's error codes named
by the Go stack's refusals (the oracle's rdmap_segments answers a refused
message with the Go error text; hw/rtl/ddp_tx.v's header lists the codes),
and the driver of ddp_tx's descriptor port, s_desc_*."""

from __future__ import annotations

import re
from collections import deque

import cocotb
from cocotb.triggers import Event, RisingEdge

# RDMAP opcodes (RFC 5040).
WRITE, READ_REQ, READ_RESP, SEND, SEND_INV, SEND_SE, SEND_SE_INV, TERMINATE = range(8)
TAGGED = (WRITE, READ_RESP)
INVALIDATES = (SEND_INV, SEND_SE_INV)
# DDP header octets, tagged and untagged (RFC 5041 4.2, 4.3), and a Read
# Request's whole segment (18 + 28, RFC 5040 4.4).
TAGGED_HDR, UNTAGGED_HDR, READ_REQ_SEG = 14, 18, 46

ERROR_CODES = [
    (re.compile(r"^rdmap: cannot send opcode "), 1),
    (re.compile(r"^rdmap: .* cannot carry an Invalidate STag$"), 2),
    (re.compile(r"^rdmap: malformed Terminate: "), 3),
    (re.compile(r"^rdmap: (RDMA Read Request|Terminate) of \d+ octets does not fit one segment"), 4),
    (re.compile(r"^ddp: MULPDU \d+ leaves no room for payload"), 5),
    (re.compile(r"^ddp: \d+ octets at TO 0x[0-9a-f]+ wrap the 64-bit TO$"), 6),
]


def error_code(refused: str) -> int:
    """ddp_tx's err_code for a message the Go stack refused with `refused`."""
    for pattern, code in ERROR_CODES:
        if pattern.search(refused):
            return code
    raise AssertionError(f"the Go stack refused with {refused!r}, which no error code names")


class DescSource:
    """Drives s_desc_*: one descriptor per handshake, optional idle clocks
    (pause_generator). A message gives its port values through desc(): a
    dict from port name (without the s_desc_ prefix) to value."""

    def __init__(self, dut):
        self.dut = dut
        self.queue: deque = deque()
        self.pause_generator = None
        self.wake = Event()
        dut.s_desc_valid.value = 0
        cocotb.start_soon(self._run())

    def send(self, msg) -> None:
        self.queue.append(msg)
        self.wake.set()

    def clear(self) -> None:
        self.queue.clear()

    def _drive(self, msg) -> None:
        for name, value in msg.desc().items():
            getattr(self.dut, "s_desc_" + name).value = value

    async def _run(self):
        dut = self.dut
        valid = False
        while True:
            if not valid and not self.queue:
                # Asleep while there is nothing to send: one coroutine
                # fewer to run every clock.
                self.wake.clear()
                await self.wake.wait()
            await RisingEdge(dut.clk)
            if dut.rst.value == 1:
                valid = False
            elif valid and dut.s_desc_ready.value == 1:
                valid = False  # taken at this edge
            if not valid:
                pause = self.pause_generator is not None and next(self.pause_generator)
                if self.queue and not pause:
                    self._drive(self.queue.popleft())
                    valid = True
            dut.s_desc_valid.value = 1 if valid else 0


def desc_fields(m, length: int) -> dict[str, int]:
    """The s_desc_* values every RDMAP message has (ddp_tx.v's descriptor),
    from a message with opcode, stag, to, msn, inv_stag, rr and mulpdu."""
    rr = m.rr or {}
    return {
        "opcode": m.opcode,
        "stag": m.stag,
        "to": m.to,
        "msn": m.msn,
        "inv_stag": m.inv_stag,
        "len": length,
        "rr_sink_stag": rr.get("sink_stag", 0),
        "rr_sink_to": rr.get("sink_to", 0),
        "rr_size": rr.get("size", 0),
        "rr_src_stag": rr.get("src_stag", 0),
        "rr_src_to": rr.get("src_to", 0),
        "mulpdu": m.mulpdu,
    }
