"""hw/rtl/rnic_dma_rd.v, the DMA read engine, against cocotbext-axi's
AxiRamRead as host memory, with the protocol checkers (tests/protocol.py)
on every port: the client request and response ports (per client), the
refusal port and the AXI4 read master (no burst across 4 KiB, RLAST).

  random_traffic   three clients at once, random addresses (any
                   alignment, inside a window, straddling an edge,
                   outside), lengths 1..9000, random back-pressure on every
                   output (rd_ready, ref_ready, ARREADY) and random gaps on
                   R: every octet of every frame against memory, each
                   client's frames in its request order, every refusal
                   (one err beat, keep 0) with its report (what, addr, len)
  window_edges     the verdicts of docs/device.md's rule at a window's
                   edges: inside, one octet over either edge, outside, a
                   cleared window, a window written again, an end past 2^64
  axi_error        a read beat answered SLVERR: the frame keeps its full
                   length, err from the output beat that carries the failing
                   octets to the last; the next request reads clean
  throughput       one client, long requests, no back-pressure: output beats
                   per clock (aligned and unaligned), the bench record

Verilator only (the device shell's blocks: Verilog, no VHDL twin), W=64 and
W=512; three clients, WIN_W 2.
"""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly
from cocotbext.axi import AxiRamRead, AxiReadBus

import hdlsim
import protocol
import tbutil
from dmatb import MASK64, Refusals, ReqDriver, Windows, bits, clock_loop, set_window, vec_get

N_RD = 3
WIN_W = 2
PAYLOAD_READ = 3

W0, W0_LEN = 0x0010_0000, 0x0004_0000        # slot 0
W1, W1_LEN = 0x7654_3000_0000, 0x3000          # slot 1
W2 = (1 << 64) - 0x20000                        # slot 2: the top of the address space
W2_LEN = 0x1F000
RAM_SIZE = 1 << 32


