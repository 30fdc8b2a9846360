"""hw/rtl/rnic_admin.v, the admin mailbox's executor, at its own ports.

Whether each command's status equals the Go model's is the cross-check's
job (driver/simdev/admin_xcheck_test.go, the whole device against the
model). This bench checks what the cross-check cannot see through the BAR:

  datapath_outputs  the outputs the datapath will take: one MR write or
                    invalidate event per accepted MR_WRITE / MR_INVALIDATE
                    with the entry's fields, one QP_RTS event with its
                    parameters, one state event per QP state change, one
                    window event per accepted DMA_WINDOW (slot, address,
                    length; length 0 for a cleared slot), none for a
                    refused command; the MR, QP, QP_RTS and CQ read
                    ports and the event ring configuration hold what the
                    commands wrote (and a refusal did not change them)
  cycles_overrun    BUSY lasts 2^WIN_W + 4 clocks (+4 for CREATE_QP and
                    DESTROY_QP), as the header says; a CMD write while BUSY
                    pulses overrun and changes nothing; STATUS.CODE holds
                    while BUSY; the output words' write enable pulses for
                    QP_DRAIN only, with ARG0 and ARG1 the SQ and RQ
                    engines' consumer indices (sq_ci, rq_ci) of the
                    command's QP (ci_qpn)
  refusals          each command's decode and index refusals
  reset_clears      reset frees every QP, CQ, MR, window and the event ring

Verilog only (the device shell has no VHDL twin): Verilator and Icarus,
small tables (CONN_W 3, STAG_AW 4, CQ_W 3, VEC_W 1, WIN_W 2).
"""

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

import hdlsim

PARAMS = {"CONN_W": 3, "STAG_AW": 4, "CQ_W": 3, "VEC_W": 1, "WIN_W": 2,
          "SQ_LOG2": 10, "RQ_LOG2": 10, "CQ_LOG2": 12}
CQ_W = PARAMS["CQ_W"]
VEC_W = PARAMS["VEC_W"]
WINDOWS = 1 << PARAMS["WIN_W"]

OK, BAD_OPCODE, BAD_INDEX, BAD_STATE, BAD_ARG, OUT_OF_WINDOW = range(6)
CREATE_CQ, DESTROY_CQ, CREATE_QP, QP_RTS, QP_DRAIN, DESTROY_QP, MR_WRITE, MR_INVALIDATE, EVENT_RING, DMA_WINDOW = range(1, 11)
FREE, CREATED, RTS, DRAINED = range(4)
NOT_BOUND = 0xFFFF

# Packed words, fields from the most significant (rnic_admin.v's port comments).
MR_ENTRY = [("key", 8), ("access", 4), ("pd", 16), ("bound", 16), ("base_to", 64), ("len", 64), ("addr", 64)]
QP_CTX = [("pd", 16), ("sq", 64), ("rq", 64), ("sq_log2", 5), ("rq_log2", 5), ("send_cq", CQ_W), ("recv_cq", CQ_W)]
RTS_PARAMS = [("ird", 8), ("ord", 8), ("mulpdu", 16), ("flags", 4), ("tx_marker_base", 32), ("rx_marker_base", 32),
              ("tx_seq", 32), ("rx_seq", 32), ("rx_msn_send", 32), ("rx_msn_readrq", 32)]
CQ_CTX = [("ring", 64), ("log2", 5), ("vector", VEC_W)]


def unpack(value: int, layout) -> dict:
    out = {}
    for name, width in reversed(layout):
        out[name] = value & ((1 << width) - 1)
        value >>= width
    return out


def lo(v):
    return v & 0xFFFFFFFF


def hi(v):
    return v >> 32


def pack_args(words) -> int:
    words = list(words) + [0] * (8 - len(words))
    return sum((w & 0xFFFFFFFF) << (32 * i) for i, w in enumerate(words))


# Command argument words (docs/device.md, "Argument words").
def create_cq(cqn, ring, log2, vector=0):
    return CREATE_CQ, [cqn, lo(ring), hi(ring), log2, vector]


