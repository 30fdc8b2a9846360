"""hw/rtl/rnic_exc.v (the exception ring writer), with rnic_admin, in the
test-only top tests/exc/exc_top.v.

The Go model is the oracle: a model session (cmd/rnic-oracle's model_*
ops, driver/model) gets every admin command the RTL gets and every segment
(model_seg: driver.Network's SegIn, a QP not enabled or an empty segment
goes to the exception ring, driver/model/rx.go's segIn and exception()),
and at each check the exception ring in the testbench's host memory must
hold exactly the octets the model wrote into its own, the EXCEPTION event
records rnic_exc handed out must be the model's events (octets 0..14, in
order: EXCEPTION per buffer written, DMA_REFUSED with what 7, the qpn,
the address and length per buffer refused, which must be the responder's
refusals) and the lost count the model's. The memory is at the device
addresses the model handed out (model_alloc); the DMA write port is served
by a responder with random back-pressure and done latency that refuses, as
rnic_dma_wr does, what lies outside every declared DMA window. The event
records are taken with random back-pressure.

  lost_then_rings   segments before EVENT_RING: consumed and counted lost;
                    then segments of 0, 1, 47..49 (one
                    buffer's room and around it), 100, 200 octets (several
                    buffers, buffer boundaries inside beats) for QPs not
                    enabled (reason 1), through a ring of 4 buffers of 64
                    octets: it wraps (phase 1, 0, 1, ...), checked after
                    each segment; EVENT_RING again (2^3 buffers of 256
                    octets) restarts the index at 0
  refusal           the exception ring's window cut to its first eight
                    buffers (of 16): seven segments, then a three-buffer
                    one writes at PI 7, is refused at PI 8 (DMA_REFUSED
                    with the qpn, no EXCEPTION) and the rest of it is
                    dropped; a segment refused at its first buffer; the
                    window back, the next segment goes on at PI 8
  random_segments   random lengths 0..400, random QPs, random gaps between
                    beats
  full_rate         back-to-back segments with every ready high and done in
                    the next clock: the input's beats per clock (figures in
                    build/bench/rnic_exc-W<w>.json: one-buffer segments,
                    a fifteen-buffer one), and lost segments (no
                    EVENT_RING) consumed at one beat per clock

Only reason 1 (not enabled) is reached: the model gives the others only
for a QP in RTS (reason 5, empty, too: mpa_rx_align names the QP's state
first, and the model follows it), which needs the receive side this top
does not have; rnic_exc passes mpa_rx's reason through unchanged
(driver/simdev's TestSimExceptionRing runs it behind the real rnic_rx).

Verilator only (make test's cost); two widths: 64 (the header in two
beats) and 256 (the header and octets in one beat, buffers ending inside
beats).
"""

import random
from collections import deque

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

import hdlsim
import oracle
import protocol

PARAMS = {"CONN_W": 3, "STAG_AW": 4, "CQ_W": 3, "VEC_W": 2, "WIN_W": 2}
CONN_W = PARAMS["CONN_W"]
EVENT_RING, DMA_WINDOW = 0x09, 0x0A
PAGE = 4096
EV_RING_LOG2 = 8            # the model's event ring: 256 events, read back by the bench


def lo(v):
    return v & 0xFFFFFFFF


def hi(v):
    return v >> 32


