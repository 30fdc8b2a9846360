"""hw/rtl/rnic_sq.v, the SQ engine, between rnic_admin and rnic_tx
(tests/sq/sq_top.v), against the Go model (driver/model) through
cmd/rnic-oracle's sq_run op.

Each cocotb test builds a program, the steps a driver takes: admin
commands (as the mailbox takes them: the same eight words), host memory
writes (SQ entries, payload), SQ doorbells, and the peer's Read Responses.
The oracle runs the whole program through the model first and answers, per
step, the admin status, the segments (FPDUs) the model sent, its CQEs
(octets 0..30) and its events (octets 0..14). The bench then replays the
program on the RTL: admin commands through rnic_admin's command port (the
status must be the model's), memory writes into the bytearray the DMA
responders serve, doorbells as one-clock pulses, a Read Response as an
rr_done record (status 0). Before each step but a memory write the bench
waits until the RTL has produced everything the model produced up to
there (the model runs each step to its end inside the call), so both see
the same state at each doorbell. Compared, each in order: rnic_tx's FPDUs
per connection against the model's segments, octet for octet; the
completion records per CQ; the events (DMA_REFUSED is the DMA engine's,
not rnic_sq's: the responders' refusals are compared with the model's
DMA_REFUSED events instead: what, address, length).

The DMA read responders serve the port contract of brief-dev-ifaces.md
from host memory: random request acceptance, random latency and gaps
between beats, lane-0 aligned beats, a refusal (an address outside every
DMA_WINDOW the program declared) as one beat with err and keep 0.

Cases:
  opcodes       every opcode, lengths 0..~70000 across MULPDU boundaries,
                unaligned local and remote TOs, three QPs interleaved with
                markers and CRC in different combinations, Reads answered
                by the peer with Writes behind them (completion order)
  errors        each BAD_WQE cause (opcode, flags, reserved octets 2..3,
                20..23, 48..63, a Read with ORD 0, an Invalidate STag on a
                Write or Send, zero-length too), each LOCAL_ACCESS cause (MR
                index, key, PD, access, below and above the bounds, the
                payload read refused), each followed by an entry that
                completes FLUSHED; the QP recycled (QP_DRAIN, DESTROY_QP,
                CREATE_QP, QP_RTS) between them
  doorbells     DOORBELL_BAD (qpn beyond the QPs, a free QP, bits 31:16),
                RING_OVERRUN (the QP fails), a refused WQE fetch
  fence_ord     the ORD limit (a Read waits for a Read Response), a fenced
                entry waits, unsignalled entries, ring wrap
  throughput    back-to-back 64 KiB Writes: rnic_tx's output beats per clock
"""

from __future__ import annotations

import os
import random
from collections import defaultdict
import struct

import cocotb
import pytest
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

import hdlsim
import oracle
import protocol
import tbutil

CONN_W, STAG_AW, CQ_W, WIN_W = 2, 3, 2, 1
PARAMS = {"CONN_W": CONN_W, "STAG_AW": STAG_AW, "CQ_W": CQ_W, "VEC_W": 1, "WIN_W": WIN_W,
          "SQ_LOG2": 8, "RQ_LOG2": 8, "CQ_LOG2": 8, "PEND_LOG2": 3}
CONFIG = {"qps": 1 << CONN_W, "cqs": 1 << CQ_W, "stags": 1 << STAG_AW, "windows": 1 << WIN_W,
          "sq_log2": 8, "rq_log2": 8, "cq_log2": 8}
MEM_SIZE = 1 << 20

CREATE_CQ, DESTROY_CQ, CREATE_QP, QP_RTS, QP_DRAIN, DESTROY_QP, MR_WRITE, MR_INVALIDATE, EVENT_RING, DMA_WINDOW = range(1, 11)
WRITE, READ, SEND, SEND_INV, SEND_SE, SEND_SE_INV = range(6)
NOT_BOUND = 0xFFFF
EV_QP_ERROR = 1
EV_DMA_REFUSED = 7
LOCAL_READ, LOCAL_WRITE, REMOTE_READ, REMOTE_WRITE = 1, 2, 4, 8

# Host memory (offsets from the base): window 0 holds the rings, window 1
# the registered memory and QP 3's SQ (so that clearing window 1 refuses
# payload reads and QP 3's WQE fetches).
WIN0, WIN0_LEN = 0, 0x40000
WIN1, WIN1_LEN = 0x40000, 0xC0000
SQ_OFF = [0x0000, 0x1000, 0x2000, 0x40000]   # QP q's SQ ring (64 entries max, 4 KiB)
RQ_OFF = 0x8000                               # + 0x1000 q
CQ_OFF = 0x10000                              # + 0x2000 c (256 entries)
EVR_OFF, EXC_OFF = 0x20000, 0x21000
SRC_OFF, SRC_LEN = 0x41000, 0x80000           # MR 1: sources (local read)
SINK_OFF, SINK_LEN = 0xC1000, 0x20000         # MR 2: Read sinks (local and remote write)
SRC_TO, SINK_TO = 0x100000, 0x7000000
PD = 5


