"""MPA transmitter, hw/rtl/mpa_tx.v, checked against the Go reference stack.

Every expected octet comes from the Go oracle (cmd/rnic-oracle, op
mpa_fpdus: iwarp/mpa's Framer): for each connection the testbench asks the
oracle to frame that connection's ULPDUs back to back, and the FPDUs the
block sends for the connection (its output frames with that tuser, in order)
must equal the oracle's, octet for octet. The testbench computes no CRC,
marker or length itself.

The cocotb tests, in order:
  rfc5044_figures     the ULPDUs of RFC 5044 Figures 5 and 6, markers on.
  random_streams      random ULPDUs (1..9000 octets, now and then the
                      largest, 64768) on several connections at random
                      marker positions, markers and CRC on or off per
                      connection, interleaved FPDU by FPDU, with random
                      tvalid gaps and backpressure.
  bad_frames          a length of 0, one over 64768, and frames longer and
                      shorter than their length: the error output names each,
                      and the traffic around them is framed right.
  back_to_back_bench  FPDUs of 64, 128, 256, 1460 and 9000 octets back to
                      back, markers and CRC on, always-ready sink: output
                      beats per clock (must be 1.0), FPDUs per clock, input
                      beats per clock and latency, written to
                      build/bench/mpa_tx-W<w>.json (traffic from
                      tbutil.BENCH_SEED, not the run's seed).

Verilator runs hw/rtl/mpa_tx.v at every width, Icarus at 64 and 512 (every
width with HW_ALL_WIDTHS=1, tests/hdlsim.py); GHDL runs the
VHDL-2008 twin (hw/rtl/vhdl/mpa_tx.vhd and its stages) at GHDL_WIDTHS
only, with fewer FPDUs (GHDL_FPDUS) and shorter bench bursts, as GHDL's
mcode backend is many times slower; its bench figures go to
build/bench/mpa_tx-W<w>-ghdl.json, so that they never stand in for the
Verilog's.

Run with `make test-hw` or `.venv/bin/pytest tests/mpa_tx` (SIMS=...,
WAVES=1 and RANDOM_SEED=... as in tests/hdlsim.py). MPA_TX_FPDUS (default
120) sets the number of FPDUs in random_streams; MPA_TX_TRACE=1 logs every
clock in which the bench's output is idle.
"""

from __future__ import annotations

import logging
import os
import random
from collections import deque

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Event, FallingEdge, RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

import hdlsim
import oracle
import protocol
import tbutil

CLK_PERIOD_NS = 4
FPDUS = max(4, int(os.environ.get("MPA_TX_FPDUS", "120")))
# Octets per bench burst (per FPDU size); MPA_TX_BENCH_OCTETS lowers it for GHDL.
BENCH_OCTETS = int(os.environ.get("MPA_TX_BENCH_OCTETS", "40000"))
CONN_W = 10
MAX_ULPDU = 64768
BENCH_SIZES = (64, 128, 256, 1460, 9000)

def tuser(length: int, conn: int, markers: bool, crc: bool) -> int:
    return length | conn << 16 | int(markers) << (16 + CONN_W) | int(crc) << (17 + CONN_W)


