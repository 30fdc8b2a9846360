"""The whole transmit datapath, hw/rtl/rnic_tx.v (ddp_tx -> mpa_tx or
tuf_tx), checked against the Go stack.

Every expected octet comes from the Go oracle (cmd/rnic-oracle), two ops
chained the way the Go stack itself sends: rdmap_segments cuts each RDMAP
message into DDP segments (iwarp/rdmap's Message.AppendSegments), and
mpa_fpdus frames each connection's segments, in order, from a new MPA
Framer (iwarp/mpa) with that connection's markers, CRC and marker base.
The FPDUs the block sends for a connection (its output frames with that
tuser, in order) must equal the oracle's, octet for octet. On a TUF
connection the second op is tuf_frames instead (iwarp/tuf's Sender, pack
false, the connection's key and EMSS: one FPDU a segment, the MULPDU at
most EMSS - 12 as the caller must give it). The testbench
builds no header, marker or CRC itself. Where the Go stack refuses a
message, the block must send nothing for it and report the error code of
the check Go failed first (ERROR_CODES) with the message's connection.

The cocotb tests, in order:
  random_mix          random messages of all eight opcodes, 0..9000 octets,
                      random MULPDUs, on several connections (markers on and
                      off, CRC on and off, random marker positions) and two
                      TUF connections, a few refused; idle clocks on the
                      descriptor and payload inputs, backpressure on the
                      output.
  errors              refused descriptors (codes 1, 2, 5) between good
                      messages on the same connection; under Verilator and
                      GHDL or at W >= 256 also a segment over 64768 octets
                      (mulpdu too large), which mpa_tx drops with its error 1.
  tuf_modes           TUF connections (keys, EMSS 1460, 9000, random) beside
                      an MPA one, random stalls; a connection switched MPA ->
                      TUF -> MPA by cfg writes between its messages while the
                      others send; the largest TUF segment (65531 octets) and
                      one of 65532, dropped with tuf_err 1.
  back_to_back_bench  Sends of 64, 128, 256, 1460 and 9000 octets back to
                      back, MULPDU 1460, markers and CRC on, always-ready
                      sink: output beats per clock (asserted 1.0), messages
                      and payload octets per clock, and the latency from the
                      descriptor's acceptance to the first FPDU octet out
                      (idle datapath), written to build/bench/rnic_tx-W<w>.json;
                      then TUF connections (64, 1460, 9000 octets, asserted
                      1.0 too) and MPA and TUF messages alternating (the
                      cost of mixing), both in the record's details.

Verilator runs hw/rtl/rnic_tx.v at every width, Icarus at 64 and 512 (every
width with HW_ALL_WIDTHS=1, tests/hdlsim.py); GHDL runs the
VHDL-2008 twin (hw/rtl/vhdl/rnic_tx.vhd, with the ddp_tx and mpa_tx twins)
at GHDL_WIDTHS only, with fewer random messages (GHDL_MESSAGES), as GHDL's
mcode backend is slower; its bench figures go to
build/bench/rnic_tx-W<w>-ghdl.json, so that they never stand in for the
Verilog's.

Run with `.venv/bin/pytest tests/rnic_tx` (SIMS=..., WAVES=1, RANDOM_SEED=...
as in tests/hdlsim.py). RNIC_TX_MESSAGES sets the number of messages in
random_mix (default 60 under Verilator, 24 under Icarus and GHDL).
"""

from __future__ import annotations

import logging
import os
import random
from collections import deque
from dataclasses import dataclass, field

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
    INVALIDATES, READ_REQ, READ_REQ_SEG, READ_RESP, SEND, SEND_INV, SEND_SE, TAGGED,
    TAGGED_HDR, TERMINATE, UNTAGGED_HDR, WRITE, DescSource, desc_fields, error_code,
)

CLK_PERIOD_NS = 4
CONN_W = 10
MESSAGES = os.environ.get("RNIC_TX_MESSAGES")
BENCH_SIZES = (64, 128, 256, 1460, 9000)
BENCH_MULPDU = 1460
TUF_BENCH_SIZES = (64, 1460, 9000)
MAX_ULPDU = 64768
TUF_MAX_ULPDU = 65531  # tuf_tx's largest (its 16-bit Length counts the trailer too)
TUF_EMSS_MAX = TUF_MAX_ULPDU + 12  # tuf.MaxULPDU(EMSS) = EMSS - 12

