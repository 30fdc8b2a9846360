"""DDP/RDMAP transmit segmenter, hw/rtl/ddp_tx.v, checked against the Go stack.

Every expected segment comes from the Go oracle (cmd/rnic-oracle's
rdmap_segments op, through tests/oracle.py), which builds an rdmap.Message
from the descriptor's fields and cuts it with Message.AppendSegments; the
testbench never builds a DDP or RDMAP header itself. Where the Go stack
refuses a message, the block must send nothing for it, drop its payload
frame, and report the error code that names the check Go failed first
(ERROR_CODES maps Go's messages to the block's codes).

The cocotb tests, in order:
  corner_sweep        every opcode at lengths around the beat width and the
                      smallest MULPDUs, zero-length messages, the shortest
                      and longest Terminate, Read Requests at MULPDU 46.
  random_mix          random messages of all 8 opcodes (and unknown ones),
                      0..9200 octets, MULPDUs from the smallest legal one
                      up, random STag/TO/MSN, some refused; tvalid gaps on
                      both inputs, backpressure on the output.
  bad_descriptors     each error code in turn (Terminate checks both where
                      the length alone decides and where the payload does),
                      a refused message with a long frame to drop, each
                      followed by a good message that must come out whole.
  back_to_back_bench  back-to-back messages of 64..9000 octets at MULPDU
                      1460 and 9000, and one-beat segments, into an always
                      ready sink: output beats per clock (asserted 1.0) and
                      the latency from descriptor to first beat, written to
                      build/bench/ddp_tx-W<w>.json.
  reset_mid_message   reset halfway through a long message; nothing of it
                      comes out after, and fresh messages do.

Verilator runs hw/rtl/ddp_tx.v at every width, Icarus at 64 and 512 (every
width with HW_ALL_WIDTHS=1, tests/hdlsim.py); GHDL runs the
VHDL-2008 twin (hw/rtl/vhdl/ddp_tx.vhd) at GHDL_WIDTHS only, with fewer
random messages (GHDL_MESSAGES), as GHDL's mcode backend is slower; its
bench figures go to build/bench/ddp_tx-W<w>-ghdl.json, so that they never
stand in for the Verilog's.

Run with `.venv/bin/pytest tests/ddp_tx` (SIMS=..., WAVES=1, RANDOM_SEED=...
as in tests/hdlsim.py). DDP_TX_MESSAGES sets the number of random messages
in random_mix (default 100 under Verilator, 40 under Icarus and GHDL).
"""

from __future__ import annotations

import logging
import os
import random
import subprocess
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Event, FallingEdge, RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

import hdlsim
import oracle
import protocol
import tbutil
from rdmap_tx import (
    INVALIDATES, READ_REQ, READ_REQ_SEG, READ_RESP, SEND, SEND_INV, SEND_SE, SEND_SE_INV, TAGGED,
    TAGGED_HDR, TERMINATE, UNTAGGED_HDR, WRITE, DescSource, desc_fields, error_code,
)

CLK_PERIOD_NS = 4  # 250 MHz, the 512-bit build's target; any period works
# Icarus runs this testbench about 3 times slower than Verilator: fewer
# random messages there, so that the whole run stays near 3 minutes.
MESSAGES = os.environ.get("DDP_TX_MESSAGES")

@dataclass
class Msg:
    """One descriptor, its payload frame, and what the block must do with it."""

    opcode: int
    mulpdu: int
    payload: bytes = b""  # the frame (every opcode but the Read Request)
    rr: dict | None = None  # the Read Request's body
    stag: int = 0
    to: int = 0
    msn: int = 0
    inv_stag: int = 0
    length: int | None = None  # s_desc_len; None: len(payload) (a Read Request's is ignored)
    ctx: int = 0
    segments: list[bytes] = field(default_factory=list)
    code: int | None = None  # the error code expected, or None
    refused: str | None = None

    def desc_len(self) -> int:
        return len(self.payload) if self.length is None else self.length

    def has_frame(self) -> bool:
        return self.opcode != READ_REQ and self.desc_len() > 0

    def desc(self) -> dict[str, int]:
        return {**desc_fields(self, self.desc_len()), "ctx": self.ctx}

    def describe(self) -> str:
        return (
            f"opcode {self.opcode} len {self.desc_len()} mulpdu {self.mulpdu} ctx {self.ctx:#x} "
            f"stag {self.stag:#x} to {self.to:#x} msn {self.msn:#x} inv {self.inv_stag:#x}"
        )


