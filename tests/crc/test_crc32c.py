"""CRC32c engine, hw/rtl/crc32c.v (Verilator, Icarus) and its VHDL-2008 twin
hw/rtl/vhdl/crc32c.vhd (GHDL), checked against the Go reference stack.

Every expected CRC and state comes from the Go oracle (cmd/rnic-oracle,
through tests/oracle.py): the scoreboard never computes a CRC in Python.
The engine's state is the running CRC, so a segment's result is both the
CRC of everything since the init and the state the next segment resumes
from; the testbench keeps one such state per "connection" (tid), as an RX
pipeline's table would.

The cocotb tests, in order:
  rfc3720_vectors        RFC 3720 B.4 vectors at every lane offset, and split
                         in two at every octet, resumed.
  mpa_fpdus              FPDUs with markers and pad from iwarp/mpa's Framer
                         (RFC 5044 Figures 5 and 6 first), cut into segments:
                         the result must be the CRC field the Framer wrote.
  null_octets            one valid octet in each lane, empty segments, empty
                         beats before and after the data.
  random_segments        random frames of 1..9000 octets over several
                         connections, cut into random segments whose start
                         state is the engine's own previous result; random
                         null octets at both ends, tvalid gaps, backpressure.
  results_wait           a consumer that stops taking results: tready falls
                         once 8 are pending, nothing is lost.
  back_to_back_bench     segments back to back with no idle cycle and an
                         always-ready consumer: beats per clock (must be 1.0)
                         and latency, written to build/bench/crc32c-W<w>.json.
  reset_mid_segment      reset in the middle of a segment, then fresh traffic.

Run with `make test-hw` or `.venv/bin/pytest tests/crc` (SIMS=..., WAVES=1
and RANDOM_SEED=... as in tests/hdlsim.py). CRC32C_FRAMES (default 40) sets
the number of random frames in random_segments; raise it for a longer soak.
"""

from __future__ import annotations

import logging
import os
import random
import subprocess
from collections import deque
from dataclasses import dataclass
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

CLK_PERIOD_NS = 4  # 250 MHz, the 512-bit build's target; any period works
FRAMES = max(2, int(os.environ.get("CRC32C_FRAMES", "40")))
OUT_DEPTH = 8  # results the engine holds before it drops tready (crc32c.v)
LATENCY = 7  # clocks from a tlast beat to its result (crc32c.v's header)

# RFC 3720 B.4, with the CRCs the RFC publishes (../shared/spec/NOTES.md).
RFC3720_VECTORS = [
    ("32 zeros", bytes(32), 0x8A9136AA),
    ("32 ones", b"\xff" * 32, 0x62A8AB43),
    ("incrementing", bytes(range(32)), 0x46DD794E),
    ("decrementing", bytes(range(31, -1, -1)), 0x113FDB5C),
    ("123456789", b"123456789", 0xE3069283),
]