def cmd_args(*words):
    return list(words) + [0] * (8 - len(words))


class Prog:
    """A program for sq_run and for the replay."""

    def __init__(self, base: int):
        self.base = base
        self.steps: list[dict] = []
        self.nowait: set[int] = set()   # steps the replay does not wait before
        self.sq_log2 = {}

    def admin(self, op, *words):
        self.steps.append({"admin": [op] + cmd_args(*[w & 0xFFFFFFFF for w in words])})

    def mem(self, off, data: bytes):
        self.steps.append({"mem": {"addr": self.base + off, "data": bytes(data).hex()}})

    def db(self, qpn, value, wait=True):
        if not wait:
            self.nowait.add(len(self.steps))
        self.steps.append({"sqdb": {"qpn": qpn, "value": value}})

    def xfail(self, qpn):
        """Another engine's local fault on the QP (rnic_sq's xfail)."""
        self.steps.append({"xfail": {"qpn": qpn}})

    def read_resp(self, qpn, sink_stag, sink_to, n, bad=False):
        self.steps.append({"read_resp": {"qpn": qpn, "sink_stag": sink_stag, "sink_to": sink_to, "len": n,
                                         "bad": bad}})

    # --- commands ---
    def window(self, slot, off, n):
        a = self.base + off if n else 0
        self.admin(DMA_WINDOW, slot, a, a >> 32, n, 0)

    def mr(self, index, key, access, pd, base_to, n, off):
        a = self.base + off
        self.admin(MR_WRITE, index | key << 16 | access << 24, pd | NOT_BOUND << 16, base_to, base_to >> 32,
                   n, n >> 32, a, a >> 32)

    def create_qp(self, qpn, sq_log2, pd=PD):
        sq = self.base + SQ_OFF[qpn]
        rq = self.base + RQ_OFF + 0x1000 * qpn
        self.sq_log2[qpn] = sq_log2
        self.admin(CREATE_QP, qpn, pd, sq, sq >> 32, rq, rq >> 32, sq_log2 | 1 << 8, qpn | qpn << 16)

    def rts(self, qpn, mulpdu, flags, ord_=2, ird=1, tx_seq=1000, tx_mb=None):
        tx_mb = tx_seq - 40 if tx_mb is None else tx_mb
        self.admin(QP_RTS, qpn | ird << 16 | ord_ << 24, mulpdu | flags << 16, tx_mb, 9000 - 64, tx_seq, 9000, 1, 1)

    def recycle(self, qpn, sq_log2, mulpdu, flags, **kw):
        self.admin(QP_DRAIN, qpn)
        self.admin(DESTROY_QP, qpn)
        self.create_qp(qpn, sq_log2)
        self.rts(qpn, mulpdu, flags, **kw)

    def sqe(self, qpn, index, op, n=0, wr_id=0, lkey=0, lto=0, rkey=0, rto=0, inv=0, signalled=True,
            fence=False, patch=None):
        b = bytearray(64)
        b[0] = op
        b[1] = int(signalled) | int(fence) << 1
        struct.pack_into("<IQI", b, 4, n, wr_id, lkey)
        struct.pack_into("<QIIQ", b, 24, lto, rkey, inv, rto)
        if patch:
            patch(b)
        slot = index & ((1 << self.sq_log2[qpn]) - 1)
        self.mem(SQ_OFF[qpn] + 64 * slot, b)

    def setup(self, rng, qps=(0, 1, 2, 3), sq_log2=6, mulpdus=(1460, 512, 100, 300), flags=(0, 0xF, 4, 1)):
        """Windows, event ring, CQs, QPs in RTS, MRs 1 (sources) and 2
        (Read sinks), source memory filled at random."""
        self.window(0, WIN0, WIN0_LEN)
        self.window(1, WIN1, WIN1_LEN)
        evr, exc = self.base + EVR_OFF, self.base + EXC_OFF
        self.admin(EVENT_RING, evr, evr >> 32, 8 | 1 << 8 | 6 << 16, exc, exc >> 32)
        for c in range(4):
            r = self.base + CQ_OFF + 0x2000 * c
            self.admin(CREATE_CQ, c, r, r >> 32, 8, 0)
        for q in qps:
            self.create_qp(q, sq_log2)
            self.rts(q, mulpdus[q], flags[q], tx_seq=1000 + 77 * q)
        self.mr(1, 0x11, LOCAL_READ, PD, SRC_TO, SRC_LEN, SRC_OFF)
        self.mr(2, 0x22, LOCAL_WRITE | REMOTE_WRITE, PD, SINK_TO, SINK_LEN, SINK_OFF)
        self.mem(SRC_OFF, rng.randbytes(SRC_LEN))


# The throughput cases' figures (rnic_tx's FPDU beats per clock), written by
# the last one.
FIGURES: dict[str, float] = {}

SRC_STAG = 1 << 8 | 0x11
SINK_STAG = 2 << 8 | 0x22


