"""hw/rtl/rnic_rresp.v, the Read responder, between rnic_admin and rnic_tx
(tests/rresp/rr_top.v), against the Go model (driver/model) through
cmd/rnic-oracle's rr_run op.

Each cocotb test builds a program, the steps a driver and a peer take:
admin commands (as the mailbox takes them), host memory writes and the
peer's RDMA Read Requests. The oracle runs it through the model first and
answers, per step, the admin status, the segments (FPDUs) the model sent,
each with its RDMAP opcode (a Terminate with its layer/etype and code), and
its events. The bench replays the program on the RTL: admin commands
through rnic_admin's command port (the status must be the model's), memory
writes into the bytearray the DMA responder serves, a Read Request as an
rreq record (the 28-octet body as the wire has it) once the QP has a Read
Request buffer posted (ddp_rx completes only posted buffers), without
waiting for the previous requests' answers (several QPs interleave, Reads
follow each other back to back). Before an admin or memory step the bench
waits until the RTL has produced everything the model produced up to there.

Compared: rnic_tx's FPDUs per connection with the model's Read Responses,
octet for octet; the fail records (qpn, local, layer/etype, code) with the
model's Terminates (Local Catastrophic: fail_local 1; the peer's error:
fail_local 0 and the Terminate's layer/etype and code), per QP in order;
the payload reads refused by the window check (what, address, length) with
the model's DMA_REFUSED events. The posts (the model's are internal) are
checked against startQP's rule: after QP_RTS exactly min(IRD, 16) Read
Request buffers (28 octets) and one Terminate buffer (52), device-internal
addresses (bit 63), id 0; one Read Request buffer posted again for each
request served, never more posted than the IRD; at the end every served
QP has all its buffers posted again.

The DMA read responder serves the port contract (brief-dev-ifaces.md):
random request acceptance, latency and gaps between beats, lane-0 aligned
beats, a refusal (outside every DMA_WINDOW declared) as one beat with err
and keep 0. post_ready, fail_ready, m_axis_tready and the MR read port's
grant (the top's stall input) are randomly held back. Every valid/ready
port goes through tests/protocol.py's checkers.

Cases:
  reads       sizes 0, 1, 3, 8 .. across each QP's MULPDU, 9000, 65541,
              unaligned source TOs, four QPs interleaved (markers and CRC in
              different combinations), IRD 1, 2 and 4 with more requests
              than the IRD, an MR bound to the QP that reads it, an IRD of
              20 (16 buffers posted)
  errors      every check failing on QP 0 (STag index beyond the table,
              an entry never written, an invalidated one, the key, the PD,
              an MR bound to another QP, no remote read, below and above
              the bounds, TO wrap, an MR of length 0; several at once:
              the model's order decides), each followed by a
              request the QP no longer serves; a zero-size Read through an
              invalid STag (answered); the payload read refused (window
              cleared) on QP 1
  axi_error   an AXI error after a payload read's first beat: the Read
              Response goes out, then the QP fails (fail_local 1), its next
              request is not answered
  throughput  back-to-back 64 KiB Reads on two QPs: rnic_tx's FPDU beats
              per clock (build/bench/rnic_rresp-W64.json)
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

CONN_W, STAG_AW, CQ_W, WIN_W = 2, 3, 2, 1
POST_DEPTH_LOG2 = 4
PARAMS = {"CONN_W": CONN_W, "STAG_AW": STAG_AW, "CQ_W": CQ_W, "VEC_W": 1, "WIN_W": WIN_W,
          "SQ_LOG2": 8, "RQ_LOG2": 8, "CQ_LOG2": 8, "POST_DEPTH_LOG2": POST_DEPTH_LOG2}
CONFIG = {"qps": 1 << CONN_W, "cqs": 1 << CQ_W, "stags": 1 << STAG_AW, "windows": 1 << WIN_W,
          "sq_log2": 8, "rq_log2": 8, "cq_log2": 8}
MEM_SIZE = 1 << 20

CREATE_CQ, DESTROY_CQ, CREATE_QP, QP_RTS, QP_DRAIN, DESTROY_QP, MR_WRITE, MR_INVALIDATE, EVENT_RING, DMA_WINDOW = range(1, 11)
NOT_BOUND = 0xFFFF
EV_DMA_REFUSED = 7
LOCAL_READ, LOCAL_WRITE, REMOTE_READ, REMOTE_WRITE = 1, 2, 4, 8
OP_READ_RESPONSE, OP_TERMINATE = 2, 7
RR_LEN, TERM_LEN = 28, 52

# Host memory (offsets from the base): window 0 the rings, window 1 the
# registered memory (the sources).
WIN0, WIN0_LEN = 0, 0x40000
WIN1, WIN1_LEN = 0x40000, 0xC0000
SQ_OFF, RQ_OFF, CQ_OFF = 0x0000, 0x8000, 0x10000
EVR_OFF, EXC_OFF = 0x20000, 0x21000
SRC_OFF, SRC_LEN = 0x41000, 0x80000
SRC_TO = 0x100000
PD = 5
# MRs: 1 remote read (the sources), 2 remote read bound to QP 2, 3 another
# PD, 4 no remote read, 5 length 0; 6 never written.
SRC_STAG = 1 << 8 | 0x11
BOUND_STAG = 2 << 8 | 0x22
OTHER_PD_STAG = 3 << 8 | 0x33
NO_RR_STAG = 4 << 8 | 0x44
EMPTY_STAG = 5 << 8 | 0x55
MULTI_STAG = 0 << 8 | 0x00     # (the errors case's: another PD, bound to QP 1, no remote read)


def cmd_args(*words):
    return list(words) + [0] * (8 - len(words))


class Prog:
    """A program for rr_run and for the replay."""

    def __init__(self, base: int):
        self.base = base
        self.steps: list[dict] = []
        # Where the RTL and the model part (an AXI error the model cannot
        # have): steps whose Read Responses the RTL does not send, and the
        # fail records it adds (per QP, after the given step).
        self.rtl_drops: set[int] = set()
        self.rtl_fails: dict[int, tuple[int, tuple[int, int, int]]] = {}

    def admin(self, op, *words):
        self.steps.append({"admin": [op] + cmd_args(*[w & 0xFFFFFFFF for w in words])})

    def mem(self, off, data: bytes):
        self.steps.append({"mem": {"addr": self.base + off, "data": bytes(data).hex()}})

    def read(self, qpn, size, src_stag=SRC_STAG, src_to=SRC_TO, sink_stag=0, sink_to=0):
        self.steps.append({"read_req": {"qpn": qpn, "sink_stag": sink_stag, "sink_to": sink_to, "size": size,
                                        "src_stag": src_stag, "src_to": src_to}})

    # --- commands ---
    def window(self, slot, off, n):
        a = self.base + off if n else 0
        self.admin(DMA_WINDOW, slot, a, a >> 32, n, 0)

    def mr(self, stag, access, pd, base_to, n, off, bound=NOT_BOUND):
        a = self.base + off
        self.admin(MR_WRITE, stag >> 8 | (stag & 0xFF) << 16 | access << 24, pd | bound << 16, base_to,
                   base_to >> 32, n, n >> 32, a, a >> 32)

    def create_qp(self, qpn, pd=PD):
        sq = self.base + SQ_OFF + 0x1000 * qpn
        rq = self.base + RQ_OFF + 0x1000 * qpn
        self.admin(CREATE_QP, qpn, pd, sq, sq >> 32, rq, rq >> 32, 6 | 1 << 8, qpn | qpn << 16)

    def rts(self, qpn, mulpdu, flags, ird=4, tx_seq=1000):
        self.admin(QP_RTS, qpn | ird << 16 | 2 << 24, mulpdu | flags << 16, tx_seq - 40, 9000 - 64, tx_seq, 9000,
                   1, 1)

    def recycle(self, qpn, mulpdu, flags, **kw):
        self.admin(QP_DRAIN, qpn)
        self.admin(DESTROY_QP, qpn)
        self.create_qp(qpn)
        self.rts(qpn, mulpdu, flags, **kw)

    def setup(self, rng, qps=(0, 1, 2, 3), mulpdus=(1460, 512, 100, 300), flags=(0, 0xF, 4, 1), irds=(4, 2, 1, 20)):
        """Windows, event ring, CQs, QPs in RTS, the MRs, source memory
        filled at random."""
        self.window(0, WIN0, WIN0_LEN)
        self.window(1, WIN1, WIN1_LEN)
        evr, exc = self.base + EVR_OFF, self.base + EXC_OFF
        self.admin(EVENT_RING, evr, evr >> 32, 8 | 1 << 8 | 6 << 16, exc, exc >> 32)
        for c in range(4):
            r = self.base + CQ_OFF + 0x2000 * c
            self.admin(CREATE_CQ, c, r, r >> 32, 8, 0)
        for q in qps:
            self.create_qp(q)
            self.rts(q, mulpdus[q], flags[q], ird=irds[q], tx_seq=1000 + 77 * q)
        self.mr(SRC_STAG, REMOTE_READ | LOCAL_READ, PD, SRC_TO, SRC_LEN, SRC_OFF)
        self.mr(BOUND_STAG, REMOTE_READ, PD, SRC_TO, 0x1000, SRC_OFF, bound=2)
        self.mr(OTHER_PD_STAG, REMOTE_READ, 6, SRC_TO, 0x1000, SRC_OFF)
        self.mr(NO_RR_STAG, LOCAL_READ | REMOTE_WRITE, PD, SRC_TO, 0x1000, SRC_OFF)
        self.mr(EMPTY_STAG, REMOTE_READ, PD, SRC_TO, 0, SRC_OFF)
        self.mem(SRC_OFF, rng.randbytes(SRC_LEN))


FIGURES: dict[str, float] = {}


class Responder:
    """The DMA read client port's server: requests queued, answered in
    order from host memory after a random latency, beats with random gaps."""

    def __init__(self, tb, prefix):
        self.tb, self.p = tb, prefix
        self.reqs = []          # (due clock, addr, len, what)
        self.beats = []         # the current response's beats: (data, keep, last, err)
        self.refusals = []
        self.offered = False

    def step_req(self, clk):
        dut = self.tb.dut
        addr = getattr(dut, self.p + "_req_addr").value.integer
        n = getattr(dut, self.p + "_req_len").value.integer
        what = getattr(dut, self.p + "_req_what").value.integer
        assert n >= 1, f"{self.p}: a request of {n} octets"
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
        # An AXI error response (rnic_dma_rd): err from the beat that holds
        # the first failing octet to the frame's last beat.
        bad = min((max(lo, off) - off for lo, hi in tb.axi_bad if lo < off + n and off < hi), default=n)
        for i in range(0, n, L):
            chunk = data[i:i + L]
            self.beats.append((int.from_bytes(chunk, "little"), (1 << len(chunk)) - 1, int(i + L >= n),
                               int(bad < n and i + L > bad)))


class TB:
    def __init__(self, dut, rng_seed=None):
        self.dut = dut
        self.L = len(dut.pay_rd_data) // 8
        self.rng = random.Random(rng_seed) if rng_seed is not None else random.Random(random.getrandbits(64))
        self.oracle = oracle.shared()
        self.mem = bytearray(MEM_SIZE)
        self.windows = {}
        self.axi_bad = []       # memory offsets [lo, hi) whose reads answer an AXI error
        nq = 1 << CONN_W
        self.frames = {q: [] for q in range(nq)}
        self.cur_frame = {q: bytearray() for q in range(nq)}
        self.fails = {q: [] for q in range(nq)}
        self.credit = {q: 0 for q in range(nq)}     # Read Request buffers posted, not used
        self.tposts = {q: 0 for q in range(nq)}     # Terminate buffers posted
        self.cap = {q: 0 for q in range(nq)}        # min(IRD, 16) of the QP's QP_RTS
        self.pay = Responder(self, "pay_rd")
        self.clk = 0
        self.errors = []
        self.stall = 0.2
        self.out_beats = 0
        self.first_out = self.last_out = None

    def allowed(self, addr, n):
        return any(a <= addr and addr + n <= a + ln for a, ln in self.windows.values() if ln)

    async def start(self):
        dut = self.dut
        await tbutil.clock_and_reset(dut, 10, low=(
            "cmd_wr", "stall", "rreq_valid", "post_ready", "pay_rd_req_ready", "pay_rd_valid", "fail_ready",
            "m_axis_tready", "pay_rd_err", "pay_rd_last"))
        dut.cmd_op.value = 0
        dut.cmd_args.value = 0
        dut.rreq_conn.value = 0
        dut.rreq_rr.value = 0
        self.monitor = protocol.Monitor(self.dut, "rr_top")
        cocotb.start_soon(self.loop())

    def on_post(self, conn, qn, addr, n, wr_id):
        if not (addr >> 63 and wr_id == 0 and (qn, n) in ((1, RR_LEN), (2, TERM_LEN))):
            self.errors.append((self.clk, f"post: conn {conn} qn {qn} addr {addr:#x} len {n} id {wr_id}"))
            return
        if qn == 1:
            self.credit[conn] += 1
            if self.credit[conn] > self.cap[conn]:
                self.errors.append((self.clk, f"QP {conn}: {self.credit[conn]} Read Request buffers posted, "
                                              f"IRD {self.cap[conn]}"))
        else:
            self.tposts[conn] += 1
            if self.tposts[conn] > 1:
                self.errors.append((self.clk, f"QP {conn}: a second Terminate buffer"))

    async def loop(self):
        """Every clock: drive the responder and sinks at the falling edge,
        then see (ReadOnly) which transfers the next rising edge takes."""
        dut = self.dut
        rng = self.rng
        pay = self.pay
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

        req_ready, valid, data, keep, lst, err = (wr("pay_rd_req_ready"), wr("pay_rd_valid"), wr("pay_rd_data"),
                                                  wr("pay_rd_keep"), wr("pay_rd_last"), wr("pay_rd_err"))
        req_valid, rsp_ready = rd("pay_rd_req_valid"), rd("pay_rd_ready")
        m_ready, post_ready, fail_ready, stall = wr("m_axis_tready"), wr("post_ready"), wr("fail_ready"), wr("stall")
        m_valid, m_user, m_keep, m_data, m_last = (rd("m_axis_tvalid"), rd("m_axis_tuser"), rd("m_axis_tkeep"),
                                                   rd("m_axis_tdata"), rd("m_axis_tlast"))
        p_valid, p_conn, p_qn, p_addr, p_len, p_id = (rd("post_valid"), rd("post_conn"), rd("post_qn"),
                                                      rd("post_addr"), rd("post_len"), rd("post_id"))
        f_valid, f_qpn, f_local, f_le, f_code = (rd("fail_valid"), rd("fail_qpn"), rd("fail_local"),
                                                 rd("fail_layer_etype"), rd("fail_code"))
        errs = [(s, rd(s)) for s in ("ddp_err_valid", "mpa_err_valid")]
        hold = rd("rx_hold")
        fe, ro = FallingEdge(dut.clk), ReadOnly()
        L = self.L
        while True:
            await fe
            self.clk += 1
            clk = self.clk
            p = self.stall
            pay.load(clk)
            rq = int(rng.random() >= p)
            req_ready(rq)
            if not pay.offered:
                if pay.beats and rng.random() >= p:
                    d, k, lt, e = pay.beats[0]
                    valid(1)
                    data(d)
                    keep(k)
                    lst(lt)
                    err(e)
                    pay.offered = True
                else:
                    valid(0)
            mr, pr, fr = int(rng.random() >= p), int(rng.random() >= p), int(rng.random() >= p)
            m_ready(mr)
            post_ready(pr)
            fail_ready(fr)
            stall(int(rng.random() < p))
            await ro
            if rq and req_valid() == "1":
                pay.step_req(clk)
            if pay.offered and rsp_ready() == "1":
                pay.beats.pop(0)
                pay.offered = False
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
            if pr and p_valid() == "1":
                # rnic_dev holds the QP's segments until the post is in.
                if hold()[-1 - int(p_conn(), 2)] != "1":
                    self.errors.append((clk, f"QP {int(p_conn(), 2)}: a post without rx_hold"))
                self.on_post(int(p_conn(), 2), int(p_qn(), 2), int(p_addr(), 2), int(p_len(), 2), int(p_id(), 2))
            if fr and f_valid() == "1":
                self.fails[int(f_qpn(), 2)].append((int(f_local(), 2), int(f_le(), 2), int(f_code(), 2)))
            for s, v in errs:
                if v() == "1":
                    self.errors.append((clk, s))

    # --- the replay ---
    def counts(self):
        return ({q: len(f) for q, f in self.frames.items()}, {q: len(f) for q, f in self.fails.items()})

    async def quiesce(self, want, limit=400000):
        for _ in range(limit):
            await RisingEdge(self.dut.clk)
            if self.counts() == want:
                break
        else:
            assert False, f"no quiescence: have {self.counts()}, want {want}; fails {self.fails}"
        for _ in range(40):
            await RisingEdge(self.dut.clk)
        assert self.counts() == want, f"more than the model: have {self.counts()}, want {want}"
        assert not self.errors, f"errors: {self.errors}"
        # Every buffer is posted within a few clocks a buffer (one a clock
        # under the bench's stalls): then no QP's segments may wait at
        # rnic_dev's network input.
        for _ in range(4000):
            if "1" not in self.dut.rx_hold.value.binstr:
                break
            await RisingEdge(self.dut.clk)
        else:
            assert False, f"rx_hold {self.dut.rx_hold.value.binstr} 4000 clocks after quiescence"

    async def run(self, prog: Prog):
        res = self.oracle.request("rr_run", config=CONFIG, mem_size=MEM_SIZE, steps=prog.steps)
        assert res["mem_base"] == prog.base
        dut = self.dut
        nq = 1 << CONN_W
        want_frames = {q: [] for q in range(nq)}
        want_fails = {q: [] for q in range(nq)}
        want_refusals = []
        failed = set()        # QPs the model failed (their requests are not delivered buffers)
        served = {q: 0 for q in range(nq)}
        for i, (step, out) in enumerate(zip(prog.steps, res["steps"])):
            want = ({q: len(f) for q, f in want_frames.items()}, {q: len(f) for q, f in want_fails.items()})
            if "read_req" not in step:
                await self.quiesce(want)
            if "mem" in step:
                m = step["mem"]
                off = m["addr"] - self.base
                data = bytes.fromhex(m["data"])
                self.mem[off:off + len(data)] = data
            elif "admin" in step:
                await FallingEdge(dut.clk)
                a = step["admin"]
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
                    if a[0] in (QP_RTS, QP_DRAIN, DESTROY_QP, CREATE_QP):
                        q = a[1] & 0xFFFF
                        self.credit[q] = self.tposts[q] = 0
                        self.cap[q] = min(a[1] >> 16 & 0xFF, 1 << POST_DEPTH_LOG2) if a[0] == QP_RTS else 0
                        failed.discard(q)
                        served[q] = 0
            else:
                r = step["read_req"]
                q = r["qpn"]
                if q not in failed or i in prog.rtl_drops:
                    # A Read Request buffer must be posted (ddp_rx's).
                    for _ in range(20000):
                        if self.credit[q] > 0:
                            break
                        await RisingEdge(dut.clk)
                    else:
                        assert False, f"step {i}: QP {q} has no Read Request buffer posted"
                    self.credit[q] -= 1
                body = struct.pack(">IQIIQ", r["sink_stag"], r["sink_to"], r["size"], r["src_stag"], r["src_to"])
                await FallingEdge(dut.clk)
                dut.rreq_conn.value = q
                dut.rreq_rr.value = int.from_bytes(body, "little")
                dut.rreq_valid.value = 1
                # rreq_ready depends on registers only: its value between a
                # falling and the next rising edge is the one that edge takes.
                await ReadOnly()
                while dut.rreq_ready.value != 1:
                    await FallingEdge(dut.clk)
                    await ReadOnly()
                await FallingEdge(dut.clk)
                dut.rreq_valid.value = 0
            if i in prog.rtl_fails:
                q, f = prog.rtl_fails[i]
                want_fails[q].append(f)
                failed.add(q)
            for s in out["segs"] or []:
                if i in prog.rtl_drops:
                    continue
                if s["op"] == OP_READ_RESPONSE:
                    want_frames[s["qpn"]].append(bytes.fromhex(s["octets"]))
                    served[s["qpn"]] += 1
                elif s["op"] == OP_TERMINATE:
                    le, code = s["layer_etype"], s["code"]
                    want_fails[s["qpn"]].append((int(le == 0 and code == 0), le, code))
                    failed.add(s["qpn"])
                else:
                    assert False, f"step {i}: the model sent opcode {s['op']}"
            for e in out["events"] or []:
                if int(e[:2], 16) == EV_DMA_REFUSED:
                    b = bytes.fromhex(e)
                    want_refusals.append((b[1], int.from_bytes(b[8:15], "little"), int.from_bytes(b[4:8], "little")))
        want = ({q: len(f) for q, f in want_frames.items()}, {q: len(f) for q, f in want_fails.items()})
        await self.quiesce(want)
        for q in want_frames:
            for k, (h, w) in enumerate(zip(self.frames[q], want_frames[q])):
                assert h == w, f"QP {q} FPDU {k}: RTL {h.hex()} model {w.hex()}"
        assert self.fails == want_fails
        assert self.pay.refusals == want_refusals
        # Every served QP has all its Read Request buffers posted again.
        for q in range(nq):
            if self.cap[q] and q not in failed:
                assert self.credit[q] == self.cap[q], f"QP {q}: {self.credit[q]} buffers posted, IRD {self.cap[q]}"
                assert self.tposts[q] == 1, f"QP {q}: {self.tposts[q]} Terminate buffers"
        return res, served


async def new_tb(dut, bench=False):
    tb = TB(dut, rng_seed=tbutil.BENCH_SEED if bench else None)
    probe = tb.oracle.request("rr_run", config=CONFIG, mem_size=MEM_SIZE, steps=[])
    tb.base = probe["mem_base"]
    await tb.start()
    return tb


@cocotb.test()
async def reads(dut):
    tb = await new_tb(dut)
    rng = tb.rng
    p = Prog(tb.base)
    mulpdus = (1460, 512, 100, 300)
    p.setup(rng, mulpdus=mulpdus)
    # (QP, size): the small ones on every QP, each QP's MULPDU boundaries
    # on that QP, the large ones on one QP each; in random order.
    reqs = [(q, n) for n in (0, 1, 3, 8, 63, 64, 65) for q in range(4)]
    for q in range(4):
        m = mulpdus[q]
        reqs += [(q, m - 1), (q, m), (q, m + 1), (q, 2 * m + 3)]
    reqs += [(0, 4096), (1, 9000), (3, 65541)]
    rng.shuffle(reqs)
    for q, n in reqs:
        stag = BOUND_STAG if q == 2 and n <= 0x800 and rng.random() < 0.5 else SRC_STAG
        limit = 0x1000 if stag == BOUND_STAG else SRC_LEN
        to = SRC_TO + rng.randrange(0, limit - n + 1)
        p.read(q, n, stag, to, rng.randrange(1 << 32), rng.randrange(1 << 64))
    await tb.run(p)


@cocotb.test()
async def errors(dut):
    tb = await new_tb(dut)
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(rng)
    p.admin(MR_WRITE, 7 | 0x77 << 16 | REMOTE_READ << 24, PD | NOT_BOUND << 16, SRC_TO, 0, 0x100, 0,
            tb.base + SRC_OFF, (tb.base + SRC_OFF) >> 32)
    p.admin(MR_INVALIDATE, 7)
    p.mr(MULTI_STAG, LOCAL_READ, 6, SRC_TO, 0x100, SRC_OFF, bound=1)
    cases = [
        (9 << 8 | 0x11, SRC_TO, 10),            # STag index beyond the table
        (6 << 8 | 0x66, SRC_TO, 10),            # an entry never written
        (7 << 8 | 0x77, SRC_TO, 10),            # invalidated
        (1 << 8 | 0x12, SRC_TO, 10),            # key
        (OTHER_PD_STAG, SRC_TO, 10),            # PD
        (BOUND_STAG, SRC_TO, 10),               # bound to QP 2
        (NO_RR_STAG, SRC_TO, 10),               # no remote read
        (SRC_STAG, SRC_TO - 1, 10),             # below the base
        (SRC_STAG, SRC_TO + SRC_LEN - 9, 10),   # past the end
        (SRC_STAG, (1 << 64) - 8, 8),           # TO + size = 2^64: TO wrap
        (SRC_STAG, (1 << 64) - 8, 100),         # wrap
        (EMPTY_STAG, SRC_TO, 1),                # an MR of length 0
        # Several checks failing: the first in the model's order answers.
        (0 << 8 | 0x01, SRC_TO - 5, 10),        # key (and PD, bound, access, bounds)
        (MULTI_STAG, SRC_TO - 5, 10),           # PD (and bound, access, bounds)
        (NO_RR_STAG, (1 << 64) - 4, 10),        # access (and wrap, bounds)
    ]
    for k, (stag, to, n) in enumerate(cases):
        if k:
            p.recycle(0, 1460, 0xF if k % 2 else 0)
        p.read(0, 5, SRC_STAG, SRC_TO + k, 0x1000 + k, k)      # served
        p.read(0, n, stag, to, 0x2000 + k, k)                  # fails
        p.read(0, 7, SRC_STAG, SRC_TO, 0x3000 + k, k)          # dropped
    # A zero-size Read checks nothing: answered.
    p.read(1, 0, 0xFFFFFFFF, 0, 0x4000, 1)
    p.read(1, 0, NO_RR_STAG, (1 << 64) - 1, 0x4001, 2)
    p.read(1, 20, SRC_STAG, SRC_TO + 1, 0x4002, 3)
    # The payload read refused: window 1 cleared.
    p.window(1, 0, 0)
    p.read(1, 100, SRC_STAG, SRC_TO + 3, 0x4003, 4)
    p.read(1, 10, SRC_STAG, SRC_TO, 0x4004, 5)
    await tb.run(p)


@cocotb.test()
async def axi_error(dut):
    """An AXI error response after a payload read's first beat (rnic_dma_rd
    flags it from the failing beat to the last): the Read Response already
    on its way goes out whole (the model, whose reads cannot fail, sends the
    same octets), then the QP fails (fail_local 1) and its next request,
    whose read may already be issued, is not answered; another QP goes on."""
    tb = await new_tb(dut)
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(rng, qps=(0, 1), irds=(4, 4, 1, 1))
    tb.axi_bad.append((SRC_OFF + 0x8000, SRC_OFF + 0x8001))
    p.read(1, 300, SRC_STAG, SRC_TO + 5, 1, 2)
    p.read(0, 3000, SRC_STAG, SRC_TO + 0x8000 - 1000, 3, 4)      # the error at octet 1000
    p.rtl_fails[len(p.steps) - 1] = (0, (1, 0, 0))
    p.read(0, 2000, SRC_STAG, SRC_TO + 16, 5, 6)                  # not answered
    p.rtl_drops.add(len(p.steps) - 1)
    p.read(1, 4000, SRC_STAG, SRC_TO + 0x8000 - 100, 7, 8)       # QP 1 reads it too, later: the same error
    p.rtl_fails[len(p.steps) - 1] = (1, (1, 0, 0))
    await tb.run(p)


@cocotb.test()
async def throughput(dut):
    """Back-to-back 64 KiB Reads on two QPs (no back-pressure, DMA latency
    2..12 clocks): rnic_tx's output beats per clock from the first beat to
    the last, compared with the model as every case."""
    tb = await new_tb(dut, bench=True)
    tb.stall = 0.0
    rng = tb.rng
    p = Prog(tb.base)
    p.setup(rng, qps=(0, 1), mulpdus=(8192, 9000, 100, 100), flags=(4, 5, 0, 0), irds=(2, 2, 1, 1))
    n = 1 << 16
    for i in range(2):
        for q in (0, 1):
            p.read(q, n, SRC_STAG, SRC_TO + 4096 * i + q + 1, 0x900 + i, 0x10000 * i)
    await tb.run(p)
    span = tb.last_out - tb.first_out + 1
    bpc = tb.out_beats / span
    dut._log.info("throughput: %d FPDU beats in %d clocks: %.3f beats per clock", tb.out_beats, span, bpc)
    FIGURES["65536.beats_per_clock"] = bpc
    hdlsim.write_bench("rnic_rresp", tb.L * 8, beats_per_clock=bpc, latency_clocks=None, higher=FIGURES)


# Verilator only, W=64 (make test's budget; the block has no VHDL twin).
# RNIC_RRESP_WIDTHS=64,128,256,512 runs other widths too (by hand).
WIDTHS = [int(w) for w in os.environ.get("RNIC_RRESP_WIDTHS", "64").split(",")]


@pytest.mark.parametrize("sim,width", [pytest.param(p.values[0], w, id=f"{p.values[0]}-W{w}")
                                       for p in hdlsim.simulators(langs=("verilog",))
                                       if p.values[0] == "verilator" for w in WIDTHS])
def test_rnic_rresp(sim, width, oracle_path):
    rtl = hdlsim.RTL_DIR
    hdlsim.run(
        test="rnic_rresp",
        sim=sim,
        tag=f"W{width}",
        toplevel="rr_top",
        test_module=__name__,
        verilog_sources=[hdlsim.REPO_ROOT / "tests" / "rresp" / "rr_top.v"] +
                        [rtl / f for f in ("rnic_rresp.v", "rnic_admin.v", "rnic_tx.v", "ddp_tx.v", "mpa_tx.v",
                                           "mpa_tx_frame.v", "mpa_tx_mark.v", "tuf_tx.v", "sdp_ram.v", "crc32c.v")],
        parameters=dict(PARAMS, DATA_W=width),
        extra_env={oracle.ENV_VAR: str(oracle_path)},
    )
