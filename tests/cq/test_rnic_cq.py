"""hw/rtl/rnic_cq.v (CQ writer), rnic_evq.v (event writer) and rnic_irq.v
(vectors), with rnic_admin, in the test-only wrapper tests/cq/rnic_cq_tb.v.

The Go model is the oracle: a model session (cmd/rnic-oracle's model_*
ops, driver/model) gets every admin command, doorbell and record the RTL
gets, and after each step the CQ rings and the event ring in the
testbench's host memory must hold exactly the octets the model wrote into
its own, the lost CQE and lost event counts must be the model's, and so
must the number of interrupt messages of each vector (every step waits
until the RTL is quiet, so no two entries of a vector meet in one
message). The memory is at the device addresses the model handed out
(model_alloc). The DMA write ports are served by a responder with random
back-pressure and done latency that writes into that memory and refuses,
as rnic_dma_wr will, what lies outside every declared DMA window.

  ring_wrap_arm      CQEs through two CQs over three passes of their rings
                     (phase), the driver's CQ_CI doorbells giving room; arm
                     and solicited-only arm (a plain success does not raise,
                     a solicited one or an error does; a write without arm
                     disarms)
  overrun_refusal    a CQ filled to CQ_CI: CQ_OVERRUN, the overrun report
                     with the cqn, every later entry lost; DESTROY_CQ and
                     CREATE_CQ start it afresh; a CQE write the window check
                     refuses: lost, DMA_REFUSED with the cqn and address
  doorbell_beside_record  a CQ_CI doorbell in the clock the writer takes
                     a record of the same CQ (a CQ created again: its CI
                     word still holds the old CQ's index)
  doorbells_events   events before EVENT_RING lost (counted); bad doorbells
                     (cqn beyond the build, CQ not created, bits 29:16) give
                     DOORBELL_BAD (in consecutive clocks, those that find
                     the report waiting are dropped and counted); a record
                     for a CQ not created writes nothing; the event ring wraps, overwriting the
                     oldest, phase flipping; EVENT_RING again restarts it
  moderation         the vector registers; MOD_COUNT and MOD_TIME at the
                     clocks rnic_irq.v's header gives; mask holds, unmask
                     fires; enable 0 sends nothing but PENDING sets;
                     PENDING write 1 clears

Verilator only (make test's cost); two widths: 64 (a CQE in four beats, an
event in two) and 512 (one beat each).
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

PARAMS = {"CONN_W": 3, "STAG_AW": 4, "CQ_W": 3, "VEC_W": 2, "WIN_W": 2, "CQ_LOG2": 12}
CQS = 1 << PARAMS["CQ_W"]
VECS = 1 << PARAMS["VEC_W"]
WINDOWS = 1 << PARAMS["WIN_W"]

OK, BAD_INDEX, BAD_STATE = 0, 2, 3
CREATE_CQ, DESTROY_CQ, EVENT_RING, DMA_WINDOW = 0x01, 0x02, 0x09, 0x0A
CQDB_BASE = 0xC000          # driver/regs DoorbellsCQDB
VEC_BASE = 0x400            # driver/regs VectorsVec
CTRL, MOD_COUNT, MOD_TIME, PENDING = 0x00, 0x40, 0x80, 0xC0
ARM, SOLICITED = 1 << 31, 1 << 30
PAGE = 4096


def lo(v):
    return v & 0xFFFFFFFF


def hi(v):
    return v >> 32


def random_cqe(rng, status=0, solicited=False):
    """A CQE's 32 octets as docs/device.md lays them out (phase 0)."""
    b = bytearray(32)
    b[0:8] = rng.getrandbits(64).to_bytes(8, "little")
    b[8:12] = rng.getrandbits(32).to_bytes(4, "little")
    b[12:14] = rng.getrandbits(3).to_bytes(2, "little")
    b[14] = rng.randrange(7)
    b[15] = status
    b[16:20] = rng.getrandbits(32).to_bytes(4, "little")
    b[20] = int(solicited) | rng.getrandbits(1) << 1
    if status in (4, 5):
        b[21], b[22] = rng.getrandbits(8), rng.getrandbits(8)
    return bytes(b)


def qp_error_event(rng):
    """A QP_ERROR event record (octets 0..14 and a zero phase octet)."""
    b = bytearray(16)
    b[0] = 1
    b[1] = rng.getrandbits(8)
    b[2:4] = rng.getrandbits(3).to_bytes(2, "little")
    b[4] = rng.getrandbits(8)
    return bytes(b)