class Monitor:
    """Handshakes counted in clock cycles: descriptors and output beats."""

    def __init__(self, dut):
        self.dut = dut
        self.cycle = 0
        self.desc_cycles: list[int] = []
        self.beat_cycles: list[int] = []
        self.first_beat_cycles: list[int] = []  # beats that start a frame
        cocotb.start_soon(self._run())

    async def _run(self):
        dut = self.dut
        first = True
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            if dut.s_desc_valid.value == 1 and dut.s_desc_ready.value == 1:
                self.desc_cycles.append(self.cycle)
            if dut.m_axis_tvalid.value == 1 and dut.m_axis_tready.value == 1:
                self.beat_cycles.append(self.cycle)
                if first:
                    self.first_beat_cycles.append(self.cycle)
                first = dut.m_axis_tlast.value == 1

    def clear(self):
        self.desc_cycles.clear()
        self.beat_cycles.clear()
        self.first_beat_cycles.clear()


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.m_axis_tdata)
        self.lanes = len(dut.m_axis_tkeep)
        expected = int(os.environ["DDP_TX_WIDTH"])
        assert self.width == expected, f"m_axis_tdata is {self.width} bits, DATA_W was {expected}"
        self.ctx_w = len(dut.s_desc_ctx)
        assert len(dut.m_axis_tuser) == self.ctx_w + 16
        self.rng = random.Random(random.getrandbits(64))  # seeded by cocotb
        self.icarus = cocotb.SIM_NAME.lower().startswith("icarus")
        self.oracle = oracle.shared()
        self.desc = DescSource(dut)
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        for model in (self.source, self.sink):
            model.log.setLevel(logging.ERROR)  # no line per frame, nor the frame a reset flushes
        # What must come out, in order: segments (with their message) and errors.
        self.exp_frames: deque[tuple[bytes, Msg, int]] = deque()
        self.exp_errors: deque[Msg] = deque()
        self.frames = 0
        self.errors = 0
        self.event = Event()
        self.backlog = 0  # octets in and out since the last drain, for its timeout

    async def start(self):
        self.dut.rst.value = 1
        self.dut.m_axis_tready.value = 0
        cocotb.start_soon(Clock(self.dut.clk, CLK_PERIOD_NS, units="ns").start())
        await self.reset()
        cocotb.start_soon(self._check_frames())
        cocotb.start_soon(self._check_errors())
        # Every port's handshake and format rules (tests/protocol.py).
        self.protocol = protocol.Monitor(self.dut, "ddp_tx")

    async def reset(self, cycles: int = 3):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, cycles)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    def idle_generator(self, p_idle: float):
        # Seeded now, not at its first pause (tbutil.pauses).
        rng = random.Random(self.rng.getrandbits(64))
        return (rng.random() < p_idle for _ in iter(int, 1))

    # --- expectations from the oracle -------------------------------------

    def expect(self, m: Msg) -> Msg:
        resp = self.oracle.rdmap_segments(
            m.opcode, m.mulpdu, payload=m.payload, rr=m.rr,
            stag=m.stag, to=m.to, msn=m.msn, inv_stag=m.inv_stag,
        )
        m.segments, m.refused = resp["segments"], resp["refused"]
        m.code = None if m.refused is None else error_code(m.refused)
        return m

    # --- driving and checking ---------------------------------------------

    def send(self, m: Msg) -> None:
        if m.segments == [] and m.refused is None:
            self.expect(m)
        if m.code is None:
            for i, seg in enumerate(m.segments):
                self.exp_frames.append((seg, m, i))
        else:
            self.exp_errors.append(m)
        self.desc.send(m)
        if m.has_frame():
            self.source.send_nowait(AxiStreamFrame(m.payload))
        self.backlog += len(m.payload) + sum(len(s) + self.lanes for s in m.segments) + self.lanes

    async def _check_frames(self):
        lanes = self.lanes
        while True:
            out = await self.sink.recv(compact=False)
            got_keep = list(out.tkeep)
            n = sum(got_keep)
            got = bytes(b for b, k in zip(out.tdata, got_keep) if k)
            assert self.exp_frames, f"segment {got.hex()} for no message"
            seg, m, i = self.exp_frames.popleft()
            where = f"segment {i} of {len(m.segments)} ({len(seg)} octets) of {m.describe()}"
            assert got_keep == [1] * n + [0] * (len(got_keep) - n) and len(got_keep) - n < lanes, (
                f"{where}: tkeep not a run from lane 0 of the first beat: {got_keep}"
            )
            assert got == seg, f"{where}:\n got {got.hex()}\nwant {seg.hex()}"
            users = set(out.tuser)
            want_user = (m.ctx << 16) | len(seg)
            assert users == {want_user}, f"{where}: tuser {[hex(u) for u in users]}, want {want_user:#x}"
            self.frames += 1
            self.event.set()

    async def _check_errors(self):
        dut = self.dut
        while True:
            # err_valid pulses for a clock per error, maybe several in a row.
            if dut.err_valid.value != 1:
                await RisingEdge(dut.err_valid)
            await RisingEdge(dut.clk)
            if dut.err_valid.value != 1:
                continue
            code, ctx = int(dut.err_code.value), int(dut.err_ctx.value)
            assert self.exp_errors, f"error {code} (ctx {ctx:#x}) for no refused message"
            m = self.exp_errors.popleft()
            assert (code, ctx) == (m.code, m.ctx), (
                f"error {code} ctx {ctx:#x}, want {m.code} ctx {m.ctx:#x} "
                f"for {m.describe()} (Go: {m.refused})"
            )
            self.errors += 1
            self.event.set()

    async def drain(self, timeout_cycles: int | None = None):
        """Wait until every segment and error expected so far has been
        checked, then a while longer: nothing else may come out."""
        if timeout_cycles is None:
            # Every octet in (refused frames included) and out, with room for
            # idle clocks on both inputs and the output.
            timeout_cycles = 2000 + 4 * (self.backlog // self.lanes)
        self.backlog = 0

        async def wait():
            while self.exp_frames or self.exp_errors:
                self.event.clear()
                await self.event.wait()

        try:
            await with_timeout(wait(), timeout_cycles * CLK_PERIOD_NS, "ns")
        except cocotb.result.SimTimeoutError:
            pending = [f"segment {i} of {m.describe()}" for _, m, i in list(self.exp_frames)[:3]]
            pending += [f"error {m.code} for {m.describe()}" for m in list(self.exp_errors)[:3]]
            raise AssertionError(
                f"timed out after {timeout_cycles} clocks ({self.frames} segments and "
                f"{self.errors} errors so far) waiting for: {pending}"
            ) from None
        await ClockCycles(self.dut.clk, 40)
        assert self.sink.empty() and not self.exp_frames and not self.exp_errors
        assert self.source.empty() and not self.desc.queue, "input left unread"

    # --- stimulus -----------------------------------------------------------

    def rand_len(self) -> int:
        r = self.rng.random()
        if r < 0.1:
            return 0
        if r < 0.45:
            return self.rng.randint(1, 256)
        if r < 0.75:
            return self.rng.randint(257, 2000)
        if r < 0.95:
            return self.rng.randint(2001, 9000)
        return self.rng.randint(9001, 9200)

    def rand_mulpdu(self, least: int, length: int) -> int:
        """From the smallest legal MULPDU up to jumbo frames (and beyond),
        but not so small that a long message makes thousands of segments."""
        rng = self.rng
        r = rng.random()
        if r < 0.25:
            mulpdu = rng.randint(least, least + 2 * self.lanes)
        elif r < 0.6:
            mulpdu = rng.randint(max(least, 64), 1500)
        elif r < 0.97:
            mulpdu = rng.randint(1500, 9200)
        else:
            mulpdu = rng.randint(9200, 65535)
        return max(mulpdu, least - 1 + -(-length // 80))

    def terminate_payload(self, well_formed: bool) -> bytes:
        """A Terminate payload (RFC 5040 4.8): Terminate Control, then the
        fields its M, D and R flags announce; or one broken in one way."""
        rng = self.rng
        m, d, r = (rng.random() < 0.5 for _ in range(3))
        layer = rng.randrange(3)
        t = rng.random() < 0.5 and not r  # R with D needs a Read Request's (untagged) header
        bad = None if well_formed else rng.choice(["layer", "short", "long", "rr_hdr", "junk"])
        if bad == "layer":
            layer = rng.randint(3, 15)
        if bad == "rr_hdr":
            d = r = True
            t = rng.random() < 0.5
        ctrl = (layer << 28 | rng.randrange(16) << 24 | rng.randrange(256) << 16
                | m << 15 | d << 14 | r << 13 | rng.getrandbits(13))
        body = ctrl.to_bytes(4, "big")
        if m:
            body += rng.randbytes(2)
        if d:
            hdr = bytearray(rng.randbytes(TAGGED_HDR if t else UNTAGGED_HDR))
            hdr[0] = (hdr[0] & 0x7F) | (0x80 if t else 0)
            if r:
                opcode = READ_REQ
                if bad == "rr_hdr" and not t:
                    opcode = rng.choice([o for o in range(16) if o != READ_REQ])
                hdr[1] = (hdr[1] & 0xF0) | opcode
            body += bytes(hdr)
        if r:
            body += rng.randbytes(28)
        if bad == "short":
            body = body[: rng.randrange(len(body))]
        elif bad == "long":
            body += rng.randbytes(rng.randint(1, 60))
        elif bad == "junk":
            body = rng.randbytes(rng.randint(0, 60))
        return body

    def rand_msg(self) -> Msg:
        """A random message of any opcode; a few are refused."""
        rng = self.rng
        r = rng.random()
        opcode = (
            WRITE if r < 0.22 else READ_RESP if r < 0.32 else SEND if r < 0.50
            else SEND_INV if r < 0.56 else SEND_SE if r < 0.62 else SEND_SE_INV if r < 0.68
            else READ_REQ if r < 0.79 else TERMINATE if r < 0.95 else rng.randint(8, 15)
        )
        m = Msg(opcode, 0, stag=rng.getrandbits(32), to=rng.getrandbits(64), msn=rng.getrandbits(32),
                ctx=rng.getrandbits(self.ctx_w))
        hdr = TAGGED_HDR if opcode in TAGGED else UNTAGGED_HDR
        if opcode in INVALIDATES:
            m.inv_stag = rng.getrandbits(32)
        elif rng.random() < 0.04:
            m.inv_stag = rng.getrandbits(32) | 1  # refused unless tagged
        if opcode == READ_REQ:
            m.rr = {"sink_stag": rng.getrandbits(32), "sink_to": rng.getrandbits(64),
                    "size": rng.getrandbits(32), "src_stag": rng.getrandbits(32),
                    "src_to": rng.getrandbits(64)}
            m.length = rng.choice([0, rng.getrandbits(32)])  # ignored
            m.mulpdu = rng.randint(19, 45) if rng.random() < 0.08 else self.rand_mulpdu(READ_REQ_SEG, 0)
        elif opcode == TERMINATE:
            m.payload = self.terminate_payload(rng.random() < 0.7)
            least = UNTAGGED_HDR + len(m.payload)
            m.mulpdu = rng.randint(0, least - 1) if rng.random() < 0.1 else self.rand_mulpdu(least, 0)
        else:
            m.payload = rng.randbytes(self.rand_len())
            if rng.random() < 0.04:
                m.mulpdu = rng.randint(0, hdr)  # no room for payload
            else:
                m.mulpdu = self.rand_mulpdu(hdr + 1, len(m.payload))
            if opcode in TAGGED and rng.random() < 0.05:
                m.to = 2**64 - rng.randint(0, len(m.payload) + 8)  # at the TO wrap
                m.to %= 2**64
        return m

    def data_msg(self, opcode: int, length: int, mulpdu: int) -> Msg:
        rng = self.rng
        m = Msg(opcode, mulpdu, payload=rng.randbytes(length), stag=rng.getrandbits(32),
                to=rng.getrandbits(63), msn=rng.getrandbits(32), ctx=rng.getrandbits(self.ctx_w))
        if opcode in INVALIDATES:
            m.inv_stag = rng.getrandbits(32)
        return m

    def rr_msg(self, mulpdu: int) -> Msg:
        rng = self.rng
        rr = {k: rng.getrandbits(64 if k.endswith("_to") else 32)
              for k in ("sink_stag", "sink_to", "size", "src_stag", "src_to")}
        return Msg(READ_REQ, mulpdu, rr=rr, msn=rng.getrandbits(32), length=0,
                   ctx=rng.getrandbits(self.ctx_w))


# --- tests -------------------------------------------------------------------


@cocotb.test()
async def corner_sweep(dut):
    """Lengths around the beat width at the smallest MULPDUs, every opcode,
    zero-length messages, Read Requests, the shortest and longest Terminate."""
    tb = TB(dut)
    await tb.start()
    tb.sink.set_pause_generator(tb.idle_generator(0.2))
    lanes, rng = tb.lanes, tb.rng
    msgs = []
    for opcode in (WRITE, SEND, SEND_SE_INV):
        hdr = TAGGED_HDR if opcode in TAGGED else UNTAGGED_HDR
        mulpdus = sorted({hdr + 1, hdr + 2, hdr + lanes - 1, lanes, lanes + 1, 2 * lanes,
                          hdr + lanes + 1, 128} - set(range(hdr + 1)))
        lengths = sorted({0, 1, 2, lanes - 1, lanes, lanes + 1, 2 * lanes - hdr, 2 * lanes + 3,
                          3 * lanes - 1, 5 * lanes + 7} - set(range(-lanes, 0)))
        for mulpdu in mulpdus:
            for length in lengths:
                if length <= 8 * (mulpdu - hdr):  # not hundreds of segments
                    msgs.append(tb.data_msg(opcode, length, mulpdu))
    for opcode in (READ_RESP, SEND_INV, SEND_SE, TERMINATE):
        msgs.append(tb.data_msg(opcode, 0, 200))  # a zero-length Terminate is refused
    for mulpdu in (46, 47, 46 + lanes, 9000):
        msgs.append(tb.rr_msg(mulpdu))
    shortest = bytes([0x10, 0x02, 0x05, 0x00])  # DDP layer, no M/D/R
    longest = (bytes([0x12, 0x01, 0xE0, 0x00]) + (46).to_bytes(2, "big")
               + bytes([0x41, 0x41]) + rng.randbytes(16) + rng.randbytes(28))  # M, D (Read Request), R
    for payload, mulpdu in ((shortest, 22), (shortest, 128), (longest, 70), (longest, 9000)):
        m = Msg(TERMINATE, mulpdu, payload=payload, msn=rng.getrandbits(32), ctx=rng.getrandbits(tb.ctx_w))
        msgs.append(m)
    for m in msgs:
        tb.expect(m)
    refused = [f"{m.describe()}: {m.refused}" for m in msgs if m.refused and (m.opcode != TERMINATE or m.payload)]
    assert not refused, f"corner cases refused: {refused}"
    for m in msgs:
        tb.send(m)
    await tb.drain()
    dut._log.info("%d messages, %d segments, %d errors", len(msgs), tb.frames, tb.errors)


@cocotb.test()
async def random_mix(dut):
    """Random messages of every opcode and size, random MULPDUs, a few
    refused, with tvalid gaps on both inputs and backpressure."""
    tb = TB(dut)
    await tb.start()
    tb.desc.pause_generator = tb.idle_generator(0.2)
    tb.source.set_pause_generator(tb.idle_generator(0.2))
    tb.sink.set_pause_generator(tb.idle_generator(0.3))
    n = int(MESSAGES) if MESSAGES else 40 if tb.icarus else 100
    msgs = [tb.rand_msg() for _ in range(max(10, n))]
    for m in msgs:
        tb.expect(m)
        tb.send(m)
    await tb.drain()
    refused = sum(m.code is not None for m in msgs)
    assert tb.errors == refused and tb.frames == sum(len(m.segments) for m in msgs)
    dut._log.info(
        "%d messages (%d octets, %d refused) in %d segments; opcodes %s",
        len(msgs), sum(len(m.payload) for m in msgs), refused, tb.frames,
        sorted({m.opcode for m in msgs}),
    )


@cocotb.test()
async def bad_descriptors(dut):
    """Every error code, each refused message followed by a good one, which
    must come out whole; refused frames dropped, with and without gaps."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    lanes = tb.lanes

    def good():
        return tb.data_msg(rng.choice([WRITE, SEND, READ_RESP]), rng.randint(1, 3 * lanes + 50), 128)

    bad = []
    for opcode in range(8, 16):
        bad.append((1, tb.data_msg(opcode, rng.choice([0, 5, 700]), 128)))
    for opcode in (READ_REQ, SEND, SEND_SE, TERMINATE):
        m = tb.rr_msg(128) if opcode == READ_REQ else tb.data_msg(opcode, 30, 128)
        if opcode == TERMINATE:
            m.payload = bytes([0x00, 0x00, 0x00, 0x00])
        m.inv_stag = rng.getrandbits(32) | 1
        bad.append((2, m))
    for payload in (b"", b"\x00\x00\x00", bytes(53), bytes(300)):  # length alone decides
        bad.append((3, Msg(TERMINATE, 128, payload=payload, ctx=rng.getrandbits(tb.ctx_w))))
    for payload in (bytes([0x30, 0, 0, 0]), bytes([0, 0, 0x80, 0]), bytes([0, 0, 0x60, 0]) + bytes(46),
                    bytes([0, 0, 0x40, 0]) + bytes([0x80]) + bytes(17)):  # the payload decides
        bad.append((3, Msg(TERMINATE, 128, payload=payload, ctx=rng.getrandbits(tb.ctx_w))))
    bad.append((3, Msg(TERMINATE, 10, payload=bytes([0x30, 0, 0, 0]), ctx=1)))  # format before fit
    bad.append((4, tb.rr_msg(45)))
    bad.append((4, tb.rr_msg(19)))
    bad.append((4, Msg(TERMINATE, 21, payload=bytes(4), ctx=rng.getrandbits(tb.ctx_w))))
    bad.append((4, Msg(TERMINATE, 39, payload=bytes([0, 0, 0x40, 0]) + bytes(18), ctx=2)))  # 40 octets
    for opcode, mulpdu in ((WRITE, 14), (READ_RESP, 0), (SEND, 18), (SEND_SE_INV, 15), (SEND_INV, 1)):
        bad.append((5, tb.data_msg(opcode, rng.choice([0, 40, 3000]), mulpdu)))
    for delta in (1, 2, 500):
        m = tb.data_msg(rng.choice(TAGGED), 500, 1000)
        m.to = 2**64 - 500 + delta - 1
        bad.append((6, m))
    ok = tb.data_msg(WRITE, 500, 1000)
    ok.to = 2**64 - 501  # the largest TO whose TO + length fits 64 bits
    bad.append((None, ok))

    for gaps in (False, True):
        if gaps:
            tb.desc.pause_generator = tb.idle_generator(0.3)
            tb.source.set_pause_generator(tb.idle_generator(0.3))
            tb.sink.set_pause_generator(tb.idle_generator(0.3))
        for want, m in bad:
            m = tb.expect(Msg(**{k: getattr(m, k) for k in ("opcode", "mulpdu", "payload", "rr", "stag",
                                                              "to", "msn", "inv_stag", "length", "ctx")}))
            assert m.code == want, f"{m.describe()}: Go says {m.refused!r}, want code {want}"
            tb.send(m)
            tb.send(tb.expect(good()))
        # Refused messages back to back, then good ones.
        for want, m in rng.sample(bad, len(bad)):
            tb.send(tb.expect(Msg(**{k: getattr(m, k) for k in (
                "opcode", "mulpdu", "payload", "rr", "stag", "to", "msn", "inv_stag", "length", "ctx")})))
        for _ in range(3):
            tb.send(tb.expect(good()))
        await tb.drain()
    dut._log.info("%d errors, %d segments", tb.errors, tb.frames)


@cocotb.test()
async def back_to_back_bench(dut):
    """Messages back to back into an always-ready sink: output beats per
    clock for 64..9000-octet messages at MULPDU 1460 and 9000, one-beat
    segments per clock, and the latency from descriptor to first beat."""
    tb = TB(dut)
    tb.rng = tbutil.bench_rng()
    await tb.start()
    mon = Monitor(dut)
    lanes = tb.lanes
    dut.m_axis_tready.value = 1  # the sink never pauses

    # Latency: an idle block, the payload waiting, then the descriptor.
    m = tb.expect(tb.data_msg(WRITE, 64, 1460))
    tb.source.send_nowait(AxiStreamFrame(m.payload))
    await ClockCycles(dut.clk, 20)
    for i, seg in enumerate(m.segments):
        tb.exp_frames.append((seg, m, i))
    tb.desc.send(m)
    await tb.drain()
    latency = mon.first_beat_cycles[0] - mon.desc_cycles[0]

    async def run(msgs: list[Msg]) -> float:
        for m in msgs:
            tb.expect(m)
        mon.clear()
        for m in msgs:
            tb.send(m)
        await tb.drain()
        beats = len(mon.beat_cycles)
        clocks = mon.beat_cycles[-1] - mon.beat_cycles[0] + 1
        assert beats == sum(-(-len(s) // lanes) for m in msgs for s in m.segments)
        return beats / clocks

    cases = []
    sizes: dict[str, float] = {}
    for mulpdu in (1460, 9000):
        for size in (64, 128, 256, 1460, 9000):
            beats = -(-(size + UNTAGGED_HDR) // lanes)
            count = max(4, -(-200 // beats))
            msgs = [tb.data_msg((WRITE, SEND)[i % 2], size, mulpdu) for i in range(count)]
            bpc = await run(msgs)
            cases.append({"size": size, "mulpdu": mulpdu, "messages": count, "beats_per_clock": bpc})
            sizes[str(size)] = min(bpc, sizes.get(str(size), bpc))
            dut._log.info("bench: %d-octet messages, MULPDU %d: %.3f beats per clock", size, mulpdu, bpc)
    # One-beat segments: small whole messages, and long messages cut by a
    # MULPDU no longer than a beat (not possible at 64 bits: a header alone
    # is two beats).
    one_beat = {}
    if lanes >= 16:
        msgs = [tb.data_msg((WRITE, READ_RESP)[i % 2], 0, 128) for i in range(100)]
        if lanes >= 32:
            msgs += [tb.data_msg(SEND, lanes - UNTAGGED_HDR, 128) for _ in range(50)]
        one_beat["messages"] = await run(msgs)
        msgs = [tb.data_msg(WRITE, 40 * (lanes - TAGGED_HDR), lanes) for _ in range(3)]
        one_beat["segments"] = await run(msgs)
        for what, bpc in one_beat.items():
            dut._log.info("bench: one-beat %s: %.3f per clock", what, bpc)
    # Figures "mulpdu<m>.<size>.beats_per_clock" and
    # "one_beat_<messages|segments>.beats_per_clock".
    higher = {f"mulpdu{c['mulpdu']}.{c['size']}.beats_per_clock": c["beats_per_clock"] for c in cases}
    higher.update({f"one_beat_{what}.beats_per_clock": bpc for what, bpc in one_beat.items()})
    hdlsim.write_bench("ddp_tx", tb.width, beats_per_clock=min(c["beats_per_clock"] for c in cases),
                       latency_clocks=latency, higher=higher,
                       details={"messages": {f"mulpdu{c['mulpdu']}.{c['size']}": c["messages"] for c in cases}})
    dut._log.info("bench: latency %d clocks, %s", latency, higher)
    for c in cases:
        assert c["beats_per_clock"] == 1.0, f"{c}"
    for what, bpc in one_beat.items():
        assert bpc == 1.0, f"one-beat {what}: {bpc} per clock"


@cocotb.test()
async def reset_mid_message(dut):
    """Reset halfway through a long message: nothing of it after the reset,
    and the block takes fresh messages."""
    tb = TB(dut)
    await tb.start()
    tb.send(tb.expect(tb.data_msg(SEND, 100, 128)))
    await tb.drain()
    long = tb.expect(tb.data_msg(WRITE, 9000, 9000))
    tb.desc.send(long)
    tb.source.send_nowait(AxiStreamFrame(long.payload))
    await ClockCycles(dut.clk, 30)
    assert dut.m_axis_tvalid.value == 1, "the long message is not coming out"
    tb.desc.clear()
    tb.source.clear()
    await tb.reset()
    assert not tb.exp_frames  # (the long message's were never expected)
    assert dut.m_axis_tvalid.value == 0 and dut.err_valid.value == 0
    await ClockCycles(dut.clk, 40)
    # The sink took beats of the long message; drop that partial frame.
    tb.sink.clear()
    assert dut.m_axis_tvalid.value == 0, "output after the reset"
    assert tb.frames == 1 and tb.errors == 0
    after = [tb.expect(tb.data_msg(SEND, tb.rng.randint(0, 500), 200)) for _ in range(3)]
    for m in after:
        tb.send(m)
    await tb.drain()
    assert tb.frames == 1 + sum(len(m.segments) for m in after)


# --- pytest ------------------------------------------------------------------

WIDTHS = (64, 128, 256, 512)


# GHDL (mcode) runs the VHDL twin at two widths, with less traffic.
GHDL_WIDTHS = (64, 512)
GHDL_MESSAGES = 40


def cases() -> list:
    return hdlsim.width_cases(WIDTHS, langs=("verilog", "vhdl"), sim_widths={"ghdl": GHDL_WIDTHS})


@pytest.mark.parametrize("sim,width", cases())
def test_ddp_tx(sim, width, oracle_path):
    env = {oracle.ENV_VAR: str(oracle_path), "DDP_TX_WIDTH": str(width)}
    if sim == "ghdl":
        env["DDP_TX_MESSAGES"] = os.environ.get("DDP_TX_MESSAGES", str(GHDL_MESSAGES))
    hdlsim.run(
        test="ddp_tx",
        sim=sim,
        tag=f"W{width}",
        toplevel="ddp_tx",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "ddp_tx.v"],
        vhdl_sources=[hdlsim.VHDL_DIR / "ddp_tx.vhd"],
        parameters={"DATA_W": width},
        extra_env=env,
    )


def test_oracle_client(oracle_path):
    """tests/oracle.py's rdmap_segments: segments decoded, a refusal
    returned (not raised), a bad request raised."""
    with oracle.Oracle(oracle_path) as o:
        resp = o.rdmap_segments(SEND, 128, payload=b"abc", msn=1)
        assert resp == {"segments": [bytes.fromhex("4143" + "00" * 11 + "01" + "00" * 4) + b"abc"],
                        "refused": None}
        rr = {"sink_stag": 1, "sink_to": 2, "size": 3, "src_stag": 4, "src_to": 5}
        assert len(o.rdmap_segments(READ_REQ, 46, rr=rr)["segments"][0]) == READ_REQ_SEG
        assert o.rdmap_segments(READ_REQ, 45, rr=rr)["refused"].endswith("does not fit one segment of MULPDU 45")
        assert error_code(o.rdmap_segments(9, 128)["refused"]) == 1
        with pytest.raises(oracle.OracleError, match='"rr" is for a Read Request'):
            o.rdmap_segments(SEND, 128, rr=rr)


@pytest.mark.skipif(
    not hdlsim.selected("icarus"),
    reason="Icarus not selected by SIMS",
)
def test_ddp_tx_rejects_illegal_width(tmp_path: Path):
    """DATA_W outside {64, 128, 256, 512} stops the simulation at time 0."""
    out = tmp_path / "ddp_tx.vvp"
    subprocess.run(
        ["iverilog", "-g2012", "-I", str(hdlsim.RTL_DIR), "-o", str(out), "-P", "ddp_tx.DATA_W=96", str(hdlsim.RTL_DIR / "ddp_tx.v")],
        check=True,
    )
    run = subprocess.run(["vvp", "-n", str(out)], capture_output=True, text=True)
    assert "DATA_W must be 64, 128, 256 or 512, got 96" in run.stdout + run.stderr