class Responder:
    """A DMA read client port's server: requests queued, answered in order
    from host memory after a random latency, beats with random gaps."""

    def __init__(self, tb, prefix):
        self.tb, self.p = tb, prefix
        self.reqs = []          # (due clock, addr, len, what)
        self.beats = []         # the current response's beats: (data, keep, last, err)
        self.refusals = []
        self.offered = False    # the first beat is on the port

    def step_req(self, clk, accepted):
        dut = self.tb.dut
        if accepted:
            addr = getattr(dut, self.p + "_req_addr").value.integer
            n = getattr(dut, self.p + "_req_len").value.integer
            what = getattr(dut, self.p + "_req_what").value.integer
            self.reqs.append((clk + self.tb.rng.randint(2, 12), addr, n, what))

    def load(self, clk):
        if self.beats or not self.reqs or self.reqs[0][0] > clk:
            return
        _, addr, n, what = self.reqs.pop(0)
        tb = self.tb
        L = tb.L
        if not tb.allowed(addr, n):
            self.refusals.append((what, addr & ((1 << 56) - 1), n))
            self.beats = [(0, 0, 1, 1)]
            return
        off = addr - tb.base
        data = bytes(tb.mem[off:off + n])
        for i in range(0, n, L):
            chunk = data[i:i + L]
            keep = (1 << len(chunk)) - 1
            self.beats.append((int.from_bytes(chunk, "little"), keep, int(i + L >= n), 0))