class DmaResponder:
    """One DMA write client port (<p>r_ request, <p>d_ data, <p>b_ done):
    random back-pressure and done latency; writes into the testbench's
    memory what lies inside a declared window and an allocated buffer,
    refuses (done err, nothing written) the rest."""

    def __init__(self, tb, p, size, what):
        self.tb, self.p, self.size, self.what = tb, p, size, what
        self.reqs = deque()
        self.frames = deque()
        self.cur = b""
        self.done_valid = False
        self.done_hs = False
        self.delay = 0
        self.requests = 0
        self.refused = 0

    def sig(self, name):
        return getattr(self.tb.dut, f"{self.p}{name}")

    def busy(self):
        return bool(self.reqs or self.frames or self.cur or self.done_valid or self.done_hs)

    def step(self, rng):
        """One falling edge: sample, decide the readies and the done."""
        d = self.sig
        # Done: taken at the rising edge just passed.
        if self.done_hs:
            self.done_valid = self.done_hs = False
        if not self.done_valid and self.reqs and self.frames:
            if self.delay > 0:
                self.delay -= 1
            else:
                addr, n, what = self.reqs.popleft()
                data = self.frames.popleft()
                assert n == self.size and what == self.what, f"{self.p}: request {n} octets what {what}"
                assert len(data) >= n, f"{self.p}: frame of {len(data)} octets for a request of {n}"
                ok = self.tb.write_mem(addr, data[:n])
                self.refused += not ok
                d("b_err").value = int(not ok)
                self.done_valid = True
                self.delay = rng.choice((0, 0, 1, 3, 7))
        d("b_valid").value = int(self.done_valid)
        # b_ready is the writer's state, not a function of b_valid: what
        # it reads now is what the next rising edge sees.
        self.done_hs = self.done_valid and bool(d("b_ready").value)
        # Request.
        r = int(bool(d("r_valid").value) and rng.random() < 0.7)
        d("r_ready").value = r
        if r:
            self.reqs.append((d("r_addr").value.integer, d("r_len").value.integer, d("r_what").value.integer))
            self.requests += 1
        # Data.
        w = int(bool(d("d_valid").value) and rng.random() < 0.7)
        d("d_ready").value = w
        if w:
            nbytes = len(d("d_data")) // 8
            self.cur += d("d_data").value.integer.to_bytes(nbytes, "little")
            if d("d_last").value:
                self.frames.append(self.cur)
                self.cur = b""


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.o = oracle.shared()
        self.s = self.o.request("model_open", cqs=CQS, vectors=VECS, windows=WINDOWS)["session"]
        self.mem = {}           # base address -> bytearray (the model's buffers)
        self.windows = {}       # slot -> (addr, len)
        self.cycle = 0
        self.msgs = []          # (cycle, vector) of every interrupt message
        self.ints = []          # (cycle, vector) of every entry (int pulse)
        self.ovf = []           # cqn of every overrun report
        self.lost_cqes = 0
        self.ev_lost_pulses = 0
        self.irq_ready_p = 0.8
        self.ovf_ready_p = 0.6
        self.cq_dma = DmaResponder(self, "cqw", 32, 5)
        self.ev_dma = DmaResponder(self, "evw", 16, 6)

    async def start(self):
        d = self.dut
        cocotb.start_soon(Clock(d.clk, 10, units="ns").start())
        for name in ("cmd_wr", "cmd_op", "cmd_args", "cpl_valid", "cpl_cqn", "cpl_entry", "cqdb_valid", "cqdb_cqn",
                     "cqdb_value", "xev_valid", "xev_entry", "vec_req", "vec_addr", "vec_req_is_wr", "vec_wr_data",
                     "vec_wr_biten", "cqwr_ready", "cqwd_ready", "cqwb_valid", "cqwb_err", "evwr_ready", "evwd_ready",
                     "evwb_valid", "evwb_err", "ovf_ready", "irq_ready"):
            getattr(d, name).value = 0
        d.rst.value = 1
        for _ in range(3):
            await FallingEdge(d.clk)
        d.rst.value = 0
        protocol.Monitor(self.dut, "rnic_cq_tb")
        cocotb.start_soon(self.run())

    async def run(self):
        d = self.dut
        while True:
            await FallingEdge(d.clk)
            self.cycle += 1
            self.cq_dma.step(self.rng)
            self.ev_dma.step(self.rng)
            # A ready set now meets the valid read now at the next edge.
            r = self.rng.random() < self.irq_ready_p
            d.irq_ready.value = int(r)
            if d.irq_valid.value and r:
                self.msgs.append((self.cycle, d.irq_vector.value.integer))
            r = self.rng.random() < self.ovf_ready_p
            d.ovf_ready.value = int(r)
            if d.ovf_valid.value and r:
                self.ovf.append(d.ovf_cqn.value.integer)
            if d.cq_int_valid.value:
                self.ints.append((self.cycle, d.cq_int_vector.value.integer))
            if d.evq_int_valid.value:
                self.ints.append((self.cycle, 0))
            self.lost_cqes += int(d.cq_lost.value)
            self.ev_lost_pulses += int(d.cq_ev_lost.value)

    # --- memory ---

    def alloc(self, size):
        addr = self.o.request("model_alloc", session=self.s, size=size)["addr"]
        self.mem[addr] = bytearray(size)
        return addr

    def buf_of(self, addr, n):
        for base, b in self.mem.items():
            if base <= addr and addr + n <= base + len(b):
                return b, addr - base
        return None, 0

    def write_mem(self, addr, data):
        n = len(data)
        if not any(l and a <= addr and addr + n <= a + l for a, l in self.windows.values()):
            return False
        b, off = self.buf_of(addr, n)
        if b is None:
            return False
        b[off:off + n] = data
        return True

    def compare(self, addr, n, what):
        want = bytes.fromhex(self.o.request("model_state", session=self.s, addr=addr, len=n)["mem"])
        b, off = self.buf_of(addr, n)
        got = bytes(b[off:off + n])
        if got != want:
            for i in range(0, n, 16):
                if got[i:i + 16] != want[i:i + 16]:
                    raise AssertionError(f"{what}: octets {i}..{i + 15} at {addr + i:#x}: RTL {got[i:i + 16].hex()}, "
                                         f"model {want[i:i + 16].hex()}")

    def counts(self):
        st = self.o.request("model_state", session=self.s, addr=next(iter(self.mem)), len=0)
        per_vec = [0] * VECS
        for _, v in self.msgs:
            per_vec[v] += 1
        got = {"lost_cqes": self.lost_cqes, "lost_events": self.dut.ev_lost_count.value.integer,
               "messages": per_vec}
        want = {"lost_cqes": st["lost_cqes"], "lost_events": st["lost_events"], "messages": st["messages"]}
        assert got == want, f"RTL {got}, model {want}"
        assert self.ev_lost_pulses == 0, "a DOORBELL_BAD dropped while another waited"

    # --- steps, each given to the RTL and to the model ---

    async def quiet(self, clocks=8):
        """Until nothing moved for `clocks` clocks: no record waiting, no
        valid on an output port, no write in the responders, no entry."""
        d = self.dut
        still = 0
        for _ in range(2000):
            await FallingEdge(d.clk)
            moving = (not d.cpl_ready.value or d.cqwr_valid.value or d.cqwd_valid.value or d.evwr_valid.value
                      or d.evwd_valid.value or d.ovf_valid.value or d.irq_valid.value or d.cq_int_valid.value
                      or d.evq_int_valid.value or self.cq_dma.busy() or self.ev_dma.busy())
            still = 0 if moving else still + 1
            if still >= clocks:
                return
        raise AssertionError("the blocks did not settle in 2000 clocks")

    async def cmd(self, op, args, want=OK):
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
        if op == DMA_WINDOW and st == OK:
            self.windows[args[0]] = (args[1] | args[2] << 32, args[3] | args[4] << 32)
        await self.quiet()

    async def window(self, slot, addr, length):
        await self.cmd(DMA_WINDOW, [slot, lo(addr), hi(addr), lo(length), hi(length)])

    async def create_cq(self, cqn, ring, log2, vector=0, want=OK):
        await self.cmd(CREATE_CQ, [cqn, lo(ring), hi(ring), log2, vector], want)

    async def event_ring(self, ring, log2, exc, exc_log2=1, buf_log2=6):
        await self.cmd(EVENT_RING, [lo(ring), hi(ring), log2 | exc_log2 << 8 | buf_log2 << 16, lo(exc), hi(exc)])

    async def doorbell(self, cqn, value):
        d = self.dut
        await FallingEdge(d.clk)
        d.cqdb_valid.value = 1
        d.cqdb_cqn.value = cqn
        d.cqdb_value.value = value
        await FallingEdge(d.clk)
        d.cqdb_valid.value = 0
        self.o.request("model_write32", session=self.s, off=CQDB_BASE + 4 * cqn, value=value)
        await self.quiet()

    async def cqe(self, cqn, entry):
        d = self.dut
        await FallingEdge(d.clk)
        d.cpl_valid.value = 1
        d.cpl_cqn.value = cqn
        d.cpl_entry.value = int.from_bytes(entry[:31], "little")
        await self.handshake("cpl")
        d.cpl_valid.value = 0
        self.o.request("model_cqe", session=self.s, cqn=cqn, cqe=entry.hex())
        await self.quiet()

    async def event(self, entry):
        d = self.dut
        await FallingEdge(d.clk)
        d.xev_valid.value = 1
        d.xev_entry.value = int.from_bytes(entry[:15], "little")
        await self.handshake("xev")
        d.xev_valid.value = 0
        self.o.request("model_event", session=self.s, event=entry.hex())
        await self.quiet()

    async def handshake(self, p):
        """valid was raised at a falling edge; returns at the falling edge
        after the rising edge that took it."""
        d = self.dut
        while True:
            await ReadOnly()
            ready = getattr(d, f"{p}_ready").value
            await FallingEdge(d.clk)
            if ready:
                return

    async def vec_write(self, fn, v, value, biten=0xFFFFFFFF):
        d = self.dut
        await FallingEdge(d.clk)
        d.vec_req.value = 1
        d.vec_req_is_wr.value = 1
        d.vec_addr.value = fn + 4 * v
        d.vec_wr_data.value = value
        d.vec_wr_biten.value = biten
        await ReadOnly()
        assert d.vec_wr_ack.value, "a vector write not acked in its clock"
        await FallingEdge(d.clk)
        d.vec_req.value = 0
        d.vec_req_is_wr.value = 0
        self.o.request("model_write32", session=self.s, off=VEC_BASE + fn + 4 * v, value=value & biten)

    async def vec_read(self, fn, v):
        d = self.dut
        await FallingEdge(d.clk)
        d.vec_req.value = 1
        d.vec_req_is_wr.value = 0
        d.vec_addr.value = fn + 4 * v
        await ReadOnly()
        assert d.vec_rd_ack.value, "a vector read not acked in its clock"
        got = d.vec_rd_data.value.integer
        await FallingEdge(d.clk)
        d.vec_req.value = 0
        want = self.o.request("model_read32", session=self.s, off=VEC_BASE + fn + 4 * v)["value"]
        assert got == want, f"vector {v} register {fn:#x}: RTL {got:#x}, model {want:#x}"
        return got

    async def event_now(self, entry):
        """An event record, without waiting for the blocks to settle."""
        d = self.dut
        await FallingEdge(d.clk)
        d.xev_valid.value = 1
        d.xev_entry.value = int.from_bytes(entry[:15], "little")
        await self.handshake("xev")
        d.xev_valid.value = 0
        self.o.request("model_event", session=self.s, event=entry.hex())

    def messages(self, v):
        return [c for c, x in self.msgs if x == v]


