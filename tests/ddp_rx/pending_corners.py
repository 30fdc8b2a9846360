"""PENDING: corner tests that today's hw/rtl/ddp_rx.v fails (issue 29 item 4).

NOT collected by pytest (no test_ prefix) and in no make target: each cocotb
test here exposes a bug of the RTL, to be fixed on the split stage modules
(the split of ddp_rx.v lands first). Once a fix is in, move its test to
corners.py and its name to CORNER_TESTS in test_ddp_rx.py. The expected
values are the Go oracle's (cmd/rnic-oracle ddp_place_stream, with the
upto/more ops for ULPDUs in pieces, TestPlaceStreamCut).

Run one (DDP_RX_PENDING=1 adds this module to the case's cocotb modules):

  DDP_RX_PENDING=1 DDP_RX_TESTCASE=<test> SIMS=verilator .venv/bin/pytest -q \
      'tests/ddp_rx/test_ddp_rx.py::test_ddp_rx[verilator-W64]'

(...[verilator-W512] for 512 bits, test_ddp_rx_wr_req[verilator-W64] for the
write-request port). Seeds: the cases' fixed ones, RANDOM_SEED=927333794
(W64) and RANDOM_SEED=156754650 (W512; each run prints its own as
"hdlsim: ddp_rx verilator-W512-A1024 RANDOM_SEED=..."); the tests here
use fixed random.Random seeds. Results below: RTL of commit 2eef894
(ddp_rx.v unchanged on this branch).

FINDINGS AND FIX DESIGNS (stage names: ddp_rx.v's header, "Structure")

2. corner_fence_queued: the s_stag handshake that invalidates an STag is
   taken while writes through it are still in the AW/W queues.
   The half-beat Writes, which fit in the queues, fail at every width and
   port tried: W64 "W beat writes 0x1005..0x1008 (beat 0x1000 strobes 0xe0)
   into 0x1005..0x1013, fenced", W512 "W beat writes 0x1005..0x1028 (beat
   0x1000 strobes 0xffffffffe0) into 0x1005..0x104b", the same on
   test_ddp_rx_wr_req[verilator-W64] and [verilator-W512]. (Writes of 16
   beats alone failed only at W64 AXI4: the queues fill and placement
   waits, so the handshake comes late enough elsewhere.)
   Why: all_idle (s_*_ready) waits for placement (pl_empty) but not for
   aw_fifo/w_fifo, which a held write port keeps full.
   Fix: s_stag_ready (at least; s_conn too costs nothing) also waits for
   !aw_out_valid && !w_out_valid (and w_h1v in the two-beat ports), so
   every write of the pieces ahead has been taken by the port; for a host
   that needs the write done, not just issued (an AXI memory, not PCIe's
   posted writes), also for !bq_out_valid (every burst's B response in).
   This cannot deadlock: the queues drain with the write port alone, and B
   responses wait at most for deliveries, which wait for verdicts of
   ULPDUs already taken in.

4. corner_restart_in_flight, corner_restart_bresp: a restarted connection reports the old
   stream's ULPDUs against the new one.
   W64: "conn 7: event 0: got ('completion', 0, 1, 10369, ...) [the old
   stream's RDMA Write], want ('completion', 3, ..., id 2) [the new
   stream's Send] (3 got, 2 wanted)"; W512 and test_ddp_rx_wr_req W64 the
   same. The header documents this as a precondition the block does not
   check. corner_restart_bresp (AXI4 only), W64 and W512: "conn 10:
   event 0: got ('error', 0, 0, 0), want ('completion', ...)": the old
   stream's SLVERR is reported as the new stream's Local Catastrophic
   Error in place of its Write's completion.
   Why: V0 delivers every record; s_conn only clears dead_reg/herr_reg
   and the context.
   Fix: stale records. At the s_conn handshake the pipeline is empty
   (all_idle), so every record of the old stream is in rec_fifo or V0:
   give each rec_fifo slot and V0 a stale bit, set at cf_conn for the
   slots holding a record of s_conn_conn (2^REC_AW + 1 comparators of
   CONN_W bits). V0 takes a stale record's verdict (it is in the verdict
   stream) and its bursts' B responses as today, reports nothing, sets no
   dead bit. The bursts: bq_fifo's entries get a stale bit the same way
   (2^BQ_AW comparators), and an error response to a stale burst does not
   set herr_reg (herr_set &= !stale). A restart is then legal at any
   time; the header's precondition goes. (A ULPDU of the old stream cut
   in the middle by the restart: its later pieces come after the
   handshake and are taken as the new stream's, as today.)
"""

from __future__ import annotations

import random

import cocotb

from rdmap_tx import SEND, WRITE
from test_ddp_rx import REMOTE_WRITE, hdr_tagged, hdr_untagged, lean_steps

PENDING_TESTS = ("corner_fence_queued", "corner_restart_in_flight", "corner_restart_bresp")