class DmaResponder:
    """The DMA write client port (exwr_ request, exwd_ data, exwb_ done):
    random back-pressure and done latency (p_ready, delays); writes into
    the testbench's memory what lies inside a declared window and an
    allocated buffer, refuses (done err, nothing written) the rest."""

    def __init__(self, tb):
        self.tb = tb
        self.reqs = deque()
        self.frames = deque()
        self.cur = b""
        self.done_valid = False
        self.done_hs = False
        self.delay = 0
        self.p_ready = 0.7
        self.delays = (0, 0, 1, 3, 7)
        self.refused = []       # (addr, len) of every refused request

    def busy(self):
        return bool(self.reqs or self.frames or self.cur or self.done_valid or self.done_hs)

    def step(self, rng):
        d = self.tb.dut
        if self.done_hs:
            self.done_valid = self.done_hs = False
        if not self.done_valid and self.reqs and self.frames:
            if self.delay > 0:
                self.delay -= 1
            else:
                addr, n, what = self.reqs.popleft()
                data = self.frames.popleft()
                assert what == 7, f"request what {what}, want 7 (exception)"
                assert len(data) >= n > len(data) - len(d.exwd_data) // 8, \
                    f"frame of {len(data)} octets for a request of {n}"
                ok = self.tb.write_mem(addr, data[:n])
                if not ok:
                    self.refused.append((addr, n))
                d.exwb_err.value = int(not ok)
                self.done_valid = True
                self.delay = rng.choice(self.delays)
        d.exwb_valid.value = int(self.done_valid)
        self.done_hs = self.done_valid and bool(d.exwb_ready.value)
        r = int(bool(d.exwr_valid.value) and rng.random() < self.p_ready)
        d.exwr_ready.value = r
        if r:
            self.reqs.append((d.exwr_addr.value.integer, d.exwr_len.value.integer, d.exwr_what.value.integer))
        w = int(bool(d.exwd_valid.value) and rng.random() < self.p_ready)
        d.exwd_ready.value = w
        if w:
            nbytes = len(d.exwd_data) // 8
            self.cur += d.exwd_data.value.integer.to_bytes(nbytes, "little")
            if d.exwd_last.value:
                self.frames.append(self.cur)
                self.cur = b""


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.o = oracle.shared()
        self.s = self.o.request("model_open", cqs=1 << PARAMS["CQ_W"], vectors=1 << PARAMS["VEC_W"],
                                windows=1 << PARAMS["WIN_W"])["session"]
        self.bytes = len(dut.s_exc_tdata) // 8
        self.mem = {}
        self.windows = {}
        self.cycle = 0
        self.dma = DmaResponder(self)
        self.ev_p = 0.7
        self.events = []          # the event records rnic_exc handed out since EVENT_RING
        self.refused_seen = 0     # refusals already matched
        self.in_beats = 0
        self.in_first = self.in_last = None
        self.gap_p = 0.3          # chance of a clock without valid between beats

    async def start(self):
        d = self.dut
        cocotb.start_soon(Clock(d.clk, 10, units="ns").start())
        for name in ("cmd_wr", "cmd_op", "cmd_args", "s_exc_tdata", "s_exc_tkeep", "s_exc_tvalid", "s_exc_tlast",
                     "s_exc_tuser", "exwr_ready", "exwd_ready", "exwb_valid", "exwb_err", "ev_ready"):
            getattr(d, name).value = 0
        d.rst.value = 1
        for _ in range(3):
            await FallingEdge(d.clk)
        d.rst.value = 0
        protocol.Monitor(self.dut, "exc_top")
        cocotb.start_soon(self.run())

    async def run(self):
        d = self.dut
        while True:
            await FallingEdge(d.clk)
            self.cycle += 1
            self.dma.step(self.rng)
            r = self.rng.random() < self.ev_p
            d.ev_ready.value = int(r)
            if d.ev_valid.value and r:
                self.events.append(d.ev_entry.value.integer.to_bytes(15, "little"))

    # --- memory ---

    def alloc(self, size):
        addr = self.o.request("model_alloc", session=self.s, size=size)["addr"]
        self.mem[addr] = bytearray(size)
        return addr

    def write_mem(self, addr, data):
        n = len(data)
        if not any(length and a <= addr and addr + n <= a + length for a, length in self.windows.values()):
            return False
        for base, b in self.mem.items():
            if base <= addr and addr + n <= base + len(b):
                b[addr - base:addr - base + n] = data
                return True
        return False

    def model_mem(self, addr, n):
        return bytes.fromhex(self.o.request("model_state", session=self.s, addr=addr, len=n)["mem"])

    def check(self, what):
        """The exception ring, the events, the refusals and the lost count
        against the model's."""
        ring, size = self.exc
        b = next(b[ring - base:ring - base + size] for base, b in self.mem.items() if base <= ring < base + len(b))
        want = self.model_mem(ring, size)
        for i in range(0, size, 16):
            assert b[i:i + 16] == want[i:i + 16], \
                f"{what}: exception ring octets {i}..{i + 15}: RTL {bytes(b[i:i + 16]).hex()}, model {want[i:i + 16].hex()}"
        st = self.o.request("model_state", session=self.s, addr=self.ev_ring, len=16 << EV_RING_LOG2)
        evs = bytes.fromhex(st["mem"])
        n_model = len(self.events)
        assert n_model < 1 << EV_RING_LOG2, "the bench's event ring would wrap"
        model_evs = [evs[16 * i:16 * i + 16] for i in range(n_model)]
        assert all(e[15] == 1 for e in model_evs), f"{what}: the model wrote fewer events than the RTL"
        assert not any(evs[16 * n_model:]), f"{what}: the model wrote more events than the RTL"
        want = [e[:15] for e in model_evs]
        assert self.events == want, f"{what}: events RTL {[e.hex() for e in self.events]}, model {[e.hex() for e in want]}"
        # The DMA_REFUSED events are the responder's refusals (what 7).
        ref = [(int.from_bytes(e[8:15], "little"), int.from_bytes(e[4:8], "little")) for e in want if e[0] == 7]
        assert all(e[1] == 7 for e in want if e[0] == 7), f"{what}: a DMA_REFUSED not for an exception"
        got_ref = self.dma.refused[self.refused_base:]
        assert got_ref == ref, f"{what}: refused (address, length) responder {got_ref}, events {ref}"
        lost = self.dut.lost_count.value.integer
        assert lost == st["lost_events"], f"{what}: lost RTL {lost}, model {st['lost_events']}"

    # --- steps, each given to the RTL and to the model ---

    async def quiet(self, clocks=10):
        d = self.dut
        still = 0
        for _ in range(20000):
            await FallingEdge(d.clk)
            moving = (d.s_exc_tvalid.value or d.exwr_valid.value or d.exwd_valid.value or d.ev_valid.value
                      or self.dma.busy())
            still = 0 if moving else still + 1
            if still >= clocks:
                return
        raise AssertionError("rnic_exc did not settle in 20000 clocks")

    async def cmd(self, op, args, want=0):
        args = list(args) + [0] * (8 - len(args))
        d = self.dut
        await FallingEdge(d.clk)
        assert not d.busy.value
        d.cmd_op.value = op
        d.cmd_args.value = sum((w & 0xFFFFFFFF) << (32 * i) for i, w in enumerate(args))
        d.cmd_wr.value = 1
        await FallingEdge(d.clk)
        d.cmd_wr.value = 0
        while d.busy.value:
            await FallingEdge(d.clk)
        st = d.status_code.value.integer
        model = self.o.request("model_admin", session=self.s, opcode=op, args=[a & 0xFFFFFFFF for a in args])
        assert st == model["status"] == want, f"command {op:#x} {args}: RTL {st}, model {model['status']}, want {want}"
        if op == DMA_WINDOW:
            self.windows[args[0]] = (args[1] | args[2] << 32, args[3] | args[4] << 32)
        if op == EVENT_RING:
            # Both rings restart at index 0: events compared from here.
            self.events = []
            self.refused_base = len(self.dma.refused)
        await self.quiet()

    async def window(self, slot, addr, length):
        await self.cmd(DMA_WINDOW, [slot, lo(addr), hi(addr), lo(length), hi(length)])

    async def event_ring(self, exc, exc_log2, buf_log2):
        # A fresh page for the model's event ring each time (pages 4..7):
        # the events since this EVENT_RING are read from its start.
        ev = self.buf + (4 + self.rings) * PAGE
        self.rings += 1
        self.ev_ring, self.exc = ev, (exc, 1 << (exc_log2 + buf_log2))
        await self.cmd(EVENT_RING, [lo(ev), hi(ev), EV_RING_LOG2 | exc_log2 << 8 | buf_log2 << 16, lo(exc), hi(exc)])

    def beats(self, qpn, seq, octets, reason):
        n = len(octets)
        user = qpn << 51 | (seq & 0xFFFFFFFF) << 19 | n << 3 | reason
        nb = max(1, -(-n // self.bytes))
        pad = octets + bytes(self.rng.getrandbits(8) for _ in range(nb * self.bytes - n))   # junk past len
        for i in range(nb):
            keep = min(self.bytes, max(0, n - i * self.bytes))
            yield (int.from_bytes(pad[i * self.bytes:(i + 1) * self.bytes], "little"), (1 << keep) - 1,
                   i == nb - 1, user)

    async def send(self, segs, gaps=True):
        """Segments (qpn, seq, octets) onto s_exc back to back (random
        gaps if gaps), then into the model in the same order."""
        d = self.dut
        await FallingEdge(d.clk)
        for qpn, seq, octets in segs:
            reason = 1   # not enabled, also for an empty segment (mpa_rx_align's order)
            for data, keep, last, user in self.beats(qpn, seq, octets, reason):
                while gaps and self.rng.random() < self.gap_p:
                    d.s_exc_tvalid.value = 0
                    await FallingEdge(d.clk)
                d.s_exc_tvalid.value = 1
                d.s_exc_tdata.value = data
                d.s_exc_tkeep.value = keep
                d.s_exc_tlast.value = int(last)
                d.s_exc_tuser.value = user
                while True:
                    await ReadOnly()
                    ready = d.s_exc_tready.value
                    await FallingEdge(d.clk)
                    if ready:
                        break
                self.in_beats += 1
                if self.in_first is None:
                    self.in_first = self.cycle
                self.in_last = self.cycle
            self.model_seg(qpn, seq, octets)
        d.s_exc_tvalid.value = 0

    def model_seg(self, qpn, seq, octets):
        self.o.request("model_seg", session=self.s, qpn=qpn, seq=seq, octets=octets.hex())

    def rand_octets(self, n):
        return bytes(self.rng.getrandbits(8) for _ in range(n))


async def setup(dut):
    tb = TB(dut)
    await tb.start()
    buf = tb.alloc(8 * PAGE)
    tb.buf, tb.rings = buf, 0
    tb.ev_ring, tb.exc, tb.refused_base = buf + 4 * PAGE, (buf + PAGE, 256), 0
    return tb, buf


@cocotb.test()
async def lost_then_rings(dut):
    tb, buf = await setup(dut)
    rng = tb.rng
    # Before EVENT_RING: lost, nothing written.
    await tb.send([(1, 100, tb.rand_octets(30)), (2, 5, b""), (3, 7, tb.rand_octets(3))])
    await tb.quiet()
    assert tb.dma.reqs == deque() and not tb.events
    assert tb.dut.lost_count.value.integer == 3
    await tb.window(0, buf, 8 * PAGE)
    await tb.event_ring(buf + PAGE, 2, 6)
    tb.check("lost before EVENT_RING")
    for n in (0, 1, 47, 48, 49, 100, 200, 5, 0, 33):
        qpn = rng.randrange(1 << CONN_W)
        await tb.send([(qpn, rng.getrandbits(32), tb.rand_octets(n))])
        await tb.quiet()
        tb.check(f"a segment of {n} octets")
    await tb.event_ring(buf + 2 * PAGE, 3, 8)
    for n in (240, 241, 1000, 3):
        await tb.send([(rng.randrange(1 << CONN_W), rng.getrandbits(32), tb.rand_octets(n))])
        await tb.quiet()
        tb.check(f"a segment of {n} octets, 256-octet buffers")


@cocotb.test()
async def refusal(dut):
    tb, buf = await setup(dut)
    rng = tb.rng
    exc = (buf + 2 * PAGE - 1) & ~(2 * PAGE - 1)   # 16 buffers of 512 octets: two pages, aligned
    await tb.window(0, buf + 4 * PAGE, 4 * PAGE)  # the event rings
    await tb.window(1, exc, 2 * PAGE)           # the exception ring
    await tb.event_ring(exc, 4, 9)
    await tb.window(1, exc, PAGE)               # its first eight buffers only
    for i in range(7):
        await tb.send([(rng.randrange(1 << CONN_W), rng.getrandbits(32), tb.rand_octets(rng.randrange(1, 497)))])
    await tb.send([(5, 1000, tb.rand_octets(3 * 496))])  # three buffers: PI 7 written, 8 refused, the rest dropped
    await tb.quiet()
    assert len(tb.dma.refused) == 1 and len(tb.events) == 9 and tb.events[-1][0] == 7
    tb.check("the second buffer refused")
    await tb.send([(6, 2000, tb.rand_octets(100))])     # refused at its first buffer (PI 8 stayed)
    await tb.quiet()
    assert len(tb.dma.refused) == 2 and len(tb.events) == 10 and tb.events[-1][0] == 7
    tb.check("a segment refused at its first buffer")
    await tb.window(1, exc, 2 * PAGE)
    await tb.send([(7, 3000, tb.rand_octets(600))])
    await tb.quiet()
    tb.check("the window back")
    assert len(tb.events) == 12


@cocotb.test()
async def random_segments(dut):
    tb, buf = await setup(dut)
    rng = tb.rng
    await tb.window(0, buf, 8 * PAGE)
    await tb.event_ring(buf + PAGE, 3, 7)
    for i in range(40):
        n = rng.choice((0, rng.randrange(1, 20), rng.randrange(1, 400)))
        await tb.send([(rng.randrange(1 << CONN_W), rng.getrandbits(32), tb.rand_octets(n))])
        if i % 3 == 0:
            await tb.quiet()
            tb.check(f"segment {i}")
    await tb.quiet()
    tb.check("the end")


@cocotb.test()
async def full_rate(dut):
    tb, buf = await setup(dut)
    rng = tb.rng
    tb.dma.p_ready, tb.dma.delays, tb.ev_p, tb.gap_p = 1.0, (0,), 1.0, 0.0
    # Lost segments: one beat per clock.
    segs = [(rng.randrange(1 << CONN_W), rng.getrandbits(32), tb.rand_octets(rng.randrange(1, 200)))
            for _ in range(10)]
    tb.in_beats, tb.in_first = 0, None
    await tb.send(segs, gaps=False)
    lost_rate = tb.in_beats / (tb.in_last - tb.in_first + 1)
    await tb.quiet()
    await tb.window(0, buf, 8 * PAGE)
    await tb.event_ring(buf + PAGE, 3, 8)
    tb.check("lost at full rate")
    assert lost_rate == 1.0, f"lost segments taken at {lost_rate:.3f} beats per clock, want 1"
    # Written: eight buffers of 256 octets (240 each after the header).
    segs = [(rng.randrange(1 << CONN_W), rng.getrandbits(32), tb.rand_octets(240)) for _ in range(8)]
    tb.in_beats, tb.in_first = 0, None
    await tb.send(segs, gaps=False)
    rate = tb.in_beats / (tb.in_last - tb.in_first + 1)
    await tb.quiet()
    tb.check("written at full rate")
    # One segment of fifteen buffers (3600 octets).
    await tb.event_ring(buf + PAGE, 4, 8)
    tb.in_beats, tb.in_first = 0, None
    await tb.send([(3, rng.getrandbits(32), tb.rand_octets(15 * 240))], gaps=False)
    long_rate = tb.in_beats / (tb.in_last - tb.in_first + 1)
    await tb.quiet()
    tb.check("a long segment at full rate")
    figures = {"lost.beats_per_clock": lost_rate, "seg240.beats_per_clock": rate,
               "seg3600.beats_per_clock": long_rate}
    hdlsim.write_bench("rnic_exc", tb.bytes * 8, beats_per_clock=rate, latency_clocks=None, higher=figures)
    dut._log.info(f"figure: W{tb.bytes * 8} input beats per clock: lost {lost_rate:.3f}, "
                  f"written, 240-octet segments (one buffer each) {rate:.3f}, "
                  f"a 3600-octet segment (15 buffers) {long_rate:.3f} (every ready high, done in the next clock)")


@pytest.mark.parametrize("sim,width", [pytest.param("verilator", w, id=f"verilator-W{w}") for w in (64, 256)
                                       if hdlsim.selected("verilator")])
def test_rnic_exc(sim, width, oracle_path):
    hdlsim.run(
        test="rnic_exc",
        sim=sim,
        tag=f"W{width}",
        toplevel="exc_top",
        test_module=__name__,
        verilog_sources=[hdlsim.REPO_ROOT / "tests" / "exc" / "exc_top.v"] + [
            hdlsim.RTL_DIR / f for f in ("rnic_admin.v", "rnic_exc.v", "sdp_ram.v")],
        parameters=dict(PARAMS, DATA_W=width),
        extra_env={oracle.ENV_VAR: str(oracle_path)},
    )