class TB:
    def __init__(self, dut, rng_seed=None):
        self.dut = dut
        self.L = len(dut.wqe_rd_data) // 8
        self.rng = random.Random(rng_seed) if rng_seed is not None else random.Random(random.getrandbits(64))
        self.oracle = oracle.shared()
        self.mem = bytearray(MEM_SIZE)
        self.windows = {}
        self.frames = {q: [] for q in range(1 << CONN_W)}
        self.cur_frame = {q: bytearray() for q in range(1 << CONN_W)}
        self.cqes = {c: [] for c in range(1 << CQ_W)}
        self.events = []
        self.wqe = Responder(self, "wqe_rd")
        self.pay = Responder(self, "pay_rd")
        self.clk = 0
        self.errors = []
        self.stall = 0.2      # probability of each kind of back-pressure
        self.out_beats = 0
        self.first_out = self.last_out = None
        self.qerrs = defaultdict(int)   # qerr pulses per QP

    def allowed(self, addr, n):
        return any(a <= addr and addr + n <= a + ln for a, ln in self.windows.values() if ln)

    async def start(self):
        dut = self.dut
        await tbutil.clock_and_reset(dut, 10, low=(
            "cmd_wr", "sqdb_valid", "rr_done_valid", "xfail_valid", "wqe_rd_req_ready", "wqe_rd_valid", "pay_rd_req_ready",
            "pay_rd_valid", "m_axis_tready", "cq_ready", "ev_ready", "wqe_rd_err", "pay_rd_err", "wqe_rd_last",
            "pay_rd_last"))
        dut.cmd_op.value = 0
        dut.cmd_args.value = 0
        dut.sqdb_qpn.value = 0
        dut.sqdb_value.value = 0
        dut.rr_done_qpn.value = 0
        dut.rr_done_status.value = 0
        dut.rr_done_layer_etype.value = 0
        dut.rr_done_code.value = 0
        dut.xfail_qpn.value = 0
        self.monitor = protocol.Monitor(self.dut, "sq_top")
        cocotb.start_soon(self.loop())

    async def loop(self):
        """Every clock: drive the responders and sinks at the falling edge,
        then see (ReadOnly) which transfers the next rising edge takes.
        Signals are read and written through the simulator handles, and
        written only when they change (cocotb's value objects cost more
        than the bench's own work)."""
        dut = self.dut
        rng = self.rng
        wqe, pay = self.wqe, self.pay
        last = {}

        def rd(name):
            return getattr(dut, name)._handle.get_signal_val_binstr

        def wr(name):
            h = getattr(dut, name)._handle
            width = len(getattr(dut, name))

            def put(v):
                if last.get(name) != v:
                    last[name] = v
                    if width <= 32:
                        h.set_signal_val_int(0, v)
                    else:
                        h.set_signal_val_binstr(0, format(v, f"0{width}b"))
            return put

        ports = []
        for r in (wqe, pay):
            p = r.p
            ports.append((r, wr(p + "_req_ready"), wr(p + "_valid"), wr(p + "_data"), wr(p + "_keep"),
                          wr(p + "_last"), wr(p + "_err"), rd(p + "_req_valid"), rd(p + "_ready")))
        m_ready, cq_ready, ev_ready = wr("m_axis_tready"), wr("cq_ready"), wr("ev_ready")
        m_valid, m_user, m_keep, m_data, m_last = (rd("m_axis_tvalid"), rd("m_axis_tuser"), rd("m_axis_tkeep"),
                                                   rd("m_axis_tdata"), rd("m_axis_tlast"))
        cq_valid, cq_cqn, cq_entry = rd("cq_valid"), rd("cq_cqn"), rd("cq_entry")
        ev_valid, ev_entry = rd("ev_valid"), rd("ev_entry")
        errs = [(s, rd(s)) for s in ("ddp_err_valid", "mpa_err_valid", "dropped_ev")]
        qerr_valid, qerr_qpn = rd("qerr_valid"), rd("qerr_qpn")
        fe, ro = FallingEdge(dut.clk), ReadOnly()
        L = self.L
        while True:
            await fe
            self.clk += 1
            clk = self.clk
            stall = self.stall
            ready = {}
            for r, req_ready, valid, data, keep, lst, err, _, _ in ports:
                r.load(clk)
                ready[r.p] = int(rng.random() >= stall)
                req_ready(ready[r.p])
                if r.offered:
                    pass    # a beat offered and not taken stays
                elif r.beats and rng.random() >= stall:
                    d, k, lt, e = r.beats[0]
                    valid(1)
                    data(d)
                    keep(k)
                    lst(lt)
                    err(e)
                    r.offered = True
                else:
                    valid(0)
            mr = int(rng.random() >= stall)
            cr = int(rng.random() >= stall)
            er = int(rng.random() >= stall)
            m_ready(mr)
            cq_ready(cr)
            ev_ready(er)
            await ro
            for r, _, _, _, _, _, _, req_valid, rsp_ready in ports:
                if ready[r.p] and req_valid() == "1":
                    r.step_req(clk, True)
                if r.offered and rsp_ready() == "1":
                    r.beats.pop(0)
                    r.offered = False
            if mr and m_valid() == "1":
                q = int(m_user(), 2)
                n = bin(int(m_keep(), 2)).count("1")
                self.cur_frame[q] += int(m_data(), 2).to_bytes(L, "little")[:n]
                self.out_beats += 1
                if self.first_out is None:
                    self.first_out = clk
                self.last_out = clk
                if m_last() == "1":
                    self.frames[q].append(bytes(self.cur_frame[q]))
                    self.cur_frame[q] = bytearray()
            if cr and cq_valid() == "1":
                self.cqes[int(cq_cqn(), 2)].append(int(cq_entry(), 2).to_bytes(31, "little").hex())
            if er and ev_valid() == "1":
                self.events.append(int(ev_entry(), 2).to_bytes(15, "little").hex())
            for s, v in errs:
                if v() == "1":
                    self.errors.append((clk, s))
            if qerr_valid() == "1":
                self.qerrs[int(qerr_qpn(), 2)] += 1

    # --- the replay ---
    def counts(self):
        return ({q: len(f) for q, f in self.frames.items()}, {c: len(v) for c, v in self.cqes.items()},
                len(self.events))

    async def quiesce(self, want, limit=400000):
        for _ in range(limit):
            await RisingEdge(self.dut.clk)
            if self.counts() == want:
                break
        else:
            assert False, f"no quiescence: have {self.counts()}, want {want}"
        # A few more clocks: nothing beyond the model's.
        for _ in range(40):
            await RisingEdge(self.dut.clk)
        assert self.counts() == want, f"more than the model: have {self.counts()}, want {want}"
        assert not self.errors, f"rnic_tx or the event FIFO reported: {self.errors}"

    async def run(self, prog: Prog):
        res = self.oracle.request("sq_run", config=CONFIG, mem_size=MEM_SIZE, steps=prog.steps)
        assert res["mem_base"] == prog.base
        dut = self.dut
        want_frames = {q: [] for q in range(1 << CONN_W)}
        want_cqes = {c: [] for c in range(1 << CQ_W)}
        want_events = []
        want_refusals = []
        want_qerrs = defaultdict(int)   # QP_ERROR events of the model, the receive side's too
        hw_busy = False
        for i, (step, out) in enumerate(zip(prog.steps, res["steps"])):
            if out["events"]:
                dut._log.info("step %d %s: model events %s", i, {k: v for k, v in step.items() if k != "mem"},
                              out["events"])
            if "mem" in step:
                if hw_busy:
                    # A slot or buffer may still be read: wait for the
                    # RTL to finish what the model finished.
                    await self.quiesce(({q: len(f) for q, f in want_frames.items()},
                                        {c: len(v) for c, v in want_cqes.items()}, len(want_events)))
                    hw_busy = False
                m = step["mem"]
                off = m["addr"] - self.base
                data = bytes.fromhex(m["data"])
                self.mem[off:off + len(data)] = data
            else:
                want = ({q: len(f) for q, f in want_frames.items()}, {c: len(v) for c, v in want_cqes.items()},
                        len(want_events))
                if i not in prog.nowait:
                    await self.quiesce(want)
                await FallingEdge(dut.clk)
                if "admin" in step:
                    a = step["admin"]
                    dut.cmd_op.value = a[0]
                    dut.cmd_args.value = sum(w << (32 * i) for i, w in enumerate(a[1:]))
                    dut.cmd_wr.value = 1
                    await FallingEdge(dut.clk)
                    dut.cmd_wr.value = 0
                    while dut.busy.value == 1:
                        await FallingEdge(dut.clk)
                    assert dut.status_code.value.integer == out["status"], f"admin {a}: status"
                    if a[0] == DMA_WINDOW and out["status"] == 0:
                        self.windows[a[1]] = (a[2] | a[3] << 32, a[4] | a[5] << 32)
                elif "xfail" in step:
                    hw_busy = True
                    dut.xfail_qpn.value = step["xfail"]["qpn"]
                    dut.xfail_valid.value = 1
                    await FallingEdge(dut.clk)
                    dut.xfail_valid.value = 0
                elif "sqdb" in step:
                    hw_busy = True
                    dut.sqdb_qpn.value = step["sqdb"]["qpn"]
                    dut.sqdb_value.value = step["sqdb"]["value"]
                    dut.sqdb_valid.value = 1
                    await FallingEdge(dut.clk)
                    dut.sqdb_valid.value = 0
                else:
                    hw_busy = True
                    dut.rr_done_qpn.value = step["read_resp"]["qpn"]
                    st = le = code = 0
                    if step["read_resp"]["bad"]:
                        # The receive side's verdict, as the model's CQE
                        # of the Read has it (status, layer/etype, code);
                        # its Terminate and QP_ERROR are the receive
                        # side's, not rnic_sq's: not expected here.
                        bad = [c["entry"] for c in out["cqes"] if int(c["entry"][30:32], 16) in (4, 5)]
                        want_qerrs[step["read_resp"]["qpn"]] += 1
                        assert len(bad) == 1, out
                        st, le, code = int(bad[0][30:32], 16), int(bad[0][42:44], 16), int(bad[0][44:46], 16)
                        out = dict(out, segs=[], events=[e for e in out["events"] or [] if not e.startswith("01")])
                    dut.rr_done_status.value = st
                    dut.rr_done_layer_etype.value = le
                    dut.rr_done_code.value = code
                    dut.rr_done_valid.value = 1
                    # The edge takes the record when ready is high before
                    # it (sampled settled, ahead of the edge).
                    while True:
                        await ReadOnly()
                        taken = dut.rr_done_ready.value == 1
                        await RisingEdge(dut.clk)
                        if taken:
                            break
                    await FallingEdge(dut.clk)
                    dut.rr_done_valid.value = 0
            for s in out["segs"] or []:
                want_frames[s["qpn"]].append(bytes.fromhex(s["octets"]))
            for c in out["cqes"] or []:
                want_cqes[c["cqn"]].append(c["entry"])
            for e in out["events"] or []:
                if int(e[:2], 16) == EV_DMA_REFUSED:
                    b = bytes.fromhex(e)
                    want_refusals.append((b[1], int.from_bytes(b[8:15], "little"), int.from_bytes(b[4:8], "little")))
                else:
                    want_events.append(e)
                    if int(e[:2], 16) == EV_QP_ERROR:
                        want_qerrs[int.from_bytes(bytes.fromhex(e)[2:4], "little")] += 1
        want = ({q: len(f) for q, f in want_frames.items()}, {c: len(v) for c, v in want_cqes.items()},
                len(want_events))
        await self.quiesce(want)
        for q in want_frames:
            for i, (h, w) in enumerate(zip(self.frames[q], want_frames[q])):
                assert h == w, f"QP {q} FPDU {i}: RTL {h.hex()} model {w.hex()}"
        assert self.cqes == want_cqes
        assert self.events == want_events
        # qerr: one pulse each time a QP enters the error state (a QP_ERROR
        # event of the model's, the bad Read Responses' included).
        assert dict(self.qerrs) == dict(want_qerrs), f"qerr pulses {dict(self.qerrs)}, want {dict(want_qerrs)}"
        assert self.wqe.refusals + self.pay.refusals == want_refusals or \
            sorted(self.wqe.refusals + self.pay.refusals) == sorted(want_refusals)
        return res


