"""DDP/RDMAP receive placement, hw/rtl/ddp_rx.v, checked against the Go stack.

Every expected value comes from the Go oracle: the ULPDUs are built by
iwarp/rdmap (cmd/rnic-oracle's rdmap_segments op), and the host memory, the
completions and the errors the block must produce come from the ddp_place op,
which runs the same configuration and ULPDUs through iwarp/ddp's STagTable and
Sink and iwarp/rdmap's classification, invalidation and Read Request parsing,
in the order the block sees them. The testbench builds stimulus, mutates
headers, cuts ULPDUs into pieces and compares; it never computes an expected
octet, completion or error code itself. Host memory is cocotbext-axi's
AxiRamWrite (the write half of AxiRam); after every test its whole contents
are compared with the oracle's memory, so any stray write fails the test, and
a write outside the memory raises in the RAM model. Every ULPDU, early ones
included, must pulse m_done once, and m_drop must report the pieces of the
ULPDUs the oracle (ddp_place_stream) drops, and nothing else.

Early ULPDUs (tuser's early bit: a whole ULPDU an LLP found out of order,
placed before its turn, hw/rtl/ddp_rx.v "Early ULPDUs") go to the oracle as
{"early": ...} ops at the place of their frames in input order, take no
verdict, and are sent whatever tuser's first and last bits say.

The cocotb tests, in order:
  directed_checks  one connection per check of RFC 5041 7.1 and RFC 5040:
                   invalid, stale-key, unregistered and invalidated STags,
                   another PD, an STag bound to another connection, no
                   write access, TO wrap, base and bounds on both sides,
                   DV, RV, opcode, QN, MSN ahead and behind, MO, too long,
                   a short ULPDU, a Read Request of the wrong length, Send
                   with Invalidate of a foreign STag; a good Send with
                   Invalidate and a Write after it; a Terminate and traffic
                   after it; CRC and marker verdicts. Each bad ULPDU is
                   between good ones; the oracle must report an error for
                   each of those connections.
  early_checks     early ULPDUs, one connection per case, memory and
                   reports compared after the early frames (before their
                   in-order copies) and at the end: an early RDMA Write,
                   Send (for a later MSN: no queue advance), segments of a
                   later message and Read Request land, then are delivered
                   once in order; early frames inside a ULPDU of their own
                   connection; tuser first/last 0/0, 0/1, 1/0; early
                   ULPDUs failing each check (foreign, stale, invalidated
                   or read-only STag, bounds, TO wrap, short, DV, RV,
                   opcode, QN, MSN ahead and behind, MO, too long) place
                   and report nothing and the stream carries on; none is
                   placed after a stream error or a Terminate; an early
                   Send with Invalidate invalidates nothing; verdicts line
                   up around early frames (no verdict taken for them); a
                   disabled connection's early ULPDUs place nothing and
                   pulse no m_drop. Go's host ranges must place the early
                   ULPDUs each case means to, and no others.
  random_traffic   many connections interleaved piece by piece, random
                   messages of every opcode, random MULPDUs and piece cuts,
                   mutated headers and garbage ULPDUs, random verdicts
                   (mostly good), gaps on the input, back-pressure on the
                   AXI channels and the event outputs; early ULPDUs: copies
                   of a connection's ULPDUs (some hostile variants) sent a
                   few ULPDUs before their in-order copies, at random piece
                   boundaries, inside ULPDUs of the same or another
                   connection (but not where Go would place one into the
                   octets of the ULPDU of its connection it sits inside:
                   the two orders of those writes differ); in rounds, each
                   restarting the connections and posting fresh buffers.
  bench            back-to-back RDMA Writes in FPDUs of 64..9000 octets
                   into an always-ready memory: input beats per clock and the
                   latency from a piece's first beat to its first AW and W,
                   written to build/bench/ddp_rx-W<w>.json, ddp_rx-2x-W<w>.json
                   with the 2N write port (not asserted).
  gap_disabled_conn, gap_long_piece, gap_full_ring, gap_bresp_error
                   pieces of more than 32 KiB (4096 beats at W=64); and
                   the status outputs: pieces of a disabled or never
                   configured connection reported on m_drop (and nothing
                   placed or reported, whatever the verdict; their early
                   ULPDUs neither placed nor reported); refused posts
                   (full ring, QN 3, disabled connection) on m_post_err; an
                   SLVERR B response turning the ULPDU's completion into
                   the stream's Local Catastrophic Error.
  security_soak    (its own pytest case, Verilator at 512 bits) tens of
                   thousands of short ULPDUs, about half hostile, with STag
                   churn, on 8 connections at a time, and some 4% early
                   ULPDUs (copies of a connection's coming ULPDUs, good or
                   hostile, or hostile variants of them, between its
                   ULPDUs); a monitor checks every AW burst and W beat
                   against the host ranges the oracle says the open
                   ULPDUs, early ones included, may write, as it happens;
                   memory and every report are compared at checkpoints.
                   DDP_RX_SOAK_ULPDUS sets its size (default 50000 in
                   make test; make soak runs a million); its
                   rate and outcomes go to build/bench/ddp_rx-soak-W512.json.
                   test_ddp_rx_security_soak_wr_req runs it with the
                   write-request stream (each request's strobed octets
                   checked the same way; ddp_rx-soak-W512-req.json).

  corner_*         (tests/ddp_rx/corners.py, after the others) issue 29
                   item 4's corners that the RTL passes: an invalidation
                   between the pieces of one connection's ULPDU leaves
                   other connections' ULPDUs alone; no write through an
                   STag after the s_stag handshake that invalidates it;
                   reset at random clocks in the middle of traffic: nothing
                   of it written or reported after the reset, and the
                   block configured anew works as a fresh one; and the
                   six that found RTL bugs, now fixed: an STag written
                   between a ULPDU's pieces cuts it, the fence waits for
                   queued writes, reset clears the tables, a restart with
                   the old stream in flight (tests/ddp_rx/corners.py).

The gap tests, the corner tests and the soak run on a lean bench (class Lean):
one coroutine per clock drives the clock, the pieces, configuration and
verdicts, an always-ready AXI write slave into a bytearray and the monitor,
through the simulator handles, with expectations from the oracle op
ddp_place_stream (ddp_place in batches on a session, with the host range of
every ULPDU).

The cases run on ddp_rx.v (Verilator at every width, Icarus at 64 and 512)
and on its VHDL-2008 twin hw/rtl/vhdl/ddp_rx.vhd (GHDL at 64 and 512); with
one seed the two end every test on the same clock. test_ddp_rx_wr_req runs
directed_checks, early_checks, random_traffic and bench with the
write-request stream in place of the AXI4 port (WR_REQ = 1, two lines a
request; Verilator at 64 and 512, GHDL at 64): tests/wrreq.py's model
writes the requests into the same memory the checks compare, with random
back-pressure in random_traffic, and the AXI4 port's valids must stay low;
its bench goes to build/bench/ddp_rx-req-W<w>.json.

Run with `.venv/bin/pytest tests/ddp_rx` (SIMS=..., WAVES=1, RANDOM_SEED=...
as in tests/hdlsim.py). DDP_RX_ROUNDS sets random_traffic's rounds;
DDP_RX_TESTCASE (comma-separated) runs some of the cocotb tests of a case.
"""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

import cocotb
import pytest
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge, Timer
from cocotbext.axi import AxiRamWrite, AxiStreamBus, AxiStreamFrame, AxiStreamSource, AxiWriteBus

import ddp_reports
import hdlsim
import tbutil
import oracle
import protocol
import transactions
from wrreq import WriteRequestRam
from rdmap_tx import READ_REQ, READ_RESP, SEND, SEND_INV, SEND_SE, SEND_SE_INV, TERMINATE, WRITE

CLK_PERIOD_NS = 4
BENCH_DIR = hdlsim.BENCH_DIR
MEM_SIZE = 1 << 18
SLICE = 1 << 14  # host memory per connection in random_traffic
RQ_DEPTH = 8  # 2^RQ_AW, the default

REMOTE_WRITE, REMOTE_READ = 1, 2


@dataclass(eq=False)  # (a piece and its ULPDU refer to each other)
class Piece:
    conn: int
    data: bytes
    first: bool
    last: bool
    ulen: int
    u: "Ulpdu | None" = None  # the ULPDU it is a piece of


@dataclass(eq=False)
class Ulpdu:
    conn: int
    data: bytes
    verdict: int = 0
    pieces: list = field(default_factory=list)
    # An early ULPDU (tuser's early bit): one frame, the whole ULPDU, sent
    # with tuser {first, last} = user_fl (the block takes both as set); it
    # takes no verdict and is the oracle op {"early": ...}.
    early: bool = False
    user_fl: int = 3
    op: int = -1  # index of its op in TB.ops, once sent


def early_ulpdu(conn: int, data: bytes, user_fl: int = 3) -> Ulpdu:
    """An early ULPDU: what an LLP found out of order, sent whole before its
    turn."""
    u = Ulpdu(conn, data, early=True, user_fl=user_fl)
    u.pieces = [Piece(conn, data, True, True, len(data), u)]
    return u


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.s_axis_tdata)
        self.lanes = self.width // 8
        assert self.width == int(os.environ["DDP_RX_WIDTH"])
        self.conn_w = len(dut.s_conn_conn)
        self.nconn = 1 << self.conn_w
        self.stag_aw = len(dut.s_stag_index)
        self.rng = random.Random(random.getrandbits(64))  # seeded by cocotb
        self.icarus = cocotb.SIM_NAME.lower().startswith("icarus")
        self.oracle = oracle.shared()
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.ram = AxiRamWrite(AxiWriteBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=MEM_SIZE)
        for model in (self.source, self.ram):
            model.log.setLevel(logging.WARNING)
        # With the write-request stream (WR_REQ = 1) the writes come there,
        # into the same memory; the AXI4 port must stay idle.
        self.req = WriteRequestRam(dut, "m_wr", self.ram) if os.environ.get("DDP_RX_WR_REQ") == "1" else None
        if self.req is None:
            dut.m_wr_ready.value = 0
        self.early_bit = self.conn_w + 18  # tuser = {early, ulpdu_len[15:0], conn, first, last}
        self.ops: list[dict] = []  # for the oracle, in the order the block sees them
        self.op_pieces: dict[int, int] = {}  # ulpdu op index -> pieces it was sent in
        self.verdicts: deque = deque()  # (last-piece number, conn, code), in last-piece order
        self.last_pieces = 0
        self.events: dict[int, list] = defaultdict(list)
        self.drops: dict[int, list] = defaultdict(list)  # m_drop pulses: conn -> [first]
        self.dones: dict[int, int] = defaultdict(int)  # m_done pulses per conn
        self.sent: dict[int, int] = defaultdict(int)  # ULPDUs (in order and early) sent per conn
        self.ulpdus_sent = 0
        self.early_sent = 0
        self.in_beats = 0
        self.p_event_stall = 0.0
        self.p_verdict_wait = 0.3
        self.cycle = 0
        self.first_valid_cycles: list[int] = []
        self.aw_cycles: list[int] = []
        self.w_cycles: list[int] = []
        self.in_beat_cycles: list[int] = []
        self.measure = False

    async def start(self):
        await tbutil.clock_and_reset(self.dut, CLK_PERIOD_NS,
                                      low=("s_verdict_tvalid", "s_conn_valid", "s_stag_valid", "s_post_valid"),
                                      high=("m_cpl_ready", "m_err_ready"))
        # The tables are cleared after reset (ready outputs low meanwhile).
        await tbutil.wait_ready(self.dut, ("s_conn_ready", "s_axis_tready"))
        cocotb.start_soon(self._clock_loop())
        # Every port's handshake and format rules (tests/protocol.py).
        self.protocol = protocol.Monitor(self.dut, "ddp_rx")

    def pause(self, p: float):
        return tbutil.pauses(self.rng, p)

    # --- one loop per clock: verdicts in, events out, input counted ----------

    async def _clock_loop(self):
        dut = self.dut
        rng = random.Random(self.rng.getrandbits(64))
        vvalid = False
        # A ULPDU's last piece (tlast with tuser's last bit), not an early
        # ULPDU's: those take no verdict.
        last_mask, last_want = (1 << self.early_bit) | 1, 1
        prev_in_valid = 0
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            tv = int(dut.s_axis_tvalid.value)
            if tv and dut.s_axis_tready.value:
                self.in_beats += 1
                if self.measure:
                    self.in_beat_cycles.append(self.cycle)
                if dut.s_axis_tlast.value and int(dut.s_axis_tuser.value) & last_mask == last_want:
                    self.last_pieces += 1
            if self.req is not None:
                assert not dut.m_axi_awvalid.value and not dut.m_axi_wvalid.value, "AXI4 port used with WR_REQ = 1"
            elif dut.m_wr_valid.value:
                raise AssertionError("write-request stream used with WR_REQ = 0")
            if self.measure:
                if tv and not prev_in_valid:
                    self.first_valid_cycles.append(self.cycle)
                if self.req is not None:
                    # A request is the AW and the W beat at once.
                    if dut.m_wr_valid.value and dut.m_wr_ready.value:
                        self.aw_cycles.append(self.cycle)
                        self.w_cycles.append(self.cycle)
                if dut.m_axi_awvalid.value and dut.m_axi_awready.value:
                    self.aw_cycles.append(self.cycle)
                if dut.m_axi_wvalid.value and dut.m_axi_wready.value:
                    self.w_cycles.append(self.cycle)
            prev_in_valid = tv
            if vvalid and dut.s_verdict_tready.value:
                vvalid = False
                self.verdicts.popleft()
            if not vvalid and self.verdicts and self.verdicts[0][0] < self.last_pieces:
                if rng.random() >= self.p_verdict_wait:
                    _, conn, code = self.verdicts[0]
                    dut.s_verdict_tdata.value = code
                    dut.s_verdict_tuser.value = conn
                    vvalid = True
            dut.s_verdict_tvalid.value = 1 if vvalid else 0
            if dut.m_cpl_valid.value and dut.m_cpl_ready.value:
                self.events[int(dut.m_cpl_conn.value)].append(ddp_reports.completion(dut))
            if dut.m_err_valid.value and dut.m_err_ready.value:
                self.events[int(dut.m_err_conn.value)].append(ddp_reports.error(dut))
            if dut.m_drop_valid.value:
                self.drops[int(dut.m_drop_conn.value)].append(int(dut.m_drop_first.value))
            if dut.m_done_valid.value:
                self.dones[int(dut.m_done_conn.value)] += 1
            if self.p_event_stall:
                ready = 0 if rng.random() < self.p_event_stall else 1
                dut.m_cpl_ready.value = ready
                dut.m_err_ready.value = ready

    # --- configuration ----------------------------------------------------------

    async def _cfg(self, port: str, **fields):
        dut = self.dut
        for k, v in fields.items():
            getattr(dut, f"s_{port}_{k}").value = v
        getattr(dut, f"s_{port}_valid").value = 1
        while True:
            await RisingEdge(dut.clk)
            if getattr(dut, f"s_{port}_ready").value:
                break
        getattr(dut, f"s_{port}_valid").value = 0

    async def conn(self, conn: int, pd: int, enable: bool = True):
        await self._cfg("conn", conn=conn, enable=int(enable), pd=pd)
        if enable:
            self.ops.append({"conn": {"conn": conn, "pd": pd}})
        else:
            # ddp_place knows no disabled connection, only one it was never
            # told of: a connection this bench configured stays configured.
            assert not any("conn" in op and op["conn"]["conn"] == conn for op in self.ops), conn

    async def stag(self, index: int, key: int, pd: int, access: int, base: int, length: int, host: int,
                   bound: int | None = None, valid: bool = True):
        await self._cfg("stag", index=index, entry_valid=int(valid), key=key, pd=pd, bound=int(bound is not None),
                        conn=bound or 0, access=access, base=base, len=length, addr=host)
        e = {"index": index, "valid": valid, "key": key, "pd": pd, "access": access, "base": base,
             "len": length, "host": host}
        if bound is not None:
            e["conn"] = bound
        self.ops.append({"stag": e})

    async def post(self, conn: int, qn: int, addr: int, length: int, id_: int):
        await self._cfg("post", conn=conn, qn=qn, addr=addr, len=length, id=id_)
        self.ops.append({"post": {"conn": conn, "qn": qn, "addr": addr, "len": length, "id": id_}})

    # --- stimulus ------------------------------------------------------------------

    def segments(self, opcode: int, mulpdu: int = 1460, refuse_ok: bool = False, **kw) -> list[bytes]:
        resp = self.oracle.rdmap_segments(opcode, mulpdu, **kw)
        assert refuse_ok or resp["refused"] is None, f"Go refused to build opcode {opcode} {kw}: {resp['refused']}"
        return resp["segments"]

    def cut(self, u: Ulpdu, whole: float = 0.6) -> None:
        """Cut a ULPDU into pieces: the first holds at least its header (46
        octets for a Read Request or Terminate, 18 for the others, or all of
        a shorter ULPDU: tbutil.first_piece_min), as rx_join guarantees."""
        rng, data, n = self.rng, u.data, len(u.data)
        h = tbutil.first_piece_min(data)
        if n <= h or rng.random() < whole:
            cuts = [n]
        else:
            cuts = [rng.randint(h, min(n, h + 40)) if rng.random() < 0.3 else rng.randint(h, n)]
            while cuts[-1] < n:
                cuts.append(min(n, cuts[-1] + rng.choice([1, 2, rng.randint(1, 200), rng.randint(1, 2000)])))
        start = 0
        u.pieces = []
        for i, end in enumerate(cuts):
            u.pieces.append(Piece(u.conn, data[start:end], i == 0, end == n, n, u))
            start = end

    def interleave(self, queues: dict[int, list[Piece]]) -> list[Piece]:
        """Pieces of all connections, each connection's in the order given,
        mixed at random at piece boundaries."""
        qs = {c: deque(ps) for c, ps in queues.items() if ps}
        out = []
        live = list(qs)
        while live:
            c = self.rng.choice(live)
            out.append(qs[c].popleft())
            if not qs[c]:
                live.remove(c)
        return out

    @staticmethod
    def plan_ops(pieces: list[Piece]) -> list[dict]:
        """The oracle ops for pieces in input order: a ULPDU's at its first
        piece, an early ULPDU's at its frame; sets each ULPDU's op to its
        index in the list."""
        ops = []
        for p in pieces:
            u = p.u
            if u.early:
                u.op = len(ops)
                ops.append({"early": {"conn": u.conn, "data": u.data.hex()}})
            elif p.first:
                u.op = len(ops)
                ops.append({"ulpdu": {"conn": u.conn, "data": u.data.hex(), "verdict": u.verdict}})
        return ops

    async def send(self, per_conn: dict[int, list[Ulpdu]]):
        """Each connection's ULPDUs (in order, early ones where they stand),
        interleaved with the other connections' at piece boundaries."""
        await self.send_pieces(self.interleave({c: [p for u in us for p in u.pieces] for c, us in per_conn.items()}))

    async def send_pieces(self, pieces: list[Piece]):
        """Send pieces in this order; record the ULPDUs for the oracle in the
        order of their first pieces (early ones at their frames) and the
        verdicts in the order of the last pieces (none for early ones)."""
        base = len(self.ops)
        ops = self.plan_ops(pieces)
        for p in pieces:
            u = p.u
            if p.first:
                u.op += base
                self.sent[u.conn] += 1
                if u.early:
                    self.early_sent += 1
                else:
                    self.op_pieces[u.op] = len(u.pieces)
            if p.last and not u.early:
                self.verdicts.append((self.ulpdus_sent, u.conn, u.verdict))
                self.ulpdus_sent += 1
        self.ops += ops
        mask = (1 << self.conn_w) - 1
        for p in pieces:
            user = (p.ulen << (self.conn_w + 2)) | ((p.conn & mask) << 2)
            if p.u.early:
                user |= (1 << self.early_bit) | p.u.user_fl
            else:
                user |= (int(p.first) << 1) | int(p.last)
                if p.last and len(p.data) > self.lanes:
                    # `last` is defined on the tlast beat only (hw/README.md);
                    # mpa_rx drives it there and nowhere else, so this source
                    # does too (the source takes a beat's tuser from its
                    # octets' entries).
                    tail = len(p.data) - (len(p.data) - 1) // self.lanes * self.lanes
                    user = [user & ~1] * (len(p.data) - tail) + [user] * tail
            await self.source.send(AxiStreamFrame(p.data, tuser=user))
        await self.drain()

    async def drain(self):
        """Until every piece and verdict is in and every ULPDU has left
        placement (m_done; early ones take no verdict), and a while longer."""
        seen, still = None, 0
        while not self.source.empty() or self.verdicts or self.source.active:
            await ClockCycles(self.dut.clk, 20)
            now = (self.in_beats, len(self.verdicts))
            still = still + 1 if now == seen else 0
            seen = now
            # (A block that waits for a verdict it will never get, say.)
            assert still < 500, (f"no input beat or verdict taken for 10000 clocks: {len(self.verdicts)} verdicts "
                                 f"and {self.source.count()} frames left")
        for _ in range(500):  # m_done missing: check() says so
            if sum(self.dones.values()) >= sum(self.sent.values()):
                break
            await ClockCycles(self.dut.clk, 20)
        await ClockCycles(self.dut.clk, 100)

    # --- the oracle's verdict --------------------------------------------------

    def stream(self, ops: list[dict] | None = None) -> dict:
        """ddp_place_stream on a fresh session for ops (default: every op so
        far): the host range of every ulpdu and early op, the ulpdu ops
        dropped. Mem, events: those of ddp_place."""
        return self.oracle.request("ddp_place_stream", session="ddp_rx_tb",
                                   open={"mem_size": MEM_SIZE, "ring_depth": RQ_DEPTH},
                                   ops=self.ops if ops is None else ops, close=True)

    @staticmethod
    def places(ops: list[dict], reply: dict) -> dict[int, list]:
        """ddp_place_stream's places by op index."""
        it = iter(reply["places"])
        out = {i: next(it) for i, op in enumerate(ops) if "ulpdu" in op or "early" in op}
        assert next(it, None) is None
        return out

    async def check(self, must_fail: set[int] = frozenset()):
        await self.drain()
        # m_done: once per ULPDU, early ones included.
        for conn in sorted(set(self.sent) | set(self.dones)):
            assert self.dones[conn] == self.sent[conn], (
                f"conn {conn}: {self.dones[conn]} m_done pulses for {self.sent[conn]} ULPDUs (in order and early)")
        # m_drop: every piece of a ULPDU of a connection that is not
        # enabled, no early one.
        sresp = self.stream()
        want_drops = defaultdict(list)
        for d in sresp["drops"]:
            want_drops[d["conn"]] += [1] + [0] * (self.op_pieces[d["op"]] - 1)
        for conn in sorted(set(want_drops) | set(self.drops)):
            assert self.drops.get(conn, []) == want_drops.get(conn, []), (
                f"conn {conn}: m_drop pulses (first) {self.drops.get(conn)}, want {want_drops.get(conn)}")
        resp = self.oracle.request("ddp_place", mem_size=MEM_SIZE, ring_depth=RQ_DEPTH, ops=self.ops)
        want_events = defaultdict(list)
        for e in resp["events"]:
            want_events[e["conn"]].append(ddp_reports.from_oracle(e))
        details = {(e["conn"], e["ulpdu"]): e.get("detail", "") for e in resp["events"] if e["kind"] == "error"}
        for conn in sorted(set(want_events) | set(self.events)):
            got, want = self.events.get(conn, []), want_events.get(conn, [])
            if got != want:
                for i, (g, w) in enumerate(zip(got + [None] * len(want), want + [None] * len(got))):
                    if g != w:
                        raise AssertionError(
                            f"conn {conn}: event {i}: got {g}, want {w} (of {len(got)} got, {len(want)} wanted; "
                            f"Go errors: {[d for (c, _), d in details.items() if c == conn]})")
        for conn in must_fail:
            assert want_events[conn] and want_events[conn][-1][0] == "error", (
                f"conn {conn}: the oracle reports no error: {want_events[conn]}")
        want_mem = bytes.fromhex(resp["mem"])
        got_mem = self.ram.read(0, MEM_SIZE)
        if got_mem != want_mem:
            diffs = [i for i in range(MEM_SIZE) if got_mem[i] != want_mem[i]]
            raise AssertionError(
                f"host memory differs from Go's at {len(diffs)} octets, first at {diffs[0]:#x}: "
                f"got {got_mem[diffs[0]:diffs[0]+16].hex()} want {want_mem[diffs[0]:diffs[0]+16].hex()}")
        nev = sum(len(v) for v in want_events.values())
        errs = sum(1 for v in want_events.values() for e in v if e[0] == "error")
        self.dut._log.info("checked: %d ULPDUs and %d early ones (%d placed), %d events (%d errors), %d octets of "
                           "memory written", self.ulpdus_sent, self.early_sent,
                           sum(1 for i, pl in self.places(self.ops, sresp).items() if "early" in self.ops[i] and pl[1]),
                           nev, errs, sum(1 for b in want_mem if b))
        return want_events