def create_qp(qpn, pd, sq, sq_log2, rq, rq_log2, scq, rcq):
    return CREATE_QP, [qpn, pd, lo(sq), hi(sq), lo(rq), hi(rq), sq_log2 | rq_log2 << 8, scq | rcq << 16]


def qp_rts(qpn, ird, ord_, mulpdu, flags, words):
    return QP_RTS, [qpn | ird << 16 | ord_ << 24, mulpdu | flags << 16] + list(words)


def mr_write(index, key, access, pd, bound, base_to, length, addr):
    return MR_WRITE, [index | key << 16 | access << 24, pd | bound << 16, lo(base_to), hi(base_to),
                      lo(length), hi(length), lo(addr), hi(addr)]


def event_ring(ring, log2, exc, exc_log2, buf_log2):
    return EVENT_RING, [lo(ring), hi(ring), log2 | exc_log2 << 8 | buf_log2 << 16, lo(exc), hi(exc)]


def dma_window(slot, addr, length):
    return DMA_WINDOW, [slot, lo(addr), hi(addr), lo(length), hi(length)]


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.events = []   # (kind, fields) in the order the pulses came
        self.overruns = 0
        self.out_we = 0

    async def start(self):
        d = self.dut
        cocotb.start_soon(Clock(d.clk, 10, units="ns").start())
        d.cmd_wr.value = 0
        d.sq_ci.value = 0
        d.rq_ci.value = 0
        d.cmd_op.value = 0
        d.cmd_args.value = 0
        for p in ("mr", "qp", "rts", "cq"):
            getattr(d, f"{p}_rd_en").value = 0
        d.mr_rd_index.value = 0
        d.dp_inv_valid.value = 0
        d.dp_inv_index.value = 0
        d.qp_rd_qpn.value = 0
        d.rts_rd_qpn.value = 0
        d.cq_rd_cqn.value = 0
        await self.reset()
        cocotb.start_soon(self.monitor())

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(3):
            await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0

    async def monitor(self):
        """Every clock: the one-clock pulses, sampled between edges."""
        d = self.dut
        while True:
            await FallingEdge(d.clk)
            if d.rst.value:
                continue
            if d.mr_wr_valid.value:
                self.events.append(("mr_wr", {
                    "index": d.mr_wr_index.value.integer, "key": d.mr_wr_key.value.integer,
                    "access": d.mr_wr_access.value.integer, "pd": d.mr_wr_pd.value.integer,
                    "bound": d.mr_wr_bound.value.integer, "base_to": d.mr_wr_base_to.value.integer,
                    "len": d.mr_wr_len.value.integer, "addr": d.mr_wr_addr.value.integer}))
            if d.mr_inv_valid.value:
                self.events.append(("mr_inv", {"index": d.mr_inv_index.value.integer}))
            if d.qp_rts_valid.value:
                f = unpack(d.qp_rts_params.value.integer, RTS_PARAMS)
                f["qpn"] = d.qp_rts_qpn.value.integer
                self.events.append(("rts", f))
            if d.qp_state_wr_valid.value:
                self.events.append(("qp_state", {"qpn": d.qp_state_wr_qpn.value.integer,
                                                 "state": d.qp_state_wr_state.value.integer}))
            if d.win_wr_valid.value:
                self.events.append(("win", {"slot": d.win_wr_slot.value.integer,
                                            "addr": d.win_wr_addr.value.integer,
                                            "len": d.win_wr_len.value.integer}))
            if d.overrun.value:
                self.overruns += 1
            if d.out_args_we.value:
                self.out_we += 1
                self.out_val = d.out_args.value.integer   # what ARG0..ARG7 take

    async def cmd(self, op_args, extra_cmd_at=None):
        """Writes a command; returns (status, clocks BUSY). extra_cmd_at=k
        writes CMD again k clocks after the first (while BUSY)."""
        op, args = op_args
        d = self.dut
        await FallingEdge(d.clk)
        assert not d.busy.value, "a command while BUSY"
        d.cmd_op.value = op
        d.cmd_args.value = pack_args(args)
        d.cmd_wr.value = 1
        await FallingEdge(d.clk)
        d.cmd_wr.value = 0
        busy = 0
        code_before = None
        while d.busy.value:
            if code_before is None:
                code_before = d.status_code.value.integer
            assert d.status_code.value.integer == code_before, "STATUS.CODE changed while BUSY"
            busy += 1
            if extra_cmd_at is not None and busy == extra_cmd_at:
                d.cmd_op.value = DESTROY_CQ
                d.cmd_args.value = 0
                d.cmd_wr.value = 1
            else:
                d.cmd_wr.value = 0
            await FallingEdge(d.clk)
            assert busy < 1000, "BUSY for 1000 clocks"
        d.cmd_wr.value = 0
        code = d.status_code.value.integer
        # The pulses come with the clock BUSY falls in: one more clock, so
        # that the monitor has sampled them whichever coroutine runs first.
        await FallingEdge(d.clk)
        return code, busy

    async def ok(self, op_args):
        st, _ = await self.cmd(op_args)
        assert st == OK, f"{op_args}: status {st}"

    async def refused(self, op_args, want):
        st, _ = await self.cmd(op_args)
        assert st == want, f"{op_args}: status {st}, want {want}"

    async def read(self, port, index, sel):
        d = self.dut
        await FallingEdge(d.clk)
        getattr(d, f"{port}_rd_en").value = 1
        getattr(d, sel).value = index
        await FallingEdge(d.clk)
        getattr(d, f"{port}_rd_en").value = 0
        return d

    async def mr(self, index):
        d = await self.read("mr", index, "mr_rd_index")
        return d.mr_rd_valid.value.integer, unpack(d.mr_rd_entry.value.integer, MR_ENTRY)

    async def qp(self, qpn):
        d = await self.read("qp", qpn, "qp_rd_qpn")
        return d.qp_rd_state.value.integer, unpack(d.qp_rd_ctx.value.integer, QP_CTX)

    async def rts(self, qpn):
        d = await self.read("rts", qpn, "rts_rd_qpn")
        return unpack(d.rts_rd_params.value.integer, RTS_PARAMS)

    async def cq(self, cqn):
        d = await self.read("cq", cqn, "cq_rd_cqn")
        return d.cq_rd_valid.value.integer, unpack(d.cq_rd_ctx.value.integer, CQ_CTX)

    def take_events(self):
        e, self.events = self.events, []
        return e


