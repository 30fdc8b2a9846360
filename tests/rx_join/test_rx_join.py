"""Piece joiner, hw/rtl/rx_join.v: first pieces made to hold the DDP/RDMAP header.

The block only moves octets, so the check is on the octets themselves: the
testbench makes random ULPDUs (random octets, no protocol), cuts each into
pieces as mpa_rx may (first pieces of 0 to 45 octets, empty pieces
anywhere, long ones), interleaves the connections at piece boundaries and
sends a verdict for each ULPDU after its last piece. On the output, per
connection, the pieces joined must be the same ULPDUs with the same
ulpdu_len, every first piece must hold min(H, ulpdu_len) octets or the
whole ULPDU (H = 46 when its octet 0 says untagged and octet 1 opcode 1
or 7, 14 when octet 0 says tagged, else 18: tbutil.first_piece_min),
every frame must be lane-0
aligned with tkeep all ones but in its last beat, and the verdicts must come out in the order of the ULPDUs'
last pieces, each after (never in the clock of) its last piece's tlast
beat, with the code sent.

The cocotb tests:
  random_pieces     many connections, random cuts, gaps on the input,
                    back-pressure on both outputs.
  clear_drops_held  a held short first piece, a clear of its connection,
                    then a new ULPDU: the held octets are gone; other
                    connections' held octets stay.
  first_drops_held  a held short first piece, then a new ULPDU's first
                    piece on the same connection behind another
                    connection's pieces (output stalled): the new ULPDU
                    comes out alone, the held octets are dropped.
  pass_through      pieces that need no join, back to back, always-ready
                    outputs: one beat a clock, from piece to piece too, and
                    the latency (asserted).
  verdict_each_clock  one-beat ULPDUs back to back, each verdict a few
                    pieces behind its ULPDU: one verdict a clock
                    (asserted).
  verdicts_held     m_verdict_tready held low while 3 to 64 ULPDUs' last
                    pieces leave, then let go: every verdict out, in order.

With the same RANDOM_SEED the Verilog and its VHDL twin make the same
transactions on the four streams, clock for clock: tests/transactions.py
records and compares them.

Verilator and Icarus run hw/rtl/rx_join.v; GHDL runs its VHDL-2008 twin,
hw/rtl/vhdl/rx_join.vhd (at GHDL_WIDTHS), with the same tests and checks.

Run with `.venv/bin/pytest tests/rx_join` (SIMS=..., WAVES=1, RANDOM_SEED=...
as in tests/hdlsim.py). RX_JOIN_ULPDUS sets random_pieces' ULPDUs per
connection.
"""

from __future__ import annotations

import logging
import os
import random
from collections import defaultdict, deque

import cocotb
import pytest
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

import hdlsim
import protocol
import tbutil