async def new_tb(dut, bench=False):
    """A TB, reset; bench=True draws the traffic from tbutil's fixed bench
    seed, so that a figure is a function of the RTL and the bench alone."""
    tb = TB(dut, rng_seed=tbutil.BENCH_SEED if bench else None)
    probe = tb.oracle.request("sq_run", config=CONFIG, mem_size=MEM_SIZE, steps=[])
    tb.base = probe["mem_base"]
    await tb.start()
    return tb


@cocotb.test()
async def opcodes(dut):
    tb = await new_tb(dut)
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(rng)
    idx = {q: 0 for q in range(4)}
    wr_id = 0x1000
    lengths = [0, 1, 3, 7, 8, 9, 63, 64, 65, 99, 100, 101, 1442, 1460, 1461, 4096, 9000, 65536, 70000]
    if os.environ.get("SQ_QUICK"):
        lengths = lengths[:12]
    src_used = 0

    def post(q, op, n, signalled=True, fence=False):
        nonlocal wr_id, src_used
        wr_id += 1
        lto = SRC_TO + rng.randrange(0, SRC_LEN - n) if n else rng.randrange(1 << 40)
        if op == READ:
            lkey, lto = SINK_STAG, SINK_TO + rng.randrange(0, SINK_LEN - max(n, 1))
        else:
            lkey = SRC_STAG
        inv = rng.randrange(1, 1 << 32) if op in (SEND_INV, SEND_SE_INV) else 0
        p.sqe(q, idx[q], op, n, wr_id, lkey, lto, rng.randrange(1 << 32), rng.randrange(1 << 64), inv,
              signalled=signalled, fence=fence)
        idx[q] += 1
        return lkey, lto

    # Writes and Sends of every length on QPs 0..2, interleaved.
    for i, n in enumerate(lengths):
        for q in range(3):
            if n >= 9000 and q != i % 3:
                continue    # the long ones on one QP each (the bench's time)
            post(q, [WRITE, SEND, SEND_INV, SEND_SE, SEND_SE_INV][(i + q) % 5], n, signalled=(i + q) % 3 != 0)
        if i % 4 == 3:
            for q in range(3):
                p.db(q, idx[q])
    for q in range(3):
        p.db(q, idx[q])
    # Reads: a Read, a Write behind it (completes after it), the response.
    for q in range(3):
        lkey, lto = post(q, READ, 1000 + q)
        post(q, WRITE, 10)
        p.db(q, idx[q])
        p.read_resp(q, lkey, lto, 1000 + q)
    await tb.run(p)


