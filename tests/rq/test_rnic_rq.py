"""hw/rtl/rnic_rq.v, the RQ engine, behind rnic_admin (tests/rq/rq_top.v),
against the Go model (driver/model) through cmd/rnic-oracle's rq_run op.

Each cocotb test builds a program, the steps a driver and its peer take:
admin commands (the mailbox's eight words), host memory writes (RQ
entries), RQ doorbells, and the peer's Sends. The oracle runs the whole
program through the model first and answers, per step, the admin status,
the RQ entries the model posted to its sink (qpn, queue, device address,
length, WR ID), its CQEs (octets 0..30) and its events (octets 0..14).

The bench then replays the program on the RTL, playing the blocks around
rnic_rq: the admin port as the driver; the DMA read port as rnic_dma_rd
(host memory in a bytearray, random acceptance, latency and gaps, a refusal
for an address outside every DMA_WINDOW the program declared: one beat with
err and keep 0); ddp_rx (post_ready back-pressure; for each Send the model
completed, the rcpl record a real ddp_rx sends: the QP's oldest buffer the
RTL posted, the Send's length, opcode and Invalidate STag; for a Send the
model found in error, the lead's qerr pulse with the model's status,
layer/etype and code); the lead (each fail_* answered with qerr FLUSHED, as
the model's fail(local) flushes every receive); the CQ and event writers
(random ready). The shared admin read ports' gnt stalls at random. Before
each step but a memory write the bench waits until the RTL has produced
what the model produced up to there. Compared, in order: the posts per QP,
the completion records per CQ, the events (DOORBELL_BAD, RING_OVERRUN);
the model's QP_ERROR events of local faults against fail_* records (qpn,
local, layer/etype and code 0), its DMA_REFUSED events (what 2) against
the responder's refusals (what 4, a receive buffer outside every window:
against rnic_rq's own events), and each Invalidate's inv_* pulse (the MR index).

The RTL posts at most 2^POST_DEPTH_LOG2 buffers a QP; the model posts them
all at the doorbell: the bench waits, at each step, for the posts the RTL
can have made (the Sends completed plus the depth).

Cases:
  good       three QPs interleaved, buffers of random unaligned TOs and
             lengths (0 too), every Send opcode (SE, Invalidate), ring wrap
             (a ring of 4 used 6 times), 40 entries behind one doorbell on
             a QP (fetching stops at 16 posted and resumes per Send)
  errors     BAD_WQE (reserved octets 24, 31), each LOCAL_ACCESS cause (MR
             index beyond the table, never written, key, PD, no local
             write, below and above the bounds, TO + length wrapping; a
             buffer outside every DMA window and one across a window's
             end: DMA_REFUSED placement and LOCAL_ACCESS), each
             followed by a good entry (some ending exactly at the MR's end)
             and a Send into it; a Send longer than
             its buffer (qerr PROTOCOL with the Terminate's octets on the
             oldest, the rest FLUSHED, later entries FLUSHED); QP_DRAIN with
             buffers posted; a fetch refused (window cleared: fail_*, the
             flush, the entry fetched again and refused again)
  doorbells  DOORBELL_BAD (qpn beyond the QPs, 4095, a QP never created,
             bits 31:16), RING_OVERRUN on a QP in RTS (fail_*, its buffers
             flushed), a full ring accepted, a burst of doorbells every
             other clock and one of eight in consecutive clocks
"""

from __future__ import annotations

import os
import random
import struct

import cocotb
import pytest
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

import hdlsim
import oracle
import protocol
import tbutil

CONN_W, STAG_AW, CQ_W, WIN_W, DEPTH_LOG2 = 2, 3, 2, 1, 4
DEPTH = 1 << DEPTH_LOG2
PARAMS = {"CONN_W": CONN_W, "STAG_AW": STAG_AW, "CQ_W": CQ_W, "VEC_W": 1, "WIN_W": WIN_W,
          "SQ_LOG2": 8, "RQ_LOG2": 8, "CQ_LOG2": 8, "POST_DEPTH_LOG2": DEPTH_LOG2}
CONFIG = {"qps": 1 << CONN_W, "cqs": 1 << CQ_W, "stags": 1 << STAG_AW, "windows": 1 << WIN_W,
          "sq_log2": 8, "rq_log2": 8, "cq_log2": 8}
MEM_SIZE = 1 << 20