@dataclass
class Segment:
    """One input segment and what the engine must answer for it."""

    tid: int
    data: bytes
    lead: int = 0  # null octets before the data (tkeep low)
    trail: int = 0  # null octets after it, beyond the last beat's own
    state: int | None = None  # starting state; None: init
    expect: int | None = None  # the oracle's running CRC after the segment
    wire: bytes | None = None  # the same, in MPA wire order
    conn: "Conn | None" = None  # the connection to tell the result to
    last: bool = False  # ends its frame: the connection's next one inits

    def frame(self, lanes: int, rng: random.Random) -> AxiStreamFrame:
        lead, trail = self.lead, self.trail
        if lead + len(self.data) + trail == 0:
            trail = 1  # an empty segment is one beat with tkeep all low
        n = lead + len(self.data) + trail
        # Null octets carry junk: the engine must ignore what tkeep drops.
        tdata = rng.randbytes(lead) + self.data + rng.randbytes(trail)
        tkeep = [0] * lead + [1] * len(self.data) + [0] * trail
        user = 1 if self.state is None else self.state << 1
        # tuser counts on the first beat only; junk on the others proves it.
        first = min(n, lanes)
        tuser = [user] * first + [rng.getrandbits(33) for _ in range(n - first)]
        return AxiStreamFrame(tdata, tkeep=tkeep, tid=self.tid, tuser=tuser)

    def beats(self, lanes: int) -> int:
        return max(1, -(-(self.lead + len(self.data) + self.trail) // lanes))


class Conn:
    """A connection: frames cut into segments, and the state between them."""

    def __init__(self, tid: int, frames: list[list[bytes]]):
        self.tid = tid
        self.frames = deque(frames)  # each a list of segment payloads
        self.pieces: deque[bytes] = deque()
        self.exp_state: int | None = None  # the oracle's chain
        self.hw_state: int | None = None  # the engine's chain
        self.busy = False

    def pending(self) -> bool:
        return bool(self.pieces or self.frames)

    def next_piece(self) -> tuple[bytes, bool]:
        """The next segment payload, and whether it ends its frame."""
        if not self.pieces:
            self.pieces.extend(self.frames.popleft())
        piece = self.pieces.popleft()
        return piece, not self.pieces


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.s_axis_tdata)
        self.lanes = len(dut.s_axis_tkeep)
        expected = int(os.environ["CRC32C_WIDTH"])
        assert self.width == expected, f"s_axis_tdata is {self.width} bits, DATA_W was {expected}"
        self.tid_mask = (1 << len(dut.s_axis_tid)) - 1
        self.rng = random.Random(random.getrandbits(64))  # seeded by cocotb
        self.oracle = oracle.shared()
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis_crc"), dut.clk, dut.rst)
        for model in (self.source, self.sink):
            model.log.setLevel(logging.WARNING)  # no line per frame
        self.expected: deque[Segment] = deque()
        self.results = 0
        self.frames_done = 0
        self.result_event = Event()

    async def start(self):
        self.dut.rst.value = 1
        cocotb.start_soon(Clock(self.dut.clk, CLK_PERIOD_NS, units="ns").start())
        await self.reset()
        cocotb.start_soon(self._check_results())
        # Every port's handshake and format rules (tests/protocol.py).
        self.protocol = protocol.Monitor(self.dut, "crc32c")

    async def reset(self, cycles: int = 3):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, cycles)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    def idle_generator(self, p_idle: float):
        rng = random.Random(self.rng.getrandbits(64))
        while True:
            yield rng.random() < p_idle

    # --- expectations from the oracle -------------------------------------

    def expect_chain(self, segs: list[Segment], state: int | None = None) -> None:
        """Fill in state/expect/wire along a chain of segments of one frame."""
        resp = self.oracle.crc32c_segments([s.data for s in segs], state=state)
        for seg, after in zip(segs, resp["states"]):
            seg.state, seg.expect = state, after
            state = after
        if segs:
            segs[-1].wire = resp["wire"]

    def expect_frame(self, data: bytes) -> dict:
        return self.oracle.crc32c(data)

    # --- driving and checking ---------------------------------------------

    def send(self, seg: Segment) -> None:
        self.expected.append(seg)
        self.source.send_nowait(seg.frame(self.lanes, self.rng))

    async def _check_results(self):
        while True:
            out = await self.sink.recv()
            got = bytes(out.tdata)
            assert self.expected, f"result {got.hex()} for no segment"
            seg = self.expected.popleft()
            crc = int.from_bytes(got, "little")
            tid = out.tid[0] if isinstance(out.tid, list) else out.tid
            where = (
                f"result {self.results} (tid {seg.tid}, {len(seg.data)} octets, "
                f"lead {seg.lead}, trail {seg.trail}, "
                f"{'init' if seg.state is None else f'state {seg.state:#010x}'})"
            )
            assert tid == seg.tid, f"{where}: tid {tid}"
            assert crc == seg.expect, f"{where}: CRC {crc:#010x}, oracle {seg.expect:#010x}"
            if seg.wire is not None:
                assert got == seg.wire, f"{where}: octets {got.hex()}, wire order {seg.wire.hex()}"
            self.results += 1
            if seg.conn is not None:
                seg.conn.busy = False
                seg.conn.hw_state = None if seg.last else crc
            self.result_event.set()

    async def drain(self, timeout_cycles: int | None = None):
        """Wait until every segment sent so far has its result checked."""
        if timeout_cycles is None:
            timeout_cycles = 1000 + 20 * sum(s.beats(self.lanes) for s in self.expected)

        async def wait():
            while self.expected:
                self.result_event.clear()
                await self.result_event.wait()

        await with_timeout(wait(), timeout_cycles * CLK_PERIOD_NS, "ns")

    # --- random stimulus ----------------------------------------------------

    def random_nulls(self) -> tuple[int, int]:
        """Null octets before and after a segment's data: mostly none or a
        partial word, sometimes a whole empty beat more."""
        rng, lanes = self.rng, self.lanes

        def one():
            r = rng.random()
            if r < 0.4:
                return 0
            if r < 0.9:
                return rng.randrange(lanes)
            return lanes + rng.randrange(lanes)

        return one(), one()

    def random_frame_len(self) -> int:
        r = self.rng.random()
        if r < 0.4:
            return self.rng.randint(1, 256)
        if r < 0.75:
            return self.rng.randint(257, 2000)
        return self.rng.randint(2001, 9000)

    def random_cuts(self, data: bytes) -> list[bytes]:
        """data cut into 1 to 6 segments; now and then an empty one."""
        rng = self.rng
        cuts = sorted(rng.randint(0, len(data)) for _ in range(rng.randrange(6)))
        pieces, start = [], 0
        for cut in cuts + [len(data)]:
            if cut > start or rng.random() < 0.1:
                pieces.append(data[start:cut])
            start = cut
        return pieces or [data]

    async def run_feedback(self, conns: list[Conn]) -> None:
        """Segments of several connections, interleaved; each segment after a
        frame's first starts from the engine's own result for the one before
        it, and must match the oracle's chain."""
        while any(c.pending() for c in conns):
            ready = [c for c in conns if c.pending() and not c.busy]
            if not ready:
                self.result_event.clear()
                await self.result_event.wait()
                continue
            c = self.rng.choice(ready)
            piece, last = c.next_piece()
            resp = self.oracle.crc32c(piece, state=c.exp_state)
            lead, trail = self.random_nulls()
            seg = Segment(
                c.tid, piece, lead, trail, state=c.hw_state, expect=resp["crc"],
                wire=resp["wire"], conn=c, last=last,
            )
            c.busy = True
            self.send(seg)
            c.exp_state = None if last else resp["crc"]
            self.frames_done += last
            # Let the source take it before choosing the next one, so that
            # connections interleave beat for beat as results come back.
            await RisingEdge(self.dut.clk)
        await self.drain()


