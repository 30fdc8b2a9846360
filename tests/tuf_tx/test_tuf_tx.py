"""TUF transmit block, hw/rtl/tuf_tx.v (and its VHDL twin): ULPDUs in, FPDUs out.

Every expected FPDU comes from the Go model: rnic-oracle tuf_frames frames
the ULPDUs as iwarp/tuf's Sender does without packing (one FPDU each: the
header with Length and the connection's key, the ULPDU, the CRC32c
trailer), with an EMSS large enough that each FPDU is one TCP segment. The
bench compares the block's output frames with those, octet for octet and
in order, with tuser (the connection) constant over each frame; tests/
protocol.py checks the handshakes and the lane-0 tkeep rule on both ports.

The cocotb tests:
  lengths          ULPDUs of 1 .. 64 octets, lengths around the input and
                   output beat boundaries of this width, and the largest
                   (65531), back to back on one connection.
  random_streams   random lengths on four connections with different keys,
                   interleaved, with random input and output stalls; a key
                   written for a connection while the others' frames flow,
                   and keys rewritten between frames, the next FPDUs
                   carrying the new ones.
  bad_frames       lengths the block refuses (0, 65532, 65535: frame
                   dropped, err_code bit 0) and frames whose octet count is
                   not their length (err_code bit 1: the FPDU goes out with
                   the announced Length, the octets given, and the model's
                   CRC of those); the stream around them stays exact.
  back_to_back_bench  FPDUs of each size back to back with an always-ready
                   sink: output beats a clock (must be 1.0 while the input
                   is busy), input beats a clock and latency, written as
                   the bench record tuf_tx-W<width>.json.

Verilator and GHDL get the same stimulus, so the Verilog and its VHDL twin
(hw/rtl/vhdl/tuf_tx.vhd) are compared clock for clock (tests/
transactions.py). Run with `.venv/bin/pytest tests/tuf_tx` (SIMS=...,
WAVES=1 and RANDOM_SEED=... as in tests/hdlsim.py).
"""

from __future__ import annotations

import logging
import random
from collections import deque

import cocotb
import pytest
from cocotb.triggers import ClockCycles, Event, FallingEdge, RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

import hdlsim
import oracle
import protocol
import tbutil

CLK_PERIOD_NS = 4
CONN_W = 6
MAX_ULPDU = 65531             # tuf.MaxULPDUs: Length (16 bits) counts the trailer too
EMSS = MAX_ULPDU + 12         # every FPDU one segment (tuf.MaxULPDU(EMSS) = EMSS - 12)