CREATE_CQ, DESTROY_CQ, CREATE_QP, QP_RTS, QP_DRAIN, DESTROY_QP, MR_WRITE, MR_INVALIDATE, EVENT_RING, DMA_WINDOW = range(1, 11)
SEND, SEND_INV, SEND_SE, SEND_SE_INV = 3, 4, 5, 6      # RFC 5040 4.2
NOT_BOUND = 0xFFFF
EV_QP_ERROR, EV_DMA_REFUSED = 1, 7
FOR_PLACEMENT = 4                                 # DMA_REFUSED's what
FLUSHED = 1
LOCAL_READ, LOCAL_WRITE, REMOTE_READ, REMOTE_WRITE = 1, 2, 4, 8

# Host memory (offsets from the base): window 0 the rings, window 1 the
# buffers and QP 3's RQ (clearing window 1 refuses its fetches).
WIN0, WIN0_LEN = 0, 0x40000
WIN1, WIN1_LEN = 0x40000, 0xC0000
SQ_OFF = 0x0000                                   # + 0x1000 q
RQ_OFF = [0x8000, 0x9000, 0xA000, 0x40000]        # QP q's RQ ring (128 entries max)
CQ_OFF = 0x10000                                  # + 0x2000 c
EVR_OFF, EXC_OFF = 0x20000, 0x21000
BUF_OFF, BUF_LEN, BUF_TO = 0x41000, 0x80000, 0x100000   # MR 1: receive buffers
INV_OFF = 0xC2000                                 # MR 4, 5: the Invalidates' targets
MR7_OFF = 0xC7000                                 # MR 7 (errors): 0x2000 octets
PD = 5
BUF_STAG = 1 << 8 | 0x11
INV_STAGS = (4 << 8 | 0x44, 5 << 8 | 0x55)


def cmd_args(*words):
    return list(words) + [0] * (8 - len(words))


class Prog:
    """A program for rq_run and for the replay."""

    def __init__(self, base: int):
        self.base = base
        self.steps: list[dict] = []
        self.nowait: set[int] = set()   # steps the replay does not wait before
        self.burst: set[int] = set()    # doorbells in the clock after the one before
        self.rq_log2 = {}

    def admin(self, op, *words):
        self.steps.append({"admin": [op] + cmd_args(*[w & 0xFFFFFFFF for w in words])})

    def mem(self, off, data: bytes):
        self.steps.append({"mem": {"addr": self.base + off, "data": bytes(data).hex()}})

    def db(self, qpn, value, wait=True, burst=False):
        if burst:
            self.burst.add(len(self.steps))
        elif not wait:
            self.nowait.add(len(self.steps))
        self.steps.append({"rqdb": {"qpn": qpn, "value": value}})

    def send(self, qpn, op, n, inv=0):
        self.steps.append({"send": {"qpn": qpn, "op": op, "len": n, "inv": inv}})

    def window(self, slot, off, n):
        a = self.base + off if n else 0
        self.admin(DMA_WINDOW, slot, a, a >> 32, n, 0)

    def mr(self, index, key, access, pd, base_to, n, off):
        a = self.base + off
        self.admin(MR_WRITE, index | key << 16 | access << 24, pd | NOT_BOUND << 16, base_to, base_to >> 32,
                   n, n >> 32, a, a >> 32)

    def inv_mrs(self):
        for i, s in enumerate(INV_STAGS):
            self.mr(s >> 8, s & 0xFF, REMOTE_WRITE | LOCAL_WRITE, PD, 0, 0x100, INV_OFF + 0x1000 * i)

    def create_qp(self, qpn, rq_log2, pd=PD):
        sq = self.base + SQ_OFF + 0x1000 * qpn
        rq = self.base + RQ_OFF[qpn]
        self.rq_log2[qpn] = rq_log2
        self.admin(CREATE_QP, qpn, pd, sq, sq >> 32, rq, rq >> 32, 2 | rq_log2 << 8, qpn | (3 - qpn) << 16)

    def rts(self, qpn, mulpdu=1000, flags=0, rx_seq=9000, msn=1):
        self.admin(QP_RTS, qpn | 1 << 16 | 1 << 24, mulpdu | flags << 16, 100, rx_seq - 64, 164, rx_seq, msn, 1)

    def recycle(self, qpn, rq_log2, **kw):
        self.admin(QP_DRAIN, qpn)
        self.admin(DESTROY_QP, qpn)
        self.create_qp(qpn, rq_log2)
        self.rts(qpn, **kw)

    def rqe(self, qpn, index, wr_id, lkey=0, n=0, lto=0, patch=None):
        b = bytearray(32)
        struct.pack_into("<QIIQ", b, 0, wr_id, lkey, n, lto)
        if patch:
            patch(b)
        slot = index & ((1 << self.rq_log2[qpn]) - 1)
        self.mem(RQ_OFF[qpn] + 32 * slot, b)

    def setup(self, qps=(0, 1, 2, 3), rq_log2=7, flags=(0, 0xF, 4, 1)):
        """Windows, event ring, CQs, QPs in RTS, MR 1 (receive buffers),
        MRs 4 and 5 (Invalidate targets)."""
        self.window(0, WIN0, WIN0_LEN)
        self.window(1, WIN1, WIN1_LEN)
        evr, exc = self.base + EVR_OFF, self.base + EXC_OFF
        self.admin(EVENT_RING, evr, evr >> 32, 8 | 1 << 8 | 6 << 16, exc, exc >> 32)
        for c in range(4):
            r = self.base + CQ_OFF + 0x2000 * c
            self.admin(CREATE_CQ, c, r, r >> 32, 8, 0)
        for q in qps:
            self.create_qp(q, rq_log2)
            self.rts(q, mulpdu=[1460, 512, 100, 300][q], flags=flags[q], rx_seq=9000 + 33 * q, msn=1 + q)
        self.mr(1, 0x11, LOCAL_WRITE, PD, BUF_TO, BUF_LEN, BUF_OFF)
        self.inv_mrs()