async def setup(dut, ev_log2=3):
    """A 64 KiB buffer in window 0, the event ring at +0x2000, vectors
    0..3 enabled."""
    tb = TB(dut)
    await tb.start()
    buf = tb.alloc(0x10000)
    await tb.window(0, buf, 0x10000)
    await tb.event_ring(buf + 0x2000, ev_log2, buf + 0x3000)
    for v in range(VECS):
        await tb.vec_write(CTRL, v, 1)
    return tb, buf


@cocotb.test()
async def ring_wrap_arm(dut):
    tb, buf = await setup(dut)
    rng = tb.rng
    rings = {1: (buf, 2, 1), 2: (buf + 0x1000, 3, 2)}   # cqn: ring, log2, vector
    for cqn, (ring, log2, vec) in rings.items():
        await tb.create_cq(cqn, ring, log2, vec)

    def check():
        for cqn, (ring, log2, _) in rings.items():
            tb.compare(ring, 32 << log2, f"CQ {cqn}")
        tb.counts()

    # Arm, as the contract says, on CQ 1 (vector 1).
    await tb.cqe(1, random_cqe(rng))
    assert tb.messages(1) == [], "an unarmed CQ raised its vector"
    await tb.doorbell(1, ARM)
    await tb.cqe(1, random_cqe(rng))
    assert len(tb.messages(1)) == 1, "armed: the next entry raises the vector"
    await tb.cqe(1, random_cqe(rng))
    assert len(tb.messages(1)) == 1, "the arm is spent by one entry"
    await tb.doorbell(1, 3 | ARM | SOLICITED)
    await tb.cqe(1, random_cqe(rng))
    assert len(tb.messages(1)) == 1, "solicited-only: a plain success does not raise"
    await tb.cqe(1, random_cqe(rng, solicited=True))
    assert len(tb.messages(1)) == 2, "solicited-only: a solicited entry raises"
    await tb.doorbell(1, 5 | ARM | SOLICITED)
    await tb.cqe(1, random_cqe(rng, status=3))
    assert len(tb.messages(1)) == 3, "solicited-only: an error raises"
    await tb.doorbell(1, 6 | ARM)
    await tb.doorbell(1, 6)
    await tb.cqe(1, random_cqe(rng))
    assert len(tb.messages(1)) == 3, "a CQ_CI write without arm disarms"
    check()

    # Random completions over three passes of each ring, the driver
    # consuming only when the ring is full, arming at random.
    n = {1: 7, 2: 0}
    ci = {1: 6, 2: 0}
    while n[1] < 3 * 4 + 7 or n[2] < 3 * 8:
        cqn = rng.choice((1, 2))
        size = 1 << rings[cqn][1]
        if n[cqn] - ci[cqn] >= size or rng.random() < 0.15:
            ci[cqn] = rng.randrange(max(ci[cqn], n[cqn] - size + 1), n[cqn] + 1)
            await tb.doorbell(cqn, ci[cqn] & 0xFFFF | rng.choice((0, ARM, ARM | SOLICITED)))
        await tb.cqe(cqn, random_cqe(rng, rng.choice((0,) * 6 + (1, 3, 5)), rng.random() < 0.3))
        n[cqn] += 1
        check()
    assert tb.lost_cqes == 0 and tb.ovf == []


