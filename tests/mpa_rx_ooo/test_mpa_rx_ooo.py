"""Out-of-order delineation, hw/rtl/mpa_rx_ooo.v and its VHDL-2008 twin
hw/rtl/vhdl/mpa_rx_ooo.vhd, checked against the Go reference stack.

The block sits on mpa_rx's exception stream. Every segment that came out of
order (reason 3) on a connection with markers is searched, alone, for the
FPDUs wholly inside it, found through its markers (RFC 5044 6 cases 2 and
3); their ULPDUs come out on m_early for early placement. The expectation
is iwarp/mpa's OOOReceiver (oracle op mpa_ooo): a receiver that has not
taken the stream past the start, handed just that segment, must place
exactly the ULPDUs the block sends, with the same ULPDU_Length sequence
numbers, octet for octet. The exception stream itself must come out
unchanged. The testbench only frames (op mpa_fpdus) and cuts streams and
flips octets; it computes no marker, length or CRC.

The cocotb tests:
  random_segments   several connections (markers on or off, CRC on or
                    off, bases that wrap the sequence space), ULPDUs of 1
                    to 9000 octets, segments cut anywhere (1 to 9000
                    octets), mostly reason 3 but every other reason too,
                    some too long for the buffer, octets flipped in some
                    streams, outputs back-pressured at random. Most
                    reason-3 segments are sent when the block is free;
                    the others come right behind the one before and must
                    pass on at once, reported on m_skip (reason 1), as
                    must those too long for the buffer (reason 2).
  hostile_segments  random octets and streams whose markers were
                    rewritten (among them the leading markers of FPDUs
                    that follow one another, CRCs off), as reason-3
                    segments.
  bench             9000-octet segments of 1460-octet FPDUs (and of 128):
                    clocks per segment from its first beat in to its last
                    ULPDU out, written to build/bench/mpa_rx_ooo-W<w>.json.

Verilator runs hw/rtl/mpa_rx_ooo.v at W=64 and 512, Icarus at W=64; GHDL
runs the VHDL-2008 twin (hw/rtl/vhdl/mpa_rx_ooo.vhd and its blocks) at
W=64 and 512, with the same tests and checks; its bench figures go to
build/bench/mpa_rx_ooo-W<w>-ghdl.json, so that they never stand in for the
Verilog's. With the same RANDOM_SEED (and MPA_RX_OOO_OCTETS, and traffic:
see octets_budget), the twin's transactions are the Verilog's, clock for
clock: tests/transactions.py records and compares them.

Run with `.venv/bin/pytest tests/mpa_rx_ooo` (SIMS=..., WAVES=1,
RANDOM_SEED=... as in tests/hdlsim.py). MPA_RX_OOO_OCTETS scales the random
test (default 80000 stream octets per connection set).
"""

from __future__ import annotations

import json
import logging
import os
import random

import cocotb
import pytest
from cocotb.triggers import FallingEdge, RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

import hdlsim
import oracle
import protocol
import tbutil

CLK_PERIOD_NS = 4
CONN_W = 10
SEG_OCTETS = 16384
EXC_NOT_ENABLED, EXC_IN_ERROR, EXC_OUT_OF_ORDER, EXC_DUPLICATE, EXC_EMPTY = 1, 2, 3, 4, 5
MASK32 = 0xFFFFFFFF