# --- directed checks ---------------------------------------------------------


@cocotb.test()
async def directed_checks(dut):
    """One connection per check, each a bad ULPDU between good ones."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    ncase = 0
    conns = rng.sample(range(tb.nconn), 40)
    pd_a, pd_b = 0x11, 0x22
    # A shared region per connection, and some special ones.
    regions = {}
    host = 0x1000
    for i, c in enumerate(conns):
        await tb.conn(c, pd_a)
        idx, key = 16 + i, rng.randrange(256)
        regions[c] = (idx << 8 | key, 0x10000 * (i + 1) + 7, 1024, host)
        await tb.stag(idx, key, pd_a, REMOTE_WRITE | REMOTE_READ, 0x10000 * (i + 1) + 7, 1024, host)
        await tb.post(c, 0, host + 1100, 300, 1000 + i)
        await tb.post(c, 1, host + 1500, 28, 2000 + i)
        await tb.post(c, 2, host + 1600, 52, 3000 + i)
        host += 0x1000
    # Special STags.
    await tb.stag(1, 0x55, pd_b, REMOTE_WRITE, 0, 512, 0x30000)               # another PD
    await tb.stag(2, 0x66, pd_a, REMOTE_WRITE, 0, 512, 0x30400, bound=conns[0])  # bound to conns[0]
    await tb.stag(3, 0x77, pd_a, REMOTE_READ, 0, 512, 0x30800)                # read only
    await tb.stag(4, 0x88, pd_a, REMOTE_WRITE, 2**64 - 257, 256, 0x30c00)     # at the top of the TO space
    await tb.stag(5, 0x99, pd_a, REMOTE_WRITE, 0, 512, 0x31000)
    await tb.stag(5, 0x99, pd_a, REMOTE_WRITE, 0, 512, 0x31000, valid=False)  # invalidated by the host
    await tb.stag(6, 0xaa, pd_a, REMOTE_WRITE, 0, 512, 0x31400)               # for Send with Invalidate

    def good_write(c, off=0, n=40):
        stag, base, _, _ = regions[c]
        return tb.segments(WRITE, stag=stag, to=base + off, payload=rng.randbytes(n))

    def mutate(seg: bytes, octet: int, value: int) -> bytes:
        b = bytearray(seg)
        b[octet] = value
        return bytes(b)

    cases = {}
    k = iter(conns)

    def case(name, bad: list[bytes], verdict: int = 0, after_ok=True):
        c = next(k)
        segs = good_write(c, 0, rng.randint(1, 100)) + bad + (good_write(c, 200, 50) if after_ok else [])
        us = [Ulpdu(c, s) for s in segs]
        us[1].verdict = verdict  # the first bad ULPDU (a good Write is one segment)
        cases[c] = (name, us)

    stag_of = lambda c: regions[c][0]  # noqa: E731
    base_of = lambda c: regions[c][1]  # noqa: E731
    case("unregistered STag", tb.segments(WRITE, stag=(4000 << 8) | 1, to=0, payload=b"x" * 20))
    case("STag index beyond the table", tb.segments(WRITE, stag=((1 << tb.stag_aw) + 16) << 8, to=0, payload=b"x"))
    c0 = conns[len(cases)]
    case("stale key", tb.segments(WRITE, stag=stag_of(c0) ^ 1, to=base_of(c0), payload=b"x" * 20))
    case("invalidated by the host", tb.segments(WRITE, stag=5 << 8 | 0x99, to=0, payload=b"x" * 20))
    case("another PD", tb.segments(WRITE, stag=1 << 8 | 0x55, to=0, payload=b"x" * 20))
    case("bound to another connection", tb.segments(WRITE, stag=2 << 8 | 0x66, to=0, payload=b"x" * 20))
    case("no write access", tb.segments(READ_RESP, stag=3 << 8 | 0x77, to=0, payload=b"x" * 20))
    # Go will not build a wrapping Write: its TO field is set afterwards.
    wrap = tb.segments(WRITE, stag=4 << 8 | 0x88, to=0, payload=b"x" * 10)[0]
    case("TO wrap (TO + length = 2^64)", [wrap[:6] + (2**64 - 10).to_bytes(8, "big") + wrap[14:]])
    case("TO wrap", [wrap[:6] + (2**64 - 3).to_bytes(8, "big") + wrap[14:]])
    c0 = conns[len(cases)]
    case("past the end", tb.segments(WRITE, stag=stag_of(c0), to=base_of(c0) + 1000, payload=b"x" * 25))
    c0 = conns[len(cases)]
    case("before the base", tb.segments(WRITE, stag=stag_of(c0), to=base_of(c0) - 1, payload=b"x" * 25))
    c0 = conns[len(cases)]
    w = tb.segments(WRITE, stag=stag_of(c0), to=base_of(c0), payload=b"y" * 30)[0]
    case("DV 2", [mutate(w, 0, (w[0] & ~3) | 2)])
    case("RV 2", [mutate(w, 1, 0x80)])
    case("opcode 9", [mutate(w, 1, 0x49)])
    s = tb.segments(SEND, msn=1, payload=b"s" * 30)[0]
    case("Send in a tagged segment", [mutate(s, 0, s[0] | 0x80)])
    case("QN 3", [mutate(s, 9, 3)])
    case("Send on QN 1", [mutate(s, 9, 1)])
    case("MSN ahead (no buffer)", tb.segments(SEND, msn=2, payload=b"s"))
    case("MSN behind", tb.segments(SEND, msn=0, payload=b"s"))
    case("MO beyond the buffer", [mutate(s, 16, 0x02)])
    case("too long", tb.segments(SEND, msn=1, payload=b"s" * 301))
    case("short ULPDU", [w[:10]])
    case("short untagged ULPDU", [s[:17]])
    rr = {"sink_stag": 1, "sink_to": 2, "size": 3, "src_stag": 4, "src_to": 5}
    rrs = tb.segments(READ_REQ, msn=1, rr=rr)[0]
    case("Read Request of 27 octets", [rrs[:-1]])
    # Message length 28 (MO + length), but not one segment of 28 octets
    # (rdmap.DeliveredReadRequest): octet 0 never sent, or the 28 octets
    # in two segments.
    case("Read Request's last segment at MO 1", [rrs[:14] + (1).to_bytes(4, "big") + rrs[19:]])
    case("Read Request in two segments", [mutate(rrs[:28], 0, rrs[0] & ~0x40),
                                          rrs[:14] + (10).to_bytes(4, "big") + rrs[28:]])
    case("Send with Invalidate of another PD's STag", tb.segments(SEND_INV, msn=1, inv_stag=1 << 8 | 0x55, payload=b"i"))
    case("Send with SE and Invalidate of a stale key", tb.segments(SEND_SE_INV, msn=1, inv_stag=6 << 8 | 0x12, payload=b"i"))
    case("Write after Send with Invalidate",
         tb.segments(SEND_INV, msn=1, inv_stag=6 << 8 | 0xaa, payload=b"i" * 40)
         + tb.segments(WRITE, stag=6 << 8 | 0xaa, to=0, payload=b"w" * 40))
    case("CRC error", tb.segments(SEND, msn=1, payload=b"c" * 100), verdict=2)
    case("marker error", tb.segments(WRITE, stag=stag_of(conns[len(cases)]), to=base_of(conns[len(cases)]),
                                     payload=b"m" * 100), verdict=3)
    c0 = conns[len(cases)]
    good = (tb.segments(READ_REQ, msn=1, rr=rr) + tb.segments(SEND_SE, msn=1, payload=b"q" * 200, mulpdu=64)
            + tb.segments(READ_RESP, stag=stag_of(c0), to=base_of(c0) + 500, payload=b"r" * 300, mulpdu=100))
    cases[c0] = ("good traffic", [Ulpdu(c0, s) for s in good])
    next(k)
    c0 = conns[len(cases)]
    term = tb.segments(TERMINATE, msn=1, payload=bytes([0x10, 0x02, 0x05, 0x00]))
    cases[c0] = ("Terminate, then a Write", [Ulpdu(c0, s) for s in term + good_write(c0, 0, 64)])
    next(k)
    for c, (name, us) in cases.items():
        for u in us:
            tb.cut(u, whole=0.3)
    # Bad verdicts: nothing of that connection after the bad ULPDU.
    for c, (name, us) in cases.items():
        for i, u in enumerate(us):
            if u.verdict:
                del us[i + 1:]
                break
    await tb.send({c: us for c, (name, us) in cases.items()})
    fails = {c for c, (name, _) in cases.items() if name not in ("good traffic",)}
    want = await tb.check(must_fail={c for c in fails if not cases[c][0].startswith("Terminate")})
    for c, (name, _) in cases.items():
        dut._log.info("%-45s -> %s", name, want[c][-1] if want[c] else "nothing")
        ncase += 1
    assert ncase == len(cases)


# --- early ULPDUs ----------------------------------------------------------------


@cocotb.test()
async def early_checks(dut):
    """Early ULPDUs (tuser's early bit), one connection per case: placed
    before their turn if every check but the last segment's order passes
    against the state then, and nothing else (no verdict, no report, no
    queue advance, no invalidation, no m_drop). Memory and reports are
    compared with the oracle after the early frames, before their in-order
    copies, and again at the end; the oracle's host ranges (ddp_place_stream)
    must place the early ULPDUs each case means to place, and no others."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    conns = rng.sample(range(tb.nconn), 48)
    pd_a, pd_b = 0x31, 0x42
    regions = {}
    host = 0x1000
    for i, c in enumerate(conns[:-1]):
        await tb.conn(c, pd_a)
        idx, key = 16 + i, rng.randrange(256)
        regions[c] = (idx << 8 | key, 0x20000 * (i + 1) + 3, 1024, host)
        await tb.stag(idx, key, pd_a, REMOTE_WRITE | REMOTE_READ, 0x20000 * (i + 1) + 3, 1024, host)
        for m in range(3):
            await tb.post(c, 0, host + 0x400 + 0x100 * m, 200, 1000 + 10 * i + m)
        for m in range(2):
            await tb.post(c, 1, host + 0x700 + 0x40 * m, 28, 2000 + 10 * i + m)
        await tb.post(c, 2, host + 0x800, 52, 3000 + i)
        host += 0x1000
    # The last connection is disabled; it has a region all the same.
    c_off = conns[-1]
    await tb.conn(c_off, pd_a, enable=False)
    regions[c_off] = (15 << 8 | 0x5a, 0, 1024, host)
    await tb.stag(15, 0x5a, pd_a, REMOTE_WRITE, 0, 1024, host)
    await tb.stag(1, 0x55, pd_b, REMOTE_WRITE, 0, 512, 0x38000)                # another PD
    await tb.stag(2, 0x66, pd_a, REMOTE_WRITE, 0, 512, 0x38400, bound=conns[0])  # bound to conns[0]
    await tb.stag(3, 0x77, pd_a, REMOTE_READ, 0, 512, 0x38800)                # read only
    await tb.stag(5, 0x99, pd_a, REMOTE_WRITE, 0, 512, 0x39000)
    await tb.stag(5, 0x99, pd_a, REMOTE_WRITE, 0, 512, 0x39000, valid=False)  # invalidated by the host
    inv_host = iter(range(0x3a000, 0x40000, 0x400))
    inv_idx = iter(range(8, 15))

    async def inv_stag():
        """A region of its own for a case that invalidates it."""
        idx, key = next(inv_idx), rng.randrange(256)
        await tb.stag(idx, key, pd_a, REMOTE_WRITE, 0, 256, next(inv_host))
        return idx << 8 | key

    def write(c, off, n, **kw):
        stag, base, _, _ = regions[c]
        return tb.segments(WRITE, stag=stag, to=base + off, payload=rng.randbytes(n), **kw)[0]

    def send(msn, n, op=SEND, **kw):
        return tb.segments(op, msn=msn, payload=rng.randbytes(n), **kw)[0]

    def U(c, data, verdict=0, cuts=None):
        u = Ulpdu(c, data, verdict)
        if cuts is None:
            tb.cut(u, whole=0.5)
        else:
            b = [0, *cuts, len(data)]
            u.pieces = [Piece(c, data[b[k]:b[k + 1]], k == 0, k == len(b) - 2, len(data), u)
                        for k in range(len(b) - 1)]
        return u

    def E(c, data, fl=3):
        return early_ulpdu(c, data, fl)

    def mutate(seg: bytes, octet: int, value: int) -> bytes:
        b = bytearray(seg)
        b[octet] = value
        return bytes(b)

    cases = {}  # conn -> (name, pre, post, placed, not placed, kinds)
    k = iter(conns[:-1])

    def case(name, pre, post=(), placed=(), unplaced=(), kinds=None):
        """pre: before the first check, post: after it (ULPDUs or pieces, in
        this order); placed/unplaced: early ULPDUs Go must (not) place;
        kinds: the reports Go must give the connection, c(ompletion) or
        e(rror), in order."""
        c = pre[0].conn
        assert c not in cases, name
        flat = lambda xs: [p for x in xs for p in (x.pieces if isinstance(x, Ulpdu) else [x])]  # noqa: E731
        cases[c] = (name, flat(pre), flat(post), list(placed), list(unplaced), kinds)

    # Placed early, then delivered once in order.
    c = next(k)
    w1 = write(c, 300, 120)
    e = E(c, w1)
    case("Write early, then in order", [U(c, write(c, 0, rng.randint(1, 100))), e], [U(c, w1), U(c, write(c, 600, 50))],
         placed=[e], kinds="ccc")
    c = next(k)
    a, w1 = U(c, write(c, 0, 400), cuts=(60, 250)), write(c, 600, 100)
    e = E(c, w1)
    case("Write early inside a Write of its connection", [a.pieces[0], e, *a.pieces[1:]], [U(c, w1)],
         placed=[e], kinds="cc")
    c = next(k)
    s1, s2 = U(c, send(1, 180), cuts=(50, 120)), send(2, 100)
    e = E(c, s2)
    case("Send early inside a Send of its connection", [s1.pieces[0], e, *s1.pieces[1:]], [U(c, s2)],
         placed=[e], kinds="cc")
    c = next(k)
    s3 = send(3, 150)
    e = E(c, s3)
    case("Send early for MSN 3 (no queue advance)", [e], [U(c, send(1, 40)), U(c, send(2, 70)), U(c, s3)],
         placed=[e], kinds="ccc")
    c = next(k)
    m2 = tb.segments(SEND_SE, mulpdu=64, msn=2, payload=rng.randbytes(150))
    assert len(m2) > 2
    e1, e2 = E(c, m2[-1]), E(c, m2[0])
    case("last and first segments of MSN 2 early", [e1, e2], [U(c, send(1, 20)), *[U(c, s) for s in m2]],
         placed=[e1, e2], kinds="cc")
    c = next(k)
    rrq = {"sink_stag": 7, "sink_to": 2**40 + 9, "size": 1000, "src_stag": 9, "src_to": 77}
    r2 = tb.segments(READ_REQ, msn=2, rr=rrq)[0]
    e = E(c, r2)
    case("Read Request early for MSN 2", [e], [U(c, tb.segments(READ_REQ, msn=1, rr=rrq)[0]), U(c, r2)],
         placed=[e], kinds="cc")
    for fl in (0, 1, 2):
        c = next(k)
        w = write(c, 100, 300)
        e = E(c, w, fl)
        case(f"tuser first={fl >> 1} last={fl & 1}", [e], [U(c, w), U(c, write(c, 500, 30))], placed=[e], kinds="cc")
    # Failing a check: not placed, not reported; the stream carries on.
    w = write(conns[0], 0, 20)  # a template with some connection's STag
    s = send(1, 30)
    bad = [
        ("another PD's STag", tb.segments(WRITE, stag=1 << 8 | 0x55, to=0, payload=b"x" * 20)[0]),
        ("STag bound to another connection", tb.segments(WRITE, stag=2 << 8 | 0x66, to=0, payload=b"x" * 20)[0]),
        ("STag invalidated by the host", tb.segments(WRITE, stag=5 << 8 | 0x99, to=0, payload=b"x" * 20)[0]),
        ("no write access", tb.segments(READ_RESP, stag=3 << 8 | 0x77, to=0, payload=b"x" * 20)[0]),
        ("short", w[:10]),
        ("short untagged", s[:17]),
        ("DV 2", mutate(w, 0, (w[0] & ~3) | 2)),
        ("RV 2", mutate(w, 1, 0x80)),
        ("opcode 9", mutate(w, 1, 0x49)),
        ("QN 3", mutate(s, 9, 3)),
        ("MSN 4 without a buffer", send(4, 30)),
        ("MSN 0, behind", send(0, 30)),
        ("MO beyond the buffer", mutate(s, 16, 0x02)),
        ("longer than its buffer", send(2, 201)),
    ]
    for name, data in bad:
        c = next(k)
        e = E(c, data)
        case(f"early, {name}", [U(c, write(c, 0, 40)), e], [U(c, write(c, 200, 40))], unplaced=[e], kinds="cc")
    for name, to, n in (("past the end", lambda b: b + 1000, 25), ("before the base", lambda b: b - 1, 25),
                        ("TO wrap", lambda b: 2**64 - 10, 10)):
        c = next(k)
        stag, base, _, _ = regions[c]
        # Go will not build these: the TO is set afterwards.
        data = tb.segments(WRITE, stag=stag, to=0, payload=rng.randbytes(n))[0]
        e = E(c, data[:6] + to(base).to_bytes(8, "big") + data[14:])
        case(f"early, {name}", [e, U(c, write(c, 0, 40))], [U(c, write(c, 200, 40))], unplaced=[e], kinds="cc")
    c = next(k)
    stag, base, _, _ = regions[c]
    e = E(c, tb.segments(WRITE, stag=stag ^ 0x80, to=base, payload=b"k" * 30)[0])
    case("early, stale key", [e], [U(c, write(c, 200, 40))], unplaced=[e], kinds="c")
    # A failed check early, then the same octets in order: the error then.
    c = next(k)
    e = E(c, tb.segments(WRITE, stag=1 << 8 | 0x55, to=0, payload=b"y" * 20)[0])
    case("early foreign STag, then in order", [U(c, write(c, 0, 40)), e], [U(c, e.data)], unplaced=[e], kinds="ce")
    # After the stream has failed: nothing placed.
    c = next(k)
    e = E(c, write(c, 300, 60))
    case("early after a stream error", [U(c, write(c, 0, 40)), U(c, tb.segments(WRITE, stag=1 << 8 | 0x55, to=0,
                                                                              payload=b"z" * 20)[0]), e],
         unplaced=[e], kinds="ce")
    c = next(k)
    e = E(c, write(c, 300, 60))
    case("early after a Terminate",
         [U(c, tb.segments(TERMINATE, msn=1, payload=bytes([0x10, 0x02, 0x05, 0x00]))[0]), e],
         unplaced=[e], kinds="c")
    # Invalidation: an early Send with Invalidate invalidates nothing; an
    # STag a Send with Invalidate did invalidate takes no early Write.
    c = next(k)
    x = await inv_stag()
    sinv = send(1, 20, op=SEND_INV, inv_stag=x)
    e = E(c, sinv)
    wx = lambda off: tb.segments(WRITE, stag=x, to=off, payload=rng.randbytes(40))[0]  # noqa: E731
    case("early Send with Invalidate", [e, U(c, wx(0))], [U(c, sinv), U(c, wx(100))], placed=[e], kinds="cce")
    c = next(k)
    x = await inv_stag()
    e = E(c, tb.segments(WRITE, stag=x, to=0, payload=b"v" * 40)[0])
    case("early Write to an STag invalidated", [U(c, send(1, 20, op=SEND_SE_INV, inv_stag=x)), e],
         [U(c, write(c, 0, 30))], unplaced=[e], kinds="cc")
    # Verdicts: early ULPDUs take none; the in-order ones still get theirs.
    c = next(k)
    w2, w3 = write(c, 200, 60), write(c, 400, 60)
    e2, e3 = E(c, w2), E(c, w3)
    case("verdicts around early ULPDUs", [U(c, write(c, 0, 60)), e2, U(c, write(c, 100, 60))],
         [e3, U(c, w2, verdict=2)], placed=[e2, e3], kinds="cce")
    c = next(k)
    e = E(c, write(c, 300, 60))
    case("early, then a marker error", [e, U(c, write(c, 0, 60), verdict=3)], placed=[e], kinds="e")
    # A disabled connection: nothing placed, no m_drop for the early ones
    # (check() compares m_drop with the oracle's drops).
    e1, e2 = E(c_off, write(c_off, 0, 50)), E(c_off, write(c_off, 100, 50), 0)
    case("early ULPDUs of a disabled connection", [e1, U(c_off, write(c_off, 200, 300), cuts=(100,)), e2],
         unplaced=[e1, e2], kinds="")

    async def phase(which: int):
        await tb.send_pieces(tb.interleave({c: v[which] for c, v in cases.items()}))
        return await tb.check()

    def places_as_meant(which: int):
        """The early ULPDUs of the phase: Go places those a case means to."""
        where = tb.places(tb.ops, tb.stream())
        for c, (name, *pieces, placed, unplaced, _) in cases.items():
            this = {id(p.u) for p in pieces[which - 1]}
            for u in placed:
                if id(u) in this:
                    assert where[u.op][1] > 0, f"{name}: Go does not place the early ULPDU ({where[u.op]})"
            for u in unplaced:
                if id(u) in this:
                    assert where[u.op][1] == 0, f"{name}: Go places the early ULPDU at {where[u.op]}"

    await phase(1)
    places_as_meant(1)
    want = await phase(2)
    places_as_meant(2)
    for c, (name, _, _, _, _, kinds) in cases.items():
        got = "".join(e[0][0] for e in want.get(c, []))
        assert kinds is None or got == kinds, f"{name}: Go reports {want.get(c)}, the case means {kinds!r}"
        dut._log.info("%-48s -> %s", name, want[c][-1] if want[c] else "nothing")
    assert len(tb.drops[c_off]) == 2, tb.drops[c_off]  # the in-order ULPDU's two pieces
    assert tb.early_sent == sum(len(v[3]) + len(v[4]) for v in cases.values())


# --- random traffic ------------------------------------------------------------


class Conn:
    def __init__(self, num, pd):
        self.num, self.pd = num, pd
        self.msn = [1, 1, 1]
        self.stags = []    # (stag, base, len) it may write
        self.inv = []      # STags it may invalidate
        self.foreign = []  # STag entries it may not use (but tries to)
        self.mem = 0       # its slice of host memory


async def random_round(tb: TB, conns: list[Conn], stags: list[dict], msgs_per_conn: int, p_mutate: float,
                       p_bad_verdict: float, p_early: float = 0.0):
    rng = tb.rng
    queues = {}
    early_mid = []
    for c in conns:
        await tb.conn(c.num, c.pd)
        c.msn = [1, 1, 1]
        for qn, n, size in ((0, RQ_DEPTH, 2048), (1, 4, 28), (2, 1, 52)):
            for _ in range(n):
                # In the connection's own half slice (see random_traffic).
                await tb.post(c.num, qn, c.mem + rng.randrange(0, SLICE // 2 - size),
                              size if qn else rng.randint(16, size), rng.getrandbits(32))
    # Re-register the STags that Sends with Invalidate may have invalidated.
    for s in stags:
        if s["reuse"]:
            await tb.stag(s["index"], s["key"], s["pd"], s["access"], s["base"], s["len"], s["host"], s["bound"])
    for c in conns:
        us = []
        sends = rrs = 0
        for _ in range(msgs_per_conn):
            r = rng.random()
            mulpdu = rng.choice([rng.randint(64, 300), rng.randint(300, 1500), 1460, 9000])
            if r < 0.45 or not c.stags:
                op = rng.choice([WRITE, WRITE, READ_RESP])
                if c.stags and rng.random() < 0.97:
                    stag, base, length = rng.choice(c.stags)
                else:
                    s = rng.choice(c.foreign)
                    stag, base, length = s["index"] << 8 | s["key"], s["base"], s["len"]
                n = rng.choice([0, rng.randint(1, 64), rng.randint(1, min(length, 3000))])
                off = rng.randint(0, max(0, length - n)) if rng.random() < 0.98 else rng.randint(0, length + 100)
                segs = tb.segments(op, mulpdu, refuse_ok=True, stag=stag, to=(base + off) % 2**64,
                                   payload=rng.randbytes(n))
            elif r < 0.85 and sends < RQ_DEPTH:
                op = rng.choice([SEND, SEND, SEND_SE, SEND_INV, SEND_SE_INV])
                kw = {}
                if op in (SEND_INV, SEND_SE_INV):
                    if c.inv and rng.random() < 0.8:
                        kw["inv_stag"] = rng.choice(c.inv)
                    else:
                        s = rng.choice(c.foreign)
                        kw["inv_stag"] = s["index"] << 8 | s["key"]
                n = rng.choice([0, rng.randint(1, 100), rng.randint(1, 2100)])
                segs = tb.segments(op, mulpdu, msn=c.msn[0], payload=rng.randbytes(n), **kw)
                c.msn[0] += 1
                sends += 1
            elif r < 0.97 and rrs < 4:
                rr = {k: rng.getrandbits(64 if k.endswith("_to") else 32)
                      for k in ("sink_stag", "sink_to", "size", "src_stag", "src_to")}
                segs = tb.segments(READ_REQ, max(mulpdu, 46), msn=c.msn[1], rr=rr)
                c.msn[1] += 1
                rrs += 1
            elif rng.random() < 0.5:
                segs = tb.segments(TERMINATE, 128, msn=c.msn[2], payload=bytes([0x10, 0x02, 0x05, 0x00]))
            else:
                segs = [rng.randbytes(rng.randint(1, 80))]  # garbage
            for seg in segs:
                if rng.random() < p_mutate:
                    b = bytearray(seg)
                    i = rng.randrange(min(len(b), 18))
                    b[i] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randrange(1, 256)
                    seg = bytes(b)
                us.append(Ulpdu(c.num, seg))
        full = list(us)
        for i, u in enumerate(us):
            if rng.random() < p_bad_verdict:
                u.verdict = rng.choice([2, 3])
                del us[i + 1:]
                break
        for u in us:
            tb.cut(u)
        queues[c.num], mids = with_early(tb, c.num, full, us, p_early)
        early_mid += mids
    pieces = tb.interleave(queues)
    if early_mid:
        pieces = drop_early_races(tb, pieces, early_mid)
    await tb.send_pieces(pieces)


def early_variant(rng: random.Random, data: bytes) -> tuple[bytes, bool]:
    """What an early copy of a ULPDU carries: mostly its octets (True), else
    a hostile variant (False): a header octet changed, cut short, longer,
    or garbage."""
    r = rng.random()
    if r < 0.7:
        return data, True
    b = bytearray(data)
    if r < 0.85 and b:
        i = rng.randrange(min(len(b), 18))
        b[i] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randrange(1, 256)
    elif r < 0.9:
        b = b[:rng.randint(1, 18)]
    elif r < 0.95:
        b += rng.randbytes(rng.randint(1, 64))
    else:
        b = rng.randbytes(rng.randint(1, 80))
    return bytes(b), False


def with_early(tb: TB, conn: int, full: list[Ulpdu], us: list[Ulpdu], p_early: float):
    """The pieces of a connection's ULPDUs us (cut), in order, with early
    ULPDUs among them: copies of some of its ULPDUs (full: before the cut
    after a bad verdict), each sent a few ULPDUs before its in-order copy,
    at a piece boundary (maybe inside another ULPDU), as an LLP that finds
    segments out of order would; some are hostile variants. Never after
    the connection's last piece (its verdict may be bad: nothing follows).
    Returns the pieces and, for each early ULPDU inside another ULPDU of
    the connection, (early, that ULPDU, the early's in-order copy or None)."""
    rng = tb.rng
    q = [p for u in us for p in u.pieces]
    if not q:
        return q, []
    starts, pos = [], 0
    for u in us:
        starts.append(pos)
        pos += len(u.pieces)
    inserts = []
    for j, src in enumerate(full):
        if rng.random() >= p_early:
            continue
        data, exact = early_variant(rng, src.data)
        e = early_ulpdu(conn, data, rng.choice([3, 3, 3, 3, 0, 1, 2]))
        lo = starts[min(max(0, j - 4), len(us) - 1)]
        hi = starts[j] if j < len(us) else len(q) - 1
        k = rng.randint(lo, hi)
        copy = us[j] if exact and j < len(us) else None
        inserts.append((k, rng.random(), e, q[k].u if not q[k].first else None, copy))
    out, mids = [], []
    inserts.sort(key=lambda x: x[:2])
    i = 0
    for k, p in enumerate(q):
        while i < len(inserts) and inserts[i][0] == k:
            _, _, e, mid, copy = inserts[i]
            out.append(e.pieces[0])
            if mid is not None:
                mids.append((e, mid, copy))
            i += 1
        out.append(p)
    return out, mids


def drop_early_races(tb: TB, pieces: list[Piece], mids: list) -> list[Piece]:
    """Leave out the early ULPDUs that would race a ULPDU they sit inside.

    The oracle applies a ULPDU whole at its first piece; the block writes an
    early ULPDU between that ULPDU's pieces. Where both write the same
    octets the last write differs, unless the early one's in-order copy
    writes them again later (same range: same octets); so an early ULPDU
    that Go places into the range of the ULPDU it sits inside, without an
    in-order copy placed in the same range, is not sent (it changes nothing
    but memory, so nothing else changes)."""
    ops = tb.ops + tb.plan_ops(pieces)
    base = len(tb.ops)
    places = tb.places(ops, tb.stream(ops))
    gone = set()
    placed = 0
    for e, mid, copy in mids:
        pe, pm = places[base + e.op], places[base + mid.op]
        placed += pe[1] > 0
        overlap = pe[1] and pm[1] and pe[0] < pm[0] + pm[1] and pm[0] < pe[0] + pe[1]
        if overlap and (copy is None or places[base + copy.op] != pe):
            gone.add(id(e))
    tb.dut._log.info("%d early ULPDUs inside another of their connection (Go places %d), %d of them left out "
                     "(same octets)", len(mids), placed, len(gone))
    return [p for p in pieces if id(p.u) not in gone]


@cocotb.test()
async def random_traffic(dut):
    """Many connections interleaved, every opcode, mutated and garbage
    ULPDUs, random verdicts, gaps and back-pressure; memory, completions and
    errors against the Go stack."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    big = os.environ.get("DDP_RX_BIG") == "1"
    rounds = int(os.environ.get("DDP_RX_ROUNDS", "0")) or (2 if tb.icarus else 6 if big else 3)
    nconn = 6 if tb.icarus else 16
    per_conn = 6 if tb.icarus else (40 if big else 10)
    tb.source.set_pause_generator(tb.pause(0.1))
    for ch in (tb.ram.aw_channel, tb.ram.w_channel):
        ch.set_pause_generator(tb.pause(0.15))
    if tb.req is not None:
        tb.req.set_pause_generator(tb.pause(0.15))
    tb.p_event_stall = 0.2
    pds = [rng.getrandbits(32) for _ in range(3)]
    conns = [Conn(n, rng.choice(pds)) for n in rng.sample(range(tb.nconn), nconn)]
    # Each connection has a slice of host memory of its own: posted
    # buffers in its first half, its STag regions in the second. Two streams
    # placing into the same octets at once race (in any RNIC), so the
    # STags a connection could use but that belong to another are never
    # tried; those it tries and may not use (another PD, bound elsewhere,
    # no write right) have their regions in its slice too.
    stags = []
    indices = iter(rng.sample(range(1 << tb.stag_aw), 5 * nconn))
    for i, c in enumerate(conns):
        c.mem = i * SLICE
    for c in conns:
        for j in range(5):
            length = rng.choice([rng.randint(1, 64), rng.randint(64, SLICE // 2)])
            own = j < 3
            s = {"index": next(indices), "key": rng.getrandbits(8), "pd": c.pd if own or j == 4 else 7,
                 "access": 3 if own or j == 3 else rng.choice([0, 2]),
                 "base": rng.choice([rng.getrandbits(64), rng.getrandbits(20), 2**64 - length - rng.randint(1, 4)]),
                 "len": length, "host": c.mem + SLICE // 2 + rng.randrange(0, SLICE // 2 - length + 1),
                 "reuse": False, "bound": c.num if own and rng.random() < 0.3 else None}
            if j == 4:
                s["bound"] = rng.choice([o.num for o in conns if o is not c])
            s["base"] = min(s["base"], 2**64 - 1 - length)
            stags.append(s)
            await tb.stag(s["index"], s["key"], s["pd"], s["access"], s["base"], s["len"], s["host"], s["bound"])
            if own:
                c.stags.append((s["index"] << 8 | s["key"], s["base"], s["len"]))
                if rng.random() < 0.3:
                    c.inv.append(s["index"] << 8 | s["key"])
                    s["reuse"] = True
            else:
                c.foreign.append(s)
    for r in range(rounds):
        await random_round(tb, conns, stags, per_conn, p_mutate=0.015, p_bad_verdict=0.005, p_early=0.2)
        dut._log.info("round %d: %d ULPDUs and %d early ones so far", r, tb.ulpdus_sent, tb.early_sent)
    await tb.check()


# --- bench ---------------------------------------------------------------------


@cocotb.test()
async def bench(dut):
    """Back-to-back RDMA Writes into an always-ready memory: input beats per
    clock and latency to the first AW and W (measured, not asserted)."""
    tb = TB(dut)
    tb.rng = tbutil.bench_rng()
    await tb.start()
    rng = tb.rng
    tb.p_verdict_wait = 0.0
    c, pd = rng.randrange(tb.nconn), 5
    await tb.conn(c, pd)
    await tb.stag(9, 0x42, pd, REMOTE_WRITE, 0, 1 << 17, 0)
    stag = 9 << 8 | 0x42
    lanes = tb.lanes

    # Latency: an idle block, one Write arriving.
    tb.measure = True
    seg = tb.segments(WRITE, 1460, stag=stag, to=64, payload=rng.randbytes(1000))[0]
    u = Ulpdu(c, seg)
    tb.cut(u, whole=1.0)
    await tb.send({c: [u]})
    lat_aw = tb.aw_cycles[0] - tb.first_valid_cycles[0]
    lat_w = tb.w_cycles[0] - tb.first_valid_cycles[0]

    cases = []
    # Sizes are FPDU sizes on the wire: the ULPDU is 6 octets shorter (MPA
    # length and CRC; no pad, the sizes are multiples of 4), the payload 14
    # more (the tagged header). Target offsets step by 9000, so the payload
    # lands at every offset in a beat that is a multiple of 8.
    for fpdu in (64, 128, 256, 1460, 9000):
        size = fpdu - 6 - 14
        segs = []
        for i in range(max(4, 400 // (size // lanes + 1))):
            segs += tb.segments(WRITE, size + 14, stag=stag, to=(i * 9000) % (1 << 16), payload=rng.randbytes(size))
        us = [Ulpdu(c, s) for s in segs]
        for u in us:
            tb.cut(u, whole=1.0)
        tb.in_beat_cycles.clear()
        tb.w_cycles.clear()
        await tb.send({c: us})
        beats = len(tb.in_beat_cycles)
        t0, t1 = tb.in_beat_cycles[0], tb.in_beat_cycles[-1]
        clocks = t1 - t0 + 1
        bpc = beats / clocks
        segs_per_clock = len(us) / clocks
        # The AXI write port's share of those clocks: where a payload needs
        # more bus beats than its ULPDU took in, this is what limits.
        w_busy = sum(1 for t in tb.w_cycles if t0 <= t <= t1) / clocks
        cases.append({"size": fpdu, "payload": size, "segments": len(us), "beats_per_clock": bpc,
                      "fpdus_per_clock": segs_per_clock, "w_beats_per_clock": round(w_busy, 3)})
        dut._log.info("bench: %d-octet FPDUs (%d-octet Writes): %.3f input beats per clock, %.3f segments per "
                      "clock, W busy %.3f", fpdu, size, bpc, segs_per_clock, w_busy)
    tb.measure = False
    await tb.check()
    axi = len(dut.m_axi_wdata)
    # Named as scripts/hw_figures.py names the build: ddp_rx/2x with the
    # write port twice the data width, ddp_rx/req with the write-request
    # stream (two lines a request).
    block = "ddp_rx/req" if tb.req is not None else "ddp_rx/2x" if axi == 2 * tb.width else "ddp_rx"
    # Figures "<FPDU size>.<quantity>" (one FPDU a segment); the write
    # port's busy share is kept as a detail: it follows from the offsets.
    hdlsim.write_bench(
        block, tb.width,
        beats_per_clock=min(x["beats_per_clock"] for x in cases if x["size"] >= 128),
        latency_clocks=lat_w,
        higher={f"{x['size']}.{q}": x[q] for x in cases for q in ("beats_per_clock", "fpdus_per_clock")},
        lower={"latency_aw_clocks": lat_aw},
        details={"axi_width": axi, "write_port": "request stream" if tb.req is not None else "AXI4",
                 "cases": {x["size"]: {k: x[k] for k in ("payload", "segments", "w_beats_per_clock")} for x in cases}},
    )
    dut._log.info("bench: latency %d clocks (AW %d), %s", lat_w, lat_aw, cases)


# --- lean bench: security soak and the gap tests ---------------------------------
#
# cocotbext-axi's models and the TB above run several coroutines per clock;
# for hundreds of thousands of ULPDUs the Python side must do little per
# clock. Lean drives everything from one coroutine: a script of pieces and
# configuration steps fed in order (the order the oracle is told), the
# verdicts, an always-ready AXI write slave into a bytearray (answering
# SLVERR to a burst that writes a poisoned octet, which it does not write),
# the event outputs and the status pulses, and the write monitor.
#
# The write monitor knows, from the oracle, the host range each ULPDU may
# write ([addr, addr + n), n = 0: nothing), early ones included. A ULPDU's
# range is open from its first piece's first beat on; after its last
# piece's last beat it stays open until m_done has reported it (ULPDUs leave
# placement in the order of their last pieces, early ones too) and then a
# clock with neither AWVALID nor WVALID is seen (every write of the ULPDU
# has left: with both valids low the AW and W queues are empty).
# Every AW burst must lie inside the beat-aligned hull of an open range, and
# every strobed octet of every W beat inside an open range; the first
# violation fails the test at once, naming the write and the open ULPDUs.

class LeanULPDU:
    __slots__ = ("conn", "data", "verdict", "op", "place", "note", "batch", "npieces", "early", "user_fl")

    def __init__(self, conn, data, verdict, note, early=False, user_fl=3):
        self.conn, self.data, self.verdict, self.note = conn, data, verdict, note
        self.op = -1
        self.place = None
        self.batch = -1
        self.npieces = 1
        # Early (tuser's early bit): one piece, sent with tuser {first, last}
        # = user_fl, no verdict; the oracle op {"early": ...}.
        self.early, self.user_fl = early, user_fl

    def oracle_op(self):
        if self.early:
            return {"early": {"conn": self.conn, "data": self.data.hex()}}
        return {"ulpdu": {"conn": self.conn, "data": self.data.hex(), "verdict": self.verdict}}

    def describe(self):
        kind = "early ULPDU" if self.early else f"ULPDU verdict {self.verdict}"
        return (f"{kind} (batch {self.batch}, op {self.op}) conn {self.conn} {self.note!r} "
                f"len {len(self.data)} header {self.data[:18].hex()} oracle range {self.place}")


class MonitorError(AssertionError):
    pass


class Lean:
    def __init__(self, dut, mem_size: int):
        self.dut = dut
        self.lanes = len(dut.s_axis_tdata) // 8
        self.blanes = len(dut.m_axi_wstrb)  # the write port's: lanes or 2 lanes (AXI_W)
        # The write-request stream (WR_REQ = 1) in the AXI4 port's place:
        # always ready, each request's strobed octets checked and written
        # as a W beat's are (no poisoned octets: nothing answers a request).
        self.req = os.environ.get("DDP_RX_WR_REQ") == "1"
        self.conn_w = len(dut.s_conn_conn)
        self.mem = bytearray(mem_size)
        self.poison: list[tuple[int, int]] = []
        self.script: deque = deque()
        self.verdicts: deque = deque()
        self.events: dict[int, list] = defaultdict(list)
        self.drops: list[tuple[int, int]] = []  # (conn, first) per dropped piece
        self.post_errs: list[tuple] = []
        self.berrs: list[tuple] = []
        self.open: dict[LeanULPDU, LeanULPDU] = {}  # an early ULPDU may come inside another of its connection
        self.closing: list[list] = []  # [done, ULPDU], in the order of last pieces
        self.beats = 0
        self.cycle = 0
        self.aw_q: deque = deque()
        self.b_q: deque = deque()
        # The B response of a burst whose W beats all went ahead of its AW:
        # held until the AW is taken (AXI4 A3.3.1: a slave answers a burst
        # only after both its AW and its last W beat).
        self.b_wait: deque = deque()
        self.busy = False
        self.writes = 0
        self.aws = 0
        self.check_monitor = True
        # AWREADY waits for WVALID (aw_wait_w): high for the clock after one
        # with WVALID high, as a slave may (AXI4 A3.3.1); a W beat may then
        # come before its burst's AW is taken, and is matched with the AW
        # on the bus (w_ahead: bursts whose W went ahead of their AW).
        self.aw_wait_w = False
        self.w_ahead = 0
        self.w_ahead_bursts = 0
        # Random back-pressure (p_stall > 0): each clock, AWREADY, WREADY,
        # m_wr_ready and m_cpl_ready/m_err_ready each low with probability
        # p_stall (AWREADY keeps aw_wait_w's rule while that is set).
        self.p_stall = 0.0
        self.stall_rng = random.Random(random.getrandbits(64))
        self.stalls = 0  # clocks with a ready held low by p_stall
        # A hold (script item ("h", clocks, verdicts, events)): verdicts
        # and/or m_cpl_ready and m_err_ready held back until hold_until;
        # held_aws gets the AW bursts issued during each hold.
        self.hold_until = 0
        self.hold_verdicts = self.hold_events = False
        self.hold_aws0 = 0
        self.held_aws: list[int] = []
        # A hold may also keep AWREADY, WREADY and m_wr_ready low (hold_axi):
        # writes wait in the block's queues meanwhile.
        self.hold_axi = False
        # The fence (tests/ddp_rx/corners.py): a configuration
        # step ("c", port, fields, fence) with a host range fence adds it,
        # once its handshake is done, to fenced: from the next clock on, a W
        # beat or request that writes any octet of it is a monitor violation
        # (one in the same clock as the handshake is not). On the AXI4 port
        # the handshake must also come after every burst's B response
        # (ddp_rx_tables' fence: a write is done at its B response): a
        # burst not yet answered then (its AW or W beats still to come, or
        # its response) is a violation too.
        self.fenced: list[tuple[int, int]] = []
        # Reset in the middle of traffic: at clock reset_at (when set), rst
        # goes high for reset_len clocks; the bench drops what it was doing
        # (the rest of the script, verdicts, the bursts it was taking, the
        # open ULPDUs: any write or m_done after it is a violation), forgets
        # what was reported before it (events, drops, ...: whatever comes
        # after it is the block's answer to what comes after it) and
        # reset_done counts the resets.
        self.reset_at = 0
        self.reset_len = 4
        self.reset_done = 0

    async def start(self):
        dut = self.dut
        dut.rst.value = 1
        for sig in ("s_axis_tvalid", "s_verdict_tvalid", "s_conn_valid", "s_stag_valid", "s_post_valid",
                    "m_axi_bvalid"):
            getattr(dut, sig).value = 0
        for sig in ("m_cpl_ready", "m_err_ready", "m_axi_awready", "m_axi_wready"):
            getattr(dut, sig).value = 1
        dut.m_axi_bid.value = 0
        dut.m_axi_bresp.value = 0
        dut.m_wr_ready.value = int(self.req)
        dut.clk.value = 0
        await Timer(CLK_PERIOD_NS, units="ns")
        # The clock starts here: the Verilog/VHDL transaction recorder
        # (tests/transactions.py) counts its clocks from now.
        transactions.clock_started(dut.clk, CLK_PERIOD_NS)
        cocotb.start_soon(self._loop())  # drives the clock too
        await ClockCycles(dut.clk, 3)
        await FallingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        # The tables are cleared after reset (ready outputs low meanwhile).
        await tbutil.wait_ready(dut, ("s_conn_ready", "s_axis_tready"))

    def idle(self) -> bool:
        return (not self.script and not self.busy and not self.verdicts and not self.aw_q and not self.b_q
                and not self.b_wait)

    async def drain(self):
        seen, still = None, 0
        while not self.idle():
            await ClockCycles(self.dut.clk, 16)
            now = (self.beats, len(self.verdicts), len(self.script), self.writes, len(self.aw_q), len(self.b_q))
            still = still + 1 if now == seen else 0
            seen = now
            assert still < 625, (f"no input beat, verdict or write for 10000 clocks: {len(self.verdicts)} verdicts "
                                 f"and {len(self.script)} steps left")
        # Every ULPDU out of placement (m_done) and its writes out: an
        # early one has no verdict to wait for.
        for _ in range(200):
            if not self.closing:
                break
            await ClockCycles(self.dut.clk, 16)
        else:
            raise AssertionError("no m_done for " + "; ".join(u.describe() for _, u in self.closing[:4]))
        await ClockCycles(self.dut.clk, 24)

    def _violation(self, what: str):
        lines = [f"write monitor: {what}", "open ULPDUs (may write):"]
        for u in list(self.open.values()) + [u for _, u in self.closing]:
            lines.append("  " + u.describe())
        raise MonitorError("\n".join(lines))

    def _allowed(self):
        out = [u for u in self.open.values() if u.place and u.place[1]]
        out += [u for _, u in self.closing if u.place and u.place[1]]
        return out

    def _check_aw(self, addr: int, nbeats: int):
        lo, hi, n = addr, addr + nbeats * self.blanes, self.blanes
        for u in self._allowed():
            p, k = u.place
            if (p // n) * n <= lo and hi <= -(-(p + k) // n) * n:
                return
        self._violation(f"AW burst {lo:#x}..{hi:#x} ({nbeats} beats) outside every open range")

    def _check_w(self, addr: int, strb: int):
        allowed = self._allowed()
        for lo, hi in tbutil.strobe_runs(strb):
            a, b = addr + lo, addr + hi
            for f0, f1 in self.fenced:
                if max(a, f0) < min(b, f1):
                    self._violation(f"W beat writes {a:#x}..{b:#x} (beat {addr:#x} strobes {strb:#x}) into "
                                    f"{f0:#x}..{f1:#x}, fenced: its STag's entry was written before")
            if not any(u.place[0] <= a and b <= u.place[0] + u.place[1] for u in allowed):
                self._violation(f"W beat writes {a:#x}..{b:#x} (beat {addr:#x} strobes {strb:#x}) "
                                f"outside every open range")

    def _write(self, addr: int, strb: int, data: bytes) -> bool:
        """A W beat's or a request's strobed octets into memory; the poisoned
        ones are refused (they keep their contents). Whether any was."""
        refused = False
        for lo, hi in tbutil.strobe_runs(strb):
            a, b = addr + lo, addr + hi
            bad = [(max(a, p0), min(b, p1)) for p0, p1 in self.poison if max(a, p0) < min(b, p1)]
            keep = [(p0, p1, bytes(self.mem[p0:p1])) for p0, p1 in bad]
            self.mem[a:b] = data[lo:hi]
            for p0, p1, old in keep:
                self.mem[p0:p1] = old
                refused = True
        return refused

    async def _loop(self):
        """The clock and everything else: before each rising edge, sample the
        outputs (the values the edge sees) and work out the handshakes; the
        edge; then drive the inputs for the next edge. Signals are read and
        written through the simulator handles directly (cocotb's value
        objects and write scheduling cost more than the design)."""
        dut = self.dut
        half = Timer(CLK_PERIOD_NS / 2, units="ns")
        blanes = self.blanes

        def rd(h):
            raw = h._handle
            if len(h) < 32:
                return raw.get_signal_val_long
            return lambda: int(raw.get_signal_val_binstr(), 2)

        def wr(h):
            raw = h._handle
            if len(h) <= 32:
                return lambda v: raw.set_signal_val_int(0, v)
            fmt = "0%db" % len(h)
            return lambda v: raw.set_signal_val_binstr(0, format(v, fmt))

        clk = wr(dut.clk)
        rst = wr(dut.rst)
        in_reset = 0
        fence_next: list = []  # fences of this clock's handshakes: from the next clock on
        t_data, t_keep, t_valid, t_last, t_user = (wr(dut.s_axis_tdata), wr(dut.s_axis_tkeep), wr(dut.s_axis_tvalid),
                                                   wr(dut.s_axis_tlast), wr(dut.s_axis_tuser))
        t_ready = rd(dut.s_axis_tready)
        v_data, v_user, v_valid, v_ready = (wr(dut.s_verdict_tdata), wr(dut.s_verdict_tuser), wr(dut.s_verdict_tvalid),
                                            rd(dut.s_verdict_tready))
        aw_valid, aw_addr, aw_len = rd(dut.m_axi_awvalid), rd(dut.m_axi_awaddr), rd(dut.m_axi_awlen)
        w_valid, w_data, w_strb, w_last = rd(dut.m_axi_wvalid), rd(dut.m_axi_wdata), rd(dut.m_axi_wstrb), rd(dut.m_axi_wlast)
        b_valid, b_ready, b_resp = wr(dut.m_axi_bvalid), rd(dut.m_axi_bready), wr(dut.m_axi_bresp)
        r_valid, r_addr, r_data, r_strb, r_last = (rd(dut.m_wr_valid), rd(dut.m_wr_addr), rd(dut.m_wr_data),
                                                   rd(dut.m_wr_strb), rd(dut.m_wr_last))
        req = self.req
        assert not (req and self.poison), "poisoned octets need the AXI4 port (an error response)"
        aw_ready = wr(dut.m_axi_awready)
        awready = 1
        aw_ready(awready)
        w_ready, r_ready = wr(dut.m_axi_wready), wr(dut.m_wr_ready)
        wready, rready = 1, int(self.req)
        stall = self.stall_rng.random
        cpl_valid, err_valid = rd(dut.m_cpl_valid), rd(dut.m_err_valid)
        cpl_ready, err_ready = wr(dut.m_cpl_ready), wr(dut.m_err_ready)
        eready = 1
        drop_valid, perr_valid, berr_valid = rd(dut.m_drop_valid), rd(dut.m_post_err_valid), rd(dut.m_berr_valid)
        done_valid, done_conn = rd(dut.m_done_valid), rd(dut.m_done_conn)
        cpl = [rd(getattr(dut, f"m_cpl_{n}")) for n in ("conn", "opcode", "tagged", "stag", "qn", "msn", "len", "id",
                                                          "inv_stag", "rr")]
        err = [rd(getattr(dut, f"m_err_{n}")) for n in ("conn", "layer", "etype", "code", "hdrct", "seglen", "hdr")]
        drop = [rd(getattr(dut, f"m_drop_{n}")) for n in ("conn", "first", "reason")]
        perr = [rd(getattr(dut, f"m_post_err_{n}")) for n in ("conn", "qn", "id", "reason")]
        berr = [rd(getattr(dut, f"m_berr_{n}")) for n in ("conn", "resp")]
        cfg_handles = {}
        for port, names in (("conn", ("conn", "enable", "pd")),
                            ("stag", ("index", "entry_valid", "key", "pd", "bound", "conn", "access", "base", "len",
                                      "addr")),
                            ("post", ("conn", "qn", "addr", "len", "id"))):
            cfg_handles[port] = (wr(getattr(dut, f"s_{port}_valid")), rd(getattr(dut, f"s_{port}_ready")),
                                 {n: wr(getattr(dut, f"s_{port}_{n}")) for n in names})
        # The protocol checkers (tests/protocol.py) on every port but the
        # configuration ones, fed from the samples this loop takes (the
        # values the edge takes): the AXI4 write port (its AW, W and B),
        # the request stream, m_cpl and m_err, and this loop's own s_axis
        # and s_verdict. (s_conn, s_stag and s_post: one valid set until
        # ready and then cleared, the step in the loop above.)
        p_rst = rd(dut.rst)
        block = protocol.DDP_RX_BURST * self.lanes
        p_axi = protocol.AxiWrite("m_axi", blanes, ("addr", "len", "size", "burst", "id", "cache", "prot"),
                                  ("data", "strb", "last"), fixed=protocol.DDP_RX_AW_FIXED, block=block,
                                  contiguous=True)
        p_w_payload = lambda: (w_data(), w_strb(), w_last())  # noqa: E731
        p_r_payload = lambda: (r_addr(), r_data(), r_strb(), r_last())  # noqa: E731
        aw_rest = [rd(getattr(dut, f"m_axi_aw{n}")) for n in ("size", "burst", "id", "cache", "prot")]
        p_aw_fields = lambda: dict(zip(("addr", "len", "size", "burst", "id", "cache", "prot"),  # noqa: E731
                                       (aw_addr(), aw_len(), *(f() for f in aw_rest))))
        p_aw_payload = lambda: tuple(p_aw_fields().values())  # noqa: E731
        p_req = protocol.WriteRequest("m_wr", ("addr", "data", "strb", "last"), self.lanes, block)
        p_in = protocol.Stream("s_axis", ("tdata", "tkeep", "tlast", "tuser"), protocol.LANE0_EMPTY, self.lanes)
        in_reads = [rd(getattr(dut, f"s_axis_{n}")) for n in ("tvalid", "tdata", "tkeep", "tlast", "tuser")]
        p_in_payload = lambda: tuple(f() for f in in_reads[1:])  # noqa: E731
        p_vd = protocol.Stream("s_verdict", ("tdata", "tuser"))
        vd_reads = [rd(getattr(dut, f"s_verdict_{n}")) for n in ("tvalid", "tdata", "tuser")]
        p_vd_payload = lambda: (vd_reads[1](), vd_reads[2]())  # noqa: E731
        p_cpl = protocol.Channel("m_cpl", ("conn", "opcode", "tagged", "stag", "qn", "msn", "len", "id", "inv_stag",
                                           "rr"))
        p_cpl_payload = lambda: tuple(f() for f in cpl)  # noqa: E731
        p_err = protocol.Channel("m_err", ("conn", "layer", "etype", "code", "hdrct", "seglen", "hdr"))
        p_err_payload = lambda: tuple(f() for f in err)  # noqa: E731
        p_all = (p_axi, p_req, p_in, p_vd, p_cpl, p_err)
        cur = None
        bi = 0
        vvalid = False
        bvalid = False
        wburst = None  # [addr, beats left, error, its AW taken]
        drive: list = []  # input writes for after the edge
        while True:
            # --- before the edge: what it takes
            self.cycle += 1
            if fence_next:
                self.fenced += fence_next
                fence_next.clear()
            if cur is not None:
                if cur[0] == "p":
                    if t_ready():
                        u = cur[3]
                        if bi == 0 and cur[4]:
                            self.open[u] = u
                        self.beats += 1
                        bi += 1
                        if bi == len(cur[1]):
                            if cur[5]:
                                self.open.pop(u, None)
                                self.closing.append([False, u])
                                if not u.early:
                                    self.verdicts.append((u.conn, u.verdict))
                            cur = None
                            drive.append((t_valid, 0))
                        else:
                            d, k, last = cur[1][bi]
                            drive += ((t_data, d), (t_keep, k), (t_last, int(last)))
                else:
                    valid, ready, _ = cfg_handles[cur[1]]
                    if ready():
                        drive.append((valid, 0))
                        if len(cur) > 3 and cur[3]:
                            fence_next.append(cur[3])
                            if not req and (self.aw_q or wburst is not None or self.b_q or self.b_wait):
                                self._violation(f"fenced {cur[1]} handshake with bursts not answered: "
                                                f"{len(self.aw_q)} AWs taken waiting for W beats, "
                                                f"{'a burst in its W beats, ' if wburst is not None else ''}"
                                                f"{len(self.b_q) + len(self.b_wait)} B responses to come")
                        cur = None
            while cur is None and self.script and self.script[0][0] == "h":
                _, clocks, self.hold_verdicts, self.hold_events, *axi = self.script.popleft()
                self.hold_axi = bool(axi and axi[0])
                self.hold_until, self.hold_aws0 = self.cycle + clocks, self.aws
            if self.hold_until and self.cycle >= self.hold_until:
                self.held_aws.append(self.aws - self.hold_aws0)
                self.hold_until = 0
                self.hold_verdicts = self.hold_events = self.hold_axi = False
            if cur is None and self.script and not in_reset:
                cur = self.script.popleft()
                bi = 0
                if cur[0] == "p":
                    d, k, last = cur[1][0]
                    drive += ((t_data, d), (t_keep, k), (t_last, int(last)), (t_user, cur[2]), (t_valid, 1))
                else:
                    valid, _, hs = cfg_handles[cur[1]]
                    drive += [(hs[name], val) for name, val in cur[2].items()]
                    drive.append((valid, 1))
            self.busy = cur is not None
            # --- verdicts, in the order of last pieces
            if vvalid and v_ready():
                vvalid = False
                self.verdicts.popleft()
                drive.append((v_valid, 0))
            if not vvalid and self.verdicts and not self.hold_verdicts and not in_reset:
                conn, code = self.verdicts[0]
                drive += ((v_data, code), (v_user, conn), (v_valid, 1))
                vvalid = True
            # --- AXI write slave (or request sink) and monitor; nothing is
            # taken while rst is high (the host side is in reset too: a
            # write the block had on its port when reset came is dropped)
            rst_now = in_reset or p_rst()
            awv, wv = (0, 0) if rst_now else (aw_valid(), w_valid())
            cv, ev = cpl_valid(), err_valid()
            if not protocol.ENABLED:
                pass
            elif p_rst():
                for chk in p_all:
                    chk.reset()
            else:
                cyc = self.cycle
                if bvalid or p_axi.b_ch.held is not None:
                    p_axi.b(cyc, bvalid, b_ready())
                p_axi.aw(cyc, awv, awready, p_aw_fields, p_aw_payload)
                if wv or p_axi.w_ch.held is not None:
                    wt = wv and wready
                    p_axi.w(cyc, wv, wready, w_strb() if wt else 0, wt and w_last(), p_w_payload)
                if req:
                    rv = r_valid()
                    if rv or p_req.held is not None:
                        rt = rv and rready
                        p_req.request(cyc, rv, rready, r_addr() if rt else 0, r_strb() if rt else 0,
                                      rt and r_last(), p_r_payload)
                tv = in_reads[0]()
                if tv or p_in.held is not None:
                    tr = t_ready()
                    p_in.beat(cyc, tv, tr, in_reads[2]() if tv and tr else None, tv and tr and in_reads[3](),
                              p_in_payload)
                vv = vd_reads[0]()
                if vv or p_vd.held is not None:
                    p_vd.beat(cyc, vv, v_ready(), None, True, p_vd_payload)
                if cv or p_cpl.held is not None:
                    p_cpl.step(cyc, cv, eready, p_cpl_payload)
                if ev or p_err.held is not None:
                    p_err.step(cyc, ev, eready, p_err_payload)
            rv = req and not rst_now and r_valid()
            if rv and rready:
                addr, strb = r_addr(), r_strb()
                assert addr % self.lanes == 0, f"write request at {addr:#x}: not a multiple of the line"
                if strb:
                    if self.check_monitor:
                        self._check_w(addr, strb)
                    self.writes += 1
                    self._write(addr, strb, r_data().to_bytes(blanes, "little"))
                self.aws += r_last()
            if awv and awready:
                addr, blen = aw_addr(), aw_len() + 1
                if self.w_ahead:
                    # its W beats went ahead: the AW is the one they took
                    self.w_ahead -= 1
                    if wburst is not None and not wburst[3]:
                        wburst[3] = True
                    else:
                        self.b_q.append(self.b_wait.popleft())
                else:
                    if self.check_monitor:
                        self._check_aw(addr, blen)
                    self.aw_q.append([addr, blen, 0, True])
                self.aws += 1
            if wv and wready:
                if wburst is None:
                    if self.aw_q:
                        wburst = self.aw_q.popleft()
                    else:
                        assert awv and not awready and self.w_ahead == 0, \
                            "a W beat ahead of its burst's AW, with no AW waiting on the bus"
                        addr, blen = aw_addr(), aw_len() + 1
                        if self.check_monitor:
                            self._check_aw(addr, blen)
                        wburst = [addr, blen, 0, False]  # (its AW not taken yet)
                        self.w_ahead += 1
                        self.w_ahead_bursts += 1
                addr = wburst[0]
                strb = w_strb()
                if strb:
                    if self.check_monitor:
                        self._check_w(addr, strb)
                    self.writes += 1
                    if self._write(addr, strb, w_data().to_bytes(blanes, "little")):
                        wburst[2] = 1  # refused octets: SLVERR for the burst
                wburst[0] = addr + blanes
                wburst[1] -= 1
                if w_last():
                    assert wburst[1] == 0, f"WLAST with {wburst[1]} beats of the burst left"
                    (self.b_q if wburst[3] else self.b_wait).append(2 if wburst[2] else 0)
                    wburst = None
            if done_valid() and not rst_now:
                c = done_conn()
                pending = [x for x in self.closing if not x[0]]
                assert pending and pending[0][1].conn == c, \
                    f"m_done for conn {c}, expected {pending[0][1].conn if pending else 'none'}"
                pending[0][0] = True
            if not awv and not wv and not rv and self.closing and self.closing[0][0]:
                self.closing = [x for x in self.closing if not x[0]]
            if bvalid and b_ready() and not rst_now:
                self.b_q.popleft()
                bvalid = False
                drive.append((b_valid, 0))
            if not bvalid and self.b_q and not in_reset:
                drive += ((b_resp, self.b_q[0]), (b_valid, 1))
                bvalid = True
            # --- events and status pulses
            if cv and eready and not rst_now:
                c, op, tagged, stag, qn, msn, ln, id_, inv, rr = (f() for f in cpl)
                self.events[c].append(("completion", op, tagged, stag, qn, msn, ln, id_, inv,
                                       rr.to_bytes(28, "little").hex() if op == READ_REQ else ""))
            if ev and eready and not rst_now:
                c, *rest = (f() for f in err)
                self.events[c].append(ddp_reports.error_tuple(*rest))
            # --- the readies for the next edge
            if self.p_stall:
                p = self.p_stall
                ne, nw, nr, na = stall() >= p, stall() >= p, stall() >= p, stall() >= p
                self.stalls += (not ne) + (not nw) + (not nr and req) + (not na and not self.aw_wait_w)
                ne, nw, nr = int(ne and not self.hold_events), int(nw), int(nr and req)
                na = awready if self.aw_wait_w else int(na)
            else:
                ne, nw, nr, na = int(not self.hold_events), 1, int(req), awready if self.aw_wait_w else 1
            if self.hold_axi:
                nw, nr, na = 0, 0, 0
            if in_reset:  # the host side is in reset too: nothing taken
                ne, nw, nr, na = 0, 0, 0, 0
            if ne != eready:
                eready = ne
                drive += ((cpl_ready, eready), (err_ready, eready))
            if nw != wready:
                wready = nw
                drive.append((w_ready, wready))
            if nr != rready:
                rready = nr
                drive.append((r_ready, rready))
            if na != awready:
                awready = na
                drive.append((aw_ready, awready))
            if drop_valid() and not rst_now:
                c, first, reason = (f() for f in drop)
                assert reason == 1, f"m_drop_reason {reason}"
                self.drops.append((c, first))
            if perr_valid() and not rst_now:
                self.post_errs.append(tuple(f() for f in perr))
            if berr_valid() and not rst_now:
                self.berrs.append(tuple(f() for f in berr))
            if self.aw_wait_w and awready != wv:
                awready = wv
                drive.append((aw_ready, awready))
            if self.reset_at and self.cycle == self.reset_at:
                # Reset: rst high after this edge, and everything the bench
                # was doing dropped (the host's interconnect is reset too).
                drive.append((rst, 1))
                self.reset_at, in_reset = 0, self.reset_len
                self.script.clear()
                self.verdicts.clear()
                self.aw_q.clear()
                self.b_q.clear()
                self.b_wait.clear()
                self.open.clear()
                self.closing.clear()
                self.events.clear()
                self.drops.clear()
                self.post_errs.clear()
                self.berrs.clear()
                self.hold_until = 0
                self.hold_verdicts = self.hold_events = self.hold_axi = False
                self.w_ahead = 0
                cur, wburst, vvalid, bvalid = None, None, False, False
                drive += ((t_valid, 0), (v_valid, 0), (b_valid, 0))
                drive += [(h[0], 0) for h in cfg_handles.values()]
                awready = wready = rready = eready = 0
                drive += ((aw_ready, 0), (w_ready, 0), (r_ready, 0), (cpl_ready, 0), (err_ready, 0))
            elif in_reset:
                in_reset -= 1
                if not in_reset:
                    drive.append((rst, 0))
                    self.reset_done += 1
            # --- the edge, then the inputs for the next one
            clk(1)
            await half
            for f, v in drive:
                f(v)
            drive.clear()
            clk(0)
            await half


def piece_item(lanes: int, conn_w: int, u: LeanULPDU, data: bytes, first: bool, last: bool):
    """A script item for a piece: ("p", beats, tuser, ulpdu, first, last),
    beats a list of (data, keep, last). A configuration step is ("c",
    port, {field: value}). An early ULPDU is one piece, first and last,
    whatever tuser's {first, last} (u.user_fl) say."""
    n = len(data)
    beats = [(int.from_bytes(data[i:i + lanes], "little"), (1 << len(data[i:i + lanes])) - 1, i + lanes >= n)
             for i in range(0, n, lanes)]
    user = (len(u.data) << (conn_w + 2)) | (u.conn << 2)
    if u.early:
        assert first and last and data == u.data
        user |= (1 << (conn_w + 18)) | u.user_fl
    else:
        user |= (int(first) << 1) | int(last)
    return ("p", beats, user, u, first, last)


# ULPDUs built here are stimulus only (what the oracle is then asked about);
# lean_self_check compares the builders with iwarp/rdmap's segments.
def hdr_tagged(op, stag, to, payload=b"", last=True, dv=1, rv=1):
    return (bytes([0x80 | (int(last) << 6) | dv, (rv << 6) | op]) + (stag & 0xffffffff).to_bytes(4, "big")
            + (to % 2**64).to_bytes(8, "big") + payload)


def hdr_untagged(op, qn, msn, mo=0, payload=b"", inv=0, last=True, dv=1, rv=1):
    return (bytes([(int(last) << 6) | dv, (rv << 6) | op]) + (inv & 0xffffffff).to_bytes(4, "big")
            + (qn & 0xffffffff).to_bytes(4, "big") + (msn & 0xffffffff).to_bytes(4, "big")
            + (mo & 0xffffffff).to_bytes(4, "big") + payload)


def rr_body(rr):
    return (rr["sink_stag"].to_bytes(4, "big") + rr["sink_to"].to_bytes(8, "big") + rr["size"].to_bytes(4, "big")
            + rr["src_stag"].to_bytes(4, "big") + rr["src_to"].to_bytes(8, "big"))


def lean_self_check(orc, rng):
    """The header builders against iwarp/rdmap: one segment of each opcode."""
    p = rng.randbytes(40)
    rr = {"sink_stag": 1, "sink_to": 2**63 + 5, "size": 77, "src_stag": 9, "src_to": 12345}
    for built, (op, kw) in (
            (hdr_tagged(WRITE, 0x1234ab, 2**64 - 100, p), (WRITE, {"stag": 0x1234ab, "to": 2**64 - 100, "payload": p})),
            (hdr_tagged(READ_RESP, 0x55, 7, p), (READ_RESP, {"stag": 0x55, "to": 7, "payload": p})),
            (hdr_untagged(SEND, 0, 3, 0, p), (SEND, {"msn": 3, "payload": p})),
            (hdr_untagged(SEND_SE_INV, 0, 1, 0, p, inv=0xabcd01), (SEND_SE_INV, {"msn": 1, "payload": p, "inv_stag": 0xabcd01})),
            (hdr_untagged(READ_REQ, 1, 2, 0, rr_body(rr)), (READ_REQ, {"msn": 2, "rr": rr})),
            (hdr_untagged(TERMINATE, 2, 1, 0, bytes([0x10, 0x02, 0x05, 0x00])),
             (TERMINATE, {"msn": 1, "payload": bytes([0x10, 0x02, 0x05, 0x00])}))):
        want = orc.rdmap_segments(op, 9000, **kw)["segments"]
        assert want == [built], f"opcode {op}: built {built.hex()}, Go {want[0].hex() if want else want}"


def lean_compare(lean: Lean, resp: dict, ulpdus: list, what: str, pieces_of: dict):
    """Memory, events, drops and refused posts of a drained bench against the
    oracle's answer for the same steps."""
    want_events = defaultdict(list)
    for e in resp["events"]:
        want_events[e["conn"]].append(ddp_reports.from_oracle(e))
    for conn in sorted(set(want_events) | set(lean.events)):
        got, want = lean.events.get(conn, []), want_events.get(conn, [])
        if got != want:
            i = next(i for i in range(max(len(got), len(want)))
                     if i >= len(got) or i >= len(want) or got[i] != want[i])
            detail = [e.get("detail", "") for e in resp["events"] if e["conn"] == conn]
            raise AssertionError(f"{what}: conn {conn}: event {i}: got {got[i] if i < len(got) else None}, "
                                 f"want {want[i] if i < len(want) else None} ({len(got)} got, {len(want)} wanted; "
                                 f"Go: {detail})")
    want_drops = [(d["conn"], 1) for d in resp["drops"]]
    got_first = [d for d in lean.drops if d[1]]
    assert got_first == want_drops, f"{what}: m_drop first pieces {got_first[:8]}..., oracle drops {want_drops[:8]}..."
    npieces = sum(pieces_of[d["op"]] for d in resp["drops"])
    assert len(lean.drops) == npieces, f"{what}: {len(lean.drops)} dropped pieces reported, {npieces} sent"
    want_ref = [(r["conn"], r["qn"], r["id"], r["reason"]) for r in resp["refused"]]
    assert lean.post_errs == want_ref, f"{what}: m_post_err {lean.post_errs}, oracle {want_ref}"
    want_mem = bytes.fromhex(resp["mem"])
    if lean.mem != want_mem:
        diffs = [i for i in range(len(want_mem)) if lean.mem[i] != want_mem[i]]
        raise AssertionError(f"{what}: host memory differs from Go's at {len(diffs)} octets, first at {diffs[0]:#x}: "
                             f"got {lean.mem[diffs[0]:diffs[0]+16].hex()} want {want_mem[diffs[0]:diffs[0]+16].hex()}")
    lean.events.clear()
    lean.drops.clear()
    lean.post_errs.clear()


# --- the soak's stimulus ---------------------------------------------------------

SOAK_MEM = 1 << 16
SOAK_SLOTS = 8
SOAK_SLICE = SOAK_MEM // SOAK_SLOTS  # per slot: posted buffers in the first 2 KiB, STag regions after
SOAK_POSTS = 2048
SOAK_BATCH = 2500
# Random back-pressure (Lean.p_stall) in every SOAK_STALL_EVERY-th batch.
SOAK_STALL = 0.25
SOAK_STALL_EVERY = 8
PD_OTHER = 0x5eed


class SStag:
    """What the testbench registered at an STag index (to choose stimulus;
    the oracle decides what the block must do with it)."""

    def __init__(self, index, slot):
        self.index, self.slot = index, slot
        self.key, self.pd, self.bound, self.access = 0, 0, None, 0
        self.base = self.len = self.host = 0
        self.valid = False

    @property
    def stag(self):
        return self.index << 8 | self.key


class SSlot:
    """A slice of host memory and the connection that currently uses it.
    Slots 2k and 2k+1 share a PD. A slot's STags and posted buffers are in
    its slice, and only its connection places into it: two streams placing
    into the same octets at once would race, so another slot's STag is only
    tried when the testbench registered it for another PD or bound it to
    another connection."""

    def __init__(self, num, pd):
        self.num, self.pd, self.lo = num, pd, num * SOAK_SLICE
        self.conn = -1
        self.enabled = False
        self.left = 0
        self.msn = [1, 1, 1]
        self.bufs = [deque(), deque(), deque()]  # lengths of the buffers posted and not yet used
        self.pending: deque = deque()  # (ulpdu, piece data, first, last)
        self.stags: list[SStag] = []


class SoakGen:
    def __init__(self, rng: random.Random, lanes: int, conn_w: int, stag_aw: int):
        self.rng, self.lanes, self.conn_w, self.stag_aw = rng, lanes, conn_w, stag_aw
        pds = [rng.getrandbits(32) | 1 for _ in range(SOAK_SLOTS // 2)]
        self.slots = [SSlot(i, pds[i // 2]) for i in range(SOAK_SLOTS)]
        numbers = rng.sample(range(1 << conn_w), 1 << conn_w)
        self.never = numbers[:16]  # never configured: their pieces are dropped
        self.fresh = deque(numbers[16:])
        indices = rng.sample(range(1 << stag_aw), 6 * SOAK_SLOTS)
        for s in self.slots:
            s.stags = [SStag(indices.pop(), s.num) for _ in range(6)]
        self.script: list = []
        self.ops: list = []
        self.ulpdus: list[LeanULPDU] = []
        self.pieces_of: dict[int, int] = {}
        self.batch_no = 0
        self.hostile_count = 0  # ULPDUs built by hostile() for an enabled connection
        self.early_count = 0

    # --- steps, to the script and the oracle in the same order
    def cfg(self, port, dut_fields, oracle_op):
        self.script.append(("c", port, dut_fields))
        if oracle_op is not None:
            self.ops.append(oracle_op)

    def register(self, st: SStag, valid=True):
        self.cfg("stag", dict(index=st.index, entry_valid=int(valid), key=st.key, pd=st.pd,
                              bound=int(st.bound is not None), conn=st.bound or 0, access=st.access,
                              base=st.base, len=st.len, addr=st.host),
                 {"stag": {"index": st.index, "valid": valid, "key": st.key, "pd": st.pd, "access": st.access,
                           "base": st.base, "len": st.len, "host": st.host,
                           **({"conn": st.bound} if st.bound is not None else {})}})
        st.valid = valid

    def post(self, s: SSlot, qn: int, length: int):
        addr = s.lo + self.rng.randrange(0, SOAK_POSTS - length + 1)
        self.cfg("post", dict(conn=s.conn, qn=qn, addr=addr, len=length, id=self.rng.getrandbits(32)), None)
        f = self.script[-1][2]
        self.ops.append({"post": {"conn": s.conn, "qn": qn, "addr": addr, "len": length, "id": f["id"]}})
        if qn < 3 and s.enabled and len(s.bufs[qn]) < RQ_DEPTH:
            s.bufs[qn].append(length)

    def inflight_stags(self) -> set[int]:
        """The STag indices of tagged ULPDUs whose first piece is out and
        whose last is not (at most one a slot: a slot's pieces go in order)."""
        out = set()
        for s in self.slots:
            if s.pending and not s.pending[0][2]:
                d = s.pending[0][0].data
                if d[0] & 0x80:
                    out.add(int.from_bytes(d[2:6], "big") >> 8)
        return out

    def churn(self, s: SSlot, st: SStag, readonly: bool = False):
        rng = self.rng
        # The oracle applies a ULPDU whole at its first piece; the block cuts
        # a ULPDU whose STag entry is written between its pieces (Invalid
        # STag; corners.corner_cut_*, against ddp_place_stream's pieces). So
        # the soak writes no entry a ULPDU in pieces places through.
        if st.index in self.inflight_stags():
            return
        if st.valid and not readonly and rng.random() < 0.3:
            self.register(st, valid=False)  # invalidated by the host
            return
        st.key = (st.key + rng.randint(1, 255)) % 256
        st.len = rng.choice([rng.randint(1, 64), rng.randint(1, 256), rng.randint(64, 1024)])
        st.host = s.lo + SOAK_POSTS + rng.randrange(0, SOAK_SLICE - SOAK_POSTS - st.len + 1)
        st.base = rng.choice([rng.getrandbits(64), rng.getrandbits(20), 2**64 - st.len - rng.randint(1, 4)])
        st.base = min(st.base, 2**64 - 1 - st.len)
        st.access = rng.choice([3, 3, 3, 3, 1, 1, 2, 0])
        r = rng.random()
        st.pd = s.pd if r < 0.85 else rng.choice([PD_OTHER, self.slots[(s.num + 2) % SOAK_SLOTS].pd])
        r = rng.random()
        partner = self.slots[s.num ^ 1]
        st.bound = (None if r < 0.5 else s.conn if r < 0.85 and s.conn >= 0
                    else partner.conn if r < 0.95 and partner.conn >= 0 else rng.randrange(1 << self.conn_w))
        if readonly:
            st.access, st.pd, st.bound = rng.choice([0, 2]), s.pd, None
        self.register(st)

    # --- ULPDUs
    def queue(self, s: SSlot, data: bytes, note: str, verdict: int = 0):
        rng = self.rng
        u = LeanULPDU(s.conn, data, verdict, note)
        n = len(data)
        h = tbutil.first_piece_min(data)
        if n <= h or rng.random() < 0.8:
            cuts = [n]
        else:
            cuts = [rng.randint(h, n)]
            while cuts[-1] < n:
                cuts.append(min(n, cuts[-1] + rng.choice([1, rng.randint(1, 64), rng.randint(1, 300)])))
        start = 0
        for i, end in enumerate(cuts):
            s.pending.append((u, data[start:end], i == 0, end == n))
            start = end
        u.npieces = len(cuts)

    def emit(self, s: SSlot):
        u, data, first, last = s.pending.popleft()
        if first:
            u.op = len(self.ops)
            u.batch = self.batch_no
            self.ops.append(u.oracle_op())
            self.ulpdus.append(u)
            self.pieces_of[u.op] = u.npieces
        self.script.append(piece_item(self.lanes, self.conn_w, u, data, first, last))

    def early_copy(self, s: SSlot):
        """An early ULPDU: a copy of one of the ULPDUs s has pending (70%
        its octets, else a hostile variant), at a boundary between the
        slot's ULPDUs before that one's first piece. Never inside a ULPDU of
        the slot: the oracle applies a ULPDU whole at its first piece, the
        block writes an early ULPDU between that one's pieces, and the
        writes of two ULPDUs of a connection may overlap."""
        rng = self.rng
        starts = [i for i, x in enumerate(s.pending) if x[2]]
        # Mostly a later one than the next, ahead of the next.
        j = rng.randrange(1 if len(starts) > 1 and rng.random() < 0.8 else 0, len(starts))
        u = s.pending[starts[j]][0]
        data, exact = early_variant(rng, u.data)
        e = LeanULPDU(s.conn, data, 0, ("early: " if exact else "early variant: ") + u.note, early=True,
                      user_fl=rng.choice([3, 3, 3, 0, 1, 2]))
        s.pending.insert(starts[rng.randint(0, j - 1) if j and rng.random() < 0.8 else j], (e, data, True, True))
        self.early_count += 1

    def own_usable(self, s: SSlot):
        return [st for st in s.stags if st.valid and st.pd == s.pd and st.bound in (None, s.conn) and st.access & 1]

    def foreign(self, s: SSlot):
        """Entries of other slots this connection may not use: another PD, or
        bound to another connection."""
        return [st for o in self.slots if o is not s for st in o.stags
                if st.valid and (st.pd != s.pd or (st.bound is not None and st.bound != s.conn))]

    def payload(self):
        rng = self.rng
        return rng.randbytes(rng.choice([0, rng.randint(1, 16), rng.randint(1, 48), rng.randint(1, 64),
                                         rng.randint(1, 300)]))

    def good(self, s: SSlot):
        rng = self.rng
        r = rng.random()
        if r < 0.5:
            own = self.own_usable(s)
            if not own:
                st = rng.choice(s.stags)
                self.churn(s, st)
                own = self.own_usable(s)
                if not own:
                    return self.hostile(s)
            st = rng.choice(own)
            n = min(len(self.payload()), st.len)
            off = rng.choice([0, st.len - n, rng.randint(0, st.len - n)])
            last = rng.random() < 0.9
            return hdr_tagged(rng.choice([WRITE, WRITE, READ_RESP]), st.stag, st.base + off, rng.randbytes(n),
                              last=last), f"write {n} at +{off} of {st.len}"
        if r < 0.85:
            if not s.bufs[0]:
                self.post(s, 0, rng.randint(16, 256))
            blen = s.bufs[0][0]
            op = rng.choice([SEND, SEND, SEND_SE, SEND_INV, SEND_SE_INV])
            inv = 0
            if op in (SEND_INV, SEND_SE_INV):
                cand = [st for st in s.stags if st.valid and st.pd == s.pd and st.bound in (None, s.conn)]
                if cand:
                    st = rng.choice(cand)
                    inv = st.stag
                    st.valid = False
                else:
                    op = SEND
            n = min(len(self.payload()), blen)
            if n >= 2 and rng.random() < 0.15:
                # A two-segment message: the first one now, the L one later.
                k = rng.randint(1, n - 1)
                self.queue(s, hdr_untagged(op, 0, s.msn[0], 0, rng.randbytes(k), inv=inv, last=False), "send seg 1")
                data = hdr_untagged(op, 0, s.msn[0], k, rng.randbytes(n - k), inv=inv)
            else:
                data = hdr_untagged(op, 0, s.msn[0], 0, rng.randbytes(n), inv=inv)
            s.msn[0] += 1
            s.bufs[0].popleft()
            return data, f"send {n} of {blen}"
        if r < 0.95:
            if not s.bufs[1]:
                self.post(s, 1, rng.choice([28, 28, 40]))
            s.bufs[1].popleft()
            rr = {k: rng.getrandbits(64 if k.endswith("_to") else 32)
                  for k in ("sink_stag", "sink_to", "size", "src_stag", "src_to")}
            s.msn[1] += 1
            return hdr_untagged(READ_REQ, 1, s.msn[1] - 1, 0, rr_body(rr)), "read request"
        if not s.bufs[2]:
            self.post(s, 2, 64)
        s.bufs[2].popleft()
        s.msn[2] += 1
        s.left = 0
        return hdr_untagged(TERMINATE, 2, s.msn[2] - 1, 0, bytes([0x10, 0x02, 0x05, 0x00])), "terminate"

    def hostile(self, s: SSlot):
        rng = self.rng
        n = rng.choice([rng.randint(1, 16), rng.randint(1, 64), rng.randint(1, 200)])
        p = rng.randbytes(n)
        own_all = [st for st in s.stags if st.valid]
        kind = rng.randrange(21)
        if kind == 0:
            stag = rng.choice([rng.getrandbits(32), rng.randrange(1 << self.stag_aw) << 8 | rng.getrandbits(8)])
            return hdr_tagged(WRITE, stag, rng.choice([rng.getrandbits(64), rng.getrandbits(16)]), p), "random STag"
        if kind in (1, 2, 3, 4, 5) and own_all:
            st = rng.choice(own_all)
            if kind == 1:
                return hdr_tagged(WRITE, st.stag ^ rng.randint(1, 255), st.base, p), "wrong key"
            if kind == 2:
                return hdr_tagged(WRITE, st.stag, st.base - rng.randint(1, 8), p), "below base"
            if kind == 3:
                return hdr_tagged(READ_RESP, st.stag, st.base + st.len - n + rng.randint(1, 8), p), "past the end"
            if kind == 4:
                return hdr_tagged(WRITE, st.stag, 2**64 - rng.randint(1, n), p), "TO wrap"
            return hdr_tagged(WRITE, st.stag, st.base, rng.randbytes(st.len + rng.randint(1, 4))), "longer than region"
        if kind in (6, 7):
            cand = self.foreign(s)
            if cand:
                st = rng.choice(cand)
                m = min(n, st.len)
                what = "another PD" if st.pd != s.pd else "bound elsewhere"
                return hdr_tagged(WRITE, st.stag, st.base + rng.randint(0, st.len - m), p[:m]), what
        if kind == 8:
            ro = [st for st in s.stags if st.valid and not st.access & 1]
            if not ro:
                st = rng.choice(s.stags)
                self.churn(s, st, readonly=True)
                ro = [st]
            st = rng.choice(ro)
            m = min(n, st.len)
            return hdr_tagged(WRITE, st.stag, st.base, p[:m]), "no write access"
        if kind == 9:
            inv = [st for st in s.stags if not st.valid and st.len]
            if inv:
                st = rng.choice(inv)
                m = min(n, st.len)
                return hdr_tagged(WRITE, st.stag, st.base, p[:m]), "invalidated STag"
        if kind in (10, 11, 17, 20):
            # A header of the good kind, mutated (good falls back to a
            # hostile ULPDU, maybe a short one, when it has nothing good).
            d = bytearray(self.good(s)[0])
            if len(d) < 2:
                return bytes(d), "garbage"
        if kind == 10:
            d[0] = (d[0] & ~3) | rng.choice([0, 2, 3])
            return bytes(d), "DV"
        if kind == 11:
            d[1] = (d[1] & 0x3f) | (rng.choice([0, 2, 3]) << 6)
            return bytes(d), "RV"
        if kind == 12:
            if rng.random() < 0.5:
                return hdr_tagged(rng.randint(8, 15), 0, 0, p), "opcode > 7"
            return hdr_untagged(rng.choice([WRITE, READ_RESP]), 0, s.msn[0], 0, p), "tagged opcode untagged"
        if kind == 13:
            qn = rng.choice([3, rng.getrandbits(32), 1, 2])
            return hdr_untagged(SEND, qn, s.msn[0], 0, p), "QN"
        if kind == 14:
            msn = rng.choice([s.msn[0] + len(s.bufs[0]) + rng.randint(0, 5), s.msn[0] - rng.randint(1, 5),
                              rng.getrandbits(32)])
            return hdr_untagged(SEND, 0, msn, 0, p), "MSN"
        if kind == 15:
            blen = s.bufs[0][0] if s.bufs[0] else 16
            if rng.random() < 0.5:
                return hdr_untagged(SEND, 0, s.msn[0], blen + rng.choice([1, rng.getrandbits(31)]), p), "MO"
            return hdr_untagged(SEND, 0, s.msn[0], 0, rng.randbytes(blen + rng.randint(1, 8))), "too long"
        if kind == 16:
            return rng.randbytes(rng.randint(1, 70)), "garbage"
        if kind == 17:
            return bytes(d[:rng.randint(1, 17 if not d[0] & 0x80 else 13)]), "short"
        if kind == 18:
            cand = self.foreign(s)
            stag = rng.choice(cand).stag if cand and rng.random() < 0.7 else rng.getrandbits(32)
            return hdr_untagged(rng.choice([SEND_INV, SEND_SE_INV]), 0, s.msn[0], 0, p, inv=stag), "foreign invalidate"
        if kind == 19:
            if rng.random() < 0.5:
                # Message length 28, but not from MO 0: only one segment of
                # 28 octets is a Read Request (rdmap.DeliveredReadRequest).
                mo = rng.choice([1, 4, 27])
                return hdr_untagged(READ_REQ, 1, s.msn[1], mo, rng.randbytes(28 - mo)), "RR past MO 0"
            return hdr_untagged(READ_REQ, 1, s.msn[1], 0, rng.randbytes(rng.choice([27, 29, 0, 56]))), "RR length"
        if kind != 20:
            d = bytearray(self.good(s)[0])  # a fallback of the kinds above
            if len(d) < 2:
                return bytes(d), "garbage"
        i = rng.randrange(min(len(d), 18))
        d[i] ^= 1 << rng.randrange(8)
        return bytes(d), "bit flip"

    def new_epoch(self, s: SSlot):
        rng = self.rng
        s.msn = [1, 1, 1]
        s.bufs = [deque(), deque(), deque()]
        r = rng.random()
        busy = {o.conn for o in self.slots if o is not s}
        if r < 0.05:
            s.conn = rng.choice([c for c in self.never if c not in busy])
            s.enabled = False
            s.left = rng.randint(1, 3)
            return
        while True:
            s.conn = self.fresh.popleft()
            self.fresh.append(s.conn)
            if s.conn not in busy:
                break
        if r < 0.10:
            self.cfg("conn", dict(conn=s.conn, enable=0, pd=s.pd), {"conn": {"conn": s.conn, "pd": s.pd, "enable": False}})
            s.enabled = False
            s.left = rng.randint(1, 3)
            if rng.random() < 0.3:
                self.post(s, 0, 32)  # refused: not enabled
            return
        self.cfg("conn", dict(conn=s.conn, enable=1, pd=s.pd), {"conn": {"conn": s.conn, "pd": s.pd}})
        s.enabled = True
        s.left = rng.choice([1, 2, 3, 4, 6, 10])
        for qn, k, sizes in ((0, rng.randint(0, 5), (16, 256)), (1, rng.randint(0, 1), (28, 40)), (2, rng.randint(0, 1), (52, 64))):
            for _ in range(k):
                self.post(s, qn, rng.randint(*sizes))
        if rng.random() < 0.04:
            for _ in range(RQ_DEPTH + 2 - len(s.bufs[0])):
                self.post(s, 0, rng.randint(16, 64))  # fills the ring; the last ones are refused
        if rng.random() < 0.02:
            self.post(s, 3, 16)  # no such queue: refused
        if rng.random() < 0.3:
            self.churn(s, rng.choice(s.stags))

    def step(self):
        rng = self.rng
        if rng.random() < 0.03:
            o = rng.choice(self.slots)
            self.churn(o, rng.choice(o.stags))
        s = rng.choice(self.slots)
        if s.pending:
            self.emit(s)
            return
        if s.left <= 0:
            self.new_epoch(s)
            return
        self.make(s)
        if rng.random() < 0.05:
            # A few more ULPDUs of the slot (mostly good ones), and an early
            # copy of one.
            for _ in range(rng.randint(1, 3)):
                if s.left <= 0:
                    break
                self.make(s, p_hostile=0.15)
            self.early_copy(s)
        self.emit(s)

    def make(self, s: SSlot, p_hostile: float = 0.45):
        """The slot's next ULPDU, to its pending pieces."""
        rng = self.rng
        s.left -= 1
        if not s.enabled:
            own = [st for st in s.stags if st.valid and st.len]
            if own:
                st = rng.choice(own)
                m = min(st.len, 64)
                data, note = hdr_tagged(WRITE, st.stag, st.base, rng.randbytes(rng.randint(1, m))), "to a disabled connection"
            else:
                data, note = hdr_untagged(SEND, 0, 1, 0, b"x"), "to a disabled connection"
        elif rng.random() < p_hostile:
            data, note = self.hostile(s)
            self.hostile_count += 1
            if rng.random() < 0.75:
                s.left = 0
        else:
            data, note = self.good(s)
        verdict = 0
        if rng.random() < 0.03:
            verdict = rng.choice([2, 3])
            if rng.random() < 0.8:
                s.left = 0
        self.queue(s, data, note, verdict)

    def batch(self, n: int):
        """The steps of about n ULPDUs; every ULPDU complete at the end."""
        self.script, self.ops, self.ulpdus, self.pieces_of = [], [], [], {}
        if self.batch_no == 0:
            for s in self.slots:
                for st in s.stags:
                    self.churn(s, st)
        while len(self.ulpdus) < n:
            self.step()
        while any(s.pending for s in self.slots):
            self.emit(self.rng.choice([s for s in self.slots if s.pending]))
        out = (self.script, self.ops, self.ulpdus, self.pieces_of)
        self.batch_no += 1
        return out


@cocotb.test()
async def security_soak(dut):
    """Tens of thousands of short ULPDUs (make soak: a million), about half of them hostile,
    with STag churn, on 8 connections at a time: every write checked as it
    happens against the ranges the oracle allows, memory and every report
    against the oracle at each checkpoint."""
    rng = random.Random(random.getrandbits(64))
    lean = Lean(dut, SOAK_MEM)
    orc = oracle.shared()
    lean_self_check(orc, rng)
    # make test's size; `make soak` runs SOAK_ULPDUS (a million by default).
    total = int(os.environ.get("DDP_RX_SOAK_ULPDUS", "50000"))
    gen = SoakGen(rng, lean.lanes, lean.conn_w, len(dut.s_stag_index))
    await lean.start()
    nbatch = max(1, -(-total // SOAK_BATCH))
    stats = defaultdict(int)
    t0 = time.monotonic()
    cyc0 = lean.cycle
    batch = gen.batch(min(SOAK_BATCH, total))
    # Pipelined: Go answers batch k+1 while the simulator runs batch k.
    orc.send("ddp_place_stream", session="soak", open={"mem_size": SOAK_MEM, "ring_depth": RQ_DEPTH}, ops=batch[1], mem=True)
    sent = 0
    for k in range(nbatch):
        resp = orc.receive()
        script, ops, ulpdus, pieces_of = batch
        places = resp["places"]
        assert len(places) == len(ulpdus)
        for u, pl in zip(ulpdus, places):
            u.place = pl
            if u.early:
                stats["early placed" if pl[1] else "early not placed"] += 1
            else:
                stats["placed"] += pl[1] > 0
        sent += len(ulpdus)
        # Random back-pressure on every output (AW, W, m_wr, m_cpl, m_err)
        # in one batch of SOAK_STALL_EVERY: the rest run always ready,
        # which keeps the soak's clocks down.
        lean.p_stall = SOAK_STALL if k % SOAK_STALL_EVERY == 1 or nbatch == 1 else 0.0
        lean.script.extend(script)
        if k + 1 < nbatch:
            batch = gen.batch(min(SOAK_BATCH, total - sent))
            orc.send("ddp_place_stream", session="soak", ops=batch[1], mem=True)
        await lean.drain()
        for e in resp["events"]:
            stats[(e["kind"], e["layer"], e["etype"], e["code"]) if e["kind"] == "error" else "completion"] += 1
        stats["drops"] += len(resp["drops"])
        stats["refused"] += len(resp["refused"])
        lean_compare(lean, resp, ulpdus, f"batch {k}", pieces_of)
        if k % 10 == 0 or k + 1 == nbatch:
            dt = time.monotonic() - t0
            dut._log.info("soak: %d ULPDUs, %d writes, %d clocks, %.1f s, %.0f ULPDUs/s", sent, lean.writes,
                          lean.cycle - cyc0, dt, sent / dt)
    orc.request("ddp_place_stream", session="soak", ops=[], close=True)
    dt = time.monotonic() - t0
    stats["hostile"] = gen.hostile_count
    stats["early"] = gen.early_count
    summary = {str(k): v for k, v in sorted(stats.items(), key=lambda kv: str(kv[0]))}
    dut._log.info("soak done: %d ULPDUs in %.1f s (%.0f ULPDUs/s, %d clocks, %.1f clocks each): %s",
                  sent, dt, sent / dt, lean.cycle - cyc0, (lean.cycle - cyc0) / sent, summary)
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    (BENCH_DIR / f"ddp_rx-soak-W{lean.lanes * 8}{'-req' if lean.req else ''}.json").write_text(json.dumps(
        {"write_port": "request stream" if lean.req else "AXI4", "ulpdus": sent, "seconds": round(dt, 1), "ulpdus_per_second": round(sent / dt), "clocks": lean.cycle - cyc0,
         "outcomes": summary}, indent=2) + "\n")
    # The stimulus must reach every check: each error of 7.1 and RFC 5040 the
    # block makes, completions, drops and refused posts.
    want = [(1, 1, 0), (1, 1, 1), (1, 1, 2), (1, 1, 3), (0, 1, 2), (1, 1, 4), (1, 2, 6), (0, 2, 5), (0, 2, 6),
            (1, 2, 1), (1, 2, 2), (1, 2, 3), (1, 2, 4), (1, 2, 5), (0, 2, 7), (0, 1, 9), (2, 0, 2), (2, 0, 3)]
    missing = [w for w in want if not stats[("error",) + w]]
    assert not missing, f"the soak never produced errors {missing}: {summary}"
    assert stats["completion"] > sent // 10 and stats["placed"] > sent // 10, summary
    assert stats["drops"] and stats["refused"], summary
    assert stats["early placed"] and stats["early not placed"], summary
    assert lean.stalls, "no ready held low by the random back-pressure: the soak missed its case"


# --- gap tests: disabled connections, full rings, error B responses ----------------


class Steps:
    """A directed script for the lean bench, told to the oracle
    (ddp_place_stream) in the same order."""

    def __init__(self, lean: Lean, session: str, mem_size: int):
        self.lean, self.session, self.mem_size = lean, session, mem_size
        self.ops, self.ulpdus, self.pieces_of = [], [], {}
        self.held: list = []  # the script, held back until the oracle has named every ULPDU's range
        self.opened = False
        self.split: dict = {}  # ULPDU sent in pieces (begin/more) -> [bounds, next piece]

    def cfg(self, port, fence=None, **fields):
        self.held.append(("c", port, fields, fence))

    def conn(self, c, pd, enable=True):
        self.cfg("conn", conn=c, enable=int(enable), pd=pd)
        self.ops.append({"conn": {"conn": c, "pd": pd, "enable": enable}})

    def stag(self, index, key, pd, access, base, length, host, bound=None, valid=True, fence=None):
        """fence: a host range (lo, hi) no write may touch once this step's
        handshake is done (Lean.fenced)."""
        self.cfg("stag", fence=fence, index=index, entry_valid=int(valid), key=key, pd=pd,
                 bound=int(bound is not None), conn=bound or 0, access=access, base=base, len=length, addr=host)
        e = {"index": index, "valid": valid, "key": key, "pd": pd, "access": access, "base": base, "len": length,
             "host": host}
        if bound is not None:
            e["conn"] = bound
        self.ops.append({"stag": e})

    def post(self, c, qn, addr, length, id_):
        self.cfg("post", conn=c, qn=qn, addr=addr, len=length, id=id_)
        self.ops.append({"post": {"conn": c, "qn": qn, "addr": addr, "len": length, "id": id_}})

    def poison(self, addr, length):
        self.lean.poison.append((addr, addr + length))
        self.ops.append({"poison": {"addr": addr, "len": length}})

    def hold(self, clocks, verdicts=False, events=False, axi=False):
        """From here on in the script, for this many clocks: no verdict
        given (verdicts), m_cpl_ready and m_err_ready low (events), AWREADY,
        WREADY and m_wr_ready low (axi)."""
        self.held.append(("h", clocks, verdicts, events, axi))

    def ulpdu(self, c, data, verdict=0, cuts=(), report=True):
        """report=False: the oracle is told no verdict ever came (the ULPDU
        and its stream report nothing more); the block still gets one."""
        u = LeanULPDU(c, data, verdict, "directed")
        u.op = len(self.ops)
        op = {"conn": c, "data": data.hex()}
        if report:
            op["verdict"] = verdict
        self.ops.append({"ulpdu": op})
        self.ulpdus.append(u)
        bounds = [0, *cuts, len(data)]
        self.pieces_of[u.op] = len(bounds) - 1
        for i in range(len(bounds) - 1):
            self.held.append(piece_item(self.lean.lanes, self.lean.conn_w, u, data[bounds[i]:bounds[i + 1]], i == 0,
                                        i == len(bounds) - 2))

    def begin(self, c, data, cuts, verdict=0):
        """The first piece of a ULPDU sent in pieces (cut at cuts); more()
        sends each next one, with whatever steps come between (the oracle's
        ulpdu upto / more ops)."""
        u = LeanULPDU(c, data, verdict, "directed, in pieces")
        u.op = len(self.ops)
        bounds = [0, *cuts, len(data)]
        self.ops.append({"ulpdu": {"conn": c, "data": data.hex(), "verdict": verdict, "upto": bounds[1]}})
        self.ulpdus.append(u)
        self.pieces_of[u.op] = len(bounds) - 1
        self.split[u] = [bounds, 1]
        self.held.append(piece_item(self.lean.lanes, self.lean.conn_w, u, data[:bounds[1]], True, len(bounds) == 2))
        return u

    def more(self, u):
        bounds, i = self.split[u]
        assert i + 1 < len(bounds), "every piece already sent"
        last = i + 2 == len(bounds)
        m = {"conn": u.conn}
        if not last:
            m["upto"] = bounds[i + 1]
        self.ops.append({"more": m})
        self.held.append(piece_item(self.lean.lanes, self.lean.conn_w, u, u.data[bounds[i]:bounds[i + 1]], False, last))
        self.split[u][1] = i + 1

    def early(self, c, data, user_fl=3):
        u = LeanULPDU(c, data, 0, "directed early", early=True, user_fl=user_fl)
        u.op = len(self.ops)
        self.ops.append(u.oracle_op())
        self.ulpdus.append(u)
        self.held.append(piece_item(self.lean.lanes, self.lean.conn_w, u, data, True, True))
        return u

    async def run(self, what: str) -> dict:
        fields = {"session": self.session, "ops": self.ops, "mem": True}
        if not self.opened:
            fields["open"] = {"mem_size": self.mem_size, "ring_depth": RQ_DEPTH}
            self.opened = True
        resp = oracle.shared().request("ddp_place_stream", **fields)
        assert len(resp["places"]) == len(self.ulpdus)
        for u, pl in zip(self.ulpdus, resp["places"]):
            u.place = pl
        self.lean.script.extend(self.held)
        self.held = []
        await self.lean.drain()
        lean_compare(self.lean, resp, self.ulpdus, what, self.pieces_of)
        self.ops, self.ulpdus, self.pieces_of, self.split = [], [], {}, {}
        return resp


async def lean_steps(dut, session: str, mem_size: int = 1 << 16):
    lean = Lean(dut, mem_size)
    await lean.start()
    return lean, Steps(lean, session, mem_size)


@cocotb.test(stage=-1)  # before the others: see CASE_TESTS
async def gap_disabled_conn(dut):
    """Pieces of a disabled or never configured connection are reported on
    m_drop (one pulse per piece, m_drop_count counts them), place nothing
    and report nothing on m_cpl/m_err, whatever their verdict; early
    ULPDUs of those connections place nothing and are not reported on
    m_drop."""
    lean, st = await lean_steps(dut, "gap_drop")
    a, b, c = 3, 5, 9
    st.conn(a, 1)
    st.conn(b, 1)
    st.conn(b, 1, enable=False)
    st.stag(4, 0x11, 1, REMOTE_WRITE, 0, 1024, 0x100)
    st.post(a, 0, 0x800, 64, 77)
    st.post(b, 0, 0x900, 64, 78)  # refused, reason 3: b is not enabled
    st.ulpdu(a, hdr_tagged(WRITE, 4 << 8 | 0x11, 0, b"a" * 40))
    st.ulpdu(b, hdr_tagged(WRITE, 4 << 8 | 0x11, 100, bytes(range(1, 151))), cuts=(50, 120))
    st.ulpdu(c, hdr_tagged(WRITE, 4 << 8 | 0x11, 300, b"c" * 20), verdict=2)
    st.ulpdu(b, hdr_untagged(SEND, 0, 1, 0, b"s" * 10))
    eb = st.early(b, hdr_tagged(WRITE, 4 << 8 | 0x11, 400, b"e" * 100))
    ec = st.early(c, hdr_tagged(WRITE, 4 << 8 | 0x11, 600, b"f" * 30), user_fl=0)
    ea = st.early(a, hdr_tagged(WRITE, 4 << 8 | 0x11, 700, b"g" * 30))
    st.ulpdu(a, hdr_untagged(SEND, 0, 1, 0, b"t" * 10))
    resp = await st.run("disabled connections")
    assert (eb.place[1], ec.place[1], ea.place[1] > 0) == (0, 0, True), (eb.place, ec.place, ea.place)
    assert [d["conn"] for d in resp["drops"]] == [b, c, b], resp["drops"]
    assert [(r["conn"], r["reason"]) for r in resp["refused"]] == [(b, 3)], resp["refused"]
    assert len(lean.drops) == 0  # compared and cleared by lean_compare; the count stays
    assert int(dut.m_drop_count.value) == 5, int(dut.m_drop_count.value)
    assert lean.mem[0x100 + 100:0x100 + 250] == bytes(150), "a disabled connection wrote host memory"


@cocotb.test(stage=-1)  # before the others: see CASE_TESTS
async def gap_long_piece(dut):
    """Pieces of more than 32 KiB (4096 beats at W=64: a TCP segment may
    carry up to 65535 octets): a ULPDU of 60014 octets in two pieces, the
    first 40000 octets long, is placed whole, and so is the next one."""
    lean, st = await lean_steps(dut, "gap_long", mem_size=1 << 17)
    a = 12
    st.conn(a, 7)
    st.stag(13, 0x5A, 7, REMOTE_WRITE, 1 << 40, 1 << 17, 0)
    rng = random.Random(5)
    big = rng.randbytes(60000)
    st.ulpdu(a, hdr_tagged(WRITE, 13 << 8 | 0x5A, (1 << 40) + 3, big), cuts=(40000,))
    st.ulpdu(a, hdr_tagged(WRITE, 13 << 8 | 0x5A, (1 << 40) + 60100, b"after" * 20), cuts=(50,))
    await st.run("long pieces")
    assert lean.mem[3:60003] == big, "the long ULPDU was not placed whole"


@cocotb.test(stage=-1)  # before the others: see CASE_TESTS
async def gap_full_ring(dut):
    """A post to a full ring, or to QN 3, is refused on m_post_err (reason 1
    and 2; 3 is a connection not enabled, in gap_disabled_conn) with its
    connection, QN and id; the ring keeps its buffers."""
    lean, st = await lean_steps(dut, "gap_ring")
    a = 6
    st.conn(a, 2)
    for i in range(RQ_DEPTH + 2):
        st.post(a, 0, 0x100 * i, 32, 100 + i)
    st.post(a, 3, 0x2000, 32, 200)
    st.post(a, 1, 0x2100, 28, 300)
    for msn in range(1, RQ_DEPTH + 1):
        st.ulpdu(a, hdr_untagged(SEND, 0, msn, 0, bytes([msn]) * 8))
    st.post(a, 0, 0x3000, 32, 400)  # room again
    st.ulpdu(a, hdr_untagged(SEND, 0, RQ_DEPTH + 1, 0, b"n" * 8))
    resp = await st.run("full ring")
    assert [(r["id"], r["reason"]) for r in resp["refused"]] == [(100 + RQ_DEPTH, 1), (101 + RQ_DEPTH, 1), (200, 2)]
    assert resp["events"][-1]["id"] == 400, resp["events"][-1]


@cocotb.test(stage=-1)  # before the others: see CASE_TESTS
async def gap_bresp_error(dut):
    """An error B response (SLVERR) to a write of a ULPDU is that stream's
    error (RDMAP Local Catastrophic Error, 0/0/0) in place of the ULPDU's
    completion; nothing of the stream is placed or reported after it; other
    streams carry on. m_berr shows the response."""
    lean, st = await lean_steps(dut, "gap_bresp")
    a, b = 1, 2
    st.conn(a, 1)
    st.conn(b, 1)
    st.stag(3, 0x31, 1, REMOTE_WRITE, 1000, 512, 0x1000, bound=a)
    st.stag(4, 0x41, 1, REMOTE_WRITE, 0, 512, 0x2000, bound=b)
    st.post(a, 0, 0x3000, 64, 5)
    st.poison(0x1000 + 100, 4)
    st.ulpdu(a, hdr_tagged(WRITE, 3 << 8 | 0x31, 1000, b"o" * 50))
    st.ulpdu(a, hdr_tagged(WRITE, 3 << 8 | 0x31, 1080, bytes(range(1, 65))))
    st.ulpdu(b, hdr_tagged(WRITE, 4 << 8 | 0x41, 0, b"b" * 30))
    resp = await st.run("error response")
    assert [(e["conn"], e["kind"], e["layer"], e["etype"], e["code"]) for e in resp["events"]] == [
        (a, "completion", 0, 0, 0), (a, "error", 0, 0, 0), (b, "completion", 0, 0, 0)], resp["events"]
    assert lean.berrs == [(a, 2)], lean.berrs
    # After the error: the stream places and reports nothing; b carries on.
    st.ulpdu(a, hdr_tagged(WRITE, 3 << 8 | 0x31, 1200, b"x" * 20))
    st.ulpdu(a, hdr_untagged(SEND, 0, 1, 0, b"y" * 20))
    st.ulpdu(b, hdr_tagged(WRITE, 4 << 8 | 0x41, 100, b"z" * 30))
    resp = await st.run("after the error response")
    assert [(e["conn"], e["kind"]) for e in resp["events"]] == [(b, "completion")], resp["events"]


@cocotb.test(stage=-1)  # before the others: see CASE_TESTS
async def gap_b_ahead(dut):
    """A ULPDU that waits long for delivery while later bursts are
    answered: the first of twelve RDMA Writes of five bursts each waits
    3000 clocks for its verdict (then, in a second round, for m_cpl_ready);
    the Writes behind it are placed meanwhile, as far as the delivery queue
    lets them, more than 2^(BQ_AW+1) bursts past the first one's. Once let
    go, all twelve are delivered in order and memory is Go's."""
    lean, st = await lean_steps(dut, "gap_bahead", mem_size=1 << 17)
    a, n_u, bursts = 4, 12, 5
    blk = 8 * lean.lanes  # a BURST block (BURST = 8, the default)
    n = bursts * blk
    st.conn(a, 3)
    st.stag(6, 0x66, 3, REMOTE_WRITE, 0, 2 * n_u * n, 0)
    rng = random.Random(11)
    bq = 1 << 4  # 2^BQ_AW, the default
    for rnd, what in enumerate(("verdict", "m_cpl_ready")):
        st.hold(3000, verdicts=rnd == 0, events=rnd == 1)
        for i in range(n_u):
            st.ulpdu(a, hdr_tagged(WRITE, 6 << 8 | 0x66, (rnd * n_u + i) * n, rng.randbytes(n)))
        resp = await st.run(f"the first ULPDU's {what} held")
        assert [e["kind"] for e in resp["events"]] == ["completion"] * n_u, resp["events"]
        dut._log.info("%s held: %d bursts issued meanwhile", what, lean.held_aws[-1])
        assert lean.held_aws[-1] > bursts + 2 * bq, (
            f"only {lean.held_aws[-1]} bursts issued while the {what} was held: the test missed its case")


@cocotb.test(stage=-1)  # before the others: see CASE_TESTS
async def gap_aw_after_w(dut):
    """A write slave that raises AWREADY only after it has seen WVALID (AXI4
    A3.3.1 lets a slave wait so; a master must not wait for AWREADY before
    asserting WVALID): RDMA Writes of one to many beats, at every host
    offset of a beat, are placed as Go places them, and W beats of some
    bursts go before their AW is taken."""
    lean, st = await lean_steps(dut, "gap_awafterw", mem_size=1 << 16)
    a = 7
    st.conn(a, 2)
    st.stag(8, 0x77, 2, REMOTE_WRITE, 0, 1 << 15, 0)
    rng = random.Random(17)
    to = 0
    for n in (1, 5, lean.lanes, 3 * lean.lanes + 7, 700, 2, 9 * lean.lanes):
        to += rng.randrange(1, lean.lanes)
        st.ulpdu(a, hdr_tagged(WRITE, 8 << 8 | 0x77, to, rng.randbytes(n)))
        to += n
    lean.aw_wait_w = True
    await st.run("AWREADY after WVALID")
    lean.aw_wait_w = False
    assert lean.w_ahead_bursts > 0, "no W beat went ahead of its AW: the test missed its case"
    dut._log.info("AWREADY after WVALID: %d of %d bursts had W beats before their AW was taken",
                  lean.w_ahead_bursts, lean.aws)


# --- pytest ------------------------------------------------------------------

WIDTHS = (64, 128, 256, 512)


# The cocotb tests each case runs (cocotb runs them by stage, then in the
# order of the file: the gap tests have stage -1 and run first, because the
# tables in the block's RAMs outlive a test and gap_disabled_conn needs a
# connection no test has configured); the soak has a case of its own.
# DDP_RX_TESTCASE runs some of them only.
CASE_TESTS = ("gap_disabled_conn", "gap_long_piece", "gap_full_ring", "gap_bresp_error", "gap_b_ahead", "gap_aw_after_w",
              "directed_checks", "early_checks", "random_traffic",
              "bench")
# The corner tests of tests/ddp_rx/corners.py run in the same cases (after
# these).
CORNER_TESTS = ("corner_cut_other_conn", "corner_fence_between", "corner_reset_quiet", "corner_cut_invalidate",
                "corner_cut_overwrite", "corner_reset_mid_traffic", "corner_fence_queued",
                "corner_restart_in_flight", "corner_restart_bresp")
# Those that need the AXI4 port (an error response): not in test_ddp_rx_wr_req.
CORNER_AXI_ONLY = ("corner_restart_bresp",)


def case_modules() -> str:
    return ",".join([__name__, "corners"])


# ddp_rx.v is the top of its stage modules (ddp_rx_<stage>.v).
DDP_RX_STAGES = ("ddp_rx_intake.v", "ddp_rx_check.v", "ddp_rx_decide.v", "ddp_rx_wport.v", "ddp_rx_setup.v",
                 "ddp_rx_retire.v", "ddp_rx_place.v", "ddp_rx_tables.v", "ddp_rx_deliver.v")
RTL_SOURCES = [hdlsim.RTL_DIR / f for f in ("ddp_rx.v", *DDP_RX_STAGES, "ddp_rx_fifo.v", "ddp_rx_fifo2.v", "sdp_ram.v",
                                             "rnic_incdec.v", "rnic_pick.v")]
# The VHDL-2008 twin, on GHDL: the same tests, clock for clock the same.
# ddp_rx.vhd is the top of its stage entities (ddp_rx_<stage>.vhd, the
# Verilog's stages), which are analysed before it.
VHDL_STAGES = tuple(f.replace(".v", ".vhd") for f in DDP_RX_STAGES)
VHDL_SOURCES = [hdlsim.VHDL_DIR / f for f in ("sdp_ram.vhd", "ddp_rx_fifo.vhd", "ddp_rx_fifo2.vhd", *VHDL_STAGES,
                                              "ddp_rx.vhd")]


def axi_width(width: int) -> int:
    """The write port each width is tested with: twice the data width at 128
    and 512 (the 100 Gb/s build's: short payloads at any host offset keep up
    with the input), the data width at 64 and 256; the security soak runs
    the narrow port at 512, so both ports see the widest data path."""
    return 2 * width if width in (128, 512) else width


@pytest.mark.parametrize("sim,width", hdlsim.width_cases(WIDTHS, langs=("verilog", "vhdl")))
def test_ddp_rx(sim, width, oracle_path):
    # The big random run: Verilator at 512 bits.
    big = sim == "verilator" and width == 512
    axi = axi_width(width)
    hdlsim.run(
        test="ddp_rx",
        sim=sim,
        tag=f"W{width}-A{axi}",
        toplevel="ddp_rx",
        test_module=case_modules(),
        verilog_sources=RTL_SOURCES,
        vhdl_sources=VHDL_SOURCES,
        parameters={"DATA_W": width, "AXI_W": axi},
        extra_env={oracle.ENV_VAR: str(oracle_path), "DDP_RX_WIDTH": str(width),
                   "DDP_RX_BIG": "1" if big else "0",
                   "TESTCASE": os.environ.get("DDP_RX_TESTCASE") or ",".join(CASE_TESTS + CORNER_TESTS)},
    )


# The write-request stream (WR_REQ = 1, two lines a request): the tests
# that do not drive the AXI4 port themselves (the gap tests' Lean bench
# does), on Verilator at both ends of the width range and on the VHDL twin
# at 64.
REQ_TESTS = ("directed_checks", "early_checks", "random_traffic", "bench")
REQ_CASES = [p for p in hdlsim.width_cases((64, 512), langs=("verilog", "vhdl"),
                                           sim_widths={"icarus": (), "ghdl": (64,)})]


@pytest.mark.parametrize("sim,width", REQ_CASES)
def test_ddp_rx_wr_req(sim, width, oracle_path):
    hdlsim.run(
        test="ddp_rx",
        sim=sim,
        tag=f"W{width}-A{2 * width}-req",
        toplevel="ddp_rx",
        test_module=case_modules(),
        verilog_sources=RTL_SOURCES,
        vhdl_sources=VHDL_SOURCES,
        parameters={"DATA_W": width, "AXI_W": 2 * width, "WR_REQ": 1},
        extra_env={oracle.ENV_VAR: str(oracle_path), "DDP_RX_WIDTH": str(width),
                   "DDP_RX_BIG": "1" if sim == "verilator" and width == 512 else "0", "DDP_RX_WR_REQ": "1",
                   "TESTCASE": os.environ.get("DDP_RX_TESTCASE") or ",".join(REQ_TESTS + tuple(t for t in CORNER_TESTS if t not in CORNER_AXI_ONLY))},
    )


SOAK_WIDTH = 512


@pytest.mark.parametrize("sim", [p for p in hdlsim.simulators(langs=("verilog",)) if p.values[0] == "verilator"])
def test_ddp_rx_security_soak(sim, oracle_path):
    """security_soak on Verilator at 512 bits (the fewest clocks per short
    ULPDU); DDP_RX_SOAK_ULPDUS sets its size."""
    hdlsim.run(
        test="ddp_rx",
        sim=sim,
        tag=f"W{SOAK_WIDTH}-soak",
        toplevel="ddp_rx",
        test_module=__name__,
        verilog_sources=RTL_SOURCES,
        parameters={"DATA_W": SOAK_WIDTH},
        extra_env={oracle.ENV_VAR: str(oracle_path), "DDP_RX_WIDTH": str(SOAK_WIDTH), "DDP_RX_BIG": "0",
                   "TESTCASE": "security_soak"},
    )


@pytest.mark.parametrize("sim", [p for p in hdlsim.simulators(langs=("verilog",)) if p.values[0] == "verilator"])
def test_ddp_rx_security_soak_wr_req(sim, oracle_path):
    """security_soak with the write-request stream (WR_REQ = 1): every
    request's strobed octets checked as they come; DDP_RX_SOAK_ULPDUS sets
    its size."""
    hdlsim.run(
        test="ddp_rx",
        sim=sim,
        tag=f"W{SOAK_WIDTH}-soak-req",
        toplevel="ddp_rx",
        test_module=__name__,
        verilog_sources=RTL_SOURCES,
        parameters={"DATA_W": SOAK_WIDTH, "AXI_W": 2 * SOAK_WIDTH, "WR_REQ": 1},
        extra_env={oracle.ENV_VAR: str(oracle_path), "DDP_RX_WIDTH": str(SOAK_WIDTH), "DDP_RX_BIG": "0",
                   "DDP_RX_WR_REQ": "1", "TESTCASE": "security_soak"},
    )


@pytest.mark.skipif(not hdlsim.selected("icarus"), reason="Icarus not selected by SIMS")
@pytest.mark.parametrize("params,message", [
    (["ddp_rx.DATA_W=96"], "DATA_W must be 64, 128, 256 or 512, got 96"),
    (["ddp_rx.DATA_W=64", "ddp_rx.AXI_W=256"], "AXI_W must be DATA_W or 2 DATA_W, got 256"),
    (["ddp_rx.DATA_W=64", "ddp_rx.WR_REQ=1"], "WR_REQ must be 0, or 1 with AXI_W = 2 DATA_W, got 1 (AXI_W 64)"),
], ids=["DATA_W", "AXI_W", "WR_REQ"])
def test_ddp_rx_rejects_illegal_width(tmp_path: Path, params, message):
    """DATA_W outside {64, 128, 256, 512}, a write port neither DATA_W nor
    2 DATA_W wide, or the write-request stream without the 2 DATA_W port,
    stops the simulation at time 0 with the reason."""
    out = tmp_path / "ddp_rx.vvp"
    subprocess.run(
        ["iverilog", "-g2012", "-I", str(hdlsim.RTL_DIR), "-o", str(out),
         *[a for p in params for a in ("-P", p)], *[str(p) for p in RTL_SOURCES]],
        check=True,
    )
    run = subprocess.run(["vvp", "-n", str(out)], capture_output=True, text=True)
    assert message in run.stdout + run.stderr