def tuser(length: int, conn: int) -> int:
    return length | conn << 16


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.s_axis_tdata)
        self.lanes = self.width // 8
        self.rng = random.Random(random.getrandbits(64))  # seeded by cocotb
        self.o = oracle.shared()
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        for model in (self.source, self.sink):
            model.log.setLevel(logging.WARNING)
        self.keys: dict[int, int] = {}
        # What the output must carry, in order: (conn, octets), or (conn,
        # None) for a frame checked by hand (bad_frames).
        self.expected: deque[tuple[int, bytes | None]] = deque()
        self.raw: list[bytes] = []
        self.checked = 0
        self.errors: list[int] = []
        self.done = Event()

    async def start(self):
        await tbutil.clock_and_reset(self.dut, CLK_PERIOD_NS, low=("cfg_valid",))
        cocotb.start_soon(self._check())
        cocotb.start_soon(self._errors())
        self.protocol = protocol.Monitor(self.dut, "tuf_tx")

    async def set_key(self, conn: int, key: int):
        """Write a connection's key through the cfg port."""
        dut = self.dut
        await FallingEdge(dut.clk)
        dut.cfg_conn.value = conn
        dut.cfg_key.value = key
        dut.cfg_valid.value = 1
        while True:
            await RisingEdge(dut.clk)
            if dut.cfg_ready.value == 1:
                break
        await FallingEdge(dut.clk)
        dut.cfg_valid.value = 0
        self.keys[conn] = key

    def send(self, sends: list[tuple[int, bytes]]):
        """Queue ULPDUs (conn, octets) in order, each FPDU expected as the
        model frames it with the connection's key now."""
        by_key: dict[int, list[int]] = {}
        for i, (conn, _) in enumerate(sends):
            by_key.setdefault(self.keys[conn], []).append(i)
        wire: list[bytes] = [b""] * len(sends)
        for key, idx in by_key.items():
            segs = self.o.request("tuf_frames", key=key, emss=EMSS, pack=False,
                                  ulpdus=[sends[i][1].hex() for i in idx])["segments"]
            assert len(segs) == len(idx), f"the model cut {len(idx)} ULPDUs into {len(segs)} segments"
            for i, s in zip(idx, segs):
                wire[i] = bytes.fromhex(s)
        for (conn, u), w in zip(sends, wire):
            self.expected.append((conn, w))
            self.source.send_nowait(AxiStreamFrame(u, tuser=tuser(len(u), conn)))

    def send_raw(self, conn: int, data: bytes, length: int, out: bool):
        """A frame with tuser's length as given; out: an FPDU is expected
        (checked by hand), else none."""
        if out:
            self.expected.append((conn, None))
        self.source.send_nowait(AxiStreamFrame(data, tuser=tuser(length, conn)))

    async def _check(self):
        while True:
            frame = await self.sink.recv()
            got = bytes(frame.tdata)
            users = frame.tuser if isinstance(frame.tuser, list) else [frame.tuser]
            assert len(set(users)) == 1, f"tuser changes within an FPDU: {sorted(set(users))}"
            assert self.expected, f"an FPDU nothing was sent for: conn {users[0]} {got[:32].hex()}"
            conn, want = self.expected.popleft()
            assert users[0] == conn, f"FPDU {self.checked}: tuser {users[0]}, sent on connection {conn}"
            if want is None:
                self.raw.append(got)
            elif got != want:
                diff = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), None)
                raise AssertionError(
                    f"FPDU {self.checked} (connection {conn}, {len(want)} octets): {len(got)} octets, "
                    f"first difference at {diff}\n got  {got[:96].hex()}\n want {want[:96].hex()}"
                    f"\n got tail  {got[-16:].hex()}\n want tail {want[-16:].hex()}")
            self.checked += 1
            if not self.expected:
                self.done.set()

    async def _errors(self):
        while True:
            await RisingEdge(self.dut.clk)
            if self.dut.err_valid.value == 1:
                flags = int(self.dut.err_code.value)
                assert flags, "err_valid with no err_code bit"
                self.errors += [code for code, bit in ((1, 1), (2, 2)) if flags & bit]

    async def drain(self, cycles: int = 400000):
        async def wait():
            while self.expected:
                self.done.clear()
                await self.done.wait()

        await with_timeout(wait(), cycles * CLK_PERIOD_NS, "ns")
        await ClockCycles(self.dut.clk, 20)
        assert self.source.empty() and not self.source.active, "input frames left over"