class Conn:
    def __init__(self, cid: int, ulpdus: list[bytes], markers: bool, crc: bool, base: int):
        self.cid, self.markers, self.crc, self.base = cid, markers, crc, base
        fpdus = oracle.shared().mpa_fpdus(ulpdus, markers=markers, base=base, crc=crc)
        self.stream = b"".join(f["wire"] for f in fpdus)
        # Stream offsets of the ULPDU_Length fields, as the in-order
        # Receiver finds them.
        rx = oracle.shared().mpa_receive(self.stream, markers=markers, base=base, crc=crc)
        self.heads = [(seq - base) & MASK32 for seq, _ in rx["ulpdus"]]

    def corrupt(self, at: int, mask: int):
        s = bytearray(self.stream)
        s[at] ^= mask
        self.stream = bytes(s)


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.s_exc_tdata)
        self.lanes = self.width // 8
        assert self.width == int(os.environ["MPA_RX_OOO_WIDTH"])
        self.seg_max = SEG_OCTETS - self.lanes
        self.rng = random.Random(random.getrandbits(64))
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_exc"), dut.clk, dut.rst)
        self.source.log.setLevel(logging.WARNING)
        self.ready_p = 1.0
        self.cycle = 0
        self.sent: list[tuple[int, int, bytes]] = []           # (tuser, len, data) in order
        self.exc_out: list[tuple[int, bytes]] = []             # (tuser, data)
        self.early: list[tuple[int, int, int, bytes]] = []     # (conn, seq, ulen, ulpdu)
        self.early_cycles: list[int] = []
        self.first_in: list[int] = []                          # cycle of each frame's first beat in
        self.skips: list[tuple[int, int, int]] = []            # m_skip: (conn, seq, reason)
        self._exc = bytearray()
        self._early = bytearray()
        self._in_mid = False
        self.in_beats = 0
        self.exc_beats = 0
        self.early_beats = 0

    def report_end(self, test: str):
        """The test's last clock and its beat counts, for the log."""
        self.dut._log.info(
            "%s: end at clock %d, %d beats in, %d exception beats out, %d early beats out",
            test, self.cycle, self.in_beats, self.exc_beats, self.early_beats)

    async def start(self):
        await tbutil.clock_and_reset(self.dut, CLK_PERIOD_NS,
                                     low=("cfg_valid", "m_exc_tready", "m_early_tready"))
        cocotb.start_soon(self._monitor())
        # Every port's handshake and format rules (tests/protocol.py).
        self.protocol = protocol.Monitor(self.dut, "mpa_rx_ooo")

    async def configure(self, c: Conn):
        dut = self.dut
        await FallingEdge(dut.clk)
        dut.cfg_conn.value = c.cid
        dut.cfg_mrk_en.value = int(c.markers)
        dut.cfg_crc_en.value = int(c.crc)
        dut.cfg_base.value = c.base
        dut.cfg_valid.value = 1
        await RisingEdge(dut.clk)
        assert dut.cfg_ready.value == 1
        await FallingEdge(dut.clk)
        dut.cfg_valid.value = 0

    def send(self, cid: int, seq: int, data: bytes, reason: int):
        """One exception frame as mpa_rx sends it: the segment whole,
        tuser {conn, seq, len, reason}."""
        user = (cid << 51) | ((seq & MASK32) << 19) | (len(data) << 3) | reason
        self.sent.append((user, len(data), data))
        self.source.send_nowait(AxiStreamFrame(data if data else b"\0", tuser=user))

    async def _monitor(self):
        dut = self.dut
        rng = random.Random(self.rng.getrandbits(64))
        n = self.lanes
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            if dut.s_exc_tvalid.value == 1 and dut.s_exc_tready.value == 1:
                self.in_beats += 1
                if not self._in_mid:
                    self.first_in.append(self.cycle)
                self._in_mid = dut.s_exc_tlast.value != 1
            if dut.m_exc_tvalid.value == 1 and dut.m_exc_tready.value == 1:
                keep = int(dut.m_exc_tkeep.value)
                data = int(dut.m_exc_tdata.value).to_bytes(n, "little")
                self.exc_beats += 1
                self._exc += bytes(data[i] for i in range(n) if keep >> i & 1)
                if dut.m_exc_tlast.value == 1:
                    self.exc_out.append((int(dut.m_exc_tuser.value), bytes(self._exc)))
                    self._exc = bytearray()
            if dut.m_early_tvalid.value == 1 and dut.m_early_tready.value == 1:
                keep = int(dut.m_early_tkeep.value)
                self.early_beats += 1
                assert keep & (keep + 1) == 0, f"m_early tkeep {keep:#x} is not a run from lane 0"
                data = int(dut.m_early_tdata.value).to_bytes(n, "little")
                nk = bin(keep).count("1")
                if dut.m_early_tlast.value != 1:
                    assert nk == n, f"m_early: a beat before the last with tkeep {keep:#x}"
                self._early += data[:nk]
                if dut.m_early_tlast.value == 1:
                    user = int(dut.m_early_tuser.value)
                    cid = user & ((1 << CONN_W) - 1)
                    ulen = (user >> CONN_W) & 0xFFFF
                    seq = user >> (CONN_W + 16)
                    self.early.append((cid, seq, ulen, bytes(self._early)))
                    self.early_cycles.append(self.cycle)
                    self._early = bytearray()
            if dut.m_skip_valid.value == 1:
                skip = (int(dut.m_skip_conn.value), int(dut.m_skip_seq.value), int(dut.m_skip_reason.value))
                self.skips.append(skip)
            p = self.ready_p
            dut.m_exc_tready.value = int(rng.random() < p)
            dut.m_early_tready.value = int(rng.random() < p)

    async def wait_free(self):
        """Until everything sent has gone in and the block is not busy."""
        dut = self.dut
        while not self.source.empty() or dut.s_exc_tvalid.value == 1 or dut.busy.value == 1:
            await RisingEdge(dut.clk)

    async def idle(self, cycles: int = 300):
        async def wait():
            quiet, last = 0, (-1, -1)
            while quiet < cycles:
                await RisingEdge(self.dut.clk)
                now = (len(self.exc_out), len(self.early))
                busy = (not self.source.empty() or self.dut.s_exc_tvalid.value == 1
                        or self.dut.busy.value == 1)
                quiet = 0 if busy or now != last else quiet + 1
                last = now
        await with_timeout(wait(), 50_000_000, "ns")

    def check(self, conns: dict[int, Conn]) -> tuple[int, int]:
        """The exception stream unchanged; m_early exactly what the
        OOOReceiver places from each reason-3 segment, in segment order.
        Returns (segments searched, ULPDUs found)."""
        assert len(self.exc_out) == len(self.sent), f"{len(self.exc_out)} exception frames out, {len(self.sent)} in"
        for i, ((u_in, n, d_in), (u_out, d_out)) in enumerate(zip(self.sent, self.exc_out)):
            assert u_out == u_in, f"exception frame {i}: tuser {u_out:#x}, sent {u_in:#x}"
            want = d_in if n else b"\0"[:0]
            assert d_out[:n] == want, f"exception frame {i}: data differs"
        # Which reason-3 segments were passed on without a search: m_skip,
        # in the order they were sent; reason 2 for exactly those too long.
        skips = list(self.skips)
        want: dict[int, list[tuple[int, bytes]]] = {cid: [] for cid in conns}
        searched = 0
        by_conn: dict[int, list[tuple[int, int]]] = {cid: [] for cid in conns}
        for user, n, _ in self.sent:
            cid, seq, reason = user >> 51, (user >> 19) & MASK32, user & 7
            c = conns[cid]
            if reason != EXC_OUT_OF_ORDER or n == 0:
                continue
            skipped = bool(skips) and skips[0][:2] == (cid, seq)
            if n > self.seg_max:
                assert skipped and skips[0][2] == 2, (
                    f"connection {cid}: a {n}-octet segment at {seq:#x}, too long to search, "
                    f"not reported on m_skip with reason 2 (next skip {skips[:1]})"
                )
            elif skipped:
                assert skips[0][2] == 1, f"connection {cid}: segment at {seq:#x} skipped with reason {skips[0][2]}"
            if skipped:
                skips.pop(0)
            elif c.markers:
                by_conn[cid].append((seq, n))
                searched += 1
        assert not skips, f"m_skip reported segments never sent, or out of order: {skips[:3]}"
        for cid, segs in by_conn.items():
            c = conns[cid]
            if not segs:
                continue
            res = oracle.shared().mpa_ooo(c.stream, segs, markers=c.markers, base=c.base, crc=c.crc)
            for (seq, n), r in zip(segs, res):
                assert r["mpa_error"] is None and not r["delivered"], (
                    f"connection {cid}: the model delivered or failed on the segment at {seq:#x}: {r}"
                )
                # The block takes a segment's FPDUs in stream order.
                placed = sorted(r["placed"], key=lambda p: (p[0] - seq) & MASK32)
                want[cid] += placed
        got: dict[int, list[tuple[int, bytes]]] = {cid: [] for cid in conns}
        for cid, seq, ulen, data in self.early:
            assert cid in conns, f"m_early: connection {cid}, which sent nothing"
            assert ulen == len(data), f"m_early: ulpdu_len {ulen}, {len(data)} octets"
            got[cid].append((seq, data))
        found = 0
        for cid, c in conns.items():
            where = f"connection {cid} (markers {c.markers}, crc {c.crc}, base {c.base:#x})"
            g, w = got[cid], want[cid]
            for i, (a, b) in enumerate(zip(g, w)):
                if a != b:
                    raise AssertionError(
                        f"{where}: early ULPDU {i}: seq {a[0]:#x} ({len(a[1])} octets), "
                        f"the model places seq {b[0]:#x} ({len(b[1])} octets)"
                        + (" with other octets" if a[0] == b[0] else "")
                    )
            assert len(g) == len(w), (
                f"{where}: {len(g)} early ULPDUs, the model places {len(w)}"
                + (f"; next one wanted at seq {w[len(g)][0]:#x}" if len(w) > len(g) else "")
            )
            found += len(g)
        return searched, found