@cocotb.test()
async def errors(dut):
    """Each BAD_WQE and LOCAL_ACCESS cause on QP 0, each followed by an
    entry that completes FLUSHED, the QP recycled between them; a fault
    behind an outstanding Read (QP 1) flushes the Read; then the payload
    read refused (window 1 cleared) and QP 3's WQE fetch refused; another
    engine's local fault (xfail) behind a Read."""
    tb = await new_tb(dut)
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(rng)
    p.mr(3, 0x33, LOCAL_READ | LOCAL_WRITE, 6, SRC_TO, SRC_LEN, SRC_OFF)     # another PD
    wr_id = 0x5000
    src = dict(lkey=SRC_STAG, lto=SRC_TO + 5)

    def patch(at, v):
        def f(b):
            b[at] = v
        return f

    cases = [
        dict(op=6, n=10, **src),
        dict(op=WRITE, n=10, patch=patch(1, 4), **src),
        dict(op=WRITE, n=10, patch=patch(1, 0x80), **src),
        dict(op=SEND, n=10, patch=patch(2, 1), **src),
        dict(op=SEND, n=10, patch=patch(3, 0x80), **src),
        dict(op=WRITE, n=10, patch=patch(20, 1), **src),
        dict(op=WRITE, n=10, patch=patch(23, 1), **src),
        dict(op=WRITE, n=10, patch=patch(48, 1), **src),
        dict(op=SEND_SE, n=10, patch=patch(63, 1), **src),
        dict(op=WRITE, n=10, inv=1, **src),
        dict(op=WRITE, n=0, inv=5),
        dict(op=SEND, n=33, inv=0x1234, **src),
        dict(op=SEND_SE, n=0, inv=0x1234),
        ("ord0", dict(op=READ, n=10, lkey=SINK_STAG, lto=SINK_TO)),
        dict(op=WRITE, n=10, lkey=9 << 8 | 0x11, lto=SRC_TO),          # MR index beyond the table
        dict(op=WRITE, n=10, lkey=5 << 8 | 0x11, lto=SRC_TO),          # an entry never written
        dict(op=WRITE, n=10, lkey=1 << 8 | 0x12, lto=SRC_TO),          # key
        dict(op=WRITE, n=10, lkey=3 << 8 | 0x33, lto=SRC_TO),          # PD
        dict(op=WRITE, n=10, lkey=SINK_STAG, lto=SINK_TO),             # no local read
        dict(op=READ, n=10, lkey=SRC_STAG, lto=SRC_TO),                # no local write
        dict(op=SEND, n=10, lkey=SRC_STAG, lto=SRC_TO - 1),            # below
        dict(op=SEND, n=10, lkey=SRC_STAG, lto=SRC_TO + SRC_LEN - 9),  # above
        dict(op=READ, n=16, lkey=SINK_STAG, lto=(1 << 64) - 8),        # TO + length wraps
    ]
    first = True
    for c in cases:
        ord_ = 2
        if isinstance(c, tuple):
            ord_, c = 0, c[1]
        if not first or ord_ != 2:
            p.recycle(0, 6, 1460, 0, ord_=ord_)
        first = False
        wr_id += 1
        p.sqe(0, 0, wr_id=wr_id, signalled=rng.random() < 0.5, **c)
        p.sqe(0, 1, WRITE, 20, wr_id + 1000, SRC_STAG, SRC_TO, 1, 2, signalled=False)
        p.db(0, 2)
    # A fault behind an outstanding Read: the Read completes FLUSHED.
    p.sqe(1, 0, READ, 50, 0x61, SINK_STAG, SINK_TO, 1, 2)
    p.sqe(1, 1, WRITE, 5, 0x62, SRC_STAG, SRC_TO, 1, 2, signalled=False)
    p.sqe(1, 2, 6, 5, 0x63)
    p.sqe(1, 3, SEND, 5, 0x64, SRC_STAG, SRC_TO)
    p.db(1, 4)
    # The Read Response after the error changes nothing on the SQ side.
    # Refusals: window 1 cleared, a payload read refused (then flushed
    # entries), QP 3's WQE fetch refused (twice: at each doorbell).
    p.recycle(0, 6, 1460, 0)
    p.window(1, 0, 0)
    p.sqe(0, 0, WRITE, 100, 0x71, SRC_STAG, SRC_TO, 1, 2)
    p.sqe(0, 1, SEND, 0, 0x72)
    p.db(0, 2)
    p.db(3, 1)
    p.db(3, 2)
    # Another engine's local fault (xfail: rnic_rq's or rnic_rresp's) behind
    # an outstanding Read: QP_ERROR, the Terminate, the Read FLUSHED, one
    # qerr; a second xfail on the QP in error does nothing; an entry after
    # it completes FLUSHED.
    p.recycle(1, 6, 1460, 0)
    p.sqe(1, 0, READ, 50, 0x81, SINK_STAG, SINK_TO, 1, 2)
    p.db(1, 1)
    p.xfail(1)
    p.xfail(1)
    p.sqe(1, 1, SEND, 5, 0x82, SRC_STAG, SRC_TO)
    p.db(1, 2)
    await tb.run(p)