class Conn:
    """One connection's half: its ULPDUs and the FPDUs the oracle framed."""

    def __init__(self, conn: int, markers: bool, crc: bool, base: int, ulpdus: list[bytes], skip: int = 0):
        self.conn, self.markers, self.crc = conn, markers, crc
        fpdus = oracle.shared().mpa_fpdus(ulpdus, markers=markers, base=base, crc=crc)
        # The block starts where the connection's stream is after `skip`
        # FPDUs that went out before (not sent here).
        self.pos = ((fpdus[skip]["seq"] - base) % 512) // 4 if fpdus[skip:] else 0
        self.ulpdus = deque(ulpdus[skip:])
        self.expected = deque(f["wire"] for f in fpdus[skip:])
        self.sent = 0


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.s_axis_tdata)
        self.lanes = self.width // 8
        assert self.width == int(os.environ["MPA_TX_WIDTH"])
        self.rng = random.Random(random.getrandbits(64))
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        for model in (self.source, self.sink):
            model.log.setLevel(logging.WARNING)
        self.conns: dict[int, Conn] = {}
        self.raw: dict[int, list[bytes]] = {}  # connections the oracle cannot speak for
        self.outstanding = 0
        self.checked = 0
        self.errors: list[int] = []
        self.expected_errors: deque[int] = deque()
        self.done = Event()

    async def start(self):
        self.dut.rst.value = 1
        self.dut.cfg_valid.value = 0
        cocotb.start_soon(Clock(self.dut.clk, CLK_PERIOD_NS, units="ns").start())
        await ClockCycles(self.dut.clk, 3)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)
        cocotb.start_soon(self._check())
        cocotb.start_soon(self._errors())
        # Every port's handshake and format rules (tests/protocol.py).
        self.protocol = protocol.Monitor(self.dut, "mpa_tx")

    async def configure(self, c: Conn):
        """Set the connection's marker position through the cfg port."""
        dut = self.dut
        await FallingEdge(dut.clk)
        dut.cfg_conn.value = c.conn
        dut.cfg_pos.value = c.pos
        dut.cfg_valid.value = 1
        while True:
            await RisingEdge(dut.clk)
            if dut.cfg_ready.value == 1:
                break
        await FallingEdge(dut.clk)
        dut.cfg_valid.value = 0
        self.conns[c.conn] = c

    def send(self, c: Conn):
        ulpdu = c.ulpdus.popleft()
        self.outstanding += 1
        self.source.send_nowait(
            AxiStreamFrame(ulpdu, tuser=tuser(len(ulpdu), c.conn, c.markers, c.crc))
        )

    async def _check(self):
        while True:
            frame = await self.sink.recv()
            got = bytes(frame.tdata)
            user = frame.tuser[0] if isinstance(frame.tuser, list) else frame.tuser
            if user in self.raw:
                self.raw[user].append(got)
                self.outstanding -= 1
                if self.outstanding == 0:
                    self.done.set()
                continue
            c = self.conns.get(user)
            assert c is not None, f"FPDU for connection {user}, which sent nothing: {got.hex()}"
            assert c.expected, f"connection {user}: FPDU beyond the oracle's: {got.hex()}"
            want = c.expected.popleft()
            where = f"connection {user} FPDU {c.sent} ({len(want)} octets, markers {c.markers}, crc {c.crc})"
            if got != want:
                diff = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), None)
                raise AssertionError(
                    f"{where}: {len(got)} octets, first difference at {diff}\n"
                    f" got  {got[:96].hex()}\n want {want[:96].hex()}"
                )
            if isinstance(frame.tuser, list):
                assert set(frame.tuser) == {user}, f"{where}: tuser changes within the frame"
            c.sent += 1
            self.checked += 1
            self.outstanding -= 1
            if self.outstanding == 0:
                self.done.set()

    async def _errors(self):
        while True:
            await RisingEdge(self.dut.clk)
            if self.dut.err_valid.value == 1:
                flags = int(self.dut.err_code.value)
                assert flags, "err_valid with no err_code bit"
                self.errors += [code for code, bit in ((1, 1), (2, 2)) if flags & bit]

    async def drain(self, cycles: int = 200000):
        async def wait():
            while self.outstanding:
                self.done.clear()
                await self.done.wait()

        await with_timeout(wait(), cycles * CLK_PERIOD_NS, "ns")
        await ClockCycles(self.dut.clk, 20)

    def idle(self, p: float):
        rng = random.Random(self.rng.getrandbits(64))
        while True:
            yield rng.random() < p