W0 = 0x3_0000_0000   # window 0: 1 MiB
W1 = 0x5_0000_0000   # window 3: 64 KiB


@cocotb.test()
async def datapath_outputs(dut):
    tb = TB(dut)
    await tb.start()
    await tb.ok(dma_window(0, W0, 1 << 20))
    await tb.ok(dma_window(3, W1, 1 << 16))
    await tb.ok(create_cq(2, W0 + 0x10000, 7, 1))
    await tb.ok(create_cq(5, W1, 11, 0))
    assert tb.take_events() == [("win", {"slot": 0, "addr": W0, "len": 1 << 20}),
                                ("win", {"slot": 3, "addr": W1, "len": 1 << 16})]
    assert await tb.cq(2) == (1, {"ring": W0 + 0x10000, "log2": 7, "vector": 1})
    assert await tb.cq(5) == (1, {"ring": W1, "log2": 11, "vector": 0})
    assert (await tb.cq(3))[0] == 0

    # A QP through its states, with a refusal at each step that must leave
    # no trace.
    await tb.refused(create_qp(6, 9, W0 + 0x20000, 4, W0 + 0x30000, 3, 2, 4), BAD_STATE)   # CQ 4 not created
    await tb.ok(create_qp(6, 9, W0 + 0x20000, 4, W0 + 0x30000, 3, 2, 5))
    assert tb.take_events() == [("qp_state", {"qpn": 6, "state": CREATED})]
    assert await tb.qp(6) == (CREATED, {"pd": 9, "sq": W0 + 0x20000, "rq": W0 + 0x30000, "sq_log2": 4,
                                        "rq_log2": 3, "send_cq": 2, "recv_cq": 5})
    words = [0x11111111, 0x22222222, 0x33333333, 0x44444444, 0x55555555, 0x66666666]
    await tb.refused(qp_rts(6, 4, 8, 0, 0xA, words), BAD_ARG)   # MULPDU 0
    assert tb.take_events() == []
    await tb.ok(qp_rts(6, 4, 8, 1460, 0xA, words))
    want_rts = {"ird": 4, "ord": 8, "mulpdu": 1460, "flags": 0xA, "tx_marker_base": words[0],
                "rx_marker_base": words[1], "tx_seq": words[2], "rx_seq": words[3],
                "rx_msn_send": words[4], "rx_msn_readrq": words[5]}
    assert tb.take_events() == [("rts", dict(want_rts, qpn=6)), ("qp_state", {"qpn": 6, "state": RTS})]
    assert await tb.rts(6) == want_rts
    assert (await tb.qp(6))[0] == RTS
    await tb.refused((DESTROY_QP, [6]), BAD_STATE)
    await tb.ok((QP_DRAIN, [6]))
    await tb.ok((QP_DRAIN, [6]))   # again: at once, no new state
    assert tb.take_events() == [("qp_state", {"qpn": 6, "state": DRAINED})] * 2
    assert tb.out_we == 2
    await tb.refused((DESTROY_CQ, [5]), BAD_STATE)   # QP 6 completes into it
    await tb.ok((DESTROY_QP, [6]))
    assert tb.take_events() == [("qp_state", {"qpn": 6, "state": FREE})]
    assert (await tb.qp(6))[0] == FREE
    await tb.ok((DESTROY_CQ, [5]))
    assert (await tb.cq(5))[0] == 0
    assert tb.out_we == 2

    # MRs: a write, a refused write over it (no event, the entry as it was),
    # a re-write, an invalidate.
    entry = {"key": 0x5A, "access": 0xD, "pd": 0x1234, "bound": NOT_BOUND, "base_to": 0xFEDC_BA98_7654_0000,
             "len": 0x8000, "addr": W0 + 0x4_0123}
    await tb.ok(mr_write(9, entry["key"], entry["access"], entry["pd"], entry["bound"], entry["base_to"],
                         entry["len"], entry["addr"]))
    assert tb.take_events() == [("mr_wr", dict(entry, index=9))]
    assert await tb.mr(9) == (1, entry)
    await tb.refused(mr_write(9, 0x77, 1, 1, 3, 0, 0x2_0000, W1), OUT_OF_WINDOW)   # past window 3's end
    await tb.refused(mr_write(9, 0x77, 1, 1, 8, 0, 0x1000, W1), BAD_INDEX)         # bound to QP 8 of 8
    assert tb.take_events() == []
    assert await tb.mr(9) == (1, entry)
    e2 = {"key": 0x77, "access": 1, "pd": 1, "bound": 7, "base_to": 0, "len": 0x1_0000, "addr": W1}
    await tb.ok(mr_write(9, 0x77, 1, 1, 7, 0, 0x1_0000, W1))
    assert tb.take_events() == [("mr_wr", dict(e2, index=9))]
    await tb.ok((MR_INVALIDATE, [9]))
    await tb.refused((MR_INVALIDATE, [9]), BAD_STATE)
    assert tb.take_events() == [("mr_inv", {"index": 9})]
    assert (await tb.mr(9))[0] == 0

    # A Send with Invalidate (the datapath's dp_inv pulse) invalidates an
    # entry as MR_INVALIDATE does, without an mr_inv pulse (ddp_rx's table
    # did it): the entry reads invalid, MR_INVALIDATE of it is refused, and
    # the entry beside it is untouched.
    await tb.ok(mr_write(9, 0x77, 1, 1, 7, 0, 0x1_0000, W1))
    await tb.ok(mr_write(10, 0x78, 1, 1, 7, 0, 0x1_0000, W1))
    tb.take_events()
    await FallingEdge(dut.clk)
    dut.dp_inv_valid.value, dut.dp_inv_index.value = 1, 9
    await FallingEdge(dut.clk)
    dut.dp_inv_valid.value = 0
    assert (await tb.mr(9))[0] == 0 and (await tb.mr(10))[0] == 1
    await tb.refused((MR_INVALIDATE, [9]), BAD_STATE)
    await tb.ok((MR_INVALIDATE, [10]))
    assert tb.take_events() == [("mr_inv", {"index": 10})]

    # The event ring's configuration.
    assert not dut.evr_valid.value
    await tb.refused(event_ring(W0, 4, W0 + 0x1000, 2, 11), BAD_ARG)   # exceptions not aligned to 8 KiB
    assert not dut.evr_valid.value
    await tb.ok(event_ring(W0, 4, W0 + 0x2000, 2, 11))
    assert dut.evr_valid.value and dut.evr_ring.value.integer == W0 and dut.evr_log2.value.integer == 4
    assert dut.evr_exc_ring.value.integer == W0 + 0x2000
    assert dut.evr_exc_log2.value.integer == 2 and dut.evr_exc_buf_log2.value.integer == 11
    assert tb.take_events() == [] and tb.overruns == 0

    # Windows: a refused DMA_WINDOW (length not a multiple of 4 KiB) gives
    # no event; clearing a slot gives one with length 0.
    await tb.refused(dma_window(2, W1, 0x1800), BAD_ARG)
    assert tb.take_events() == []
    await tb.ok(dma_window(3, W1, 0))
    assert tb.take_events() == [("win", {"slot": 3, "addr": W1, "len": 0})]