@cocotb.test()
async def doorbells(dut):
    """DOORBELL_BAD: a qpn beyond the QPs (and the largest index), a free
    QP, bits 31:16 set; RING_OVERRUN on a QP in RTS (it fails: QP_ERROR and
    a Terminate), then its entries complete FLUSHED; a full ring (exactly
    its size ahead) is no overrun."""
    tb = await new_tb(dut)
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(rng, qps=(0, 1, 2))
    p.db(4, 1)
    p.db(4095, 1)
    p.db(3, 1)                      # QP 3 was never created
    p.db(0, 1 << 16 | 1)
    p.db(0, 0x80000000)
    p.recycle(1, 2, 512, 0xF)       # a ring of 4
    for i in range(4):
        p.sqe(1, i, SEND, 3 * i, 0x100 + i, SRC_STAG, SRC_TO + i, signalled=i % 2 == 0)
    p.db(1, 4)                      # exactly full: accepted
    p.db(1, 9)                      # 5 past ci (4): overrun
    p.sqe(1, 4, WRITE, 8, 0x200, SRC_STAG, SRC_TO)
    p.sqe(1, 5, WRITE, 8, 0x201, SRC_STAG, SRC_TO, signalled=False)
    p.db(1, 6)                      # flushed
    p.db(2, 5)                      # QP 2 (ring 64, ci 0): 5 is fine, but the slots are zero:
                                    # five zero entries, zero-length signalless Writes
    # A burst, a doorbell every other clock, good and bad mixed: the
    # doorbell stage takes each while the engine works.
    p.sqe(0, 0, WRITE, 40, 0x400, SRC_STAG, SRC_TO)
    p.sqe(2, 5, SEND, 40, 0x401, SRC_STAG, SRC_TO)
    p.db(6, 1)
    p.db(0, 1 << 17, wait=False)
    p.db(0, 1, wait=False)
    p.db(2, 6, wait=False)
    p.db(3, 2, wait=False)
    p.db(2, 0x10006, wait=False)
    await tb.run(p)


@cocotb.test()
async def fence_ord(dut):
    """The ORD: a second Read waits for the first one's response (ORD 1),
    and the entries behind it wait with it; a fenced Write waits for the
    Reads before it; unsignalled entries complete nothing but keep the
    order; QP_DRAIN flushes what is outstanding; ring wrap (a ring of 4
    reused many times)."""
    tb = await new_tb(dut)
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(rng, qps=(0, 1, 2))
    p.recycle(0, 3, 700, 4, ord_=1)
    e = [(READ, 30, 0x1, SINK_STAG, SINK_TO), (READ, 40, 0x2, SINK_STAG, SINK_TO + 100),
         (WRITE, 9, 0x3, SRC_STAG, SRC_TO), (SEND, 0, 0x4, 0, 0)]
    for i, (op, n, i_d, lk, lto) in enumerate(e):
        p.sqe(0, i, op, n, i_d, lk, lto, 5, 6)
    p.db(0, 4)
    p.read_resp(0, SINK_STAG, SINK_TO, 30)
    p.read_resp(0, SINK_STAG, SINK_TO + 100, 40)
    # QP_DRAIN with a Read outstanding and a Write done behind it: the Read
    # completes FLUSHED, then the Write.
    p.sqe(0, 4, READ, 8, 0x5, SINK_STAG, SINK_TO + 300, 5, 6)
    p.sqe(0, 5, WRITE, 8, 0x6, SRC_STAG, SRC_TO, 5, 6)
    p.db(0, 6)
    p.admin(QP_DRAIN, 0)
    # A fence: the Write waits for the Read on ORD 2.
    p.recycle(2, 4, 1000, 0xF, ord_=2)
    p.sqe(2, 0, READ, 64, 0x11, SINK_STAG, SINK_TO, 1, 2, signalled=False)
    p.sqe(2, 1, WRITE, 64, 0x12, SRC_STAG, SRC_TO + 3, 1, 2, fence=True)
    p.sqe(2, 2, SEND_SE, 64, 0x13, SRC_STAG, SRC_TO + 4, signalled=False)
    p.db(2, 3)
    p.read_resp(2, SINK_STAG, SINK_TO, 64)
    # A Read Response the receive side finds in error (rr_done with the
    # status and the Terminate's octets): the Read takes them, a later
    # entry completes FLUSHED.
    p.sqe(2, 3, READ, 16, 0x14, SINK_STAG, SINK_TO + 500, 1, 2)
    p.sqe(2, 4, WRITE, 16, 0x15, SRC_STAG, SRC_TO, 1, 2, signalled=False)
    p.sqe(2, 5, READ, 16, 0x16, SINK_STAG, SINK_TO + 600, 1, 2)
    p.db(2, 6)
    p.read_resp(2, SINK_STAG, SINK_TO + 500, 16, bad=True)
    p.sqe(2, 6, SEND, 16, 0x17, SRC_STAG, SRC_TO, signalled=False)
    p.db(2, 7)
    # Ring wrap: QP 1 with a ring of 4, 5 rounds of 3 entries.
    p.recycle(1, 2, 200, 1)
    k = 0
    for r in range(5):
        for j in range(3):
            n = rng.randrange(0, 700)
            p.sqe(1, k, rng.choice([WRITE, SEND, SEND_SE]), n, 0x300 + k, SRC_STAG, SRC_TO + rng.randrange(1000),
                  rng.randrange(1 << 32), rng.randrange(1 << 64), signalled=rng.random() < 0.7)
            k += 1
        p.db(1, k)
    await tb.run(p)