class Responder:
    """The DMA read client port's server: requests queued, answered in
    order from host memory after a random latency, beats with random gaps."""

    def __init__(self, tb, prefix):
        self.tb, self.p = tb, prefix
        self.reqs = []
        self.beats = []
        self.refusals = []
        self.offered = False

    def take_req(self, clk):
        dut = self.tb.dut
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
            self.beats.append((int.from_bytes(chunk, "little"), (1 << len(chunk)) - 1, int(i + L >= n), 0))


class TB:
    def __init__(self, dut, rng_seed=None):
        self.dut = dut
        self.L = len(dut.wqe_rd_data) // 8
        self.rng = random.Random(rng_seed) if rng_seed is not None else random.Random(random.getrandbits(64))
        self.oracle = oracle.shared()
        self.mem = bytearray(MEM_SIZE)
        self.windows = {}
        self.posts = {q: [] for q in range(1 << CONN_W)}      # (qn, addr, len, id)
        self.posted = {q: [] for q in range(1 << CONN_W)}     # ids posted and not completed (ddp_rx's ring)
        self.cqes = {c: [] for c in range(1 << CQ_W)}
        self.events = []
        self.fails = []
        self.invs = []
        self.qerr_q = []        # (qpn, status, layer/etype, code) for the qerr driver
        self.wqe = Responder(self, "wqe_rd")
        self.clk = 0
        self.errors = []
        self.stall = 0.2
        self.at_fe = False      # the replay is at a falling edge (a doorbell burst)

    def allowed(self, addr, n):
        return any(a <= addr and addr + n <= a + ln for a, ln in self.windows.values() if ln)

    async def start(self):
        dut = self.dut
        await tbutil.clock_and_reset(dut, 10, low=(
            "cmd_wr", "rqdb_valid", "rcpl_valid", "qerr_valid", "wqe_rd_req_ready", "wqe_rd_valid", "post_ready",
            "fail_ready", "cq_ready", "ev_ready", "wqe_rd_err", "wqe_rd_last", "qp_stall", "mr_stall"))
        for s in ("cmd_op", "cmd_args", "rqdb_qpn", "rqdb_value", "rcpl_conn", "rcpl_opcode", "rcpl_msn", "rcpl_len",
                  "rcpl_id", "rcpl_inv_stag", "qerr_qpn", "qerr_status", "qerr_layer_etype", "qerr_code",
                  "wqe_rd_data", "wqe_rd_keep"):
            getattr(dut, s).value = 0
        self.monitor = protocol.Monitor(self.dut, "rq_top")
        cocotb.start_soon(self.loop())

    async def loop(self):
        """Every clock: drive the responder, the sinks, the stalls and any
        qerr pulse at the falling edge, then see (ReadOnly) which transfers
        the next rising edge takes."""
        dut = self.dut
        rng = self.rng
        wqe = self.wqe
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

        req_ready, valid, data, keep, lst, err = (wr("wqe_rd_req_ready"), wr("wqe_rd_valid"), wr("wqe_rd_data"),
                                                  wr("wqe_rd_keep"), wr("wqe_rd_last"), wr("wqe_rd_err"))
        req_valid, rsp_ready = rd("wqe_rd_req_valid"), rd("wqe_rd_ready")
        sinks = {n: wr(n) for n in ("post_ready", "cq_ready", "ev_ready", "fail_ready", "qp_stall", "mr_stall")}
        qerr = {n: wr("qerr_" + n) for n in ("valid", "qpn", "status", "layer_etype", "code")}
        post_valid, post_conn, post_qn, post_addr, post_len, post_id = (
            rd("post_valid"), rd("post_conn"), rd("post_qn"), rd("post_addr"), rd("post_len"), rd("post_id"))
        cq_valid, cq_cqn, cq_entry = rd("cq_valid"), rd("cq_cqn"), rd("cq_entry")
        ev_valid, ev_entry = rd("ev_valid"), rd("ev_entry")
        fail_valid, fail_qpn, fail_local, fail_le, fail_code = (
            rd("fail_valid"), rd("fail_qpn"), rd("fail_local"), rd("fail_layer_etype"), rd("fail_code"))
        inv_valid, inv_index = rd("inv_valid"), rd("inv_index")
        dropped = rd("dropped_db")
        hold = rd("rx_hold")
        fe, ro = FallingEdge(dut.clk), ReadOnly()
        qerr_due = None
        fail_prev = False
        while True:
            await fe
            self.clk += 1
            clk = self.clk
            stall = self.stall
            wqe.load(clk)
            rr = int(rng.random() >= stall)
            req_ready(rr)
            if not wqe.offered:
                if wqe.beats and rng.random() >= stall:
                    d, k, lt, e = wqe.beats[0]
                    valid(1)
                    data(d)
                    keep(k)
                    lst(lt)
                    err(e)
                    wqe.offered = True
                else:
                    valid(0)
            ready = {n: int(rng.random() >= stall) for n in ("post_ready", "cq_ready", "ev_ready", "fail_ready")}
            # A fail_* record is stalled in its first clock (there are few:
            # each must show it is held until taken).
            fv = fail_valid() == "1"
            if fv and not fail_prev:
                ready["fail_ready"] = 0
            fail_prev = fv
            for n, v in ready.items():
                sinks[n](v)
            sinks["qp_stall"](int(rng.random() < stall))
            sinks["mr_stall"](int(rng.random() < stall))
            # The lead's qerr pulses, a few clocks after each is queued.
            qerr["valid"](0)
            if self.qerr_q:
                if qerr_due is None:
                    qerr_due = clk + rng.randint(1, 6)
                elif clk >= qerr_due:
                    q, s, le, code = self.qerr_q.pop(0)
                    qerr["valid"](1)
                    qerr["qpn"](q)
                    qerr["status"](s)
                    qerr["layer_etype"](le)
                    qerr["code"](code)
                    self.posted[q] = []     # the flush completes them all
                    qerr_due = None
            await ro
            if rr and req_valid() == "1":
                wqe.take_req(clk)
            if wqe.offered and rsp_ready() == "1":
                wqe.beats.pop(0)
                wqe.offered = False
            if ready["post_ready"] and post_valid() == "1":
                q = int(post_conn(), 2)
                i_d = int(post_id(), 2)
                # rnic_dev holds the QP's segments until its post is in
                # ddp_rx: the hold covers the post's own clock.
                if hold()[-1 - q] != "1":
                    self.errors.append((clk, f"QP {q}: post of {i_d:#x} without rx_hold"))
                self.posts[q].append((int(post_qn(), 2), int(post_addr(), 2), int(post_len(), 2), i_d))
                self.posted[q].append(i_d)
                if len(self.posted[q]) > DEPTH:
                    self.errors.append((clk, f"QP {q}: more than {DEPTH} buffers posted"))
            if ready["cq_ready"] and cq_valid() == "1":
                self.cqes[int(cq_cqn(), 2)].append(int(cq_entry(), 2).to_bytes(31, "little").hex())
            if ready["ev_ready"] and ev_valid() == "1":
                self.events.append(int(ev_entry(), 2).to_bytes(15, "little").hex())
            if ready["fail_ready"] and fail_valid() == "1":
                q = int(fail_qpn(), 2)
                self.fails.append((q, int(fail_local(), 2), int(fail_le(), 2), int(fail_code(), 2)))
                self.qerr_q.append((q, FLUSHED, 0, 0))
            if inv_valid() == "1":
                self.invs.append(int(inv_index(), 2))
            if dropped() == "1":
                self.errors.append((clk, "dropped_db"))

    # --- the replay ---
    def counts(self):
        return ({q: len(v) for q, v in self.posts.items()}, {c: len(v) for c, v in self.cqes.items()},
                len(self.events), len(self.fails), len(self.invs))

    async def quiesce(self, want, limit=200000):
        for _ in range(limit):
            await RisingEdge(self.dut.clk)
            if self.counts() == want and not self.qerr_q:
                break
        else:
            assert False, f"no quiescence: have {self.counts()}, want {want}"
        for _ in range(40):
            await RisingEdge(self.dut.clk)
        assert self.counts() == want, f"more than the model: have {self.counts()}, want {want}"
        assert not self.errors, f"rnic_rq reported: {self.errors}"
        # Nothing left to fetch: no QP's segments may wait at rnic_dev's
        # network input (a hold now would stall the receive side for good).
        hold = self.dut.rx_hold.value.binstr
        assert "1" not in hold, f"rx_hold {hold} with every entry fetched"

    async def pulse(self, names: dict, hold=False):
        """Drive names for one clock; hold: the next step drives its own
        pulse in the next clock (valid stays high: back to back)."""
        dut = self.dut
        if not self.at_fe:
            await FallingEdge(dut.clk)
        for n, v in names.items():
            getattr(dut, n).value = v
        await FallingEdge(dut.clk)
        self.at_fe = hold
        if not hold:
            for n in names:
                if n.endswith("valid"):
                    getattr(dut, n).value = 0

    async def run(self, prog: Prog):
        res = self.oracle.request("rq_run", config=CONFIG, mem_size=MEM_SIZE, steps=prog.steps)
        assert res["mem_base"] == prog.base
        dut = self.dut
        nq = 1 << CONN_W
        want_posts = {q: [] for q in range(nq)}
        done = {q: 0 for q in range(nq)}          # the model's posts completed (Sends, flushes)
        want_cqes = {c: [] for c in range(1 << CQ_W)}
        want_events, want_fails, want_invs, want_refusals = [], [], [], []

        def want():
            return ({q: min(len(want_posts[q]), done[q] + DEPTH) for q in range(nq)},
                    {c: len(v) for c, v in want_cqes.items()}, len(want_events), len(want_fails), len(want_invs))

        hw_busy = False
        for i, (step, out) in enumerate(zip(prog.steps, res["steps"])):
            events = out["events"] or []
            if events:
                dut._log.info("step %d %s: model events %s", i, {k: v for k, v in step.items() if k != "mem"},
                              events)
            if "mem" in step:
                if hw_busy:
                    await self.quiesce(want())
                    hw_busy = False
                m = step["mem"]
                off = m["addr"] - self.base
                data = bytes.fromhex(m["data"])
                self.mem[off:off + len(data)] = data
            else:
                if i not in prog.nowait and i not in prog.burst:
                    await self.quiesce(want())
                hw_busy = True
                if "admin" in step:
                    a = step["admin"]
                    await FallingEdge(dut.clk)
                    dut.cmd_op.value = a[0]
                    dut.cmd_args.value = sum(w << (32 * k) for k, w in enumerate(a[1:]))
                    dut.cmd_wr.value = 1
                    await FallingEdge(dut.clk)
                    dut.cmd_wr.value = 0
                    while dut.busy.value == 1:
                        await FallingEdge(dut.clk)
                    assert dut.status_code.value.integer == out["status"], f"admin {a}: status"
                    if out["status"] == 0:
                        if a[0] == DMA_WINDOW:
                            self.windows[a[1]] = (a[2] | a[3] << 32, a[4] | a[5] << 32)
                        if a[0] in (QP_DRAIN, CREATE_QP):
                            q = a[1]
                            done[q] = len(want_posts[q])
                            self.posted[q] = []
                elif "rqdb" in step:
                    nxt = prog.steps[i + 1] if i + 1 < len(prog.steps) else {}
                    await self.pulse({"rqdb_qpn": step["rqdb"]["qpn"], "rqdb_value": step["rqdb"]["value"],
                                      "rqdb_valid": 1}, hold="rqdb" in nxt and i + 1 in prog.burst)
                else:
                    s = step["send"]
                    q = s["qpn"]
                    err_ev = [e for e in events if int(e[:2], 16) == EV_QP_ERROR]
                    if err_ev:
                        # The receive side found the Send in error: the
                        # lead's qerr with the model's verdict (its
                        # Terminate and QP_ERROR are not rnic_rq's).
                        b = bytes.fromhex(err_ev[0])
                        st = 5
                        for c in out["cqes"] or []:
                            if int(c["entry"][30:32], 16) not in (0, FLUSHED):
                                st = int(c["entry"][30:32], 16)
                        self.qerr_q.append((q, st, b[1], int.from_bytes(b[4:8], "little")))
                        done[q] = len(want_posts[q])
                        events = [e for e in events if e is not err_ev[0]]
                    else:
                        assert self.posted[q], f"step {i}: a Send on QP {q} with no buffer posted by the RTL"
                        i_d = self.posted[q].pop(0)
                        done[q] += 1
                        inv = s["inv"] if s["op"] in (SEND_INV, SEND_SE_INV) else 0
                        if inv:
                            want_invs.append(inv >> 8)
                        await FallingEdge(dut.clk)
                        dut.rcpl_conn.value = q
                        dut.rcpl_opcode.value = s["op"]
                        dut.rcpl_msn.value = self.rng.randrange(1 << 32)
                        dut.rcpl_len.value = s["len"]
                        dut.rcpl_id.value = i_d
                        dut.rcpl_inv_stag.value = inv
                        dut.rcpl_valid.value = 1
                        while True:
                            await RisingEdge(dut.clk)
                            if dut.rcpl_ready.value == 1:
                                break
                        await FallingEdge(dut.clk)
                        dut.rcpl_valid.value = 0
            for ps in out["posts"] or []:
                want_posts[ps["qpn"]].append((ps["qn"], ps["addr"], ps["len"], ps["id"]))
            for c in out["cqes"] or []:
                want_cqes[c["cqn"]].append(c["entry"])
            for e in events:
                t = int(e[:2], 16)
                b = bytes.fromhex(e)
                if t == EV_DMA_REFUSED and b[1] != FOR_PLACEMENT:
                    want_refusals.append((b[1], int.from_bytes(b[8:15], "little"), int.from_bytes(b[4:8], "little")))
                elif t == EV_QP_ERROR:
                    # fail(local): Terminate Local Catastrophic (0, 0).
                    want_fails.append((int.from_bytes(b[2:4], "little"), 1, b[1], int.from_bytes(b[4:8], "little")))
                else:
                    want_events.append(e)
        await self.quiesce(want())
        dut._log.info("compared: %d posts, %d CQEs, %d events, %d fails, %d invalidations, %d refusals",
                      sum(map(len, want_posts.values())), sum(map(len, want_cqes.values())), len(want_events),
                      len(want_fails), len(want_invs), len(want_refusals))
        assert self.posts == want_posts
        assert self.cqes == want_cqes
        assert self.events == want_events
        assert self.fails == want_fails
        assert self.invs == want_invs
        assert sorted(self.wqe.refusals) == sorted(want_refusals)
        return res