@cocotb.test()
async def overrun_refusal(dut):
    tb, buf = await setup(dut)
    rng = tb.rng
    await tb.create_cq(3, buf, 1, 1)
    await tb.doorbell(3, ARM)
    for _ in range(2):
        await tb.cqe(3, random_cqe(rng))
    assert tb.ovf == [] and tb.lost_cqes == 0
    await tb.cqe(3, random_cqe(rng))      # the ring holds 2: overrun
    assert tb.ovf == [3] and tb.lost_cqes == 1
    await tb.doorbell(3, 2)               # room again, but the CQ is done
    await tb.cqe(3, random_cqe(rng))
    assert tb.ovf == [3] and tb.lost_cqes == 2
    tb.compare(buf, 64, "CQ 3")
    tb.compare(buf + 0x2000, 16 << 3, "event ring")
    tb.counts()
    await tb.cmd(DESTROY_CQ, [3])
    await tb.doorbell(3, 0)               # destroyed: DOORBELL_BAD
    await tb.create_cq(3, buf + 0x1000, 2, 1)
    await tb.cqe(3, random_cqe(rng))      # afresh: slot 0, phase 1
    tb.compare(buf + 0x1000, 128, "CQ 3 again")
    tb.compare(buf + 0x2000, 16 << 3, "event ring")
    tb.counts()

    # A CQE write the window check refuses: CQ 4's ring in window 1, which
    # then goes.
    buf2 = tb.alloc(0x2000)
    await tb.window(1, buf2, 0x2000)
    await tb.create_cq(4, buf2 + 0x1000, 2, 2)
    await tb.window(1, 0, 0)
    await tb.cqe(4, random_cqe(rng))
    assert tb.cq_dma.refused == 1 and tb.lost_cqes == 3
    tb.compare(buf + 0x2000, 16 << 3, "event ring")
    await tb.window(1, buf2, 0x2000)
    await tb.cqe(4, random_cqe(rng))      # PI stayed: slot 0
    tb.compare(buf2 + 0x1000, 128, "CQ 4")
    tb.counts()