class Monitor:
    """Handshakes on both streams, counted in clock cycles."""

    def __init__(self, dut):
        self.dut = dut
        self.cycle = 0
        self.beats = 0
        self.first_beat = None
        self.last_beat = None
        self.tlast_cycles: list[int] = []
        self.result_cycles: list[int] = []
        cocotb.start_soon(self._run())

    async def _run(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            if dut.s_axis_tvalid.value == 1 and dut.s_axis_tready.value == 1:
                self.beats += 1
                if self.first_beat is None:
                    self.first_beat = self.cycle
                self.last_beat = self.cycle
                if dut.s_axis_tlast.value == 1:
                    self.tlast_cycles.append(self.cycle)
            if dut.m_axis_crc_tvalid.value == 1 and dut.m_axis_crc_tready.value == 1:
                self.result_cycles.append(self.cycle)


# --- tests -------------------------------------------------------------------


@cocotb.test()
async def rfc3720_vectors(dut):
    """RFC 3720 B.4 vectors at every lane offset, then cut in two at every
    octet with the second half resumed from the first half's state."""
    tb = TB(dut)
    await tb.start()
    for name, data, published in RFC3720_VECTORS:
        whole = tb.expect_frame(data)
        # The oracle is the scoreboard; the RFC's own numbers vouch for it.
        assert whole["crc"] == published, f"{name}: oracle {whole['crc']:#x}"
        for lead in range(tb.lanes):
            tb.send(Segment(1, data, lead, state=None, expect=whole["crc"], wire=whole["wire"]))
        for cut in range(len(data) + 1):
            segs = [Segment(2, data[:cut], lead=cut % tb.lanes), Segment(2, data[cut:])]
            tb.expect_chain(segs)
            assert segs[-1].expect == published
            for seg in segs:
                tb.send(seg)
    await tb.drain()


@cocotb.test()
async def mpa_fpdus(dut):
    """FPDUs framed by iwarp/mpa with markers (RFC 5044 Figures 5 and 6,
    then random ULPDUs at random marker offsets): markers and pad are data
    to the engine, and its CRC over the FPDU must be the Framer's CRC field."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    # The figures' untagged DDP header: Send, Last, queue 0, MSN msn, MO 0.
    ddp_send = lambda msn: bytes([0x41, 0x43]) + bytes(11) + bytes([msn]) + bytes(4)  # noqa: E731
    streams = [
        (0, [ddp_send(1) + bytes(24)]),  # Figure 5
        (0, [ddp_send(1) + bytes(482 - 18), ddp_send(2) + bytes(24)]),  # Figure 6
    ]
    for _ in range(6):
        ulpdus = [rng.randbytes(rng.randint(1, 2000)) for _ in range(rng.randint(1, 8))]
        streams.append((rng.getrandbits(32), ulpdus))
    nfpdus = 0
    for base, ulpdus in streams:
        for fpdu in tb.oracle.mpa_fpdus(ulpdus, markers=True, base=base):
            covered = fpdu["wire"][: fpdu["crc_len"]]
            segs = [Segment(3, p) for p in tb.random_cuts(covered)]
            tb.expect_chain(segs)
            assert segs[-1].expect == fpdu["crc"], "iwarp/mpa and iwarp/crc32c disagree"
            segs[-1].wire = fpdu["wire"][fpdu["crc_len"]:]  # the CRC field itself
            for seg in segs:
                seg.lead, seg.trail = tb.random_nulls()
                tb.send(seg)
            nfpdus += 1
    await tb.drain()
    dut._log.info("%d FPDUs, markers on", nfpdus)


@cocotb.test()
async def null_octets(dut):
    """One valid octet in each lane; empty segments, with init and resumed;
    whole empty beats before and after the data; runs ending on a beat edge."""
    tb = TB(dut)
    await tb.start()
    lanes, rng = tb.lanes, tb.rng
    cases: list[list[Segment]] = []
    for lane in range(lanes):
        cases.append([Segment(4, rng.randbytes(1), lead=lane)])
        cases.append([Segment(4, rng.randbytes(1), lead=lane, trail=lanes)])
    cases.append([Segment(5, b"")])  # empty, init: CRC of nothing
    cases.append([Segment(5, b"", lead=2 * lanes)])
    cases.append([Segment(5, rng.randbytes(9)), Segment(5, b"", trail=lanes), Segment(5, rng.randbytes(3))])
    for n in (lanes - 1, lanes, lanes + 1, 2 * lanes, 3 * lanes - 1):
        for lead in (0, 1, lanes - 1, lanes, 2 * lanes + 1):
            for trail in (0, 1, lanes):
                cases.append([Segment(6, rng.randbytes(n), lead=lead, trail=trail)])
    for segs in cases:
        tb.expect_chain(segs)
        for seg in segs:
            tb.send(seg)
    await tb.drain()


@cocotb.test()
async def random_segments(dut):
    """Random frames over several connections, state fed back from the
    engine's results, with random tvalid gaps and backpressure."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    nconn = 6
    lens = [tb.random_frame_len() for _ in range(FRAMES)]
    lens[:2] = [1, 9000]  # the extremes, every run
    frames = [[] for _ in range(nconn)]
    for n in lens:
        frames[rng.randrange(nconn)].append(tb.random_cuts(rng.randbytes(n)))
    tids = rng.sample(range(tb.tid_mask + 1), nconn)
    conns = [Conn(tid, f) for tid, f in zip(tids, frames)]
    tb.source.set_pause_generator(tb.idle_generator(0.2))
    tb.sink.set_pause_generator(tb.idle_generator(0.3))
    await tb.run_feedback(conns)
    assert tb.frames_done == FRAMES
    dut._log.info(
        "%d frames (%d octets) in %d segments on %d connections",
        FRAMES, sum(lens), tb.results, nconn,
    )


@cocotb.test()
async def results_wait(dut):
    """A consumer that takes no results: the engine accepts OUT_DEPTH
    segments, holds tready low, and loses nothing when the consumer resumes."""
    tb = TB(dut)
    await tb.start()
    mon = Monitor(dut)
    tb.sink.pause = True
    n = 3 * OUT_DEPTH
    for _ in range(n):
        seg = Segment(7, tb.rng.randbytes(tb.rng.randint(1, tb.lanes)))
        tb.expect_chain([seg])
        tb.send(seg)
    await ClockCycles(dut.clk, 4 * LATENCY + 20)
    assert len(mon.tlast_cycles) == OUT_DEPTH, f"{len(mon.tlast_cycles)} segments accepted"
    assert dut.s_axis_tready.value == 0 and dut.m_axis_crc_tvalid.value == 1
    assert tb.results == 0
    tb.sink.pause = False
    await tb.drain()
    assert len(mon.tlast_cycles) == n


@cocotb.test()
async def back_to_back_bench(dut):
    """Segments back to back (single-beat ones included, a result a clock)
    with an always-ready consumer: every beat is accepted in consecutive
    clocks, and every result comes LATENCY clocks after its tlast beat."""
    tb = TB(dut)
    tb.rng = tbutil.bench_rng()
    await tb.start()
    mon = Monitor(dut)
    rng, lanes = tb.rng, tb.lanes
    segs = []
    for _ in range(100):  # single beats: a result every clock
        n = rng.randint(0, lanes)
        lead = rng.randint(0, lanes - n) if n else rng.randint(1, lanes)
        segs.append([Segment(8, rng.randbytes(n), lead=lead)])
    for _ in range(20):
        segs.append([Segment(9, p) for p in tb.random_cuts(rng.randbytes(rng.randint(1, 3000)))])
    rng.shuffle(segs)
    for chain in segs:
        tb.expect_chain(chain)
        for seg in chain:
            seg.lead, seg.trail = (seg.lead, 0) if chain[0].tid == 8 else tb.random_nulls()
    for chain in segs:
        for seg in chain:
            tb.send(seg)
    await tb.drain()
    clocks = mon.last_beat - mon.first_beat + 1
    beats_per_clock = mon.beats / clocks
    latencies = [r - t for t, r in zip(mon.tlast_cycles, mon.result_cycles)]
    assert len(mon.result_cycles) == len(mon.tlast_cycles) == tb.results
    details = {"beats": mon.beats, "clocks": clocks, "segments": tb.results}
    hdlsim.write_bench("crc32c", tb.width, beats_per_clock=beats_per_clock, latency_clocks=max(latencies),
                       details=details)
    dut._log.info("bench: %.3f beats per clock, latency %d clocks, %s", beats_per_clock, max(latencies), details)
    assert beats_per_clock == 1.0, f"{mon.beats} beats in {clocks} clocks"
    assert min(latencies) == max(latencies) == LATENCY, f"latencies {sorted(set(latencies))}"


@cocotb.test()
async def reset_mid_segment(dut):
    """Reset halfway through a long segment: no result for it, nothing held
    over, and the engine computes fresh segments (init and resumed) after."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    first = [Segment(10, rng.randbytes(100))]
    tb.expect_chain(first)
    tb.send(first[0])
    await tb.drain()
    long = Segment(11, rng.randbytes(40 * tb.lanes))  # never completes
    tb.source.send_nowait(long.frame(tb.lanes, rng))
    await ClockCycles(dut.clk, 20)
    assert dut.s_axis_tvalid.value == 1, "the long segment is not being sent"
    await tb.reset()
    assert dut.m_axis_crc_tvalid.value == 0
    await ClockCycles(dut.clk, 2 * LATENCY)
    assert tb.results == 1 and tb.sink.empty(), "a result came out of the reset"
    after = [Segment(12, rng.randbytes(rng.randint(1, 500))) for _ in range(3)]
    tb.expect_chain(after)
    for seg in after:
        tb.send(seg)
    await tb.drain()


# --- pytest ------------------------------------------------------------------

WIDTHS = (64, 128, 256, 512)


@pytest.mark.parametrize("width", WIDTHS, ids=[f"W{w}" for w in WIDTHS])
@pytest.mark.parametrize("sim", hdlsim.simulators())
def test_crc32c(sim, width, oracle_path):
    hdlsim.run(
        test="crc32c",
        sim=sim,
        tag=f"W{width}",
        toplevel="crc32c",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "crc32c.v"],
        vhdl_sources=[hdlsim.VHDL_DIR / "crc32c.vhd"],
        parameters={"DATA_W": width},
        extra_env={oracle.ENV_VAR: str(oracle_path), "CRC32C_WIDTH": str(width)},
    )


def test_oracle_client(oracle_path):
    """tests/oracle.py: answers decoded, the oracle's errors raised with its
    message, and the session still usable after an error."""
    with oracle.Oracle(oracle_path) as o:
        first = o.crc32c(b"12345")
        assert o.crc32c(b"6789", state=first["state"])["wire"] == bytes.fromhex("839206e3")
        with pytest.raises(oracle.OracleError, match='field "data": not a hex string'):
            o.request("crc32c", data="xyz")
        with pytest.raises(oracle.OracleError, match='unknown op "nope"'):
            o.request("nope")
        assert o.crc32c_segments([b"1234", b"56789"])["states"][-1] == 0xE3069283
    with pytest.raises(oracle.OracleError, match="not started"):
        o.request("ops")


@pytest.mark.skipif(
    not hdlsim.selected("icarus"),
    reason="Icarus not selected by SIMS",
)
def test_crc32c_rejects_illegal_width(tmp_path: Path):
    """DATA_W outside {64, 128, 256, 512} stops the simulation at time 0."""
    out = tmp_path / "crc32c.vvp"
    subprocess.run(
        ["iverilog", "-o", str(out), "-P", "crc32c.DATA_W=96", str(hdlsim.RTL_DIR / "crc32c.v")],
        check=True,
    )
    run = subprocess.run(["vvp", "-n", str(out)], capture_output=True, text=True)
    assert "DATA_W must be 64, 128, 256 or 512, got 96" in run.stdout + run.stderr


@pytest.mark.skipif(
    not hdlsim.selected("ghdl"),
    reason="GHDL not selected by SIMS",
)
def test_crc32c_ghdl_rejects_illegal_width(tmp_path: Path):
    """The VHDL twin stops at elaboration on DATA_W outside {64, 128, 256, 512}."""
    srcs = [str(p) for p in hdlsim.VHDL_PACKAGES] + [str(hdlsim.VHDL_DIR / "crc32c.vhd")]
    for cmd in (["ghdl", "-i", "--std=08", *srcs], ["ghdl", "-m", "--std=08", "crc32c"]):
        subprocess.run(cmd, cwd=tmp_path, check=True)
    run = subprocess.run(
        ["ghdl", "-r", "--std=08", "crc32c", "-gDATA_W=96", "--stop-time=1ns"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert run.returncode != 0
    assert "DATA_W must be 64, 128, 256 or 512, got 96" in run.stdout + run.stderr