CLK_PERIOD_NS = 4
CONN_W = 10


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.s_axis_tdata)
        self.lanes = self.width // 8
        assert self.width == int(os.environ["RX_JOIN_WIDTH"])
        self.rng = random.Random(random.getrandbits(64))  # seeded by cocotb
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.source.log.setLevel(logging.WARNING)
        self.ready_p = 1.0
        self.verdict_wait_p = 0.0
        self.verdict_hold = False            # m_verdict_tready held low
        self.cycle = 0
        # Input side.
        self.sent: dict[int, list[bytes]] = defaultdict(list)       # ULPDUs per connection
        self.verdicts_in: deque = deque()    # (last pieces taken before it may go, conn, code)
        self.verdict_codes: deque = deque()  # codes in last-piece order, for the check
        self.in_lasts = 0
        self.in_beats: list[int] = []        # clocks of input beats
        self.in_frame_start: list[int] = []
        # Output side.
        self.got: dict[int, list[bytes]] = defaultdict(list)
        self.got_ulen: dict[int, list[int]] = defaultdict(list)
        self.partial: dict[int, bytearray] = {}
        self.out_last_order: list[tuple[int, int]] = []   # (conn, clock of the tlast)
        self.verdicts_out: list[tuple[int, int, int]] = []  # (conn, code, clock)
        self.out_beats: list[int] = []
        self.out_frame_start: list[int] = []
        self._out_frame: bytearray | None = None
        self._out_user = None

    def report_end(self, test: str):
        """The test's last clock and its beat counts, for the log."""
        self.dut._log.info("%s: end at clock %d, %d beats in, %d out",
                           test, self.cycle, len(self.in_beats), len(self.out_beats))

    async def start(self):
        await tbutil.clock_and_reset(self.dut, CLK_PERIOD_NS,
                                      low=("s_verdict_tvalid", "clr_valid", "m_axis_tready", "m_verdict_tready"))
        cocotb.start_soon(self._clock_loop())
        # Every port's handshake and format rules (tests/protocol.py).
        self.protocol = protocol.Monitor(self.dut, "rx_join")

    def pause(self, p: float):
        return tbutil.pauses(self.rng, p)

    def user(self, conn: int, first: bool, last: bool, ulen: int) -> int:
        return (ulen << (CONN_W + 2)) | (conn << 2) | (int(first) << 1) | int(last)

    async def _clock_loop(self):
        dut = self.dut
        rng = random.Random(self.rng.getrandbits(64))
        n = self.lanes
        vvalid = False
        in_sof = True
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            # Input beats, and the verdicts they release.
            if dut.s_axis_tvalid.value == 1 and dut.s_axis_tready.value == 1:
                self.in_beats.append(self.cycle)
                if in_sof:
                    self.in_frame_start.append(self.cycle)
                in_sof = dut.s_axis_tlast.value == 1
                if in_sof and int(dut.s_axis_tuser.value) & 1:
                    self.in_lasts += 1
            if vvalid and dut.s_verdict_tready.value == 1:
                vvalid = False
                self.verdicts_in.popleft()
            if not vvalid and self.verdicts_in and self.verdicts_in[0][0] <= self.in_lasts:
                # A verdict after its last piece's tlast beat (a later clock).
                if rng.random() >= self.verdict_wait_p:
                    _, conn, code = self.verdicts_in[0]
                    dut.s_verdict_tdata.value = code
                    dut.s_verdict_tuser.value = conn
                    vvalid = True
            dut.s_verdict_tvalid.value = int(vvalid)
            # Output pieces.
            if dut.m_axis_tvalid.value == 1 and dut.m_axis_tready.value == 1:
                self.out_beats.append(self.cycle)
                self._out_beat(n)
            if dut.m_verdict_tvalid.value == 1 and dut.m_verdict_tready.value == 1:
                self.verdicts_out.append((int(dut.m_verdict_tuser.value), int(dut.m_verdict_tdata.value), self.cycle))
            dut.m_axis_tready.value = int(rng.random() < self.ready_p)
            dut.m_verdict_tready.value = int(rng.random() < self.ready_p and not self.verdict_hold)

    def _out_beat(self, n: int):
        dut = self.dut
        user = int(dut.m_axis_tuser.value)
        keep = int(dut.m_axis_tkeep.value)
        tlast = dut.m_axis_tlast.value == 1
        data = int(dut.m_axis_tdata.value).to_bytes(n, "little")
        assert keep & (keep + 1) == 0, f"tkeep {keep:#x} is not a run from lane 0"
        assert tlast or keep == (1 << n) - 1, f"tkeep {keep:#x} not all ones in a beat before the last"
        if self._out_frame is None:
            self._out_frame = bytearray()
            self._out_user = user
            self.out_frame_start.append(self.cycle)
        else:
            # ulpdu_len, conn and first the same on every beat of a piece.
            assert user >> 1 == self._out_user >> 1, f"tuser changed within a piece: {user:#x} {self._out_user:#x}"
        # last only on the tlast beat, where ddp_rx reads it.
        assert tlast or not user & 1, "last set on a beat before the tlast beat"
        self._out_frame += data[: bin(keep).count("1")]
        if not tlast:
            return
        piece = bytes(self._out_frame)
        self._out_frame = None
        conn = (user >> 2) & ((1 << CONN_W) - 1)
        first, last, ulen = (user >> 1) & 1, user & 1, user >> (CONN_W + 2)
        if first:
            assert conn not in self.partial, f"connection {conn}: a ULPDU starts inside another"
            assert last or len(piece) >= tbutil.first_piece_min(piece, ulen), (
                f"connection {conn}: first piece of {len(piece)} octets, not last, ulpdu_len {ulen}")
            self.partial[conn] = bytearray()
            self.got_ulen[conn].append(ulen)
        else:
            assert conn in self.partial, f"connection {conn}: a piece that is not first, with no ULPDU open"
        self.partial[conn] += piece
        if last:
            self.got[conn].append(bytes(self.partial.pop(conn)))
            self.out_last_order.append((conn, self.cycle))

    def cut(self, data: bytes) -> list[tuple[bytes, bool, bool]]:
        """Pieces of one ULPDU: (octets, first, last). First pieces are
        often short, empty pieces are anywhere."""
        rng, n = self.rng, len(data)
        cuts, pos = [], 0
        r = rng.random()
        if r < 0.5 and n > 0:
            pos = min(n, rng.randint(0, 45))       # a short first piece (maybe empty)
            cuts.append(pos)
        elif r < 0.6:
            cuts.append(0)
        while pos < n or not cuts:
            r = rng.random()
            step = 0 if r < 0.08 else rng.randint(1, 12) if r < 0.5 else rng.randint(1, 3 * self.lanes + 60)
            pos = min(n, pos + step)
            cuts.append(pos)
        if rng.random() < 0.05:
            cuts.append(n)                         # an empty last piece
        pieces, start = [], 0
        for i, end in enumerate(cuts):
            pieces.append((data[start:end], i == 0, i == len(cuts) - 1))
            start = end
        return pieces

    def send_pieces(self, per_conn: dict[int, list[bytes]], verdict: bool = True):
        """Interleave the connections' pieces; verdicts in last-piece order."""
        queues = {}
        for conn, ulpdus in per_conn.items():
            q = deque()
            for u in ulpdus:
                self.sent[conn].append(u)
                for data, first, last in self.cut(u):
                    q.append((data, first, last, len(u)))
            queues[conn] = q
        live = [c for c in queues if queues[c]]
        while live:
            conn = self.rng.choice(live)
            data, first, last, ulen = queues[conn].popleft()
            self.send(conn, data, first, last, ulen if first else 0)
            if last and verdict:
                code = self.rng.choice([0, 0, 0, 2, 3])
                self.verdict_codes.append((conn, code))
                self.verdicts_in.append((len(self.verdict_codes), conn, code))
            if not queues[conn]:
                live.remove(conn)

    def send(self, conn: int, data: bytes, first: bool, last: bool, ulen: int):
        # last only on the tlast beat (hw/README.md), as mpa_rx drives it.
        user, end = self.user(conn, first, False, ulen), self.user(conn, first, last, ulen)
        if data:
            n = len(data)
            cut = (n - 1) // self.lanes * self.lanes
            frame = AxiStreamFrame(data, tuser=[user] * cut + [end] * (n - cut))
        else:
            frame = AxiStreamFrame(b"\0", tkeep=[0], tuser=end)
        self.source.send_nowait(frame)

    async def drain(self, quiet: int = 200, limit: int = 200000):
        last = (-1, -1)
        still = 0
        for _ in range(limit):
            if still >= quiet:
                break
            await RisingEdge(self.dut.clk)
            now = (len(self.out_beats), len(self.verdicts_out))
            busy = not self.source.empty() or self.source.active or self.verdicts_in
            still = 0 if busy or now != last else still + 1
            last = now
        else:
            raise AssertionError(
                f"no end in {limit} clocks: input {'empty' if self.source.empty() else 'queued'}, "
                f"{len(self.verdicts_in)} verdicts to send, {len(self.in_beats)} beats in, {len(self.out_beats)} out, active {self.source.active} pause {self.source.pause} tvalid {self.dut.s_axis_tvalid.value}, s_axis_tready {self.dut.s_axis_tready.value}, "
                f"m_axis_tvalid {self.dut.m_axis_tvalid.value}, m_verdict_tvalid {self.dut.m_verdict_tvalid.value}")

    def check(self, conns=None):
        for conn in conns if conns is not None else sorted(self.sent):
            got, want = self.got.get(conn, []), self.sent[conn]
            assert conn not in self.partial, f"connection {conn}: a ULPDU left open"
            assert len(got) == len(want), f"connection {conn}: {len(got)} ULPDUs out, {len(want)} in"
            for i, (g, w) in enumerate(zip(got, want)):
                assert g == w, f"connection {conn}: ULPDU {i} differs:\n got  {g[:80].hex()}\n want {w[:80].hex()}"
            assert self.got_ulen[conn] == [len(w) for w in want], f"connection {conn}: ulpdu_len differs"
        # Verdicts: one per ULPDU, in last-piece order, each after its tlast.
        assert len(self.verdicts_out) == len(self.verdict_codes), (
            f"{len(self.verdicts_out)} verdicts out, {len(self.verdict_codes)} in")
        assert len(self.out_last_order) == len(self.verdict_codes)
        for i, ((vc, code, clock), (lc, lclock), (wc, wcode)) in enumerate(
                zip(self.verdicts_out, self.out_last_order, self.verdict_codes)):
            assert (vc, code) == (wc, wcode), f"verdict {i}: conn {vc} code {code}, want conn {wc} code {wcode}"
            assert vc == lc, f"verdict {i} for connection {vc}, the last piece {i} was connection {lc}'s"
            assert clock > lclock, f"verdict {i} at clock {clock}, its last piece's tlast at {lclock}"