class FailingRam(AxiRamRead):
    """AxiRamRead whose reads of the beats in `bad` (beat addresses) fail:
    cocotbext-axi answers a failing read SLVERR."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.bad: set[int] = set()

    async def _read(self, address, length):
        if address in self.bad:
            raise ValueError("bench: a failing beat")
        return await super()._read(address, length)


class RespSink:
    """The rd_* port: ready at random per client; frames collected."""

    def __init__(self, dut, n: int, width: int, rng: random.Random, p_stall: float):
        self.dut, self.n, self.w, self.rng, self.p = dut, n, width, rng, p_stall
        self.bytes = width // 8
        self.frames: list[list[list]] = [[] for _ in range(n)]  # per client: [data bytes, errs per beat, keeps]
        self.open: list[list | None] = [None] * n
        self.beats = 0
        self.first = self.last_clock = None
        self.clock = 0
        dut.rd_ready.value = 0

    def drive(self):
        self.clock += 1
        self.dut.rd_ready.value = sum(1 << i for i in range(self.n) if self.rng.random() >= self.p)

    def sample(self):
        d = self.dut
        take = bits(d.rd_valid) & bits(d.rd_ready)
        if not take:
            return
        data, keep, last, err = bits(d.rd_data), bits(d.rd_keep), bits(d.rd_last), bits(d.rd_err)
        for i in range(self.n):
            if not take >> i & 1:
                continue
            self.beats += 1
            self.first = self.clock if self.first is None else self.first
            self.last_clock = self.clock
            k = vec_get(keep, i, self.bytes)
            b = vec_get(data, i, self.w).to_bytes(self.bytes, "little")
            f = self.open[i] = self.open[i] or [bytearray(), [], []]
            f[0] += b[: k.bit_length()]
            f[1].append(vec_get(err, i, 1))
            f[2].append(k)
            if vec_get(last, i, 1):
                self.frames[i].append(f)
                self.open[i] = None


class TB:
    def __init__(self, dut, p_stall: float = 0.3):
        self.dut = dut
        self.width = len(dut.m_axi_rdata)
        self.bytes = self.width // 8
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.p = p_stall
        self.win = Windows(1 << WIN_W)

    async def start(self):
        d = self.dut
        d.win_wr_valid.value = 0
        d.win_wr_slot.value = 0
        d.win_wr_addr.value = 0
        d.win_wr_len.value = 0
        self.req = ReqDriver(d, "rd_req", N_RD, {"addr": 64, "len": 32, "what": 3}, self.rng, self.p)
        self.resp = RespSink(d, N_RD, self.width, self.rng, self.p)
        self.refs = Refusals(d, self.rng, self.p)
        # Sparse, 2^32 octets: device addresses alias modulo 2^32 (the
        # windows do not overlap there).
        self.ram = FailingRam(AxiReadBus.from_prefix(d, "m_axi"), d.clk, d.rst, size=RAM_SIZE)
        if self.p:
            self.ram.ar_channel.set_pause_generator(tbutil.pauses(self.rng, self.p))
            self.ram.r_channel.set_pause_generator(tbutil.pauses(self.rng, self.p))
        d.rst.value = 1
        cocotb.start_soon(Clock(d.clk, 10, units="ns").start())
        await ClockCycles(d.clk, 3)
        await FallingEdge(d.clk)
        d.rst.value = 0
        self.mon = protocol.Monitor(self.dut, "rnic_dma_rd")
        # Memory: random octets over every window and around them.
        for a, n in ((W0 - 0x2000, W0_LEN + 0x4000), (W1 - 0x2000, W1_LEN + 0x4000), (W2 - 0x2000, 0x22000)):
            self.ram.write(a % RAM_SIZE, self.rng.randbytes(n))

    async def windows(self):
        for slot, a, n in ((0, W0, W0_LEN), (1, W1, W1_LEN), (2, W2, W2_LEN)):
            await set_window(self.dut, self.win, slot, a, n)

    def send(self, client: int, addr: int, n: int, what: int = PAYLOAD_READ):
        addr &= MASK64
        # The verdict now: windows change only while the engine is idle.
        self.req.queues[client].append({"addr": addr, "len": n, "what": what, "ok": self.win.allowed(addr, n)})

    async def run(self, budget: int = 400000):
        parts = [self.req, self.resp, self.refs]
        want = [0] * N_RD
        for i in range(N_RD):
            want[i] = len(self.req.queues[i]) + len(self.req.taken[i]) + (self.req.cur[i] is not None)
        clocks = [0]

        def done():
            clocks[0] += 1
            assert clocks[0] < budget, "the engine stopped answering"
            return (all(len(self.resp.frames[i]) >= want[i] for i in range(N_RD)) and not self.req.busy()
                    and self.dut.ref_valid.value == 0)
        await clock_loop(self.dut, parts, done)
        await FallingEdge(self.dut.clk)
        self.dut.rd_ready.value = 0

    def check(self, expect_err=lambda client, index: None, failed_beat=None):
        """Every client's frames against its requests, in order; the
        refusal reports against the refused requests, in grant order."""
        refused = []
        for i in range(N_RD):
            reqs, frames = self.req.taken[i], self.resp.frames[i]
            assert len(frames) == len(reqs), f"client {i}: {len(frames)} frames for {len(reqs)} requests"
            for j, (r, (data, errs, keeps)) in enumerate(zip(reqs, frames)):
                a, n = r["addr"], r["len"]
                what = f"client {i}: read {a:#x}+{n}"
                if not r["ok"]:
                    assert (bytes(data), errs, keeps) == (b"", [1], [0]), f"{what}: refused: one err beat, keep 0"
                    refused.append((r["what"], a, n))
                    continue
                want = bytearray(self.ram.read(a % RAM_SIZE, n))
                bad = expect_err(i, j)
                if bad is not None:
                    # A failing read beat's octets come as zeros (cocotbext-axi).
                    for x in range(max(a, failed_beat), min(a + n, failed_beat + self.bytes)):
                        want[x - a] = 0
                assert bytes(data) == bytes(want), f"{what}: the octets differ from memory"
                assert len(keeps) == -(-n // self.bytes), f"{what}: {len(keeps)} beats"
                if bad is None:
                    assert not any(errs), f"{what}: err on a clean read"
                else:
                    assert errs == [0] * bad + [1] * (len(errs) - bad), f"{what}: err per beat {errs}, from {bad}"
        assert sorted(self.refs.got) == sorted(refused), "the refusal reports"
        return refused


def ref_order_ok(tb: TB):
    # Reports leave in grant order; per client that is its request order.
    for i in range(N_RD):
        mine = [r for r in tb.refs.got if any(r == (q["what"], q["addr"], q["len"]) for q in tb.req.taken[i])]
        want = [(q["what"], q["addr"], q["len"]) for q in tb.req.taken[i] if not q["ok"]]
        assert mine == want


def random_request(rng: random.Random, bytes_: int):
    """An address and length: mostly inside a window, some at or over an
    edge, some outside; lengths mostly short (WQEs), some long."""
    n = rng.choice([rng.randint(1, 2 * bytes_), rng.randint(1, 600), rng.randint(1, 9000)])
    a, ln = rng.choice([(W0, W0_LEN), (W0, W0_LEN), (W1, W1_LEN), (W2, W2_LEN)])
    kind = rng.random()
    if kind < 0.75:
        addr = a + rng.randint(0, max(0, ln - n))
    elif kind < 0.85:
        addr = a - rng.randint(1, min(n, 64))                 # over the start
    elif kind < 0.95:
        addr = a + ln - n + rng.randint(1, min(n, 64))        # over the end
    else:
        addr = a + ln + rng.randint(0, 4096)                  # outside
    return addr, n


@cocotb.test()
async def random_traffic(dut):
    tb = TB(dut)
    await tb.start()
    await tb.windows()
    per_client = 10 if tb.bytes == 8 else 24
    for i in range(N_RD):
        for _ in range(per_client):
            tb.send(i, *random_request(tb.rng, tb.bytes), what=tb.rng.choice([1, 2, 3]))
    await tb.run()
    refused = tb.check()
    ref_order_ok(tb)
    assert refused, "the traffic had refusals"
    # A cleared window: what it allowed is refused now.
    await set_window(dut, tb.win, 1, W1, 0)
    tb.send(0, W1 + 5, 100)
    tb.send(1, W0 + 5, 100)
    await tb.run()
    tb.check()
    assert tb.refs.got[-1] == (PAYLOAD_READ, W1 + 5, 100)


@cocotb.test()
async def window_edges(dut):
    tb = TB(dut)
    await tb.start()
    await tb.windows()
    cases = [
        (W1, W1_LEN, True), (W1, W1_LEN + 1, False), (W1 - 1, 2, False), (W1 - 1, 1, False),
        (W1 + W1_LEN - 1, 1, True), (W1 + W1_LEN - 1, 2, False), (W1 + W1_LEN, 1, False),
        (W2 + W2_LEN - 8, 8, True), (W2 + W2_LEN - 8, 9, False),
        (MASK64 - 3, 16, False),                         # its end passes 2^64
        (W0 + 7, 1, True), (0, 1, False),
    ]
    for a, n, ok in cases:
        assert tb.win.allowed(a, n) == ok, (hex(a), n)
        tb.send(0, a, n)
    await tb.run()
    tb.check()
    # Slot 3, written, then cleared, then written again elsewhere.
    await set_window(dut, tb.win, 3, W0 + W0_LEN, 0x1000)
    tb.send(1, W0 + W0_LEN - 4, 8)                        # two windows side by side: inside neither one
    tb.send(1, W0 + W0_LEN + 4, 8)
    await tb.run()
    await set_window(dut, tb.win, 3, W0 + W0_LEN, 0)
    tb.send(2, W0 + W0_LEN + 4, 8)
    await tb.run()
    await set_window(dut, tb.win, 3, W1 - 0x1000, 0x1000)
    tb.send(2, W1 - 8, 8)
    tb.send(2, W1 - 8, 9)                                 # over two windows: refused
    await tb.run()
    got = tb.check()
    assert [x[1:] for x in got if x[1] >= W0 + W0_LEN - 4 and x[1] < W0 + W0_LEN + 8] == \
        [(W0 + W0_LEN - 4, 8), (W0 + W0_LEN + 4, 8)]
    assert (PAYLOAD_READ, W1 - 8, 9) in got and (PAYLOAD_READ, W1 - 8, 8) not in got


@cocotb.test()
async def axi_error(dut):
    tb = TB(dut)
    await tb.start()
    await tb.windows()
    B = tb.bytes
    bad_beat = W0 + 0x3000 + 5 * B
    tb.ram.bad = {bad_beat}
    first = {}
    for i, (a, n) in enumerate([(W0 + 0x3000, 40 * B), (W0 + 0x3000 + 3, 40 * B), (W0 + 0x3000 + 5 * B + 1, 1)]):
        # The first output beat that carries an octet of the failing read
        # beat: octet bad_beat - a of the request.
        first[(i, 0)] = max(0, bad_beat - a) // B
        tb.send(i, a, n)
    await tb.run()
    tb.ram.bad = set()
    tb.send(0, W0 + 0x3000 + 3, 40 * B)                   # the same read, clean now
    await tb.run()
    tb.check(lambda client, index: first.get((client, index)), bad_beat)


@cocotb.test()
async def throughput(dut):
    tb = TB(dut, p_stall=0.0)
    await tb.start()
    await tb.windows()
    figures = {}
    for name, off in (("aligned", 0), ("unaligned", 3)):
        for k in range(4):
            tb.send(0, W0 + 0x8000 * (k % 4) + off, 8192)
        tb.resp.first = None
        b0 = tb.resp.beats
        await tb.run()
        tb.check()
        beats = tb.resp.beats - b0
        figures[name] = beats / (tb.resp.last_clock - tb.resp.first + 1)
        dut._log.info("rnic_dma_rd W=%d %s 4 x 8192 octets: %d beats, %.3f beats per clock",
                      tb.width, name, beats, figures[name])
    hdlsim.write_bench("rnic_dma_rd", tb.width, beats_per_clock=figures["aligned"], latency_clocks=None,
                       higher={"8192.unaligned.beats_per_clock": figures["unaligned"]},
                       details={"requests": "4 x 8192 octets, one client, no back-pressure"})
    assert figures["aligned"] > 0.95 and figures["unaligned"] > 0.95


# Verilator only: the device shell's blocks (Icarus and Yosys see them in
# make lint-hw).
@pytest.mark.parametrize("sim,width", [p for p in hdlsim.width_cases((64, 512)) if p.values[0] == "verilator"])
def test_rnic_dma_rd(sim, width):
    hdlsim.run(
        test="rnic_dma_rd",
        sim=sim,
        tag=f"W{width}",
        toplevel="rnic_dma_rd",
        test_module="test_rnic_dma_rd",
        verilog_sources=[hdlsim.RTL_DIR / "rnic_dma_rd.v"],
        parameters={"DATA_W": width, "N_RD": N_RD, "WIN_W": WIN_W},
    )