async def new_tb(dut):
    tb = TB(dut)
    probe = tb.oracle.request("rq_run", config=CONFIG, mem_size=MEM_SIZE, steps=[])
    tb.base = probe["mem_base"]
    await tb.start()
    return tb


@cocotb.test()
async def good(dut):
    tb = await new_tb(dut)
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(qps=(0, 1, 2))
    p.recycle(2, 2, mulpdu=100, flags=0xF)     # a ring of 4
    idx = {q: 0 for q in range(3)}
    bufs = {q: [] for q in range(3)}
    wr_id = 0x1000
    invs = list(INV_STAGS)

    def post(q, n):
        nonlocal wr_id
        wr_id += 1
        lto = BUF_TO + rng.randrange(0, BUF_LEN - n) if n else rng.randrange(1 << 64)
        p.rqe(q, idx[q], wr_id, BUF_STAG if n or rng.random() < 0.5 else rng.randrange(1 << 32), n, lto)
        idx[q] += 1
        bufs[q].append(n)

    def send(q, op=None):
        n = bufs[q].pop(0)
        op = op or rng.choice([SEND, SEND_INV, SEND_SE, SEND_SE_INV])
        inv = 0
        if op in (SEND_INV, SEND_SE_INV):
            if not invs:
                p.inv_mrs()
                invs.extend(INV_STAGS)
            inv = invs.pop(0)
        p.send(q, op, rng.randrange(0, n + 1) if n else 0, inv)

    # QPs 0 and 1 interleaved, every opcode, lengths 0.. with unaligned TOs.
    for r in range(3):
        for q in (0, 1):
            for _ in range(3):
                post(q, rng.choice([0, 1, 7, 8, 9, 100, 1461, 5000]))
            p.db(q, idx[q])
        for q in (0, 1):
            for op in (SEND, SEND_INV, SEND_SE):
                send(q, op if r == 0 else None)
    for q in (0, 1):
        send(q, SEND_SE_INV) if bufs[q] else None
    # Ring wrap: QP 2's ring of 4, 6 rounds of 3.
    for r in range(6):
        for _ in range(3):
            post(2, rng.randrange(0, 300))
        p.db(2, idx[2])
        for _ in range(3):
            send(2)
    # 40 entries behind one doorbell on QP 1: 16 posted, then one a Send.
    for _ in range(40):
        post(1, rng.randrange(0, 64))
    p.db(1, idx[1])
    while bufs[1]:
        send(1, SEND)
    await tb.run(p)