@dataclass
class Msg:
    """One descriptor, its payload frame, and its segments from the oracle."""

    opcode: int
    conn: int
    mulpdu: int
    payload: bytes = b""
    rr: dict | None = None
    stag: int = 0
    to: int = 0
    msn: int = 0
    inv_stag: int = 0
    segments: list[bytes] = field(default_factory=list)
    code: int | None = None
    refused: str | None = None
    tuf: bool = False  # its connection's mode when it was framed

    def limit(self) -> int:
        """The longest segment the connection's framer sends (longer ones
        are dropped with its error 1)."""
        return TUF_MAX_ULPDU if self.tuf else MAX_ULPDU

    def has_frame(self) -> bool:
        return self.opcode != READ_REQ and len(self.payload) > 0

    def desc(self) -> dict[str, int]:
        return {**desc_fields(self, len(self.payload)), "conn": self.conn}

    def describe(self) -> str:
        return (f"opcode {self.opcode} conn {self.conn} len {len(self.payload)} mulpdu {self.mulpdu} "
                f"stag {self.stag:#x} to {self.to:#x} msn {self.msn:#x} inv {self.inv_stag:#x}")


class Conn:
    """One connection's transmit half: its mode (MPA, or TUF with its key and
    EMSS), its MPA flags, marker base and position, and the FPDUs the oracle
    framed for its segments."""

    def __init__(self, conn: int, markers: bool, crc: bool, base: int, prefix: list[bytes]):
        self.conn, self.markers, self.crc, self.base = conn, markers, crc, base
        self.tuf, self.key, self.emss = False, 0, TUF_EMSS_MAX
        # ULPDUs framed before the block takes over (not sent here): they
        # put the connection at a random place in the marker grid.
        self.prefix = prefix
        self.segments: list[bytes] = []  # what the block sends, in order
        self.expected: deque[bytes] = deque()
        self.pos = 0
        self.sent = 0

    def frame(self, o: oracle.Oracle) -> None:
        """Ask the oracle for the FPDUs of the segments added since the
        last call (the stream continues where it was). In TUF mode, one FPDU
        a segment from iwarp/tuf's Sender without packing, with the
        connection's key and EMSS; the MPA stream then stays where it was."""
        if self.tuf:
            if self.segments:
                segs = o.request("tuf_frames", key=self.key, emss=self.emss, pack=False,
                                 ulpdus=[u.hex() for u in self.segments])["segments"]
                assert len(segs) == len(self.segments), (
                    f"the model cut {len(self.segments)} ULPDUs into {len(segs)} TCP segments "
                    f"(EMSS {self.emss}): a MULPDU over EMSS - 12")
                self.expected.extend(bytes.fromhex(w) for w in segs)
            self.segments = []
            return
        fpdus = o.mpa_fpdus(self.prefix + self.segments, markers=self.markers, base=self.base, crc=self.crc)
        new = fpdus[len(self.prefix):]
        # pos: where the next FPDU the block sends starts (cfg_pos). With
        # FPDUs framed and not sent yet it is the first of those, set when
        # they were framed.
        if not self.expected:
            if new:
                self.pos = ((new[0]["seq"] - self.base) % 512) // 4
            elif self.prefix:
                nxt = o.mpa_fpdus(self.prefix + [b"\0"], markers=self.markers, base=self.base, crc=self.crc)[-1]
                self.pos = ((nxt["seq"] - self.base) % 512) // 4
        self.expected.extend(f["wire"] for f in new)
        self.prefix += self.segments
        self.segments = []


