"""MPA receiver, hw/rtl/mpa_rx.v and its VHDL-2008 twin hw/rtl/vhdl/mpa_rx.vhd,
checked against the Go reference stack.

The wire octets come from the Go oracle's Framer (op mpa_fpdus) and every
expectation from its in-order Receiver (op mpa_receive) fed with the same
stream: for each connection, the ULPDU pieces the block sends, joined, must
be the ULPDUs the Receiver delivers, in order, octet for octet, each with a
good verdict; where the Receiver stops with an MPA error, the block's
verdict for that FPDU must carry the same code, and every earlier one must
be good. The testbench only cuts streams into segments (and reorders,
duplicates and corrupts them); it computes no CRC, marker or length.

The cocotb tests:
  aligned_segments    FPDU-aligned segments (one or more whole FPDUs each)
                      on several connections, markers and CRC on or off.
  random_segments     segments cut anywhere (1 octet to 9000), overlapping
                      retransmissions, duplicates, segments sent ahead of
                      a hole (the block returns them on the exception
                      stream, and the testbench sends them again later, as
                      TCP would retransmit), the sequence space wrapping.
  corrupted_octets    one octet flipped per connection stream (header,
                      ULPDU, pad, marker or CRC): the verdict names the
                      error the Receiver finds, at the same FPDU.
  exceptions          every exception reason, with the segment returned
                      whole.
  failed_connection   a connection marked in error through fail_* (the QP
                      failed elsewhere in the device) hands every later
                      segment to the exception stream, reason 2, whole,
                      as the Go model (driver/model, op model_seg) hands
                      the same segments to its exception ring once the
                      same QP failed (an RDMA Write through an invalid
                      STag); the other connections stream on, and
                      configuring it again starts it afresh.
  back_to_back_bench  FPDUs of 64, 128, 256, 1460 and 9000 octets, markers
                      and CRC on, FPDU-aligned segments of up to 1460
                      octets (one FPDU each when larger), always-ready
                      outputs: input beats per clock, FPDUs per clock and
                      the latencies, written to build/bench/mpa_rx-W<w>.json;
                      and ("split_1460") FPDUs of 1460 and 9000 octets, and
                      of 1480 (tests/rnic_rx's 1460-octet Writes), in
                      segments cut every 1460 stream octets, FPDU
                      boundaries or not; and ("two_connections_1460")
                      two connections' 1460-octet FPDUs, their segments
                      taking turns, FPDU-aligned and cut every 1460; and
                      ("markers_off") 64-octet FPDUs with markers off.

Verilator runs hw/rtl/mpa_rx.v at every width, Icarus at W=64; GHDL runs
the VHDL-2008 twin (hw/rtl/vhdl/mpa_rx.vhd and its blocks) at GHDL_WIDTHS,
with the same tests, checks and traffic; its bench figures go to
build/bench/mpa_rx-W<w>-ghdl.json, so that they never stand in for the
Verilog's. With the same RANDOM_SEED (and MPA_RX_OCTETS), the twin's
transactions are the Verilog's, clock for clock: tests/transactions.py
records and compares them.

Run with `make test-hw` or `.venv/bin/pytest tests/mpa_rx` (SIMS=...,
WAVES=1, RANDOM_SEED=... as in tests/hdlsim.py). MPA_RX_OCTETS scales the
random tests (default 60000 stream octets per test at W=64, 4x that at 512).
MPA_RX_TRACE=<n> logs every segment sent, lane input, CRC result and piece,
and the intake and delineator state for the first n clocks (internal
signals: Icarus, with COCOTB_RESOLVE_X=ZEROS).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

import hdlsim
import oracle
import protocol
import tbutil

CLK_PERIOD_NS = 4
TRACE = bool(os.environ.get("MPA_RX_TRACE"))
TRACE_CYCLES = int(os.environ.get("MPA_RX_TRACE", "0") or 0)
CONN_W = 10
MAX_ULPDU = 64768
BENCH_SIZES = (64, 128, 256, 1460, 9000)
SPLIT_SIZES = (1460, 9000)            # FPDUs cut into 1460-octet segments
IDLE_TIMEOUT_NS = int(os.environ.get("MPA_RX_IDLE_TIMEOUT_NS", "1000000"))
EXC_NOT_ENABLED, EXC_IN_ERROR, EXC_OUT_OF_ORDER, EXC_DUPLICATE, EXC_EMPTY = 1, 2, 3, 4, 5


def octets_budget(width: int) -> int:
    base = int(os.environ.get("MPA_RX_OCTETS", "60000"))
    return base * (4 if width == 512 else 2 if width >= 128 else 1)


class Conn:
    """One connection's receive half: its stream as the Framer wrote it and
    what the Receiver makes of it."""

    def __init__(self, cid: int, ulpdus: list[bytes], markers: bool, crc: bool, base: int):
        self.cid, self.markers, self.crc, self.base = cid, markers, crc, base
        fpdus = oracle.shared().mpa_fpdus(ulpdus, markers=markers, base=base, crc=crc)
        self.fpdus = [f["wire"] for f in fpdus]
        self.stream = b"".join(self.fpdus)
        self.expect()
        # What the block gave back.
        self.pieces: list[bytes] = []          # ULPDUs complete (joined pieces)
        self.partial: bytearray | None = None
        self.verdicts: list[int] = []
        self.ulens: list[int] = []             # ulpdu_len of each first piece
        self.exceptions: list[tuple[int, int, int, bytes]] = []

    def expect(self):
        rx = oracle.shared().mpa_receive(self.stream, markers=self.markers, base=self.base, crc=self.crc)
        self.want = [u for _, u in rx["ulpdus"]]
        self.want_error = rx["mpa_error"]

    def corrupt(self, at: int, mask: int):
        s = bytearray(self.stream)
        s[at] ^= mask
        self.stream = bytes(s)
        self.expect()

    def check(self, complete: bool = True):
        """The pieces and verdicts against the Receiver's ULPDUs and error."""
        where = f"connection {self.cid} (markers {self.markers}, crc {self.crc}, base {self.base:#x})"
        bad = next((i for i, v in enumerate(self.verdicts) if v != 0), None)
        good = self.verdicts if bad is None else self.verdicts[:bad]
        assert len(good) <= len(self.pieces), f"{where}: verdict before its ULPDU's last piece"
        for i, (got, want) in enumerate(zip(self.pieces[: len(good)], self.want)):
            assert self.ulens[i] == len(want), f"{where}: ULPDU {i}: ulpdu_len {self.ulens[i]}, want {len(want)}"
            if got != want:
                diff = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]), None)
                raise AssertionError(
                    f"{where}: ULPDU {i}: {len(got)} octets, want {len(want)}; first difference at {diff}\n"
                    f" got  {got[:64].hex()}\n want {want[:64].hex()}"
                )
        if self.want_error is None:
            assert bad is None, f"{where}: verdict {self.verdicts[bad]} on FPDU {bad}, the Receiver found none"
            if complete:
                assert len(good) == len(self.want), (
                    f"{where}: {len(good)} good verdicts for {len(self.want)} ULPDUs"
                )
        else:
            n = len(self.want)
            assert bad == n, (
                f"{where}: first bad verdict at FPDU {bad} ({self.verdicts[bad] if bad is not None else None}),"
                f" the Receiver fails FPDU {n} with MPA error {self.want_error}"
            )
            assert self.verdicts[bad] == self.want_error["code"], (
                f"{where}: verdict {self.verdicts[bad]}, the Receiver says {self.want_error}"
            )


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.s_axis_tdata)
        self.lanes = self.width // 8
        assert self.width == int(os.environ["MPA_RX_WIDTH"])
        self.rng = random.Random(random.getrandbits(64))
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.source.log.setLevel(logging.WARNING)
        self.conns: dict[int, Conn] = {}
        self.ready_p = 1.0           # chance each output is ready in a clock
        self.cycle = 0
        self.piece_beats = 0
        self.in_beats = 0
        self.events: list[tuple[int, str, int]] = []   # (cycle, kind, conn) for the bench
        self._exc_frame = bytearray()
        self._beat_user: int | None = None
        self._frame_start = True
        self.first_in = None
        self.last_in = None

    def report_end(self, test: str):
        """The test's last clock and its beat counts, for the log."""
        self.dut._log.info("%s: end at clock %d, %d beats in, %d piece beats out",
                           test, self.cycle, self.in_beats, self.piece_beats)

    async def start(self):
        dut = self.dut
        dut.rst.value = 1
        dut.cfg_valid.value = 0
        dut.fail_valid.value = 0
        dut.m_axis_tready.value = 0
        dut.m_verdict_tready.value = 0
        dut.m_exc_tready.value = 0
        cocotb.start_soon(Clock(dut.clk, CLK_PERIOD_NS, units="ns").start())
        await ClockCycles(dut.clk, 3)
        await FallingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        cocotb.start_soon(self._monitor())
        # Every port's handshake and format rules (tests/protocol.py).
        self.protocol = protocol.Monitor(self.dut, "mpa_rx")

    async def configure(self, c: Conn | None, cid: int | None = None, en: bool = True):
        dut = self.dut
        await FallingEdge(dut.clk)
        dut.cfg_conn.value = c.cid if c else cid
        dut.cfg_en.value = int(en)
        dut.cfg_mrk_en.value = int(c.markers) if c else 0
        dut.cfg_crc_en.value = int(c.crc) if c else 0
        dut.cfg_base.value = c.base if c else 0
        dut.cfg_valid.value = 1
        while True:
            await RisingEdge(dut.clk)
            if dut.cfg_ready.value == 1:
                break
        await FallingEdge(dut.clk)
        dut.cfg_valid.value = 0
        if c:
            self.conns[c.cid] = c

    async def fail(self, cid: int):
        """Marks connection cid in error (fail_*)."""
        dut = self.dut
        await FallingEdge(dut.clk)
        dut.fail_conn.value = cid
        dut.fail_valid.value = 1
        while True:
            await RisingEdge(dut.clk)
            if dut.fail_ready.value == 1:
                break
        await FallingEdge(dut.clk)
        dut.fail_valid.value = 0

    def send(self, cid: int, seq: int, data: bytes):
        if TRACE:
            self.dut._log.info("send conn %d seq %#x len %d", cid, seq & 0xFFFFFFFF, len(data))
        user = (cid << 48) | ((seq & 0xFFFFFFFF) << 16) | len(data)
        self.source.send_nowait(AxiStreamFrame(data if data else b"\0", tuser=user))

    def send_stream(self, c: Conn, off: int, n: int):
        self.send(c.cid, c.base + off, c.stream[off:off + n])

    async def _monitor(self):
        """Every output, every clock: record transfers, then pick the next
        ready values."""
        dut = self.dut
        rng = random.Random(self.rng.getrandbits(64))
        n = self.lanes
        while True:
            # Right after the edge, signals still hold what the edge
            # sampled: a transfer is valid and ready here.
            await RisingEdge(dut.clk)
            self.cycle += 1
            if TRACE:
                self._trace()
            if dut.s_axis_tvalid.value == 1 and dut.s_axis_tready.value == 1:
                self.in_beats += 1
                self.last_in = self.cycle
                if self.first_in is None:
                    self.first_in = self.cycle
                if self._beat_user is None:
                    self.events.append((self.cycle, "seg", int(dut.s_axis_tuser.value) >> 48))
                    self._beat_user = 1
                if dut.s_axis_tlast.value == 1:
                    self._beat_user = None
            if dut.m_axis_tvalid.value == 1 and dut.m_axis_tready.value == 1:
                self.piece_beats += 1
                user = int(dut.m_axis_tuser.value)
                cid, first, last = (user >> 2) & ((1 << CONN_W) - 1), (user >> 1) & 1, user & 1
                ulen = user >> (CONN_W + 2)
                c = self.conns[cid]
                keep = int(dut.m_axis_tkeep.value)
                data = int(dut.m_axis_tdata.value).to_bytes(n, "little")
                assert keep & (keep + 1) == 0, f"tkeep {keep:#x} is not a run from lane 0"
                octets = data[: bin(keep).count("1")]
                failed = any(c.verdicts)   # what follows a bad verdict is discarded
                if TRACE:
                    dut._log.info("c%d piece conn %d first %d last %d tlast %d keep %x data %s", self.cycle, cid, first, last,
                                  dut.m_axis_tlast.value, keep, data.hex())
                if self._frame_start:
                    if first:
                        assert c.partial is None or failed, f"connection {cid}: a ULPDU starts inside another"
                        c.partial = bytearray()
                        c.ulens.append(ulen)
                        self.events.append((self.cycle, "piece", cid))
                    else:
                        assert c.partial is not None or failed, (
                            f"connection {cid}: a piece that does not start a ULPDU, with none open"
                        )
                        if c.partial is None:
                            c.partial = bytearray()
                c.partial += octets
                self._frame_start = dut.m_axis_tlast.value == 1
                if self._frame_start and last:
                    c.pieces.append(bytes(c.partial))
                    c.partial = None
            if dut.m_verdict_tvalid.value == 1 and dut.m_verdict_tready.value == 1:
                cid = int(dut.m_verdict_tuser.value)
                self.conns[cid].verdicts.append(int(dut.m_verdict_tdata.value))
                self.events.append((self.cycle, "verdict", cid))
            if dut.m_exc_tvalid.value == 1 and dut.m_exc_tready.value == 1:
                keep = int(dut.m_exc_tkeep.value)
                data = int(dut.m_exc_tdata.value).to_bytes(n, "little")
                self._exc_frame += bytes(data[i] for i in range(n) if keep >> i & 1)
                if dut.m_exc_tlast.value == 1:
                    user = int(dut.m_exc_tuser.value)
                    reason, length = user & 7, (user >> 3) & 0xFFFF
                    seq, cid = (user >> 19) & 0xFFFFFFFF, user >> 51
                    exc = (reason, seq, length, bytes(self._exc_frame))
                    self._exc_frame = bytearray()
                    assert cid in self.conns, f"exception {exc[:3]} for connection {cid}, which sent nothing"
                    self.conns[cid].exceptions.append(exc)
            p = self.ready_p
            dut.m_axis_tready.value = int(rng.random() < p)
            dut.m_verdict_tready.value = int(rng.random() < p)
            dut.m_exc_tready.value = int(rng.random() < p)



    def _trace(self):
        """MPA_RX_TRACE: what enters each lane, each CRC result, and for the
        first MPA_RX_TRACE clocks the intake's output and the delineator."""
        dut, w = self.dut, self.dut.walk
        ol = len(w.l_ulp_lo.value) // 2
        for i in range(2):
            if (int(w.l_valid.value) >> i) & 1 and (int(w.l_ready.value) >> i) & 1:
                dut._log.info("c%d lane%d conn %d run_first %d run_last %d fpdu_first %d fpdu_end %d ulp %d..%d vseq %d",
                              self.cycle, i, (int(w.l_conn.value) >> (CONN_W * i)) & ((1 << CONN_W) - 1),
                              (int(w.l_run_first.value) >> i) & 1, (int(w.l_run_last.value) >> i) & 1,
                              (int(w.l_fpdu_first.value) >> i) & 1, (int(w.l_fpdu_end.value) >> i) & 1,
                              (int(w.l_ulp_lo.value) >> (ol * i)) & ((1 << ol) - 1),
                              (int(w.l_ulp_hi.value) >> (ol * i)) & ((1 << ol) - 1),
                              (int(w.l_vseq.value) >> (8 * i)) & 255)
            # (Verilator 5.006's VPI does not show generate scopes: the
            # lanes' CRC results are traced on Icarus and GHDL only.)
            try:
                u = dut.lane[i].u
            except AttributeError:
                continue
            if u.crc_out_valid.value == 1 and u.crc_out_ready.value == 1:
                dut._log.info("c%d crc%d conn %d fpdu_end %d crc %08x field %08x", self.cycle, i,
                              int(u.i_conn.value), int(u.i_end.value), int(u.crc_out.value), int(u.i_crc.value))
        if self.cycle < TRACE_CYCLES:
            dut._log.info("c%d align valid %s first %s last %s words %s..%s mk %s | walk state %s step %s S %s hx %s "
                          "A %s B %s h %s T %s lanes %s",
                          self.cycle, dut.align.m_valid.value, dut.align.m_first.value, dut.align.m_last.value,
                          dut.align.m_wlo.value, dut.align.m_whi.value, dut.align.m_mk.value,
                          w.wstate_reg.value, w.step.value, w.s_reg.value, w.hx_reg.value, w.a_present.value,
                          w.b_present.value, w.h.value, w.t_h.value, w.l_valid.value)

    async def idle(self, cycles: int = 400):
        """Wait until the input is drained and nothing has come out for a while."""
        async def wait():
            quiet = 0
            last = (-1, -1)
            while quiet < cycles:
                await RisingEdge(self.dut.clk)
                now = (self.piece_beats, sum(len(c.verdicts) + len(c.exceptions) for c in self.conns.values()))
                busy = not self.source.empty() or self.dut.s_axis_tvalid.value == 1
                quiet = 0 if busy or now != last else quiet + 1
                last = now
        await with_timeout(wait(), IDLE_TIMEOUT_NS, "ns")