@cocotb.test()
async def errors(dut):
    tb = await new_tb(dut)
    p = Prog(tb.base)
    p.setup()
    p.mr(3, 0x33, LOCAL_WRITE, 6, BUF_TO, BUF_LEN, BUF_OFF)       # another PD
    p.mr(2, 0x22, LOCAL_READ | REMOTE_WRITE, PD, BUF_TO, BUF_LEN, BUF_OFF)   # no local write
    p.mr(7, 0x77, LOCAL_WRITE, PD, BUF_TO, 0x2000, MR7_OFF)             # see below

    def patch(at, v):
        def f(b):
            b[at] = v
        return f

    cases = [
        dict(lkey=BUF_STAG, n=10, lto=BUF_TO, patch=patch(24, 1)),
        dict(lkey=BUF_STAG, n=0, patch=patch(31, 0x80)),
        dict(lkey=9 << 8 | 0x11, n=10, lto=BUF_TO),              # MR index beyond the table
        dict(lkey=6 << 8 | 0x11, n=10, lto=BUF_TO),              # never written
        dict(lkey=1 << 8 | 0x12, n=10, lto=BUF_TO),              # key
        dict(lkey=3 << 8 | 0x33, n=10, lto=BUF_TO),              # PD
        dict(lkey=2 << 8 | 0x22, n=10, lto=BUF_TO),              # no local write
        dict(lkey=BUF_STAG, n=10, lto=BUF_TO - 1),               # below
        dict(lkey=BUF_STAG, n=10, lto=BUF_TO + BUF_LEN - 9),     # above
        dict(lkey=BUF_STAG, n=16, lto=(1 << 64) - 8),            # TO + length wraps
    ]
    i = 0
    wr_id = 0x5000
    for c in cases:
        wr_id += 1
        p.rqe(0, i, wr_id, **c)
        # (Every other one ends exactly at the MR's end: in bounds.)
        p.rqe(0, i + 1, wr_id + 0x100, BUF_STAG, 50, BUF_TO + 3 * i if i % 4 else BUF_TO + BUF_LEN - 50)
        p.db(0, i + 2)
        p.send(0, SEND, 50)
        i += 2
    # A buffer the MR check passes but outside every DMA window (window 1
    # shrunk after MR_WRITE to end inside MR 7): the model's hostMem
    # refuses it when it is posted, DMA_REFUSED (placement) and
    # LOCAL_ACCESS; one across the window's end, one past it; then a good
    # entry takes the Send.
    p.window(1, WIN1, MR7_OFF + 0x1000 - WIN1)
    p.rqe(0, i, 0x5100, 7 << 8 | 0x77, 0x20, BUF_TO + 0xFF0)
    p.rqe(0, i + 1, 0x5101, 7 << 8 | 0x77, 10, BUF_TO + 0x1100)
    p.rqe(0, i + 2, 0x5102, BUF_STAG, 50, BUF_TO + 8)
    p.db(0, i + 3)
    p.send(0, SEND, 50)
    p.window(1, WIN1, WIN1_LEN)
    # A Send longer than its buffer: the oldest takes PROTOCOL, two more
    # posted complete FLUSHED, a later entry FLUSHED.
    for k in range(3):
        p.rqe(1, k, 0x600 + k, BUF_STAG, 20, BUF_TO + 100 * k)
    p.db(1, 3)
    p.send(1, SEND_SE, 21)
    p.rqe(1, 3, 0x603, BUF_STAG, 20, BUF_TO)
    p.db(1, 4)
    # QP_DRAIN with buffers posted; the QP recycled and used again.
    for k in range(3):
        p.rqe(2, k, 0x700 + k, BUF_STAG, 30, BUF_TO + 7 * k)
    p.db(2, 3)
    p.send(2, SEND, 30)
    p.admin(QP_DRAIN, 2)
    p.admin(DESTROY_QP, 2)
    p.create_qp(2, 7)
    p.rts(2)
    p.rqe(2, 0, 0x710, BUF_STAG, 30, BUF_TO)
    p.db(2, 1)
    p.send(2, SEND, 30)
    # A fetch refused: QP 3's ring is in window 1, cleared; its posted
    # buffer is flushed, the entry fetched again and refused again; then
    # the window back and a doorbell: the entries complete FLUSHED.
    p.rqe(3, 0, 0x800, BUF_STAG, 8, BUF_TO)
    p.rqe(3, 1, 0x801, BUF_STAG, 8, BUF_TO)
    p.db(3, 1)
    p.window(1, 0, 0)
    p.db(3, 2)
    p.window(1, WIN1, WIN1_LEN)
    p.db(3, 2)
    await tb.run(p)