def long_header(rng: random.Random, n: int) -> bytes:
    """n random octets whose first two say "untagged, RDMAP opcode 1 or 7"
    (a Read Request or Terminate): a first piece must hold 46 of them."""
    return bytes([rng.randrange(0x80), 0x40 | rng.choice([1, 7])]) + rng.randbytes(n - 2)


def random_ulpdu(rng: random.Random) -> bytes:
    r = rng.random()
    n = rng.randint(1, 46) if r < 0.25 else rng.randint(47, 400) if r < 0.85 else rng.randint(401, 3000)
    # A third say they need the 46-octet header, the others (random octet
    # 0 and 1) the 14-octet (tagged) or mostly the 18-octet one.
    return long_header(rng, n) if n >= 2 and rng.random() < 1 / 3 else rng.randbytes(n)


@cocotb.test()
async def random_pieces(dut):
    """Random cuts, many connections, gaps and back-pressure."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    tb.ready_p = 0.7
    tb.verdict_wait_p = 0.3
    tb.source.set_pause_generator(tb.pause(0.2))
    per = int(os.environ.get("RX_JOIN_ULPDUS", "0")) or (60 if cocotb.SIM_NAME.lower().startswith("icarus") else 150)
    conns = rng.sample(range(1 << CONN_W), 6) + [0, (1 << CONN_W) - 1]
    for rnd in range(2):
        tb.send_pieces({c: [random_ulpdu(rng) for _ in range(per // 2)] for c in conns})
        await tb.drain()
        # Then in a burst, always-ready outputs.
        tb.ready_p = 1.0 if rnd == 0 else 0.7
        tb.source.set_pause_generator(None if rnd == 0 else tb.pause(0.2))
        tb.source.pause = False  # a removed generator leaves its last value
    tb.check()
    pieces = len(tb.in_frame_start)
    dut._log.info("%d ULPDUs in %d pieces on %d connections, %d pieces out",
                  sum(len(v) for v in tb.sent.values()), pieces, len(conns), len(tb.out_frame_start))
    tb.report_end("random_pieces")


@cocotb.test()
async def clear_drops_held(dut):
    """A clear drops the connection's held octets, and only its."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    a, b = rng.sample(range(1 << CONN_W), 2)
    ua, ub = long_header(rng, 300), rng.randbytes(100)
    # Short first pieces on both, held.
    tb.send(a, ua[:20], True, False, len(ua))
    tb.send(b, ub[:7], True, False, len(ub))
    await tb.drain(50)
    assert not tb.out_beats, "a short first piece went out"
    dut.clr_conn.value = a
    dut.clr_valid.value = 1
    while True:
        await RisingEdge(dut.clk)
        if dut.clr_ready.value == 1:
            break
    dut.clr_valid.value = 0
    # A new ULPDU on a: its short first piece is held and joined, with
    # nothing of the old one. b's held piece joins its next piece.
    ua2 = rng.randbytes(90)
    tb.sent[a].append(ua2)
    tb.sent[b].append(ub)
    tb.send(a, ua2[:5], True, False, len(ua2))
    tb.send(a, ua2[5:30], False, False, 0)
    tb.send(b, ub[7:], False, True, 0)
    tb.send(a, ua2[30:], False, True, 0)
    for conn in (b, a):
        tb.verdict_codes.append((conn, 0))
        tb.verdicts_in.append((len(tb.verdict_codes), conn, 0))
    await tb.drain()
    tb.check()
    assert [len(p) for p in tb.got[a]] == [90]
    tb.report_end("clear_drops_held")