@cocotb.test()
async def doorbell_beside_record(dut):
    """A CQ_CI doorbell in the clock the writer takes a record for the same
    CQ: the record sees it (the driver gave the room first). On a CQ
    created again, whose CI table word still holds the old CQ's index,
    a writer reading that stale word would find the ring full."""
    tb, buf = await setup(dut)
    rng = tb.rng
    await tb.create_cq(5, buf, 1, 1)
    for _ in range(2):
        await tb.cqe(5, random_cqe(rng))
    await tb.doorbell(5, 2)
    await tb.cmd(DESTROY_CQ, [5])
    await tb.create_cq(5, buf + 0x1000, 1, 1)
    for i in range(4):
        d = tb.dut
        entry = random_cqe(rng)
        await FallingEdge(d.clk)
        assert d.cpl_ready.value
        d.cpl_valid.value = 1
        d.cpl_cqn.value = 5
        d.cpl_entry.value = int.from_bytes(entry[:31], "little")
        d.cqdb_valid.value = 1
        d.cqdb_cqn.value = 5
        d.cqdb_value.value = i
        await FallingEdge(d.clk)
        d.cpl_valid.value = 0
        d.cqdb_valid.value = 0
        tb.o.request("model_write32", session=tb.s, off=CQDB_BASE + 4 * 5, value=i)
        tb.o.request("model_cqe", session=tb.s, cqn=5, cqe=entry.hex())
        await tb.quiet()
        tb.compare(buf + 0x1000, 64, "CQ 5")
    assert tb.ovf == [] and tb.lost_cqes == 0
    tb.counts()


