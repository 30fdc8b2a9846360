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
a write outside the memory raises in the RAM model.

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
  random_traffic   many connections interleaved piece by piece, random
                   messages of every opcode, random MULPDUs and piece cuts,
                   mutated headers and garbage ULPDUs, random verdicts
                   (mostly good), gaps on the input, back-pressure on the
                   AXI channels and the event outputs; in rounds, each
                   restarting the connections and posting fresh buffers.
  bench            back-to-back RDMA Writes of 64..9000 octets into an
                   always-ready memory: input beats per clock and the
                   latency from a piece's first beat to its first AW and W,
                   written to build/bench/ddp_rx-W<w>.json (not asserted).

Run with `.venv/bin/pytest tests/ddp_rx` (SIMS=..., WAVES=1, RANDOM_SEED=...
as in tests/hdlsim.py). DDP_RX_ROUNDS sets random_traffic's rounds.
"""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge, Timer
from cocotbext.axi import AxiRamWrite, AxiStreamBus, AxiStreamFrame, AxiStreamSource, AxiWriteBus

import hdlsim
import oracle

CLK_PERIOD_NS = 4
BENCH_DIR = hdlsim.REPO_ROOT / "build" / "bench"
MEM_SIZE = 1 << 18
SLICE = 1 << 14  # host memory per connection in random_traffic
RQ_DEPTH = 8  # 2^RQ_AW, the default

WRITE, READ_REQ, READ_RESP, SEND, SEND_INV, SEND_SE, SEND_SE_INV, TERMINATE = range(8)
TAGGED = (WRITE, READ_RESP)
REMOTE_WRITE, REMOTE_READ = 1, 2


@dataclass
class Piece:
    conn: int
    data: bytes
    first: bool
    last: bool
    ulen: int
    seq: int = -1  # the ULPDU's index in TB.ulpdus (set on the first piece)


@dataclass
class Ulpdu:
    conn: int
    data: bytes
    verdict: int = 0
    pieces: list = field(default_factory=list)


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
        self.ops: list[dict] = []  # for the oracle, in the order the block sees them
        self.verdicts: deque = deque()  # (last-piece number, conn, code), in last-piece order
        self.last_pieces = 0
        self.events: dict[int, list] = defaultdict(list)
        self.ulpdus_sent = 0
        self.p_event_stall = 0.0
        self.p_verdict_wait = 0.3
        self.cycle = 0
        self.first_valid_cycles: list[int] = []
        self.aw_cycles: list[int] = []
        self.w_cycles: list[int] = []
        self.in_beat_cycles: list[int] = []
        self.measure = False

    async def start(self):
        dut = self.dut
        dut.rst.value = 1
        for sig in ("s_verdict_tvalid", "s_conn_valid", "s_stag_valid", "s_post_valid"):
            getattr(dut, sig).value = 0
        dut.m_cpl_ready.value = 1
        dut.m_err_ready.value = 1
        cocotb.start_soon(Clock(dut.clk, CLK_PERIOD_NS, units="ns").start())
        await ClockCycles(dut.clk, 3)
        await FallingEdge(dut.clk)
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        cocotb.start_soon(self._clock_loop())

    def pause(self, p: float):
        rng = random.Random(self.rng.getrandbits(64))
        while True:
            yield rng.random() < p

    # --- one loop per clock: verdicts in, events out, input counted ----------

    async def _clock_loop(self):
        dut = self.dut
        rng = random.Random(self.rng.getrandbits(64))
        vvalid = False
        last_user_bit = 1
        prev_in_valid = 0
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            tv = int(dut.s_axis_tvalid.value)
            if tv and dut.s_axis_tready.value:
                if self.measure:
                    self.in_beat_cycles.append(self.cycle)
                if dut.s_axis_tlast.value and int(dut.s_axis_tuser.value) & last_user_bit:
                    self.last_pieces += 1
            if self.measure:
                if tv and not prev_in_valid:
                    self.first_valid_cycles.append(self.cycle)
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
                self.events[int(dut.m_cpl_conn.value)].append(self._cpl())
            if dut.m_err_valid.value and dut.m_err_ready.value:
                self.events[int(dut.m_err_conn.value)].append(
                    ("error", int(dut.m_err_layer.value), int(dut.m_err_etype.value), int(dut.m_err_code.value)))
            if self.p_event_stall:
                ready = 0 if rng.random() < self.p_event_stall else 1
                dut.m_cpl_ready.value = ready
                dut.m_err_ready.value = ready

    def _cpl(self):
        d = self.dut
        op = int(d.m_cpl_opcode.value)
        rr = int(d.m_cpl_rr.value).to_bytes(28, "little").hex() if op == READ_REQ else ""
        return ("completion", op, int(d.m_cpl_tagged.value), int(d.m_cpl_stag.value), int(d.m_cpl_qn.value),
                int(d.m_cpl_msn.value), int(d.m_cpl_len.value), int(d.m_cpl_id.value),
                int(d.m_cpl_inv_stag.value), rr)

    @staticmethod
    def oracle_event(e: dict):
        if e["kind"] == "error":
            return ("error", e["layer"], e["etype"], e["code"])
        return ("completion", e["opcode"], int(e["tagged"]), e["stag"], e["qn"], e["msn"], e["len"], e["id"],
                e["inv_stag"], e["rr"])

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
        """Cut a ULPDU into pieces: the first holds at least 46 octets (or
        all of a shorter ULPDU), as mpa_rx guarantees."""
        rng, data, n = self.rng, u.data, len(u.data)
        if n <= 46 or rng.random() < whole:
            cuts = [n]
        else:
            cuts = [rng.randint(46, n)]
            while cuts[-1] < n:
                cuts.append(min(n, cuts[-1] + rng.choice([1, 2, rng.randint(1, 200), rng.randint(1, 2000)])))
        start = 0
        u.pieces = []
        for i, end in enumerate(cuts):
            u.pieces.append(Piece(u.conn, data[start:end], i == 0, end == n, n))
            start = end

    def interleave(self, per_conn: dict[int, list[Ulpdu]]) -> list[Piece]:
        """Pieces of all connections, each connection's in order, mixed at
        random at piece boundaries; records the ULPDUs for the oracle in the
        order of their first pieces and the verdicts in the order of their
        last pieces."""
        queues = {c: deque(p for u in us for p in u.pieces) for c, us in per_conn.items()}
        owner = {}
        for us in per_conn.values():
            for u in us:
                for p in u.pieces:
                    owner[id(p)] = u
        out = []
        live = [c for c in queues if queues[c]]
        while live:
            c = self.rng.choice(live)
            p = queues[c].popleft()
            u = owner[id(p)]
            if p.first:
                self.ops.append({"ulpdu": {"conn": u.conn, "data": u.data.hex(), "verdict": u.verdict}})
            out.append(p)
            if p.last:
                self.verdicts_pending.append((u.conn, u.verdict))
            if not queues[c]:
                live.remove(c)
        return out

    async def send(self, per_conn: dict[int, list[Ulpdu]]):
        self.verdicts_pending = []
        pieces = self.interleave(per_conn)
        base = self.ulpdus_sent
        for i, (conn, code) in enumerate(self.verdicts_pending):
            self.verdicts.append((base + i, conn, code))
        self.ulpdus_sent += len(self.verdicts_pending)
        mask = (1 << self.conn_w) - 1
        for p in pieces:
            user = (p.ulen << (self.conn_w + 2)) | ((p.conn & mask) << 2) | (int(p.first) << 1) | int(p.last)
            await self.source.send(AxiStreamFrame(p.data, tuser=user))
        await self.drain()

    async def drain(self):
        """Until every piece and verdict is in, and a while longer."""
        while not self.source.empty() or self.verdicts or self.source.active:
            await ClockCycles(self.dut.clk, 20)
        await ClockCycles(self.dut.clk, 100)

    # --- the oracle's verdict --------------------------------------------------

    async def check(self, must_fail: set[int] = frozenset()):
        await self.drain()
        resp = self.oracle.request("ddp_place", mem_size=MEM_SIZE, ring_depth=RQ_DEPTH, ops=self.ops)
        want_events = defaultdict(list)
        for e in resp["events"]:
            want_events[e["conn"]].append(self.oracle_event(e))
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
        self.dut._log.info("checked: %d ULPDUs, %d events (%d errors), %d octets of memory written",
                           self.ulpdus_sent, nev, errs, sum(1 for b in want_mem if b))
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
                       p_bad_verdict: float):
    rng = tb.rng
    per_conn = {}
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
        for i, u in enumerate(us):
            if rng.random() < p_bad_verdict:
                u.verdict = rng.choice([2, 3])
                del us[i + 1:]
                break
        for u in us:
            tb.cut(u)
        per_conn[c.num] = us
    await tb.send(per_conn)


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
        await random_round(tb, conns, stags, per_conn, p_mutate=0.015, p_bad_verdict=0.005)
        dut._log.info("round %d: %d ULPDUs so far", r, tb.ulpdus_sent)
    await tb.check()


# --- bench ---------------------------------------------------------------------


@cocotb.test()
async def bench(dut):
    """Back-to-back RDMA Writes into an always-ready memory: input beats per
    clock and latency to the first AW and W (measured, not asserted)."""
    tb = TB(dut)
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
    for size in (64, 128, 256, 1460, 9000):
        segs = []
        for i in range(max(4, 400 // (size // lanes + 1))):
            segs += tb.segments(WRITE, size + 14, stag=stag, to=(i * 9000) % (1 << 16), payload=rng.randbytes(size))
        us = [Ulpdu(c, s) for s in segs]
        for u in us:
            tb.cut(u, whole=1.0)
        tb.in_beat_cycles.clear()
        await tb.send({c: us})
        beats = len(tb.in_beat_cycles)
        clocks = tb.in_beat_cycles[-1] - tb.in_beat_cycles[0] + 1
        bpc = beats / clocks
        segs_per_clock = len(us) / clocks
        cases.append({"size": size, "segments": len(us), "beats_per_clock": round(bpc, 3),
                      "segments_per_clock": round(segs_per_clock, 3)})
        dut._log.info("bench: %d-octet Writes: %.3f input beats per clock, %.3f segments per clock",
                      size, bpc, segs_per_clock)
    tb.measure = False
    await tb.check()
    big = [x["beats_per_clock"] for x in cases if x["size"] >= 128]
    result = {
        "block": "ddp_rx",
        "width": tb.width,
        "beats_per_clock": min(big),
        "latency_clocks": lat_w,
        "latency_aw_clocks": lat_aw,
        "cases": cases,
        "simulator": cocotb.SIM_NAME,
    }
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    (BENCH_DIR / f"ddp_rx-W{tb.width}.json").write_text(json.dumps(result, indent=2) + "\n")
    dut._log.info("bench: %s", result)


# --- pytest ------------------------------------------------------------------

WIDTHS = (64, 128, 256, 512)


@pytest.fixture(scope="session")
def oracle_path() -> Path:
    return oracle.build()


@pytest.mark.parametrize("width", WIDTHS, ids=[f"W{w}" for w in WIDTHS])
@pytest.mark.parametrize("sim", hdlsim.simulators(langs=("verilog",)))
def test_ddp_rx(sim, width, oracle_path):
    # The big random run: Verilator at 512 bits.
    big = sim == "verilator" and width == 512
    hdlsim.run(
        test="ddp_rx",
        sim=sim,
        tag=f"W{width}",
        toplevel="ddp_rx",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "ddp_rx.v", hdlsim.RTL_DIR / "ddp_rx_fifo.v",
                         hdlsim.RTL_DIR / "sdp_ram.v"],
        parameters={"DATA_W": width},
        extra_env={oracle.ENV_VAR: str(oracle_path), "DDP_RX_WIDTH": str(width),
                   "DDP_RX_BIG": "1" if big else "0"},
    )


@pytest.mark.skipif(not hdlsim.selected("icarus"), reason="Icarus not selected by SIMS")
def test_ddp_rx_rejects_illegal_width(tmp_path: Path):
    """DATA_W outside {64, 128, 256, 512} stops the simulation at time 0."""
    out = tmp_path / "ddp_rx.vvp"
    subprocess.run(
        ["iverilog", "-g2012", "-o", str(out), "-P", "ddp_rx.DATA_W=96",
         str(hdlsim.RTL_DIR / "ddp_rx.v"), str(hdlsim.RTL_DIR / "ddp_rx_fifo.v"), str(hdlsim.RTL_DIR / "sdp_ram.v")],
        check=True,
    )
    run = subprocess.run(["vvp", "-n", str(out)], capture_output=True, text=True)
    assert "DATA_W must be 64, 128, 256 or 512, got 96" in run.stdout + run.stderr