@cocotb.test()
async def cycles_overrun(dut):
    tb = TB(dut)
    await tb.start()
    base = WINDOWS + 4
    st, n = await tb.cmd(dma_window(1, W0, 1 << 20))
    assert (st, n) == (OK, base)
    st, n = await tb.cmd((0x0B, []))
    assert (st, n) == (BAD_OPCODE, base)
    assert dut.last_op.value.integer == 0x0B
    st, n = await tb.cmd(create_cq(1, W0, 4))
    assert (st, n) == (OK, base)
    st, n = await tb.cmd(create_qp(0, 0, W0 + 0x1000, 2, W0 + 0x2000, 2, 1, 1))
    assert (st, n) == (OK, base + 4), "CREATE_QP: the two reference counts"
    st, n = await tb.cmd(create_qp(0, 0, W0 + 0x1000, 2, W0 + 0x2000, 2, 1, 1))
    assert (st, n) == (BAD_STATE, base), "a refused CREATE_QP counts nothing"
    # The engines' consumer indices of QP 0 (what rnic_sq and rnic_rq
    # answer for ci_qpn): QP_DRAIN's ARG0 and ARG1.
    dut.sq_ci.value = 0xfff3
    dut.rq_ci.value = 0x1234
    st, n = await tb.cmd((QP_DRAIN, [0]))
    assert (st, n) == (OK, base) and tb.out_we == 1
    assert dut.ci_qpn.value.integer == 0, "QP_DRAIN: the indices of its QP"
    assert tb.out_val == 0x1234 << 32 | 0xfff3, "QP_DRAIN: ARG0 the SQ's index, ARG1 the RQ's"
    st, n = await tb.cmd((DESTROY_QP, [0]))
    assert (st, n) == (OK, base + 4)
    # A CMD write while BUSY (DESTROY_CQ of CQ 0, which would be refused
    # BAD_STATE): ignored, counted once; the running command's answer stands.
    for at in (1, base // 2, base - 1):
        st, n = await tb.cmd(create_cq(2 + at % 4, W0, 4), extra_cmd_at=at)
        assert (st, n) == (OK, base), f"overrun at clock {at}"
        assert dut.last_op.value.integer == CREATE_CQ
    assert tb.overruns == 3 and tb.out_we == 1
    # CQ 1 is free of QPs again: the counts went up and back down.
    assert (await tb.cmd((DESTROY_CQ, [1])))[0] == OK


@cocotb.test()
async def refusals(dut):
    """Each command's decode (non-zero unused word or bit) and index
    refusals, before anything exists: the answers the cross-check compares
    with the model's, here at the block's own ports (and no event)."""
    tb = TB(dut)
    await tb.start()
    qps, cqs, stags, vecs = 8, 8, 16, 2
    for op_args, want in [
        ((CREATE_CQ, [1, 0, 0, 4, 0, 0, 0, 1]), BAD_ARG),
        ((CREATE_CQ, [cqs, 0, 0, 4]), BAD_INDEX),
        ((CREATE_CQ, [1, 0, 0, 4, vecs]), BAD_INDEX),
        ((DESTROY_CQ, [1, 0, 1]), BAD_ARG),
        ((DESTROY_CQ, [cqs]), BAD_INDEX),
        ((CREATE_QP, [1, 0, 0, 0, 0, 0, 0x1_0202, 0]), BAD_ARG),
        ((CREATE_QP, [qps, 0, 0, 0, 0, 0, 0x0202, 0]), BAD_INDEX),
        ((CREATE_QP, [1, 0, 0, 0, 0, 0, 0x0202, cqs << 16]), BAD_INDEX),
        ((QP_RTS, [1, 1 << 20 | 100]), BAD_ARG),
        ((QP_RTS, [qps, 100]), BAD_INDEX),
        ((QP_DRAIN, [1, 0, 0, 0, 0, 0, 0, 1]), BAD_ARG),
        ((QP_DRAIN, [qps]), BAD_INDEX),
        ((DESTROY_QP, [1, 1]), BAD_ARG),
        ((DESTROY_QP, [1 << 31]), BAD_INDEX),
        ((MR_WRITE, [1 | 0x10 << 24]), BAD_ARG),
        ((MR_WRITE, [stags, NOT_BOUND << 16]), BAD_INDEX),
        ((MR_INVALIDATE, [1, 0, 0, 0, 0, 1]), BAD_ARG),
        ((MR_INVALIDATE, [stags]), BAD_INDEX),
        ((EVENT_RING, [0, 0, 0x01_0b_02_04]), BAD_ARG),
        ((EVENT_RING, [0, 0, 0x0b_02_04, 0, 0, 1]), BAD_ARG),
        ((DMA_WINDOW, [0, 0, 0, 0x1000, 0, 0, 1]), BAD_ARG),
        ((DMA_WINDOW, [WINDOWS, 0, 0, 0x1000]), BAD_INDEX),
        ((0, []), BAD_OPCODE),
        ((0xFF, [1, 2, 3]), BAD_OPCODE),
    ]:
        await tb.refused(op_args, want)
    assert tb.take_events() == [] and tb.out_we == 0


@cocotb.test()
async def reset_clears(dut):
    tb = TB(dut)
    await tb.start()
    await tb.ok(dma_window(0, W0, 1 << 20))
    await tb.ok(create_cq(0, W0, 4))
    await tb.ok(create_qp(1, 0, W0 + 0x1000, 2, W0 + 0x2000, 2, 0, 0))
    await tb.ok(mr_write(2, 0, 0, 0, NOT_BOUND, 0, 0x1000, W0))
    await tb.ok(event_ring(W0, 4, W0 + 0x2000, 2, 11))
    await tb.reset()
    assert not dut.evr_valid.value and not dut.busy.value and dut.status_code.value.integer == OK
    assert (await tb.cq(0))[0] == 0 and (await tb.qp(1))[0] == FREE and (await tb.mr(2))[0] == 0
    # The window went with the rest; the CQ and QP numbers are free.
    await tb.refused(create_cq(0, W0, 4), OUT_OF_WINDOW)
    await tb.ok(dma_window(0, W0, 1 << 20))
    await tb.ok(create_cq(0, W0, 4))
    await tb.ok(create_qp(1, 0, W0 + 0x1000, 2, W0 + 0x2000, 2, 0, 0))
    await tb.refused((MR_INVALIDATE, [2]), BAD_STATE)
    # The CQ's count restarted at 0 with CREATE_CQ: one QP, then none.
    await tb.refused((DESTROY_CQ, [0]), BAD_STATE)
    await tb.ok((QP_DRAIN, [1]))
    await tb.ok((DESTROY_QP, [1]))
    await tb.ok((DESTROY_CQ, [0]))


@pytest.mark.parametrize("sim", hdlsim.simulators(langs=("verilog",)))
def test_rnic_admin(sim):
    hdlsim.run(
        test="rnic_admin",
        sim=sim,
        tag="small",
        toplevel="rnic_admin",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "rnic_admin.v", hdlsim.RTL_DIR / "sdp_ram.v"],
        parameters=PARAMS,
    )