@cocotb.test()
async def doorbells_events(dut):
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    buf = tb.alloc(0x10000)
    await tb.window(0, buf, 0x10000)
    await tb.vec_write(CTRL, 0, 1)
    for _ in range(3):
        await tb.event(qp_error_event(rng))
    await tb.doorbell(7, 0)               # before EVENT_RING: lost too
    tb.counts()
    assert tb.dut.ev_lost_count.value.integer == 4
    assert tb.ev_dma.requests == 0, "an event written before EVENT_RING"
    await tb.event_ring(buf + 0x2000, 1, buf + 0x3000)
    await tb.create_cq(1, buf, 2, 1)
    for cqn, value in ((0xFFF, 1), (CQS, 0), (5, ARM), (1, 0x0001_0003), (1, 0x2000_0000), (1, 3 | ARM)):
        await tb.doorbell(cqn, value)
    for _ in range(3):
        await tb.event(qp_error_event(rng))
    tb.compare(buf + 0x2000, 32, "event ring")
    tb.counts()
    # A record for a CQ not created: nothing written, nothing lost (the
    # model's complete() returns).
    await tb.cqe(6, random_cqe(rng))
    assert tb.cq_dma.requests == 0
    tb.counts()
    # Bad doorbells in consecutive clocks while the event writer is busy
    # with an event: one report waits, the next is dropped and counted
    # (rnic_cq.v; the BAR never gives doorbells that fast).
    await tb.event(qp_error_event(rng))
    d = tb.dut
    before = tb.ev_dma.requests
    msgs_before = len(tb.msgs)
    await FallingEdge(d.clk)
    d.xev_valid.value = 1
    d.xev_entry.value = int.from_bytes(qp_error_event(rng)[:15], "little")
    for cqn in (5, 6, 7, 5):
        d.cqdb_valid.value = 1
        d.cqdb_cqn.value = cqn
        d.cqdb_value.value = 0
        await FallingEdge(d.clk)
        d.xev_valid.value = 0
    d.cqdb_valid.value = 0
    await tb.quiet()
    written = tb.ev_dma.requests - before - 1
    assert tb.ev_lost_pulses >= 1 and written + tb.ev_lost_pulses == 4, (written, tb.ev_lost_pulses)
    # (The model saw none of this burst: its messages leave the count.)
    tb.ev_lost_pulses = 0
    tb.msgs = tb.msgs[:msgs_before]
    # EVENT_RING again: the producer index restarts at 0 on the new ring.
    await tb.event_ring(buf + 0x4000, 3, buf + 0x3000)
    for cqn in (6, 7, 5):
        await tb.doorbell(cqn, 1)
    tb.compare(buf + 0x4000, 16 << 3, "event ring again")
    tb.counts()