@cocotb.test()
async def corner_fence_queued(dut):
    """The fence with writes still queued: two RDMA Writes through X, whole,
    while the write port holds AWREADY and WREADY (or m_wr_ready) low for
    400 clocks, and X's invalidation right behind them; once with Writes
    that fit in the block's AW/W queues (half a beat of payload), once with
    Writes of 16 beats each. The block may take the invalidation only once
    no write through X is left in its queues: after the handshake nothing
    writes X's region (the monitor's fence). Memory and reports are Go's:
    the Writes ended before the invalidation and are placed whole."""
    lean, st = await lean_steps(dut, "corner_fence_q", mem_size=1 << 16)
    lanes = lean.lanes
    a = 6
    st.conn(a, 1)
    rng = random.Random(10)
    for rnd, n in enumerate((lanes // 2 + 3, 16 * lanes)):
        host = 0x1005 + rnd * 0x4000
        key = 0x50 + rnd
        st.stag(21, key, 1, REMOTE_WRITE, 0, 2 * n, host)
        st.hold(400, axi=True)
        for i in range(2):
            st.ulpdu(a, hdr_tagged(WRITE, 21 << 8 | key, i * n, rng.randbytes(n)))
        st.stag(21, 0, 1, 0, 0, 0, 0, valid=False, fence=(host, host + 2 * n))
        resp = await st.run(f"fence with writes queued, {n}-octet Writes")
        assert [e["kind"] for e in resp["events"]] == ["completion"] * 2, resp["events"]
        assert lean.mem[host:host + 2 * n] != bytes(2 * n)


@cocotb.test()
async def corner_restart_in_flight(dut):
    """A connection restarted (s_conn) while ULPDUs of its old stream wait
    for their verdicts: an RDMA Write, a Send and a Write whose verdict is
    a CRC error, all placed (cut-through), verdicts held back for 1500
    clocks; the restart; then the new stream's Send (MSN 1 again) and
    Write. What a driver needs (issue 30): once s_conn's handshake is done
    every report on the connection is the new stream's, since m_cpl and
    m_err carry no stream generation; so the old stream's ULPDUs
    delivered after the restart report nothing (their verdicts are still
    taken, in order, and the bad one does not end the new stream), and the
    new stream reports what Go reports for a fresh stream (Go is told the
    old ULPDUs never got a verdict: they report nothing)."""
    lean, st = await lean_steps(dut, "corner_restart")
    a, b = 7, 8
    st.conn(a, 2)
    st.conn(b, 2)
    st.stag(40, 0x81, 2, REMOTE_WRITE, 0, 0x1000, 0x1000)
    st.post(a, 0, 0x3000, 0x80, 1)
    rng = random.Random(6)
    st.hold(1500, verdicts=True)
    st.ulpdu(a, hdr_tagged(WRITE, 40 << 8 | 0x81, 0, rng.randbytes(100)), report=False)
    st.ulpdu(b, hdr_tagged(WRITE, 40 << 8 | 0x81, 0x400, rng.randbytes(50)))
    st.ulpdu(a, hdr_untagged(SEND, 0, 1, 0, rng.randbytes(60)), report=False)
    st.ulpdu(a, hdr_tagged(WRITE, 40 << 8 | 0x81, 0x200, rng.randbytes(70)), verdict=2, report=False)
    st.conn(a, 2)
    st.post(a, 0, 0x3100, 0x80, 2)
    st.ulpdu(a, hdr_untagged(SEND, 0, 1, 0, rng.randbytes(30)))
    st.ulpdu(a, hdr_tagged(WRITE, 40 << 8 | 0x81, 0x600, rng.randbytes(90)))
    resp = await st.run("restart with the old stream's verdicts pending")
    ev = [(e["conn"], e["kind"], e.get("id", 0)) for e in resp["events"] if e["conn"] == a]
    assert ev == [(a, "completion", 2), (a, "completion", 0)], ev


@cocotb.test()
async def corner_restart_bresp(dut):
    """A connection restarted while a burst of its old stream waits for its
    B response, which is SLVERR (the write port and the verdicts held over
    the restart): the error is the old stream's (whose ULPDU reports
    nothing after the restart, as in corner_restart_in_flight), and the new
    stream's Write completes (Go: a fresh stream). AXI4 port only (an
    error response)."""
    lean, st = await lean_steps(dut, "corner_restart_b")
    assert not lean.req, "an error response needs the AXI4 port: run it in test_ddp_rx, not test_ddp_rx_wr_req"
    rng = random.Random(7)
    c = 10
    st.conn(c, 2)
    st.stag(41, 0x91, 2, REMOTE_WRITE, 0, 0x1000, 0x5000)
    st.poison(0x5000 + 10, 4)
    st.hold(800, verdicts=True, axi=True)
    st.ulpdu(c, hdr_tagged(WRITE, 41 << 8 | 0x91, 0, rng.randbytes(40)), report=False)
    st.conn(c, 2)
    st.ulpdu(c, hdr_tagged(WRITE, 41 << 8 | 0x91, 0x100, rng.randbytes(40)))
    resp = await st.run("restart with the old stream's error response pending")
    ev = [(e["conn"], e["kind"]) for e in resp["events"]]
    assert ev == [(c, "completion")], ev