def random_ulpdus(rng: random.Random, total: int) -> list[bytes]:
    out, n = [], 0
    small = rng.random() < 0.3
    while n < total:
        r = rng.random()
        size = (rng.randint(1, 120) if r < 0.45 or small else
                rng.randint(121, 1500) if r < 0.93 else rng.randint(1501, 9000))
        out.append(rng.randbytes(size))
        n += size
    return out


def new_conns(rng: random.Random, count: int, total: int, taken=()) -> list[Conn]:
    """count new connections on ids not in taken (a later round's
    connection must not replace an earlier one that the check still needs)."""
    conns = []
    free = [cid for cid in range(1 << CONN_W) if cid not in taken]
    for i, cid in enumerate(rng.sample(free, count)):
        markers = i != 1 and rng.random() < 0.85
        crc = rng.random() < 0.8
        base = rng.choice([rng.getrandbits(32), (1 << 32) - rng.randint(1, 20000)])
        conns.append(Conn(cid, random_ulpdus(rng, total // count), markers, crc, base))
    return conns


def cut(rng: random.Random, total: int) -> list[tuple[int, int]]:
    out, off = [], 0
    while off < total:
        r = rng.random()
        n = rng.randint(1, 64) if r < 0.15 else rng.randint(65, 1460) if r < 0.6 else rng.randint(1461, 9000)
        n = min(n, total - off)
        out.append((off, n))
        off += n
    return out


def octets_budget(width: int) -> int:
    """Stream octets per round: twice as many at 512; half as many on
    Icarus (an interpreter), which is there to run the same checks on a
    second simulator."""
    base = int(os.environ.get("MPA_RX_OOO_OCTETS", "80000"))
    if cocotb.SIM_NAME.lower().startswith("icarus"):
        base //= 2
    return base * (2 if width == 512 else 1)


@cocotb.test()
async def random_segments(dut):
    """Random streams cut anywhere, sent as exception segments with every
    reason; every reason-3 segment searched as the OOOReceiver would."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    conns: dict[int, Conn] = {}
    # Two rounds, and more (up to 6) while fewer than 11 ULPDUs came out
    # early: a short stream (Icarus) can draw too few marker connections.
    rnd = 0
    while rnd < 2 or (rnd < 6 and len(tb.early) <= 10):
        if rnd >= 2:
            await tb.idle()
        tb.ready_p = 1.0 if rnd == 0 else 0.6
        rnd += 1
        new = new_conns(rng, 4, octets_budget(tb.width), taken=conns)
        for c in new:
            if c.crc and rng.random() < 0.5:
                for _ in range(rng.randint(1, 4)):
                    c.corrupt(rng.randrange(len(c.stream)), 1 << rng.randrange(8))
            await tb.configure(c)
            conns[c.cid] = c
        queues = {c.cid: cut(rng, len(c.stream)) for c in new}
        while any(queues.values()):
            c = conns[rng.choice([k for k, v in queues.items() if v])]
            off, n = queues[c.cid].pop(0)
            r = rng.random()
            if off == 0:
                reason = EXC_DUPLICATE     # a reason-3 segment is always past the in-order point
            elif r < 0.80:
                reason = EXC_OUT_OF_ORDER
            else:
                reason = rng.choice([EXC_NOT_ENABLED, EXC_IN_ERROR, EXC_DUPLICATE])
            if reason == EXC_OUT_OF_ORDER and rng.random() < 0.8:
                await tb.wait_free()
            tb.send(c.cid, c.base + off, c.stream[off:off + n], reason)
            if rng.random() < 0.02 and len(c.stream) > tb.seg_max + 100:
                # Longer than the buffer: passed on, not searched.
                s = rng.randrange(1, len(c.stream) - tb.seg_max - 50)
                tb.send(c.cid, c.base + s, c.stream[s:s + tb.seg_max + rng.randint(1, 40)], EXC_OUT_OF_ORDER)
        tb.send(new[0].cid, new[0].base + 8, b"", EXC_EMPTY)
    # Two reason-3 segments back to back on a connection with markers: the
    # second comes while the first is searched and must pass on at once.
    c = next(c for c in conns.values() if c.markers)
    await tb.wait_free()
    for off in (1, 2):
        tb.send(c.cid, c.base + off, c.stream[off:off + 4000], EXC_OUT_OF_ORDER)
    await tb.idle()
    searched, found = tb.check(conns)
    assert found > 10, f"only {found} early ULPDUs: the traffic does not exercise the block"
    busy_skips = sum(1 for k in tb.skips if k[2] == 1)
    assert busy_skips > 0, "no segment came while the block was busy"
    dut._log.info("%d exception segments, %d searched, %d passed on while busy, %d ULPDUs found out of order",
                  len(tb.sent), searched, busy_skips, found)
    tb.report_end("random_segments")


@cocotb.test()
async def hostile_segments(dut):
    """Random octets and streams with rewritten markers (leading markers of
    FPDUs that follow one another among them) as reason-3 segments:
    nothing is found that the model would not place."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    conns: dict[int, Conn] = {}
    for i in range(4):
        c = Conn(rng.randrange(1 << CONN_W), random_ulpdus(rng, 30000), True, i != 3, rng.getrandbits(32))
        while c.cid in conns:
            c.cid = rng.randrange(1 << CONN_W)
        s = bytearray(c.stream)
        if i == 0:
            s = bytearray(rng.randbytes(len(s)))
        else:
            # Rewrite some markers (every 512 octets from the base): at
            # random, or to point at the ULPDU_Length field of an earlier
            # FPDU, which its marker check does not see (RFC 5044 6: the
            # marker that finds an FPDU must lie inside it).
            for m in range(0, len(s) - 4, 512):
                if rng.random() < 0.3:
                    earlier = [h for h in c.heads if m - 65532 <= h < m and h > 0]
                    if i == 1 or not earlier:
                        ptr = rng.getrandbits(16)
                    else:
                        ptr = m - rng.choice(earlier[-4:])
                    s[m + 2:m + 4] = ptr.to_bytes(2, "big")
        c.stream = bytes(s)
        conns[c.cid] = c
        await tb.configure(c)
    # CRCs off and ULPDUs of 502 octets: every FPDU is 512 octets behind a
    # marker of its own, and most are found one behind another (RFC 5044 6
    # case 3), where only the leading marker's FPDUPTR (0) can tell a
    # rewritten one. Some leading markers say otherwise (low two bits
    # ignored, so at least 4).
    c = Conn(rng.randrange(1 << CONN_W), [rng.randbytes(502) for _ in range(40)], True, False,
             rng.getrandbits(32))
    while c.cid in conns:
        c.cid = rng.randrange(1 << CONN_W)
    assert all(h % 512 == 4 for h in c.heads), "the FPDUs do not each start at a marker"
    s = bytearray(c.stream)
    for m in range(0, len(s) - 4, 512):
        if rng.random() < 0.3:
            ptr = rng.randrange(1, 1 << 14) << 2 | rng.getrandbits(2)
            s[m + 2:m + 4] = ptr.to_bytes(2, "big")
    c.stream = bytes(s)
    conns[c.cid] = c
    await tb.configure(c)
    for c in conns.values():
        for off, n in cut(rng, len(c.stream)):
            if off:
                await tb.wait_free()
                tb.send(c.cid, c.base + off, c.stream[off:off + n], EXC_OUT_OF_ORDER)
    await tb.idle()
    searched, found = tb.check(conns)
    dut._log.info("%d hostile segments searched, %d ULPDUs found", searched, found)
    tb.report_end("hostile_segments")


@cocotb.test()
async def bench(dut):
    """9000-octet out-of-order segments of back-to-back FPDUs, each sent
    when the block is free: clocks per segment, first beat in to last ULPDU
    out, outputs always ready."""
    tb = TB(dut)
    tb.rng = tbutil.bench_rng()
    await tb.start()
    rng = tb.rng
    sizes = {}
    conns: dict[int, Conn] = {}
    for cid, fpdu in enumerate((128, 1460)):
        c = Conn(cid, [rng.randbytes(fpdu - 6) for _ in range(3 * 9000 // fpdu + 4)], True, True, 0)
        conns[cid] = c
        await tb.configure(c)
        segs = [(off, 9000) for off in range(9000, 2 * 9000 + 1, 9000)]
        n0, e0 = len(tb.first_in), len(tb.early)
        for off, n in segs:
            await tb.wait_free()
            tb.send(cid, off, c.stream[off:off + n], EXC_OUT_OF_ORDER)
        await tb.idle()
        starts = tb.first_in[n0:]
        ends = tb.early_cycles[e0:]
        clocks = ends[-1] - starts[0]
        found = len(tb.early) - e0
        sizes[str(fpdu)] = {
            "segments": len(segs),
            "fpdus_found": found,
            "clocks_per_segment": clocks / len(segs),
            "octets_per_clock": sum(n for _, n in segs) / clocks,
            "clocks_per_fpdu": clocks / found,
        }
    tb.check(conns)
    # Store and forward, so no headline beats a clock or latency: figures
    # "<FPDU size>.<quantity>".
    hdlsim.write_bench(
        "mpa_rx_ooo", tb.width, beats_per_clock=None, latency_clocks=None,
        higher={f"{fpdu}.octets_per_clock": s["octets_per_clock"] for fpdu, s in sizes.items()},
        lower={f"{fpdu}.{q}": s[q] for fpdu, s in sizes.items() for q in ("clocks_per_segment", "clocks_per_fpdu")},
        details={fpdu: {"segments": s["segments"], "fpdus_found": s["fpdus_found"]} for fpdu, s in sizes.items()},
    )
    dut._log.info("bench: %s", json.dumps(sizes))
    tb.report_end("bench")


# --- pytest ------------------------------------------------------------------

# Verilator and GHDL (the VHDL twin) run W=64 and 512, Icarus 64; every
# width on every simulator with HW_ALL_WIDTHS=1 (`make test-hw-full`).
PARAMS = hdlsim.width_cases((64, 128, 256, 512), langs=("verilog", "vhdl"),
                            sim_widths={"verilator": (64, 512), "icarus": (64,), "ghdl": (64, 512)})


@pytest.mark.parametrize("sim,width", PARAMS)
def test_mpa_rx_ooo(sim, width, oracle_path):
    rtl = hdlsim.RTL_DIR
    hdlsim.run(
        test="mpa_rx_ooo",
        sim=sim,
        tag=f"W{width}",
        toplevel="mpa_rx_ooo",
        test_module=__name__,
        verilog_sources=[rtl / f for f in ("mpa_rx_ooo.v", "mpa_rx_lane.v", "crc32c.v", "sdp_ram.v")],
        vhdl_sources=[hdlsim.VHDL_DIR / f for f in ("sdp_ram.vhd", "crc32c.vhd", "mpa_rx_lane.vhd",
                                                    "mpa_rx_ooo.vhd")],
        parameters={"DATA_W": width, "CONN_W": CONN_W, "SEG_OCTETS": SEG_OCTETS},
        extra_env={oracle.ENV_VAR: str(oracle_path), "MPA_RX_OOO_WIDTH": str(width)},
    )