@cocotb.test()
async def moderation(dut):
    tb, buf = await setup(dut, ev_log2=5)
    tb.irq_ready_p = 1.0
    rng = tb.rng
    await tb.vec_write(MOD_TIME, 3, 0x1234_5678)
    await tb.vec_write(MOD_COUNT, 2, 0xABCD)
    await tb.vec_write(CTRL, 1, 3)
    await tb.vec_write(PENDING, 1, 1)
    for v in range(VECS):
        for fn in (CTRL, MOD_COUNT, MOD_TIME, PENDING):
            await tb.vec_read(fn, v)

    def ev0():
        return [c for c, v in tb.ints if v == 0]

    # MOD_COUNT 3: the third entry fires, two clocks after its int pulse.
    await tb.vec_write(MOD_COUNT, 0, 3)
    for i in range(3):
        await tb.event(qp_error_event(rng))
        assert len(tb.messages(0)) == (1 if i == 2 else 0)
    assert tb.messages(0) == [ev0()[-1] + 2]
    tb.counts()   # the model moderates by count alike (by time it has no clock)
    # MOD_TIME 40 with a count of 100: the time fires, 40 + 2 clocks after
    # the first entry's pulse, covering the entries after it.
    await tb.vec_write(MOD_COUNT, 0, 100)
    await tb.vec_write(MOD_TIME, 0, 40)
    await tb.event_now(qp_error_event(rng))
    await tb.event_now(qp_error_event(rng))
    for _ in range(60):
        await FallingEdge(dut.clk)
    first = ev0()[-2]
    assert tb.messages(0)[1:] == [first + 40 + 2], f"entries at {ev0()[-2:]}, messages {tb.messages(0)}"
    # MOD_COUNT 2 before MOD_TIME 40: the count fires.
    await tb.vec_write(MOD_COUNT, 0, 2)
    await tb.event_now(qp_error_event(rng))
    await tb.event_now(qp_error_event(rng))
    for _ in range(60):
        await FallingEdge(dut.clk)
    assert tb.messages(0)[2:] == [ev0()[-1] + 2]
    # Mask: held, PENDING set; unmask: it leaves.
    await tb.vec_write(MOD_COUNT, 0, 0)
    await tb.vec_write(MOD_TIME, 0, 0)
    await tb.vec_write(PENDING, 0, 1)
    assert await tb.vec_read(PENDING, 0) == 0
    await tb.vec_write(CTRL, 0, 3)
    await tb.event(qp_error_event(rng))
    await tb.event(qp_error_event(rng))
    assert len(tb.messages(0)) == 3, "a masked vector sent a message"
    assert await tb.vec_read(PENDING, 0) == 1
    at = tb.cycle
    await tb.vec_write(CTRL, 0, 1)
    await tb.quiet()
    assert len(tb.messages(0)) == 4, "unmask: one message for the entries held"
    assert tb.messages(0)[-1] <= at + 4
    # Enable 0: nothing sent, PENDING still sets; write 1 clears it.
    await tb.vec_write(PENDING, 0, 1)
    await tb.vec_write(CTRL, 0, 0)
    await tb.event(qp_error_event(rng))
    assert len(tb.messages(0)) == 4
    assert await tb.vec_read(PENDING, 0) == 1
    await tb.vec_write(PENDING, 0, 1)
    assert await tb.vec_read(PENDING, 0) == 0
    await tb.vec_write(CTRL, 0, 1)
    await tb.quiet()
    assert len(tb.messages(0)) == 4, "enable: nothing was owed"
    tb.compare(buf + 0x2000, 16 << 5, "event ring")


@pytest.mark.parametrize("sim,width", [pytest.param("verilator", w, id=f"verilator-W{w}") for w in (64, 512)
                                       if hdlsim.selected("verilator")])
def test_rnic_cq(sim, width, oracle_path):
    hdlsim.run(
        test="rnic_cq",
        sim=sim,
        tag=f"W{width}",
        toplevel="rnic_cq_tb",
        test_module=__name__,
        verilog_sources=[hdlsim.REPO_ROOT / "tests" / "cq" / "rnic_cq_tb.v"] + [
            hdlsim.RTL_DIR / f for f in ("rnic_admin.v", "rnic_cq.v", "rnic_evq.v", "rnic_irq.v", "sdp_ram.v")],
        parameters=dict(PARAMS, DATA_W=width),
        extra_env={oracle.ENV_VAR: str(oracle_path)},
    )