def random_ulpdus(rng: random.Random, total: int, small: bool = False) -> list[bytes]:
    out, n = [], 0
    while n < total:
        r = rng.random()
        size = rng.randint(1, 64) if r < 0.3 or small else rng.randint(65, 1500) if r < 0.8 else rng.randint(1501, 9000)
        out.append(rng.randbytes(size))
        n += size
    return out


def new_conns(rng: random.Random, count: int, total: int, small: bool = False) -> list[Conn]:
    conns = []
    for i, cid in enumerate(rng.sample(range(1 << CONN_W), count)):
        markers = i % 2 == 0 or rng.random() < 0.5
        crc = i != 1 and rng.random() < 0.8
        # Bases near the top of the sequence space wrap within the test.
        base = rng.choice([rng.getrandbits(32), (1 << 32) - rng.randint(1, 20000)])
        conns.append(Conn(cid, random_ulpdus(rng, total // count, small), markers, crc, base))
    return conns


@cocotb.test()
async def aligned_segments(dut):
    """Segments of whole FPDUs, interleaved over connections."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    tb.ready_p = 0.8
    conns = new_conns(rng, 4, octets_budget(tb.width))
    for c in conns:
        await tb.configure(c)
    plans = {}
    for c in conns:
        segs, off, i = [], 0, 0
        while i < len(c.fpdus):
            k = rng.randint(1, 4)
            n = sum(len(f) for f in c.fpdus[i:i + k])
            segs.append((off, n))
            off += n
            i += k
        plans[c.cid] = segs
    while any(plans.values()):
        cid = rng.choice([k for k, v in plans.items() if v])
        off, n = plans[cid].pop(0)
        tb.send_stream(tb.conns[cid], off, n)
    await tb.idle()
    for c in conns:
        c.check()
        assert not c.exceptions, f"connection {c.cid}: exceptions {[e[:3] for e in c.exceptions]}"
    dut._log.info("%d ULPDUs on %d connections", sum(len(c.want) for c in conns), len(conns))
    tb.report_end("aligned_segments")


def cut(rng: random.Random, length: int) -> list[tuple[int, int]]:
    """Random segments covering [0, length): 1 octet to 9000, most small."""
    segs, off = [], 0
    while off < length:
        r = rng.random()
        n = rng.randint(1, 8) if r < 0.15 else rng.randint(9, 600) if r < 0.6 else rng.randint(601, 9000)
        n = min(n, length - off)
        segs.append((off, n))
        off += n
    return segs


@cocotb.test()
async def random_segments(dut):
    """Segments cut anywhere, overlapping, duplicated and reordered."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    tb.ready_p = 0.75
    conns = new_conns(rng, 5, octets_budget(tb.width))
    for c in conns:
        await tb.configure(c)
    queues = {c.cid: cut(rng, len(c.stream)) for c in conns}
    sent_ahead = 0
    dups = 0
    overlaps = 0
    while any(queues.values()):
        c = tb.conns[rng.choice([k for k, v in queues.items() if v])]
        q = queues[c.cid]
        off, n = q[0]
        r = rng.random()
        if r < 0.05 and len(q) > 1:
            # The next segment arrives ahead of this one: the block returns
            # it, and it is sent again after this one (as a retransmission).
            off2, n2 = q[1]
            tb.send_stream(c, off2, n2)
            sent_ahead += 1
            q.pop(0)
            tb.send_stream(c, off, n)
            continue
        if r < 0.10 and off > 0:
            # A duplicate of something already sent.
            s = rng.randrange(0, off)
            tb.send_stream(c, s, rng.randint(1, min(off - s, 3000)))
            dups += 1
            continue
        if r < 0.18 and off > 0:
            # An overlapping retransmission: old octets, then new ones.
            back = rng.randint(1, min(off, 700))
            tb.send_stream(c, off - back, back + n)
            overlaps += 1
            q.pop(0)
            continue
        tb.send_stream(c, off, n)
        q.pop(0)
    await tb.idle()
    # Every segment sent ahead of a hole came back whole (and was sent
    # again after the hole, as TCP retransmits).
    assert sum(1 for c in conns for e in c.exceptions if e[0] == EXC_OUT_OF_ORDER) == sent_ahead
    for c in conns:
        ooo = [e for e in c.exceptions if e[0] == EXC_OUT_OF_ORDER]
        for reason, seq, length, data in ooo:
            off = (seq - c.base) & 0xFFFFFFFF
            assert data == c.stream[off:off + length], f"connection {c.cid}: exception data differs"
        for reason, seq, length, data in c.exceptions:
            assert reason in (EXC_OUT_OF_ORDER, EXC_DUPLICATE), f"connection {c.cid}: exception {reason}"
    for c in conns:
        c.check()
    dut._log.info(
        "%d ULPDUs on %d connections; %d segments sent ahead, %d duplicates, %d overlaps; exceptions %s",
        sum(len(c.want) for c in conns), len(conns), sent_ahead, dups, overlaps,
        {c.cid: len(c.exceptions) for c in conns},
    )
    tb.report_end("random_segments")


@cocotb.test()
async def corrupted_octets(dut):
    """One flipped octet per connection stream: caught, with the Receiver's
    error code, at the Receiver's FPDU."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    rounds = 3 if tb.width == 64 else 6
    total = 0
    for _ in range(rounds):
        conns = new_conns(rng, 4, octets_budget(tb.width) // 6, small=rng.random() < 0.3)
        for c in conns:
            # Somewhere in the stream, past the first FPDU now and then.
            at = rng.randrange(len(c.stream))
            c.corrupt(at, 1 << rng.randrange(8))
            await tb.configure(c)
        queues = {c.cid: cut(rng, len(c.stream)) for c in conns}
        while any(queues.values()):
            cid = rng.choice([k for k, v in queues.items() if v])
            off, n = queues[cid].pop(0)
            tb.send_stream(tb.conns[cid], off, n)
        await tb.idle()
        for c in conns:
            c.check(complete=False)
            if c.want_error is not None:
                total += 1
                # Segments after the error are refused.
                for reason, *_ in c.exceptions:
                    assert reason == EXC_IN_ERROR, f"connection {c.cid}: exception {reason}"
            del tb.conns[c.cid]
    # A flipped octet escapes the Receiver only when it lengthens a
    # ULPDU_Length past the end of the stream (the FPDU never completes).
    assert total > 0, "no corrupted stream was caught"
    dut._log.info("%d corrupted streams caught", total)
    tb.report_end("corrupted_octets")


@cocotb.test()
async def exceptions(dut):
    """Every exception reason, the segment returned whole."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    c = Conn(5, [rng.randbytes(100), rng.randbytes(300)], True, True, 0x7FFF_FF00)
    await tb.configure(c)
    # Not enabled: a connection configured off.
    off = Conn(6, [rng.randbytes(10)], False, True, 0)
    await tb.configure(off)
    await tb.configure(None, cid=6, en=False)
    tb.send_stream(off, 0, len(off.stream))
    # Ahead of a hole, then the hole, then it again; a duplicate; empty.
    tb.send_stream(c, 50, 60)
    tb.send_stream(c, 0, 50)
    tb.send_stream(c, 50, len(c.stream) - 50)
    tb.send_stream(c, 10, 20)
    tb.send(c.cid, c.base + len(c.stream), b"")
    await tb.idle()
    c.check()
    assert [e[0] for e in c.exceptions] == [EXC_OUT_OF_ORDER, EXC_DUPLICATE, EXC_EMPTY], c.exceptions
    assert c.exceptions[0][1:] == (c.base + 50, 60, c.stream[50:110])
    assert c.exceptions[1][1:] == (c.base + 10, 20, c.stream[10:30])
    assert [e[0] for e in off.exceptions] == [EXC_NOT_ENABLED]
    assert off.exceptions[0][3] == off.stream
    # A connection in error refuses what follows.
    bad = Conn(7, [rng.randbytes(40), rng.randbytes(40)], False, True, 0)
    bad.corrupt(10, 0x01)
    await tb.configure(bad)
    tb.send_stream(bad, 0, len(bad.fpdus[0]))
    await tb.idle()
    tb.send_stream(bad, len(bad.fpdus[0]), len(bad.fpdus[1]))
    await tb.idle()
    bad.check(complete=False)
    assert bad.verdicts == [2], bad.verdicts
    assert [e[0] for e in bad.exceptions] == [EXC_IN_ERROR]
    # Configuring it again starts it afresh.
    good = Conn(7, [rng.randbytes(33)], True, False, 1234)
    await tb.configure(good)
    tb.send_stream(good, 0, len(good.stream))
    await tb.idle()
    good.check()
    tb.report_end("exceptions")


# The Go model's admin commands (docs/device.md "Admin commands";
# driver/hostif/admin.go lays out their arguments).
CREATE_CQ, CREATE_QP, QP_RTS, EVENT_RING, DMA_WINDOW = 0x01, 0x03, 0x04, 0x09, 0x0A
EXC_BUF_LOG2 = 14          # 16 KiB buffers: each test segment fits in one
EXC_LOG2 = 6               # 64 of them: more than the test's segments


class ModelQP:
    """A Go model device (cmd/rnic-oracle's model_* ops) with one QP in
    Full Operation on the receive stream of a Conn: the oracle of what
    becomes of a QP's segments once it failed (driver/model/rx.go, segIn)."""

    def __init__(self, c: Conn):
        o = self.o = oracle.shared()
        self.c = c
        self.s = o.request("model_open", cqs=4, vectors=1, windows=2)["session"]
        size = 2 << 20
        self.buf = o.request("model_alloc", session=self.s, size=size)["addr"]
        lo, hi = (lambda v: v & 0xFFFFFFFF), (lambda v: v >> 32)
        self.admin(DMA_WINDOW, [0, lo(self.buf), hi(self.buf), size, 0])
        self.ev, self.exc = self.buf, self.buf + (1 << 20)
        self.admin(EVENT_RING, [lo(self.ev), hi(self.ev), 8 | EXC_LOG2 << 8 | EXC_BUF_LOG2 << 16, lo(self.exc), hi(self.exc)])
        cq, sq, rq = self.buf + (16 << 10), self.buf + (32 << 10), self.buf + (40 << 10)
        self.admin(CREATE_CQ, [0, lo(cq), hi(cq), 6, 0])
        self.admin(CREATE_QP, [c.cid, 1, lo(sq), hi(sq), lo(rq), hi(rq), 4 | 4 << 8, 0])
        flags = (3 if c.markers else 0) | (12 if c.crc else 0)
        self.admin(QP_RTS, [c.cid | 1 << 16 | 1 << 24, 1460 | flags << 16, 0, c.base, 0, c.base, 1, 1])
        self.n = 0               # exception buffers read

    def admin(self, op: int, args: list[int]):
        args = args + [0] * (8 - len(args))
        st = self.o.request("model_admin", session=self.s, opcode=op, args=args)["status"]
        assert st == 0, f"model: admin command {op:#x} {args}: status {st}"

    def seg(self, seq: int, data: bytes):
        self.o.request("model_seg", session=self.s, qpn=self.c.cid, seq=seq & 0xFFFFFFFF, octets=data.hex())

    def exceptions(self) -> list[tuple[int, int, int, bytes]]:
        """The exception buffers written since the last call, as
        (reason, seq, len, octets), each checked to be the QP's."""
        out = []
        while True:
            at = self.exc + (self.n << EXC_BUF_LOG2)
            h = bytes.fromhex(self.o.request("model_state", session=self.s, addr=at, len=16)["mem"])
            if h[15] != 1:
                return out
            qpn, n, seq, reason = (int.from_bytes(h[0:2], "little"), int.from_bytes(h[2:4], "little"),
                                   int.from_bytes(h[4:8], "little"), h[8])
            assert qpn == self.c.cid, f"model: exception buffer {self.n} for QP {qpn}"
            data = bytes.fromhex(self.o.request("model_state", session=self.s, addr=at + 16, len=n)["mem"]) if n else b""
            out.append((reason, seq, n, data))
            self.n += 1

    def close(self):
        self.o.request("model_close", session=self.s)


@cocotb.test()
async def failed_connection(dut):
    """A connection marked in error (fail_*) refuses what follows, as the
    model's failed QP does; the others stream on; cfg_* restarts it."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    tb.ready_p = 0.8
    # The failing connection (a QP number the model has) and two others.
    bad = Conn(7, [rng.randbytes(rng.randint(20, 900)) for _ in range(12)], True, True, 0xFFFF_F800)
    others = new_conns(rng, 2, octets_budget(tb.width) // 12)
    for c in [bad] + others:
        await tb.configure(c)
    m = ModelQP(bad)
    # The first FPDU fails the model's QP: an RDMA Write (RFC 5040 4.3:
    # DDP tagged, RDMAP opcode 0) through STag 0x1234, which it never
    # registered. The RTL takes it as MPA (a good FPDU; its placement is
    # not mpa_rx's business), then is told the QP failed.
    write = oracle.shared().request("rdmap_segments", opcode=0, stag=0x1234, to=0, payload=rng.randbytes(40).hex(),
                                    mulpdu=1460)["segments"][0]
    fpdus = oracle.shared().mpa_fpdus([bytes.fromhex(write)] + [rng.randbytes(rng.randint(20, 900)) for _ in range(11)],
                                      markers=True, base=bad.base, crc=True)
    bad.fpdus = [f["wire"] for f in fpdus]
    bad.stream = b"".join(bad.fpdus)
    bad.expect()
    first = len(bad.fpdus[0])
    tb.send_stream(bad, 0, first)
    m.seg(bad.base, bad.stream[:first])
    assert m.exceptions() == [], "model: the failing Write went to the exception ring"
    await tb.idle()
    await tb.fail(bad.cid)
    # The rest of its stream, cut anywhere, the others' segments between;
    # then an old segment and an empty one (the QP's state comes first).
    segs = [(bad, first + off, n) for off, n in cut(rng, len(bad.stream) - first)]
    segs += [(bad, 0, first), (bad, len(bad.stream), 0)]
    assert len(segs) < 1 << EXC_LOG2, "the model's exception ring would wrap"
    queues = {c.cid: [(c, off, n) for off, n in cut(rng, len(c.stream))] for c in others}
    for c, off, n in segs:
        for q in queues.values():
            while q and rng.random() < 0.6:
                tb.send_stream(*q.pop(0))
        tb.send_stream(c, off, n)
        m.seg(c.base + off, c.stream[off:off + n])
    for q in queues.values():
        while q:
            tb.send_stream(*q.pop(0))
    await tb.idle()
    want = m.exceptions()
    m.close()
    assert len(want) == len(segs) and all(w[0] == EXC_IN_ERROR for w in want), \
        f"model: {[w[:3] for w in want]} for {len(segs)} segments"
    got = bad.exceptions
    assert [g[:3] for g in got] == [w[:3] for w in want], \
        f"(reason, seq, len): RTL {[g[:3] for g in got]}, model {[w[:3] for w in want]}"
    for i, (g, w) in enumerate(zip(got, want)):
        # (an empty segment's frame is one beat whose octet is not its own)
        assert g[3][:g[2]] == w[3], f"exception {i}: octets differ from the model's"
    assert len(bad.verdicts) == 1 and bad.verdicts[0] == 0, f"verdicts after the failure: {bad.verdicts}"
    for c in others:
        c.check()
        assert not c.exceptions, f"connection {c.cid}: exceptions {[e[:3] for e in c.exceptions]}"
    # Configured again, the connection streams afresh.
    again = Conn(7, [rng.randbytes(77), rng.randbytes(300)], False, True, 4321)
    await tb.configure(again)
    tb.send_stream(again, 0, len(again.stream))
    await tb.idle()
    again.check()
    assert not again.exceptions, again.exceptions
    tb.report_end("failed_connection")


@cocotb.test()
async def back_to_back_bench(dut):
    """FPDUs of each size, markers and CRC on, FPDU-aligned segments; and
    FPDUs cut into 1460-octet segments wherever the stream puts them (as a
    peer whose segments ignore FPDU boundaries sends them)."""
    tb = TB(dut)
    tb.rng = tbutil.bench_rng()
    await tb.start()
    rng = tb.rng
    budget = octets_budget(tb.width) // 2

    async def run(cid: int, size: int, split: bool, conns: int = 1, markers: bool = True,
                  ulen: int | None = None) -> dict:
        count = max(12, min(400, budget // size)) // conns * conns
        cs, cuts = [], []
        for j in range(conns):
            ulpdus = [rng.randbytes(ulen or size - 8) for _ in range(count // conns)]
            c = Conn(cid + j, ulpdus, markers, True, rng.getrandbits(32))
            await tb.configure(c)
            segs, off = [], 0
            if split:
                while off < len(c.stream):
                    n = min(1460, len(c.stream) - off)
                    segs.append((c, off, n))
                    off += n
            else:
                per = max(1, 1460 // len(c.fpdus[0]))
                for k in range(0, len(ulpdus), per):
                    n = sum(len(f) for f in c.fpdus[k:k + per])
                    segs.append((c, off, n))
                    off += n
            cs.append(c)
            cuts.append(segs)
        # The connections' segments take turns.
        segs = [seg for group in itertools.zip_longest(*cuts) for seg in group if seg]
        await ClockCycles(dut.clk, 5)
        tb.first_in = None
        in0 = tb.in_beats
        ev0 = len(tb.events)
        for c, off, n in segs:
            tb.send_stream(c, off, n)
        await tb.idle(60)
        for c in cs:
            c.check()
        ev = tb.events[ev0:]
        seg_at = [t for t, k, _ in ev if k == "seg"]
        piece_at = [t for t, k, _ in ev if k == "piece"]
        verdict_at = [t for t, k, _ in ev if k == "verdict"]
        clocks = tb.last_in - tb.first_in + 1
        out = {
            "beats_per_clock": round((tb.in_beats - in0) / clocks, 4),
            "fpdus_per_clock": round(count / clocks, 4),
            "latency_first_placement_clocks": piece_at[0] - seg_at[0],
            "latency_crc_verdict_clocks": verdict_at[-1] - tb.last_in,
            "fpdus": count,
            "segments": len(segs),
        }
        dut._log.info("size %d%s%s: %s", size, " split" if split else "",
                      "" if markers else " markers off", out)
        return out

    sizes = {}
    for i, size in enumerate(BENCH_SIZES):
        sizes[str(size)] = await run(200 + i, size, False)
    # (Not part of beats_per_clock, the FPDU-aligned figure: see README.)
    split = {}
    for i, size in enumerate(SPLIT_SIZES):
        split[str(size)] = await run(220 + i, size, True)
    # tests/rnic_rx's split bench: 1460-octet RDMA Writes, ULPDUs of 1474
    # octets (FPDUs of 1480). Each ULPDU goes out as its own piece, from
    # lane 0: at W=512, 24 output beats for the 23.3 input beats its FPDU
    # and markers fill, so the single output port, not the walk, sets the
    # input rate (about 0.97-0.98; README, "MPA receive path").
    split["1480"] = await run(225, 1480, True, ulen=1474)
    # Two connections taking turns, 1460-octet FPDUs: FPDU-aligned
    # segments, and segments cut every 1460 octets (a segment that ends
    # inside an FPDU sends its running CRC back while the other
    # connection's next segment is walked).
    interleaved = {
        "aligned": await run(230, 1460, False, conns=2),
        "split_1460": await run(232, 1460, True, conns=2),
    }
    # 64-octet FPDUs with markers off: a stream beat at W=512 is exactly
    # one FPDU, so the input's own rate is one FPDU a clock. With markers
    # on it is less (4 marker octets every 512 and the segment ends: 22
    # FPDUs in 23 beats), whatever the receiver does.
    no_markers = {"64": await run(240, 64, False, markers=False)}
    # Figures "<case>.<quantity>": case "64" .. "9000" (FPDU-aligned),
    # "split_1460.<size>", "two_connections_1460.<aligned|split_1460>",
    # "64_markers_off".
    runs = {**sizes, **{f"split_1460.{k}": v for k, v in split.items()},
            **{f"two_connections_1460.{k}": v for k, v in interleaved.items()},
            "64_markers_off": no_markers["64"]}
    hdlsim.write_bench(
        "mpa_rx", tb.width,
        beats_per_clock=min(v["beats_per_clock"] for v in sizes.values()),
        latency_clocks=max(v["latency_first_placement_clocks"] for v in sizes.values()),
        higher={f"{case}.{q}": v[q] for case, v in runs.items() for q in ("beats_per_clock", "fpdus_per_clock")},
        lower={f"{case}.{q}": v[q] for case, v in runs.items()
               for q in ("latency_first_placement_clocks", "latency_crc_verdict_clocks")},
        details={case: {"fpdus": v["fpdus"], "segments": v["segments"]} for case, v in runs.items()},
    )
    dut._log.info("bench: %s", json.dumps(runs))
    tb.report_end("back_to_back_bench")
    # The design's throughput properties, in simulated clocks (the same on
    # every simulator and seed): a segment starts on the clock after the
    # one before ends, and a connection's back-to-back segments are joined
    # where they share a stream beat (without joining: 0.963 at 1460
    # octets and 0.964 split, at W=512), and one FPDU a beat goes through.
    for size, v in sizes.items():
        assert v["beats_per_clock"] == 1.0, f"FPDU-aligned segments, {size}-octet FPDUs: {v}"
    for size in map(str, SPLIT_SIZES):
        assert split[size]["beats_per_clock"] == 1.0, f"{size}-octet FPDUs cut every 1460 octets: {split[size]}"
    assert no_markers["64"]["beats_per_clock"] == 1.0, f"64-octet FPDUs, markers off: {no_markers['64']}"


# --- pytest ------------------------------------------------------------------

WIDTHS = (64, 128, 256, 512)


# Icarus runs W=64 only: at 512 the octet budget is four times larger and
# the case takes minutes (HW_ALL_WIDTHS=1 runs it). GHDL runs the VHDL twin
# at GHDL_WIDTHS with Verilator's traffic (about 35 s a case: no need for
# less).
GHDL_WIDTHS = (64, 512)
PARAMS = hdlsim.width_cases(WIDTHS, langs=("verilog", "vhdl"),
                            sim_widths={"icarus": (64,), "ghdl": GHDL_WIDTHS})


@pytest.mark.parametrize("sim,width", PARAMS)
def test_mpa_rx(sim, width, oracle_path):
    rtl = hdlsim.RTL_DIR
    env = {oracle.ENV_VAR: str(oracle_path), "MPA_RX_WIDTH": str(width)}
    hdlsim.run(
        test="mpa_rx",
        sim=sim,
        tag=f"W{width}",
        toplevel="mpa_rx",
        test_module=__name__,
        verilog_sources=[rtl / f for f in ("mpa_rx.v", "mpa_rx_align.v", "mpa_rx_walk.v",
                                           "mpa_rx_lane.v", "crc32c.v", "sdp_ram.v", "rnic_add.v", "rnic_incdec.v", "rnic_pick.v", "ddp_rx_fifo.v")],
        vhdl_sources=[hdlsim.VHDL_DIR / f for f in ("sdp_ram.vhd", "crc32c.vhd", "ddp_rx_fifo.vhd", "mpa_rx_align.vhd",
                                                    "mpa_rx_walk.vhd", "mpa_rx_lane.vhd", "mpa_rx.vhd")],
        parameters={"DATA_W": width, "CONN_W": CONN_W},
        extra_env=env,
    )