class Monitor:
    """Handshakes in clock cycles: descriptors, payload and output beats."""

    def __init__(self, dut):
        self.dut = dut
        self.cycle = 0
        self.desc_cycles: list[int] = []
        self.in_cycles: list[int] = []
        self.out_cycles: list[int] = []
        self.out_first: list[int] = []
        self.running = True
        cocotb.start_soon(self._run())

    async def _run(self):
        dut = self.dut
        first = True
        while self.running:
            await RisingEdge(dut.clk)
            self.cycle += 1
            if dut.s_desc_valid.value == 1 and dut.s_desc_ready.value == 1:
                self.desc_cycles.append(self.cycle)
            if dut.s_axis_tvalid.value == 1 and dut.s_axis_tready.value == 1:
                self.in_cycles.append(self.cycle)
            if dut.m_axis_tvalid.value == 1 and dut.m_axis_tready.value == 1:
                self.out_cycles.append(self.cycle)
                if first:
                    self.out_first.append(self.cycle)
                first = dut.m_axis_tlast.value == 1


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.m_axis_tdata)
        self.lanes = self.width // 8
        assert self.width == int(os.environ["RNIC_TX_WIDTH"])
        assert len(dut.m_axis_tuser) == CONN_W
        self.rng = random.Random(random.getrandbits(64))  # seeded by cocotb
        # The stalls' seeds, apart from the traffic's: random_mix draws its
        # messages first, fewer of them on GHDL (tests/transactions.py).
        self.stall_rng = random.Random(self.rng.getrandbits(64))
        self.icarus = cocotb.SIM_NAME.lower().startswith("icarus")
        self.oracle = oracle.shared()
        self.desc = DescSource(dut)
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        for model in (self.source, self.sink):
            model.log.setLevel(logging.WARNING)
        self.conns: dict[int, Conn] = {}
        self.exp_errors: deque[Msg] = deque()
        self.exp_mpa_errors = 0
        self.mpa_errors: list[int] = []
        self.exp_tuf_errors = 0
        self.tuf_errors: list[int] = []
        self.fpdus = 0
        self.errors = 0
        self.event = Event()
        self.backlog = 0

    async def start(self):
        dut = self.dut
        dut.rst.value = 1
        dut.cfg_valid.value = 0
        dut.m_axis_tready.value = 0
        cocotb.start_soon(Clock(dut.clk, CLK_PERIOD_NS, units="ns").start())
        await ClockCycles(dut.clk, 3)
        await FallingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        cocotb.start_soon(self._check_fpdus())
        cocotb.start_soon(self._check_ddp_errors())
        cocotb.start_soon(self._check_mpa_errors())
        cocotb.start_soon(self._check_tuf_errors())
        # Every port's handshake and format rules (tests/protocol.py).
        self.protocol = protocol.Monitor(self.dut, "rnic_tx")

    def idle(self, p: float):
        # Seeded now, not at its first pause (tbutil.pauses).
        rng = random.Random(self.stall_rng.getrandbits(64))
        return (rng.random() < p for _ in iter(int, 1))

    # --- connections and expectations ---------------------------------------

    def new_conn(self, conn: int, markers: bool, crc: bool) -> Conn:
        rng = self.rng
        prefix = [rng.randbytes(rng.randint(1, 700)) for _ in range(rng.randrange(4))]
        c = Conn(conn, markers, crc, rng.getrandbits(32), prefix)
        self.conns[conn] = c
        return c

    def new_tuf_conn(self, conn: int, emss: int | None = None) -> Conn:
        """A connection in TUF mode with a random key and EMSS (its MPA
        flags random too: the block must ignore them)."""
        rng = self.rng
        c = self.new_conn(conn, rng.random() < 0.5, rng.random() < 0.5)
        c.tuf, c.key = True, rng.getrandbits(48)
        c.emss = emss or rng.choice((536, 1460, 9000, rng.randint(300, 9000)))
        return c

    def expect(self, m: Msg) -> Msg:
        resp = self.oracle.rdmap_segments(
            m.opcode, m.mulpdu, payload=m.payload, rr=m.rr,
            stag=m.stag, to=m.to, msn=m.msn, inv_stag=m.inv_stag,
        )
        m.segments, m.refused = resp["segments"], resp["refused"]
        m.code = None if m.refused is None else error_code(m.refused)
        m.tuf = self.conns[m.conn].tuf
        if m.code is None:
            self.conns[m.conn].segments += [s for s in m.segments if len(s) <= m.limit()]
        return m

    async def configure(self, c: Conn):
        """Frame the connection's segments so far, and write its marker
        position and flags through the cfg port."""
        c.frame(self.oracle)
        dut = self.dut
        await FallingEdge(dut.clk)
        dut.cfg_conn.value = c.conn
        dut.cfg_pos.value = c.pos
        dut.cfg_mrk_en.value = int(c.markers)
        dut.cfg_crc_en.value = int(c.crc)
        dut.cfg_tuf.value = int(c.tuf)
        dut.cfg_key.value = c.key
        dut.cfg_valid.value = 1
        while True:
            await RisingEdge(dut.clk)
            if dut.cfg_ready.value == 1:
                break
        await FallingEdge(dut.clk)
        dut.cfg_valid.value = 0

    # --- driving and checking -----------------------------------------------

    def send(self, m: Msg) -> None:
        if m.code is not None:
            self.exp_errors.append(m)
        dropped = sum(len(s) > m.limit() for s in m.segments) if m.code is None else 0
        if m.tuf:
            self.exp_tuf_errors += dropped
        else:
            self.exp_mpa_errors += dropped
        self.desc.send(m)
        if m.has_frame():
            self.source.send_nowait(AxiStreamFrame(m.payload))
        self.backlog += len(m.payload) + sum(len(s) + 2 * self.lanes for s in m.segments) + self.lanes

    def pending(self) -> int:
        return (sum(len(c.expected) for c in self.conns.values()) + len(self.exp_errors)
                + self.exp_mpa_errors - len(self.mpa_errors) + self.exp_tuf_errors - len(self.tuf_errors))

    async def _check_fpdus(self):
        lanes = self.lanes
        while True:
            out = await self.sink.recv(compact=False)
            keep = list(out.tkeep)
            n = sum(keep)
            got = bytes(b for b, k in zip(out.tdata, keep) if k)
            users = set(out.tuser)
            assert len(users) == 1, f"tuser changes within an FPDU: {users}"
            conn = users.pop()
            c = self.conns.get(conn)
            assert c is not None, f"FPDU on connection {conn}, which sent nothing: {got[:64].hex()}"
            assert c.expected, f"connection {conn}: FPDU beyond the oracle's: {got[:64].hex()}"
            want = c.expected.popleft()
            mode = f"TUF, key {c.key:#014x}" if c.tuf else f"markers {c.markers}, crc {c.crc}"
            where = f"connection {conn} FPDU {c.sent} ({len(want)} octets, {mode})"
            assert keep == [1] * n + [0] * (len(keep) - n) and len(keep) - n < lanes, (
                f"{where}: tkeep not a run from lane 0 of the first beat")
            if got != want:
                diff = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), None)
                raise AssertionError(
                    f"{where}: {len(got)} octets, first difference at {diff}\n"
                    f" got  {got[:96].hex()}\n want {want[:96].hex()}")
            c.sent += 1
            self.fpdus += 1
            self.event.set()

    async def _check_ddp_errors(self):
        dut = self.dut
        while True:
            if dut.ddp_err_valid.value != 1:
                await RisingEdge(dut.ddp_err_valid)
            await RisingEdge(dut.clk)
            if dut.ddp_err_valid.value != 1:
                continue
            code, conn = int(dut.ddp_err_code.value), int(dut.ddp_err_conn.value)
            assert self.exp_errors, f"ddp error {code} (conn {conn}) for no refused message"
            m = self.exp_errors.popleft()
            assert (code, conn) == (m.code, m.conn), (
                f"ddp error {code} conn {conn}, want {m.code} conn {m.conn} for {m.describe()} "
                f"(Go: {m.refused})")
            self.errors += 1
            self.event.set()

    async def _check_mpa_errors(self):
        dut = self.dut
        while True:
            if dut.mpa_err_valid.value != 1:
                await RisingEdge(dut.mpa_err_valid)
            await RisingEdge(dut.clk)
            if dut.mpa_err_valid.value != 1:
                continue
            self.mpa_errors.append(int(dut.mpa_err_code.value))
            assert len(self.mpa_errors) <= self.exp_mpa_errors, f"mpa errors {self.mpa_errors}"
            self.event.set()

    async def _check_tuf_errors(self):
        dut = self.dut
        while True:
            if dut.tuf_err_valid.value != 1:
                await RisingEdge(dut.tuf_err_valid)
            await RisingEdge(dut.clk)
            if dut.tuf_err_valid.value != 1:
                continue
            self.tuf_errors.append(int(dut.tuf_err_code.value))
            assert len(self.tuf_errors) <= self.exp_tuf_errors, f"tuf errors {self.tuf_errors}"
            self.event.set()

    async def quiet(self, c: Conn):
        """Wait until every descriptor of the connection has been taken and
        every FPDU expected on it has gone out (nothing of it in flight: it
        may be configured again)."""
        while c.expected or any(m.conn == c.conn for m in self.desc.queue):
            await RisingEdge(self.dut.clk)

    async def drain(self):
        """Wait until every FPDU and error expected so far has been seen,
        then a while longer: nothing else may come out."""
        timeout_cycles = 2000 + 4 * (self.backlog // self.lanes)
        self.backlog = 0

        async def wait():
            while self.pending():
                self.event.clear()
                await self.event.wait()

        try:
            await with_timeout(wait(), timeout_cycles * CLK_PERIOD_NS, "ns")
        except cocotb.result.SimTimeoutError:
            left = {c.conn: len(c.expected) for c in self.conns.values() if c.expected}
            raise AssertionError(
                f"timed out after {timeout_cycles} clocks ({self.fpdus} FPDUs, {self.errors} errors "
                f"so far); FPDUs still due per connection {left}, errors due {len(self.exp_errors)}, "
                f"mpa errors {self.mpa_errors} of {self.exp_mpa_errors}, "
                f"tuf errors {self.tuf_errors} of {self.exp_tuf_errors}") from None
        await ClockCycles(self.dut.clk, 40)
        assert self.sink.empty() and not self.pending()
        assert all(x == 1 for x in self.mpa_errors), f"mpa errors {self.mpa_errors}"
        assert all(x == 1 for x in self.tuf_errors), f"tuf errors {self.tuf_errors}"
        assert self.source.empty() and not self.desc.queue, "input left unread"

    # --- stimulus -------------------------------------------------------------

    def rand_len(self) -> int:
        r = self.rng.random()
        if r < 0.1:
            return 0
        if r < 0.45:
            return self.rng.randint(1, 256)
        if r < 0.75:
            return self.rng.randint(257, 2000)
        return self.rng.randint(2001, 9000)

    def rand_mulpdu(self, least: int, length: int) -> int:
        """From the smallest legal MULPDU up to MPA's largest ULPDU, but not
        so small that a long message makes hundreds of segments."""
        rng = self.rng
        r = rng.random()
        if r < 0.25:
            mulpdu = rng.randint(least, least + 2 * self.lanes)
        elif r < 0.6:
            mulpdu = rng.randint(max(least, 64), 1500)
        elif r < 0.95:
            mulpdu = rng.randint(1500, 9200)
        else:
            mulpdu = rng.randint(9200, MAX_ULPDU)
        return max(mulpdu, least - 1 + -(-length // 40))

    def terminate_payload(self) -> bytes:
        """A well-formed Terminate payload (RFC 5040 4.8): Terminate
        Control, then the fields its M, D and R flags announce."""
        rng = self.rng
        m, d, r = (rng.random() < 0.5 for _ in range(3))
        t = rng.random() < 0.5 and not r  # R with D: a Read Request's (untagged) header
        ctrl = (rng.randrange(3) << 28 | rng.randrange(16) << 24 | rng.randrange(256) << 16
                | m << 15 | d << 14 | r << 13 | rng.getrandbits(13))
        body = ctrl.to_bytes(4, "big")
        if m:
            body += rng.randbytes(2)
        if d:
            hdr = bytearray(rng.randbytes(TAGGED_HDR if t else UNTAGGED_HDR))
            hdr[0] = (hdr[0] & 0x7F) | (0x80 if t else 0)
            if r:
                hdr[1] = (hdr[1] & 0xF0) | READ_REQ
            body += bytes(hdr)
        if r:
            body += rng.randbytes(28)
        return body

    def rand_msg(self, conn: int) -> Msg:
        """A random message of any of the eight opcodes; a few refused."""
        rng = self.rng
        opcode = rng.choice(range(8))
        m = Msg(opcode, conn, 0, stag=rng.getrandbits(32), to=rng.getrandbits(63),
                msn=rng.getrandbits(32))
        hdr = TAGGED_HDR if opcode in TAGGED else UNTAGGED_HDR
        if opcode in INVALIDATES:
            m.inv_stag = rng.getrandbits(32)
        if opcode == READ_REQ:
            m.rr = {k: rng.getrandbits(64 if k.endswith("_to") else 32)
                    for k in ("sink_stag", "sink_to", "size", "src_stag", "src_to")}
            m.mulpdu = self.rand_mulpdu(READ_REQ_SEG, 0)
        elif opcode == TERMINATE:
            m.payload = self.terminate_payload()
            m.mulpdu = self.rand_mulpdu(UNTAGGED_HDR + len(m.payload), 0)
        else:
            m.payload = rng.randbytes(self.rand_len())
            m.mulpdu = self.rand_mulpdu(hdr + 1, len(m.payload))
        r = rng.random()
        if r < 0.02 and opcode != READ_REQ:
            m.opcode = rng.randint(8, 15)  # refused, code 1
        elif r < 0.04 and opcode in (SEND, SEND_SE):
            m.inv_stag = rng.getrandbits(32) | 1  # refused, code 2
        return m

    def tuf_mulpdu(self, m: Msg) -> Msg:
        """On a TUF connection the caller gives a MULPDU of at most EMSS - 12
        (tuf.MaxULPDU): each segment one FPDU, one TCP segment."""
        c = self.conns[m.conn]
        if c.tuf:
            m.mulpdu = min(m.mulpdu, c.emss - 12)
        return m

    def send_msg(self, opcode: int, conn: int, length: int, mulpdu: int) -> Msg:
        rng = self.rng
        m = Msg(opcode, conn, mulpdu, payload=rng.randbytes(length), stag=rng.getrandbits(32),
                to=rng.getrandbits(63), msn=rng.getrandbits(32))
        if opcode in INVALIDATES:
            m.inv_stag = rng.getrandbits(32)
        return m


# --- tests -------------------------------------------------------------------


@cocotb.test()
async def random_mix(dut):
    """Random messages on several connections, interleaved at message
    boundaries, with idle input clocks and a sink that pauses."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    n = int(MESSAGES) if MESSAGES else 24 if tb.icarus else 60
    ids = rng.sample(range(1 << CONN_W), 6)
    flags = [(True, True), (True, False), (False, True), (rng.random() < 0.5, rng.random() < 0.5)]
    conns = [tb.new_conn(cid, mrk, crc) for cid, (mrk, crc) in zip(ids, flags)]
    # Two TUF connections beside the four MPA ones.
    conns += [tb.new_tuf_conn(cid) for cid in ids[4:]]
    msgs = [tb.expect(tb.tuf_mulpdu(tb.rand_msg(rng.choice(ids)))) for _ in range(n)]
    # The eight opcodes at least once.
    msgs += [tb.expect(tb.send_msg(op, ids[0], rng.randint(0, 300), 128)) for op in (WRITE, READ_RESP, SEND_INV)]
    for c in conns:
        await tb.configure(c)
    tb.desc.pause_generator = tb.idle(0.2)
    tb.source.set_pause_generator(tb.idle(0.2))
    tb.sink.set_pause_generator(tb.idle(0.3))
    for m in msgs:
        tb.send(m)
    await tb.drain()
    refused = sum(m.code is not None for m in msgs)
    assert tb.errors == refused and not tb.mpa_errors
    dut._log.info(
        "%d messages (%d octets, %d refused, opcodes %s) in %d FPDUs on %d connections "
        "(markers %s, crc %s, positions %s; TUF %s)",
        len(msgs), sum(len(m.payload) for m in msgs), refused, sorted({m.opcode for m in msgs}),
        tb.fpdus, len(conns), [c.markers for c in conns], [c.crc for c in conns], [c.pos for c in conns],
        [c.tuf for c in conns],
    )


@cocotb.test()
async def errors(dut):
    """Refused descriptors between good messages of the same connection:
    nothing goes out for them, their payload is dropped, the error names the
    connection, and the connection's stream carries on unbroken."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    c = tb.new_conn(0x2A5, True, True)
    other = tb.new_conn(3, True, False)
    bad = [
        tb.send_msg(9, c.conn, 700, 1000),                     # code 1
        tb.send_msg(SEND, c.conn, 40, 128),                    # code 2
        tb.send_msg(WRITE, other.conn, 3000, TAGGED_HDR),      # code 5
    ]
    bad[1].inv_stag = 0x1234
    msgs = []
    for m in bad:
        msgs += [tb.send_msg(SEND, c.conn, rng.randint(0, 600), 256), m,
                 tb.send_msg(WRITE, other.conn, rng.randint(1, 600), 512)]
    big = tb.width >= 256 or not tb.icarus
    if big:
        # A segment of 18 + 64760 octets: ddp_tx sends it, mpa_tx drops it
        # (longer than MPA's 64768) and says so.
        msgs += [tb.send_msg(SEND, c.conn, 64760, 65000), tb.send_msg(SEND, c.conn, 100, 256)]
    for m in msgs:
        tb.expect(m)
    assert [m.code for m in bad] == [1, 2, 5], [m.refused for m in bad]
    await tb.configure(c)
    await tb.configure(other)
    for m in msgs:
        tb.send(m)
    await tb.drain()
    assert tb.errors == 3 and tb.mpa_errors == ([1] if big else [])
    assert not c.expected and not other.expected


@cocotb.test()
async def tuf_modes(dut):
    """TUF connections (different keys and EMSS) beside MPA ones, random
    stalls; one connection switched from MPA to TUF and back by cfg writes
    between its messages while the others' traffic flows; the largest TUF
    segment (65531 octets, over MPA's 64768) and one longer, which tuf_tx
    drops with its error 1 while the stream around it goes on."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    tufs = [tb.new_tuf_conn(0x101, 1460), tb.new_tuf_conn(0x3FF, 9000), tb.new_tuf_conn(7)]
    mpa = tb.new_conn(0x0F0, True, True)
    sw = tb.new_conn(0x155, rng.random() < 0.5, True)
    steady = tufs + [mpa]
    tb.desc.pause_generator = tb.idle(0.2)
    tb.source.set_pause_generator(tb.idle(0.2))
    tb.sink.set_pause_generator(tb.idle(0.3))
    per_phase = 6  # the same on every simulator: the twins' transactions are compared

    def batch(conns: list[Conn]) -> list[Msg]:
        msgs = [tb.expect(tb.tuf_mulpdu(tb.rand_msg(rng.choice(conns).conn))) for _ in range(per_phase)]
        for c in conns:
            c.frame(tb.oracle)
        return msgs

    # Phase 1: sw in MPA mode.
    first = [tb.expect(tb.send_msg(WRITE, sw.conn, rng.randint(1, 3000), rng.randint(200, 1400)))]
    first += batch(steady + [sw])
    for c in steady + [sw]:
        await tb.configure(c)
    for m in first:
        tb.send(m)
    modes = [sw.tuf]
    sent = []  # sw's FPDUs out at the end of each mode
    for _ in range(2):
        # The others keep sending while sw is quiet, then sw changes mode
        # (a cfg write with its new mode and key) and sends again.
        others = batch(steady)
        for m in others:
            tb.send(m)
        await tb.quiet(sw)
        sent.append(sw.sent)
        sw.tuf = not sw.tuf
        sw.key, sw.emss = rng.getrandbits(48), rng.choice((1460, 4096))
        modes.append(sw.tuf)
        msgs = [tb.expect(tb.tuf_mulpdu(tb.send_msg(rng.choice((SEND, WRITE)), sw.conn, rng.randint(1, 5000),
                                                    rng.randint(200, 1400)))) for _ in range(3)]
        await tb.configure(sw)
        for m in msgs + batch(steady + [sw]):
            tb.send(m)
    assert modes == [False, True, False]
    await tb.drain()
    sent.append(sw.sent)
    # FPDUs of sw went out in each of its three modes (MPA, TUF, MPA).
    assert 0 < sent[0] < sent[1] < sent[2], sent
    # The largest TUF segment: 18 + 65513 octets; then one of 65532, which
    # tuf_tx drops (error 1); both at W >= 256 or under Verilator and GHDL
    # (Icarus at W=64 takes long over them).
    if tb.width >= 256 or not tb.icarus:
        big = tufs[1]
        big.emss = TUF_EMSS_MAX
        msgs = [tb.send_msg(SEND, big.conn, TUF_MAX_ULPDU - UNTAGGED_HDR, TUF_MAX_ULPDU),
                tb.send_msg(WRITE, mpa.conn, 300, 256),
                tb.send_msg(SEND, big.conn, TUF_MAX_ULPDU + 1 - UNTAGGED_HDR, 65535),
                tb.send_msg(SEND, big.conn, 100, 1000)]
        for m in msgs:
            tb.expect(m)
        assert [len(s) for s in msgs[0].segments] == [TUF_MAX_ULPDU]
        await tb.configure(big)
        await tb.configure(mpa)
        for m in msgs:
            tb.send(m)
        await tb.drain()
        assert tb.tuf_errors == [1]
    else:
        assert not tb.tuf_errors
    assert not tb.mpa_errors
    assert all(not c.expected for c in tb.conns.values())


@cocotb.test()
async def back_to_back_bench(dut):
    """Sends of each size back to back into an always-ready sink, MULPDU
    1460, markers and CRC on: output beats per clock, and the latency from
    descriptor to first FPDU octet. Then the same on a TUF connection (EMSS
    1472, so MULPDU 1460 as well) for three sizes, and messages alternating
    between an MPA and a TUF connection: what mixing the two costs."""
    tb = TB(dut)
    tb.rng = tbutil.bench_rng()
    await tb.start()
    dut.m_axis_tready.value = 1

    async def run(conns: list[Conn], size: int) -> dict:
        beats_per_msg = -(-(size + 40) // tb.lanes)
        count = max(6, min(120, -(-400 // beats_per_msg)))
        if tb.icarus:
            count = max(6, count // 2)
        msgs = [tb.expect(tb.send_msg(SEND if j % 2 else WRITE, conns[j % len(conns)].conn, size, BENCH_MULPDU))
                for j in range(count)]
        for c in conns:
            await tb.configure(c)
        await ClockCycles(dut.clk, 10)
        mon = Monitor(dut)
        for m in msgs:
            tb.send(m)
        await tb.drain()
        mon.running = False
        # Steady state: from the first output beat to the last input beat
        # (after it the burst drains, its last FPDUs waiting for their CRCs
        # with nothing behind them).
        end = mon.in_cycles[-1]
        clocks = end - mon.out_first[0]
        beats = sum(1 for x in mon.out_cycles if x < end)
        # Over the whole burst, first output beat to last.
        burst = mon.out_cycles[-1] - mon.out_first[0] + 1
        return {
            "beats_per_clock": beats / clocks,
            "messages_per_clock": count / burst,
            "payload_octets_per_clock": size * count / burst,
            "latency_clocks": mon.out_first[0] - mon.desc_cycles[0],
            "messages": count,
            "fpdus": len(mon.out_first),
        }

    sizes = {}
    for i, size in enumerate(BENCH_SIZES):
        sizes[str(size)] = await run([tb.new_conn(100 + i, True, True)], size)
        dut._log.info("size %d: %s", size, sizes[str(size)])
    tuf = {}
    for i, size in enumerate(TUF_BENCH_SIZES):
        tuf[str(size)] = await run([tb.new_tuf_conn(200 + i, BENCH_MULPDU + 12)], size)
        dut._log.info("TUF, size %d: %s", size, tuf[str(size)])
    mixed = {}
    for i, size in enumerate(TUF_BENCH_SIZES):
        pair = [tb.new_conn(300 + i, True, True), tb.new_tuf_conn(400 + i, BENCH_MULPDU + 12)]
        mixed[str(size)] = await run(pair, size)
        dut._log.info("MPA and TUF alternating, size %d: %s", size, mixed[str(size)])
    # Figures "<size>.<quantity>" (MPA's; TUF's and the mixed runs' in
    # details, not compared with the baseline).
    hdlsim.write_bench(
        "rnic_tx", tb.width,
        beats_per_clock=min(s["beats_per_clock"] for s in sizes.values()),
        latency_clocks=max(s["latency_clocks"] for s in sizes.values()),
        higher={f"{size}.{q}": s[q] for size, s in sizes.items()
                for q in ("beats_per_clock", "messages_per_clock", "payload_octets_per_clock")},
        lower={f"{size}.latency_clocks": s["latency_clocks"] for size, s in sizes.items()},
        details={"mulpdu": BENCH_MULPDU,
                 "messages": {size: s["messages"] for size, s in sizes.items()},
                 "fpdus": {size: s["fpdus"] for size, s in sizes.items()},
                 "tuf": tuf, "mixed": mixed},
    )
    dut._log.info("bench: %s", sizes)
    for size, s in list(sizes.items()) + [("TUF " + k, v) for k, v in tuf.items()]:
        assert s["beats_per_clock"] == 1.0, f"messages of {size} octets: {s}"


# --- pytest ------------------------------------------------------------------

WIDTHS = (64, 128, 256, 512)


# GHDL (mcode) runs the VHDL twin at two widths, with less traffic.
GHDL_WIDTHS = (64, 512)
GHDL_MESSAGES = 24


def cases() -> list:
    return hdlsim.width_cases(WIDTHS, langs=("verilog", "vhdl"), sim_widths={"ghdl": GHDL_WIDTHS})


@pytest.mark.parametrize("sim,width", cases())
def test_rnic_tx(sim, width, oracle_path):
    rtl = hdlsim.RTL_DIR
    env = {oracle.ENV_VAR: str(oracle_path), "RNIC_TX_WIDTH": str(width)}
    if sim == "ghdl":
        env["RNIC_TX_MESSAGES"] = os.environ.get("RNIC_TX_MESSAGES", str(GHDL_MESSAGES))
    hdlsim.run(
        test="rnic_tx",
        sim=sim,
        tag=f"W{width}",
        toplevel="rnic_tx",
        test_module=__name__,
        verilog_sources=[rtl / f for f in ("rnic_tx.v", "ddp_tx.v", "mpa_tx.v", "mpa_tx_frame.v",
                                           "mpa_tx_mark.v", "tuf_tx.v", "sdp_ram.v", "crc32c.v")],
        vhdl_sources=[hdlsim.VHDL_DIR / f for f in ("rnic_pkg.vhd", "crc32c.vhd", "sdp_ram.vhd", "mpa_tx_frame.vhd",
                                                    "mpa_tx_mark.vhd", "mpa_tx.vhd", "tuf_tx.vhd", "ddp_tx.vhd",
                                                    "rnic_tx.vhd")],
        parameters={"DATA_W": width, "CONN_W": CONN_W},
        extra_env=env,
    )