def random_len(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.5:
        return rng.randint(1, 80)
    if r < 0.9:
        return rng.randint(81, 600)
    return rng.randint(601, 2000)


@cocotb.test()
async def lengths(dut):
    """1 .. 64 octets, around the beat boundaries, and the largest ULPDU."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    n = tb.lanes
    await tb.set_key(5, rng.getrandbits(48))
    # The input beats change at multiples of n, the output beats where
    # len + 12 is one.
    edges = {k * n + d for k in (1, 2, 3) for d in (-13, -12, -11, -5, -4, -3, -1, 0, 1, 3, 4, 5)}
    sizes = list(range(1, 65)) + sorted(e for e in edges if e > 64) + [MAX_ULPDU, 1]
    tb.send([(5, rng.randbytes(s)) for s in sizes])
    await tb.drain()
    assert tb.checked == len(sizes) and not tb.errors, f"{tb.checked} FPDUs, errors {tb.errors}"


@cocotb.test()
async def random_streams(dut):
    """Four connections, random lengths interleaved, random stalls on both
    sides; keys written while traffic flows and rewritten between frames."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    conns = rng.sample(range(1 << CONN_W), 5)
    for c in conns[:4]:
        await tb.set_key(c, rng.getrandbits(48))
    tb.source.set_pause_generator(tbutil.pauses(rng, 0.2))
    tb.sink.set_pause_generator(tbutil.pauses(rng, 0.3))
    for rnd in range(3):
        tb.send([(rng.choice(conns[:4]), rng.randbytes(random_len(rng))) for _ in range(30)])
        if rnd == 0:
            # The fifth connection's key goes in while the others' FPDUs are
            # on their way.
            await ClockCycles(dut.clk, 40)
            await tb.set_key(conns[4], rng.getrandbits(48))
        await tb.drain()
        # New keys for two connections: their next FPDUs carry them.
        for c in rng.sample(conns, 2):
            await tb.set_key(c, rng.getrandbits(48))
        tb.send([(c, rng.randbytes(random_len(rng))) for c in conns])
        await tb.drain()
    assert not tb.errors, f"error output fired: {tb.errors}"
    dut._log.info("%d FPDUs on %d connections", tb.checked, len(conns))


@cocotb.test()
async def bad_frames(dut):
    """Lengths the block refuses, frames whose octet count is not their
    length; the FPDUs around them exactly the model's."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    key = rng.getrandbits(48)
    await tb.set_key(7, key)
    tb.sink.set_pause_generator(tbutil.pauses(rng, 0.2))
    tb.send([(7, rng.randbytes(rng.randint(1, 300)))])
    for bad_len in (0, MAX_ULPDU + 1, 0xFFFF):
        tb.send_raw(7, rng.randbytes(rng.randint(1, 3 * tb.lanes)), bad_len, out=False)
    tb.send([(7, rng.randbytes(rng.randint(1, 300))) for _ in range(2)])
    await tb.drain()
    assert tb.errors == [1, 1, 1], f"errors {tb.errors}"
    assert tb.checked == 3
    # Longer and shorter than announced: each goes out with the announced
    # Length and the octets given, reported with error 2.
    given = []
    for announced, actual in ((10, 14), (40, 33), (tb.lanes, tb.lanes + 1)):
        data = rng.randbytes(actual)
        given.append((announced, data))
        tb.send_raw(7, data, announced, out=True)
    tb.send([(7, rng.randbytes(rng.randint(1, 300)))])
    await tb.drain()
    assert tb.errors == [1, 1, 1, 2, 2, 2], f"errors {tb.errors}"
    assert len(tb.raw) == 3
    for fpdu, (announced, data) in zip(tb.raw, given):
        header = (announced + 4).to_bytes(2, "big") + key.to_bytes(6, "big")
        assert fpdu[:8] == header, f"header {fpdu[:8].hex()}, announced {header.hex()}"
        assert fpdu[8:-4] == data, f"octets {fpdu[8:-4].hex()}, given {data.hex()}"
        crc = tb.o.crc32c(header + data)["wire"]
        assert fpdu[-4:] == crc, f"trailer {fpdu[-4:].hex()}, the model's CRC32c {crc.hex()}"
    assert tb.checked == 7


BENCH_SIZES = (13, 64, 128, 256, 1460, 9000)   # FPDU octets: ULPDU + 12
BENCH_OCTETS = 6000


@cocotb.test()
async def back_to_back_bench(dut):
    """FPDUs of each size back to back, an always-ready sink: a beat every
    clock at the output while the input is busy."""
    tb = TB(dut)
    await tb.start()
    rng = tbutil.bench_rng()
    runs = {}
    for i, size in enumerate(BENCH_SIZES):
        conn = 10 + i
        await tb.set_key(conn, rng.getrandbits(48))
        count = max(3, min(60, BENCH_OCTETS // size))
        await ClockCycles(dut.clk, 5)
        mon = tbutil.FramerMonitor(dut)
        tb.send([(conn, rng.randbytes(size - 12)) for _ in range(count)])
        await tb.drain()
        runs[str(size)] = {**mon.figures(), "fpdus": count}
        dut._log.info("FPDUs of %d octets: %s", size, runs[str(size)])
    hdlsim.write_bench(
        "tuf_tx", tb.width,
        beats_per_clock=min(r["beats_per_clock"] for r in runs.values()),
        latency_clocks=max(r["latency_clocks"] for r in runs.values()),
        higher={f"{size}.{q}": r[q] for size, r in runs.items()
                for q in ("beats_per_clock", "fpdus_per_clock", "in_beats_per_clock")},
        lower={f"{size}.latency_clocks": r["latency_clocks"] for size, r in runs.items()},
        details={"fpdus": {size: r["fpdus"] for size, r in runs.items()}},
    )
    n = tb.lanes
    for size, r in zip(BENCH_SIZES, runs.values()):
        assert r["beats_per_clock"] == 1.0, f"FPDUs of {size} octets: {r}"
        # The input waits only for the header's and trailer's beats.
        out_beats, in_beats = -(-size // n), -(-(size - 12) // n)
        assert r["in_beats_per_clock"] >= in_beats / out_beats - 0.02, f"FPDUs of {size} octets: {r}"


# --- pytest ------------------------------------------------------------------

WIDTHS = (64, 512)
PARAMS = hdlsim.width_cases(WIDTHS, langs=("verilog", "vhdl"))


@pytest.mark.parametrize("sim,width", PARAMS)
def test_tuf_tx(sim, width, oracle_path):
    rtl = hdlsim.RTL_DIR
    hdlsim.run(
        test="tuf_tx",
        sim=sim,
        tag=f"W{width}",
        toplevel="tuf_tx",
        test_module=__name__,
        verilog_sources=[rtl / f for f in ("tuf_tx.v", "crc32c.v", "sdp_ram.v")],
        vhdl_sources=[hdlsim.VHDL_DIR / f for f in ("rnic_pkg.vhd", "sdp_ram.vhd", "crc32c.vhd", "tuf_tx.vhd")],
        parameters={"DATA_W": width, "CONN_W": CONN_W},
        extra_env={oracle.ENV_VAR: str(oracle_path)},
    )