@cocotb.test()
async def throughput(dut):
    """Back-to-back 64 KiB Writes on two QPs (no back-pressure, DMA latency
    2..12 clocks): rnic_tx's output beats per clock from the first beat to
    the last, compared with the model as every case."""
    tb = await new_tb(dut, bench=True)
    tb.stall = 0.0
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(rng, qps=(0, 1), mulpdus=(8192, 9000, 100, 100), flags=(4, 5, 0, 0))
    n = 1 << 16
    for i in range(2):
        for q in (0, 1):
            p.sqe(q, i, WRITE, n, 0x900 + i, SRC_STAG, SRC_TO + 4096 * i + q, 1, 2)
    p.db(0, 2)
    p.db(1, 2, wait=False)
    await tb.run(p)
    # The setup's admin commands send nothing: every beat is the Writes'.
    span = tb.last_out - tb.first_out + 1
    bpc = tb.out_beats / span
    dut._log.info("throughput: %d FPDU beats in %d clocks: %.3f beats per clock", tb.out_beats, span, bpc)
    FIGURES["65536.beats_per_clock"] = bpc


@cocotb.test()
async def throughput_small(dut):
    """Back-to-back 256-octet Writes on one QP (no back-pressure): what the
    per-entry work costs between payloads. Writes the figures of both
    throughput cases to build/bench/rnic_sq-W64.json."""
    tb = await new_tb(dut, bench=True)
    tb.stall = 0.0
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(rng, qps=(0,), mulpdus=(8192, 100, 100, 100), flags=(4, 0, 0, 0))
    for i in range(40):
        p.sqe(0, i, WRITE, 256, 0xA00 + i, SRC_STAG, SRC_TO + 300 * i, 1, 2, signalled=i % 8 == 7)
    p.db(0, 40)
    await tb.run(p)
    span = tb.last_out - tb.first_out + 1
    dut._log.info("throughput (256-octet Writes): %d FPDU beats in %d clocks: %.3f beats per clock",
                  tb.out_beats, span, tb.out_beats / span)
    FIGURES["256.beats_per_clock"] = tb.out_beats / span
    hdlsim.write_bench("rnic_sq", tb.L * 8, beats_per_clock=FIGURES.get("65536.beats_per_clock"),
                       latency_clocks=None, higher=FIGURES)


# Verilator only, W=64 (make test's budget; the block has no VHDL twin
# yet). RNIC_SQ_WIDTHS=64,128,256,512 runs other widths too (by hand).
WIDTHS = [int(w) for w in os.environ.get("RNIC_SQ_WIDTHS", "64").split(",")]


@pytest.mark.parametrize("sim,width", [pytest.param(p.values[0], w, id=f"{p.values[0]}-W{w}")
                                       for p in hdlsim.simulators(langs=("verilog",))
                                       if p.values[0] == "verilator" for w in WIDTHS])
def test_rnic_sq(sim, width, oracle_path):
    rtl = hdlsim.RTL_DIR
    hdlsim.run(
        test="rnic_sq",
        sim=sim,
        tag=f"W{width}",
        toplevel="sq_top",
        test_module=__name__,
        verilog_sources=[hdlsim.REPO_ROOT / "tests" / "sq" / "sq_top.v"] +
                        [rtl / f for f in ("rnic_sq.v", "rnic_admin.v", "rnic_tx.v", "ddp_tx.v", "mpa_tx.v",
                                           "mpa_tx_frame.v", "mpa_tx_mark.v", "tuf_tx.v", "sdp_ram.v", "crc32c.v")],
        parameters=dict(PARAMS, DATA_W=width),
        extra_env={oracle.ENV_VAR: str(oracle_path)},
    )