@cocotb.test()
async def first_drops_held(dut):
    """A first piece drops the octets its connection holds (a new ULPDU
    after a stream that stopped inside one), also while earlier pieces
    still wait to go out."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    a, b = rng.sample(range(1 << CONN_W), 2)
    old, ua, ub = long_header(rng, 300), rng.randbytes(90), rng.randbytes(tb.lanes)
    tb.send(a, old[:20], True, False, len(old))          # held, never finished
    await tb.drain(50)
    assert not tb.out_beats, "a short first piece went out"
    tb.ready_p = 0.0                                     # b's beats wait in the block
    tb.sent[b].append(ub)
    tb.send(b, ub, True, True, len(ub))
    tb.sent[a].append(ua)
    tb.send(a, ua[:50], True, False, len(ua))            # a new ULPDU: drops the 20
    tb.send(a, ua[50:], False, True, 0)
    for conn in (b, a):
        tb.verdict_codes.append((conn, 0))
        tb.verdicts_in.append((len(tb.verdict_codes), conn, 0))
    for _ in range(30):
        await RisingEdge(dut.clk)
    tb.ready_p = 1.0
    await tb.drain()
    tb.check()
    assert [len(p) for p in tb.got[a]] == [90]
    tb.report_end("first_drops_held")


@cocotb.test()
async def pass_through(dut):
    """Pieces needing no join, back to back: one beat a clock and the
    latency (asserted)."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    n = tb.lanes
    conn = rng.randrange(1 << CONN_W)
    # Non-first pieces of one long ULPDU (its first piece long enough), then
    # whole-beat first pieces that end their ULPDUs.
    u = rng.randbytes(64 * n)
    await tb.drain(5)
    tb.sent[conn].append(u)
    cuts = [0, 64] + sorted(rng.sample(range(65, 64 * n), 20)) + [64 * n]
    for i in range(len(cuts) - 1):
        tb.send(conn, u[cuts[i]:cuts[i + 1]], i == 0, i == len(cuts) - 2, len(u) if i == 0 else 0)
    tb.verdict_codes.append((conn, 0))
    tb.verdicts_in.append((1, conn, 0))
    await tb.drain()
    tb.check()
    beats = len(tb.in_beats)
    in_clocks = tb.in_beats[-1] - tb.in_beats[0] + 1
    out_clocks = tb.out_beats[-1] - tb.out_beats[0] + 1
    # A first piece waits for its header, min(H, ulen) octets (or its
    # end), before its first beat goes; other pieces go at once (see
    # rx_join.v). Latency is counted from the clock a piece's first beat is
    # taken to the clock its first output beat is taken.
    first_wait = -(-tbutil.first_piece_min(u) // n) - 1   # beats after the first
    latency = tb.out_frame_start[0] - tb.in_frame_start[0]
    lat_next = [o - i for o, i in zip(tb.out_frame_start[1:], tb.in_frame_start[1:])]
    dut._log.info("pass_through: %d beats in %d clocks in, %d out; latency %d clocks (first piece), "
                  "%d..%d (later pieces)", beats, in_clocks, out_clocks, latency, min(lat_next), max(lat_next))
    assert len(tb.out_beats) == beats
    # A piece starts behind the one before while the gather ring has room:
    # no clock between pieces (only the first piece's gathered beats wait).
    pieces = len(cuts) - 1
    assert in_clocks <= beats + first_wait, f"{beats} beats of {pieces} pieces took {in_clocks} clocks"
    assert latency <= 2 + first_wait, f"latency {latency}"
    # A later piece's first beat may wait in the input register behind the
    # first piece's backlog.
    assert max(lat_next) <= 2 + first_wait, f"latency of a later piece {max(lat_next)}"
    tb.report_end("pass_through")


@cocotb.test()
async def verdict_each_clock(dut):
    """One-beat ULPDUs back to back, each with its verdict a few pieces
    later (as mpa_rx sends them, after the CRC), always-ready outputs: one
    verdict a clock (asserted). Each goes once its own last piece has
    left, from a queue of two."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    n = tb.lanes
    conn = rng.randrange(1 << CONN_W)
    count, later = 64, 4
    await tb.drain(5)
    for i in range(count):
        u = rng.randbytes(n)                 # whole ULPDUs: one piece each
        tb.sent[conn].append(u)
        tb.send(conn, u, True, True, len(u))
        code = rng.choice((0, 0, 0, 2, 3))
        tb.verdict_codes.append((conn, code))
        tb.verdicts_in.append((min(i + 1 + later, count), conn, code))
    await tb.drain()
    tb.check()
    clocks = [c for _, _, c in tb.verdicts_out]
    span = clocks[-1] - clocks[0] + 1
    dut._log.info("verdict_each_clock: %d verdicts out in %d clocks", len(clocks), span)
    # (Waiting for every last piece that came in before it, later ULPDUs'
    # included, let two through in three clocks, 83; a single place one
    # every other clock, 2 * count.)
    assert span <= count + 2, f"{count} verdicts took {span} clocks to go out (one a clock expected)"
    tb.report_end("verdict_each_clock")


@cocotb.test()
async def verdicts_held(dut):
    """m_verdict_tready held low while many ULPDUs' last pieces leave (their
    verdicts wait in the queue and behind it), then let go: every verdict
    comes out, in order, each after its last piece. Run for a few counts
    of pieces gone out ahead, past 16 and 32 (a count compared modulo 32
    would read some of them as "not yet" and wait for more pieces)."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    n = tb.lanes
    await tb.drain(5)
    for count in (20, 37, 3, 64):
        conn = rng.randrange(1 << CONN_W)
        tb.verdict_hold = True
        for i in range(count):
            u = rng.randbytes(rng.choice((n, 2 * n, n // 2 + 1)))
            tb.sent[conn].append(u)
            tb.send(conn, u, True, True, len(u))
            code = rng.choice((0, 0, 0, 2, 3))
            tb.verdict_codes.append((conn, code))
            tb.verdicts_in.append((tb.in_lasts + i + 1, conn, code))
        while len(tb.out_last_order) < len(tb.verdict_codes):
            await RisingEdge(dut.clk)
        for _ in range(20 + count):         # held: none of these verdicts goes out
            await RisingEdge(dut.clk)
        assert len(tb.verdicts_out) == len(tb.verdict_codes) - count
        tb.verdict_hold = False
        await tb.drain()
        tb.check()
    tb.report_end("verdicts_held")


# --- pytest ------------------------------------------------------------------

# Verilator at both ends of the width range, Icarus at 64 (run time); GHDL
# runs the VHDL twin at GHDL_WIDTHS, with Verilator's traffic (about 30 s a
# case: no need for less).
GHDL_WIDTHS = (64, 512)
PARAMS = hdlsim.width_cases((64, 512), langs=("verilog", "vhdl"),
                            sim_widths={"icarus": (64,), "ghdl": GHDL_WIDTHS})


@pytest.mark.parametrize("sim,width", PARAMS)
def test_rx_join(sim, width):
    hdlsim.run(
        test="rx_join",
        sim=sim,
        tag=f"W{width}",
        toplevel="rx_join",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "rx_join.v", hdlsim.RTL_DIR / "sdp_ram.v"],
        vhdl_sources=[hdlsim.VHDL_DIR / "sdp_ram.vhd", hdlsim.VHDL_DIR / "rx_join.vhd"],
        parameters={"DATA_W": width, "CONN_W": CONN_W},
        extra_env={"RX_JOIN_WIDTH": str(width)},
    )