@cocotb.test()
async def doorbells(dut):
    tb = await new_tb(dut)
    p = Prog(tb.base)
    p.setup(qps=(0, 1, 2))
    p.db(4, 1)
    p.db(4095, 1)
    p.db(3, 1)                      # QP 3 was never created
    p.db(0, 1 << 16 | 1)
    p.db(0, 0x80000000)
    p.recycle(1, 2)                 # a ring of 4
    for k in range(4):
        p.rqe(1, k, 0x100 + k, BUF_STAG, 10 * k, BUF_TO + k)
    p.db(1, 4)                      # exactly full: accepted
    p.send(1, SEND, 0)
    p.db(1, 9)                      # 5 past ci (4): overrun, the QP fails
    p.rqe(1, 4, 0x200, BUF_STAG, 8, BUF_TO)
    p.db(1, 5)                      # flushed
    # A burst, a doorbell a clock apart, good and bad mixed.
    p.rqe(0, 0, 0x400, BUF_STAG, 40, BUF_TO)
    p.rqe(2, 0, 0x401, BUF_STAG, 40, BUF_TO)
    p.rqe(2, 1, 0x402, 0, 0, 0)
    p.db(6, 1)
    p.db(0, 1 << 17, wait=False)
    p.db(0, 1, wait=False)
    p.db(2, 1, wait=False)
    p.db(3, 2, wait=False)
    p.db(2, 0x10006, wait=False)
    p.db(2, 2, wait=False)
    p.send(0, SEND_SE, 40)
    p.send(2, SEND, 17)
    p.send(2, SEND, 0)
    # Eight doorbells in eight consecutive clocks (the doorbell FIFO's
    # depth: none is lost), good and bad mixed.
    for k in range(4):
        p.rqe(0, 1 + k, 0x500 + k, BUF_STAG, 8, BUF_TO + k)
        p.rqe(2, 2 + k, 0x600 + k, 0, 0, 0)
    for k, (q, v) in enumerate([(0, 2), (2, 3), (5, 1), (0, 3), (0, 1 << 20), (2, 5), (0, 5), (2, 6)]):
        p.db(q, v, burst=k > 0)
    for k in range(4):
        p.send(0, SEND, 8)
        p.send(2, SEND_SE, 0)
    await tb.run(p)