def random_len(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.35:
        return rng.randint(1, 128)
    if r < 0.7:
        return rng.randint(129, 1500)
    if r < 0.98:
        return rng.randint(1501, 9000)
    return MAX_ULPDU


@cocotb.test()
async def rfc5044_figures(dut):
    """RFC 5044 Figure 5 (one FPDU, markers on) and Figure 6 (an FPDU that
    ends right before a marker, so the next starts behind one with FPDUPTR 0)."""
    tb = TB(dut)
    await tb.start()
    ddp_send = lambda msn: bytes([0x41, 0x43]) + bytes(11) + bytes([msn]) + bytes(4)  # noqa: E731
    streams = [[ddp_send(1) + bytes(24)], [ddp_send(1) + bytes(482 - 18), ddp_send(2) + bytes(24)]]
    for conn, ulpdus in enumerate(streams, start=1):
        c = Conn(conn, True, True, 0x1000 * conn, ulpdus)
        await tb.configure(c)
        while c.ulpdus:
            tb.send(c)
    await tb.drain()
    assert tb.checked == 3 and not tb.errors, f"{tb.checked} FPDUs, errors {tb.errors}"


@cocotb.test()
async def random_streams(dut):
    """Random ULPDUs on several connections, interleaved, with idle input
    cycles and a sink that pauses."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    nconn = 5
    conn_ids = rng.sample(range(1 << CONN_W), nconn)
    lens = [[] for _ in range(nconn)]
    for i in range(FPDUS):
        n = random_len(rng)
        if n == MAX_ULPDU and tb.width < 256:
            n = rng.randint(1, 9000)  # the largest only where it is quick
        lens[rng.randrange(nconn)].append(n)
    lens[0][:0] = [1, 2, 3, 4, 5, 6, 7, 8]  # every pad length, twice over
    conns = []
    for i, cid in enumerate(conn_ids):
        markers = i < 3 or rng.random() < 0.5
        crc = i != 1 and rng.random() < 0.85
        skip = rng.randrange(4)
        ulpdus = [rng.randbytes(rng.randint(1, 600)) for _ in range(skip)] + [rng.randbytes(n) for n in lens[i]]
        c = Conn(cid, markers, crc, rng.getrandbits(32), ulpdus, skip)
        await tb.configure(c)
        conns.append(c)
    tb.source.set_pause_generator(tb.idle(0.15))
    tb.sink.set_pause_generator(tb.idle(0.25))
    total = 0
    while any(c.ulpdus for c in conns):
        c = rng.choice([c for c in conns if c.ulpdus])
        total += len(c.ulpdus[0])
        tb.send(c)
    await tb.drain()
    assert all(not c.expected for c in conns)
    assert not tb.errors, f"error output fired: {tb.errors}"
    dut._log.info(
        "%d FPDUs (%d ULPDU octets) on %d connections: markers %s, crc %s",
        tb.checked, total, nconn, [c.markers for c in conns], [c.crc for c in conns],
    )


@cocotb.test()
async def bad_frames(dut):
    """Lengths the block must refuse (0, over 64768: the frame is dropped,
    error 1) and frames whose octet count is not their length (error 2);
    the FPDUs around them must still be exactly the oracle's."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    good = [rng.randbytes(rng.randint(1, 300)) for _ in range(4)]
    c = Conn(7, True, True, 0, good)
    await tb.configure(c)
    tb.send(c)
    for bad_len in (0, MAX_ULPDU + 1, 0xFFFF):
        tb.source.send_nowait(AxiStreamFrame(rng.randbytes(rng.randint(1, 100)), tuser=tuser(bad_len, 7, True, True)))
    tb.send(c)
    await tb.drain()
    assert tb.errors == [1, 1, 1], f"errors {tb.errors}"
    assert tb.checked == 2
    # A frame longer than its length, one shorter: each goes out (the
    # length field as announced, the octets as given, on a connection of
    # its own, markers off) and is reported.
    tb.raw[9] = []
    for n, actual in ((10, 14), (40, 33)):
        tb.outstanding += 1
        tb.source.send_nowait(AxiStreamFrame(rng.randbytes(actual), tuser=tuser(n, 9, False, True)))
    await tb.drain()
    assert tb.errors == [1, 1, 1, 2, 2], f"errors {tb.errors}"
    assert [f[:2] for f in tb.raw[9]] == [b"\x00\x0a", b"\x00\x28"], tb.raw[9]
    assert [len(f) for f in tb.raw[9]] == [20, 40], tb.raw[9]  # 2 + octets + pad + 4
    # The good connection carries on where it was.
    tb.send(c)
    tb.send(c)
    await tb.drain()
    assert tb.checked == 4 and not c.expected


@cocotb.test()
async def back_to_back_bench(dut):
    """FPDUs of each size back to back, markers and CRC on: the output must
    carry a beat every clock while the input is busy."""
    tb = TB(dut)
    tb.rng = tbutil.bench_rng()
    await tb.start()
    rng = tb.rng
    sizes = {}
    # Last, 64-octet FPDUs with markers off: at W=512 each is exactly one
    # output beat, so one FPDU a clock is the wire's own rate. With markers
    # on, an FPDU that a marker falls in is 68 octets.
    runs = [(size, True) for size in BENCH_SIZES] + [(64, False)]

    def trace(cycle):
        if os.environ.get("MPA_TX_TRACE"):
            dut._log.info("idle output at cycle %d (in valid %s ready %s)", cycle, dut.s_axis_tvalid.value,
                          dut.s_axis_tready.value)

    for i, (size, markers) in enumerate(runs):
        count = max(16, min(200, BENCH_OCTETS // size))
        # ULPDU_Length, pad and CRC make an FPDU of `size` octets before
        # markers.
        ulpdus = [rng.randbytes(size - 8) for _ in range(count)]
        c = Conn(100 + i, markers, True, rng.getrandbits(32), ulpdus)
        await tb.configure(c)
        await ClockCycles(dut.clk, 5)
        mon = tbutil.FramerMonitor(dut, on_idle=trace)
        while c.ulpdus:
            tb.send(c)
        await tb.drain()
        # Steady state: from the first output beat to the last input beat.
        # After that the burst drains: its last FPDUs wait for their CRCs
        # with nothing behind them.
        sizes[str(size) if markers else f"{size}_markers_off"] = {**mon.figures(), "fpdus": count}
        dut._log.info("size %d markers %s: %s", size, markers, list(sizes.values())[-1])
    # Figures "<size>.<quantity>", size "64" .. "9000" or "64_markers_off".
    hdlsim.write_bench(
        "mpa_tx", tb.width,
        beats_per_clock=min(s["beats_per_clock"] for s in sizes.values()),
        latency_clocks=max(s["latency_clocks"] for s in sizes.values()),
        higher={f"{size}.{q}": s[q] for size, s in sizes.items()
                for q in ("beats_per_clock", "fpdus_per_clock", "in_beats_per_clock")},
        lower={f"{size}.latency_clocks": s["latency_clocks"] for size, s in sizes.items()},
        details={"fpdus": {size: s["fpdus"] for size, s in sizes.items()}},
    )
    dut._log.info("bench: %s", sizes)
    for size, s in sizes.items():
        assert s["beats_per_clock"] == 1.0, f"FPDUs of {size} octets: {s}"


# --- pytest ------------------------------------------------------------------

WIDTHS = (64, 128, 256, 512)


# GHDL (mcode) runs the VHDL twin at two widths, with less traffic.
GHDL_WIDTHS = (64, 512)
GHDL_FPDUS = 24
GHDL_BENCH_OCTETS = 4000


def cases() -> list:
    return hdlsim.width_cases(WIDTHS, langs=("verilog", "vhdl"), sim_widths={"ghdl": GHDL_WIDTHS})


@pytest.mark.parametrize("sim,width", cases())
def test_mpa_tx(sim, width, oracle_path):
    rtl = hdlsim.RTL_DIR
    env = {oracle.ENV_VAR: str(oracle_path), "MPA_TX_WIDTH": str(width)}
    # Verilator at GHDL's widths gets GHDL's traffic, the stimulus the two
    # are compared on (tests/transactions.py: random_streams draws every
    # FPDU before the first is sent, so a smaller run is no prefix of a
    # larger one); Icarus runs the full traffic at those widths.
    if sim == "ghdl" or (sim == "verilator" and (width in GHDL_WIDTHS or hdlsim.all_widths_requested())):
        env["MPA_TX_FPDUS"] = os.environ.get("MPA_TX_FPDUS", str(GHDL_FPDUS))
        env["MPA_TX_BENCH_OCTETS"] = str(GHDL_BENCH_OCTETS)
    hdlsim.run(
        test="mpa_tx",
        sim=sim,
        tag=f"W{width}",
        toplevel="mpa_tx",
        test_module=__name__,
        verilog_sources=[rtl / f for f in ("mpa_tx.v", "mpa_tx_frame.v", "mpa_tx_mark.v", "sdp_ram.v", "crc32c.v")],
        vhdl_sources=[hdlsim.VHDL_DIR / f for f in ("crc32c.vhd", "sdp_ram.vhd", "mpa_tx_frame.vhd",
                                             "mpa_tx_mark.vhd", "mpa_tx.vhd")],
        parameters={"DATA_W": width, "CONN_W": CONN_W},
        extra_env=env,
    )