# Verilator only, W=64 (make test's budget; no VHDL twin); every width
# under HW_ALL_WIDTHS=1 (make test-hw-full), or those RNIC_RQ_WIDTHS=
# 64,128,256,512 names.
WIDTHS = [int(w) for w in os.environ.get(
    "RNIC_RQ_WIDTHS", "64,128,256,512" if hdlsim.all_widths_requested() else "64").split(",")]


@pytest.mark.parametrize("sim,width", [pytest.param(p.values[0], w, id=f"{p.values[0]}-W{w}")
                                       for p in hdlsim.simulators(langs=("verilog",))
                                       if p.values[0] == "verilator" for w in WIDTHS])
def test_rnic_rq(sim, width, oracle_path):
    rtl = hdlsim.RTL_DIR
    hdlsim.run(
        test="rnic_rq",
        sim=sim,
        tag=f"W{width}",
        toplevel="rq_top",
        test_module=__name__,
        verilog_sources=[hdlsim.REPO_ROOT / "tests" / "rq" / "rq_top.v"] +
                        [rtl / f for f in ("rnic_rq.v", "rnic_admin.v", "sdp_ram.v")],
        parameters=dict(PARAMS, DATA_W=width),
        extra_env={oracle.ENV_VAR: str(oracle_path)},
    )
