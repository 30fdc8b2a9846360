"""ddp_rx's corners (issue 29 item 4), on the lean bench of test_ddp_rx.py,
checked against the Go oracle (cmd/rnic-oracle ddp_place_stream).

They run in every case of test_ddp_rx.py and test_ddp_rx_wr_req
(CORNER_TESTS there, after the others). Each of the last six found a bug of
the RTL, now fixed (the fix named beside it); each failed before its fix.

  corner_cut_other_conn  an invalidation taken between the pieces of a
                         ULPDU of one connection does not touch another
                         connection's ULPDU through another STag, nor an
                         untagged one (placed whole, reported as Go does).
  corner_fence_between   the fence for ULPDUs that ended before the
                         invalidation: RDMA Writes through an STag, whole,
                         then its entry invalidated: every write of them
                         comes before the s_stag handshake.
  corner_reset_quiet     reset at random clocks in the middle of traffic:
                         nothing of the traffic before it is written or
                         reported after it, and the block, configured
                         anew, places and reports as a fresh Go session.
  corner_cut_invalidate  an invalidation between the pieces of a ULPDU
                         that places through the STag cuts it: nothing
                         placed after the handshake, Invalid STag, the
                         stream ends (ddp_rx_setup's STag generations).
  corner_cut_overwrite   the same for an overwrite of the entry (another
                         key; the same key in another PD).
  corner_reset_mid_traffic  reset in traffic, then no configuration from
                         before it acts (ddp_rx_tables' clear sweep).
  corner_fence_queued    the fence with writes still queued: the s_stag
                         handshake that invalidates an STag waits until no
                         write through it is left in the AW/W queues (and
                         its bursts are answered).
  corner_restart_in_flight  a connection restarted (s_conn) while ULPDUs
                         of its old stream wait for their verdicts: they
                         report nothing after the restart, the new stream
                         reports as a fresh one.
  corner_restart_bresp   the same with an old burst's SLVERR pending
                         (AXI4 port only: not in test_ddp_rx_wr_req).
"""

from __future__ import annotations

import os
import random

import cocotb
from cocotb.triggers import ClockCycles

import oracle
from rdmap_tx import SEND, WRITE
from test_ddp_rx import REMOTE_WRITE, RQ_DEPTH, Lean, Steps, hdr_tagged, hdr_untagged, lean_steps

# The pieces of a ULPDU in these tests: cut where a piece ends inside a
# beat and at a beat boundary.


def cuts_for(lanes: int, n: int) -> tuple[int, int]:
    """Two cuts of an n-octet tagged ULPDU (header 14): the first piece ends
    inside a beat past the header, the second on a beat boundary."""
    a = 14 + lanes + 3
    b = ((a + 2 * lanes) // lanes) * lanes
    assert a < b < n
    return a, b


@cocotb.test()
async def corner_cut_other_conn(dut):
    """Invalidating STag X between the pieces of connection A's ULPDU that
    places through X cuts only ULPDUs through X: connection B's RDMA Write
    through STag Y, in pieces interleaved with A's, and connection C's Send,
    in pieces, carry on and are placed whole and completed (the Go oracle:
    ddp_place_stream with upto/more). Here A's ULPDU ends before the
    invalidation (the invalidation is between B's pieces and C's), so A's
    Write completes too."""
    lean, st = await lean_steps(dut, "corner_other")
    lanes = lean.lanes
    a, b, c = 1, 2, 3
    pd = 4
    for x in (a, b, c):
        st.conn(x, pd)
    st.stag(10, 0x11, pd, REMOTE_WRITE, 0, 4096, 0x1000)
    st.stag(11, 0x22, pd, REMOTE_WRITE, 0, 4096, 0x2000)
    st.post(c, 0, 0x3000, 1024, 9)
    rng = random.Random(3)
    n = 6 * lanes + 5
    wa = hdr_tagged(WRITE, 10 << 8 | 0x11, 7, rng.randbytes(n))
    wb = hdr_tagged(WRITE, 11 << 8 | 0x22, 5, rng.randbytes(n))
    sc = hdr_untagged(SEND, 0, 1, 0, rng.randbytes(n))
    ua = st.begin(a, wa, cuts_for(lanes, len(wa)))
    ub = st.begin(b, wb, cuts_for(lanes, len(wb)))
    uc = st.begin(c, sc, cuts_for(lanes, len(sc)))
    st.more(ua)
    st.more(ua)  # A's Write is whole
    st.more(ub)
    st.stag(10, 0, pd, 0, 0, 0, 0, valid=False, fence=(0x1000, 0x2000))
    st.more(uc)
    st.more(ub)
    st.more(uc)
    resp = await st.run("invalidation between other connections' pieces")
    assert [(e["conn"], e["kind"]) for e in resp["events"]] == [(a, "completion"), (b, "completion"),
                                                                  (c, "completion")], resp["events"]


@cocotb.test()
async def corner_fence_between(dut):
    """The fence, for ULPDUs that ended before the invalidation: a driver
    that invalidates an STag (Send with Invalidate's local counterpart,
    deregistration before freeing the buffer) needs every write through it
    done once the s_stag handshake is: nothing may write the region after.
    RDMA Writes through X of several bursts each, the last piece of the
    last one just before the invalidation; the monitor fails any W beat
    (or request) into X's region after the handshake. Memory and reports
    are Go's (the Writes ended before the invalidation: placed whole)."""
    lean, st = await lean_steps(dut, "corner_fence_between", mem_size=1 << 16)
    lanes = lean.lanes
    a = 5
    st.conn(a, 1)
    rng = random.Random(9)
    region = 8 * 8 * lanes  # eight BURST blocks
    for rnd in range(3):
        host = 0x1000 + rnd * 0x1000 + rnd * 3
        st.stag(20, 0x40 + rnd, 1, REMOTE_WRITE, 0, region, host)
        for i in range(3):
            st.ulpdu(a, hdr_tagged(WRITE, 20 << 8 | (0x40 + rnd), i * (region // 3), rng.randbytes(region // 3)))
        st.stag(20, 0, 1, 0, 0, 0, 0, valid=False, fence=(host, host + region))
        resp = await st.run(f"fence after whole ULPDUs, round {rnd}")
        assert [e["kind"] for e in resp["events"]] == ["completion"] * 3, resp["events"]
    assert len(lean.fenced) == 3


async def start_only(st: Steps) -> dict:
    """Steps.run without the drain and the comparison: the oracle names the
    ranges, the script starts."""
    fields = {"session": st.session, "ops": st.ops, "mem": False}
    if not st.opened:
        fields["open"] = {"mem_size": st.mem_size, "ring_depth": RQ_DEPTH}
        st.opened = True
    resp = oracle.shared().request("ddp_place_stream", **fields)
    for u, pl in zip(st.ulpdus, resp["places"]):
        u.place = pl
    st.lean.script.extend(st.held)
    st.held = []
    st.ops, st.ulpdus, st.pieces_of, st.split = [], [], {}, {}
    return resp


async def reset_mid_traffic(lean: Lean, rng: random.Random, rnd: int) -> None:
    """Traffic on connections 1, 2, 3 (PD 8: RDMA Writes through STags 30
    and 31, some in two pieces, Sends into posted buffers, s_stag steps
    between pieces, the write port held for 200 clocks), and reset (rst
    for Lean.reset_len clocks) at a random clock in its first 400. Checks
    that nothing was written (the monitor: every range is closed at the
    reset), and nothing reported or pulsed on m_done, m_drop, m_post_err or
    m_berr after the reset for that traffic; then clears the bench's
    memory."""
    dut = lean.dut
    st = Steps(lean, f"corner_reset_before{rnd}", 1 << 16)
    a, b, c = 1, 2, 3
    for x in (a, b, c):
        st.conn(x, 8)
    st.stag(30, 0x61, 8, REMOTE_WRITE, 0, 0x1000, 0x1000)
    st.stag(31, 0x62, 8, REMOTE_WRITE, 0, 0x1000, 0x2000)
    for i in range(4):
        st.post(b, 0, 0x3000 + 0x100 * i, 0x100, 50 + i)
    for i in range(4):
        w = hdr_tagged(WRITE, 30 << 8 | 0x61, i * 0x200, rng.randbytes(rng.randrange(40, 400)))
        u = st.begin(a, w, (14 + rng.randrange(1, len(w) - 14),))
        st.ulpdu(b, hdr_untagged(SEND, 0, i + 1, 0, rng.randbytes(rng.randrange(1, 0x100))))
        if i == 1:
            st.hold(200, axi=True)
        st.ulpdu(c, hdr_tagged(WRITE, 31 << 8 | 0x62, i * 0x200, rng.randbytes(rng.randrange(1, 400))))
        st.stag(32 + i, 0x70, 8, REMOTE_WRITE, 0, 0x100, 0x5000)
        st.more(u)
    await start_only(st)
    t0 = lean.cycle
    lean.reset_at = t0 + rng.randrange(2, 400)
    while lean.reset_done == rnd:
        await ClockCycles(dut.clk, 1)
    dut._log.info("round %d: reset %d clocks after the traffic began", rnd, lean.cycle - t0 - lean.reset_len)
    await ClockCycles(dut.clk, 50)
    # Nothing reported after the reset for traffic from before it.
    assert not lean.events and not lean.drops and not lean.post_errs and not lean.berrs, \
        (dict(lean.events), lean.drops, lean.post_errs, lean.berrs)
    lean.mem[:] = bytes(len(lean.mem))
    lean.fenced.clear()


@cocotb.test()
async def corner_reset_quiet(dut):
    """Reset in the middle of traffic, at random clocks (DDP_RX_RESET_ROUNDS
    rounds, default 3; the clocks from the case's RANDOM_SEED): pieces in
    flight on three connections, ULPDUs in pieces, s_stag steps pending
    between them, writes held in the AW/W queues by the write port. What a
    driver that resets the block needs: nothing of the traffic before the
    reset is written after it (the monitor closes every range at the reset:
    any W beat or request is a violation), nor reported on m_cpl, m_err,
    m_done, m_drop, m_post_err or m_berr; and the block then works: with
    every connection, STag and buffer configured anew (s_conn, s_stag over
    every entry used, fresh posts), Writes in pieces and Sends are placed
    and reported as a fresh Go session says. (That the tables themselves
    are cleared by the reset, without configuring anything first, is
    corner_reset_mid_traffic.)"""
    lean, _ = await lean_steps(dut, "corner_reset_quiet_unused")
    rng = random.Random(random.getrandbits(64))
    lanes = lean.lanes
    for rnd in range(int(os.environ.get("DDP_RX_RESET_ROUNDS", "3"))):
        await reset_mid_traffic(lean, rng, rnd)
        st = Steps(lean, f"corner_reset_quiet{rnd}", 1 << 16)
        a, b, c = 1, 2, 3
        for x in (a, b, c):
            st.conn(x, 9)
        st.stag(30, 0x63, 9, REMOTE_WRITE, 0, 0x1000, 0x1000)
        st.stag(31, 0x64, 9, REMOTE_WRITE, 0, 0x1000, 0x2000)
        for i in range(4):
            st.stag(32 + i, 0, 0, 0, 0, 0, 0, valid=False)
        st.post(b, 0, 0x3000, 0x100, 70)
        w = hdr_tagged(WRITE, 30 << 8 | 0x63, 5, rng.randbytes(5 * lanes))
        u = st.begin(a, w, cuts_for(lanes, len(w)))
        st.ulpdu(b, hdr_untagged(SEND, 0, 1, 0, rng.randbytes(50)))
        st.more(u)
        st.ulpdu(c, hdr_tagged(WRITE, 31 << 8 | 0x64, 9, rng.randbytes(3 * lanes)))
        st.more(u)
        st.ulpdu(c, hdr_tagged(WRITE, 32 << 8 | 0x70, 0, b"invalid" * 3))
        resp = await st.run(f"configured anew after reset, round {rnd}")
        kinds = sorted((e["conn"], e["kind"], e["layer"], e["etype"], e["code"]) for e in resp["events"])
        assert kinds == [(a, "completion", 0, 0, 0), (b, "completion", 0, 0, 0), (c, "completion", 0, 0, 0),
                         (c, "error", 1, 1, 0)], kinds


@cocotb.test()
async def corner_cut_invalidate(dut):
    """Invalidation between the pieces of a multi-piece tagged ULPDU that
    already passed its checks (draft-ietf-rddp-ddp-07 8.1: nothing is
    placed through an STag that has not been validated; a driver that
    invalidates an STag must be able to reuse the memory once the s_stag
    handshake is done): connection A's RDMA Write through X in three
    pieces, X invalidated (s_stag entry_valid = 0) after the first, with
    connection B's Write through Y in pieces interleaved. Go's answer
    (ddp_place_stream upto/more): A's payload of the first piece is placed,
    nothing after the handshake (the monitor fences X's region from the
    clock after it), A reports Invalid STag (1/1/0, RFC 5041 7.2) and its
    stream ends (A's next Write places and reports nothing); B's Write is
    placed whole and completes."""
    lean, st = await lean_steps(dut, "corner_cut_inv")
    lanes = lean.lanes
    a, b = 1, 2
    pd = 4
    st.conn(a, pd)
    st.conn(b, pd)
    st.stag(10, 0x11, pd, REMOTE_WRITE, 0, 4096, 0x1000)
    st.stag(11, 0x22, pd, REMOTE_WRITE, 0, 4096, 0x2000)
    rng = random.Random(4)
    n = 8 * lanes + 5
    wa = hdr_tagged(WRITE, 10 << 8 | 0x11, 7, rng.randbytes(n))
    wb = hdr_tagged(WRITE, 11 << 8 | 0x22, 5, rng.randbytes(n))
    ua = st.begin(a, wa, cuts_for(lanes, len(wa)))
    ub = st.begin(b, wb, cuts_for(lanes, len(wb)))
    st.stag(10, 0, pd, 0, 0, 0, 0, valid=False, fence=(0x1000, 0x2000))
    st.more(ub)
    st.more(ua)
    st.more(ub)
    st.more(ua)
    st.ulpdu(a, hdr_tagged(WRITE, 10 << 8 | 0x11, 600, b"after" * 10))
    resp = await st.run("invalidation between a ULPDU's pieces")
    ev = [(e["conn"], e["kind"], e["layer"], e["etype"], e["code"]) for e in resp["events"]]
    assert sorted(ev) == [(a, "error", 1, 1, 0), (b, "completion", 0, 0, 0)], ev
    first = cuts_for(lanes, len(wa))[0] - 14
    assert lean.mem[0x1007:0x1007 + first] == wa[14:14 + first]


@cocotb.test()
async def corner_cut_overwrite(dut):
    """An overwrite of the entry between the pieces (s_stag with
    entry_valid = 1 and another key, then the same key in another PD)
    cuts the ULPDU as an invalidation does: the entry it was checked
    against is gone, so nothing more is placed through it and the ULPDU
    reports Invalid STag (Go's ddp_place_stream: any write of the entry
    cuts). The old region is fenced from the handshake on; the new entry's
    region is another host range, written by nothing of the old ULPDU."""
    lean, st = await lean_steps(dut, "corner_cut_ovw")
    lanes = lean.lanes
    a, b = 3, 4
    st.conn(a, 6)
    st.conn(b, 6)
    st.stag(12, 0x31, 6, REMOTE_WRITE, 0, 4096, 0x1000)
    st.stag(13, 0x41, 6, REMOTE_WRITE, 0, 4096, 0x3000)
    rng = random.Random(5)
    n = 8 * lanes + 9
    wa = hdr_tagged(WRITE, 12 << 8 | 0x31, 3, rng.randbytes(n))
    wb = hdr_tagged(WRITE, 13 << 8 | 0x41, 11, rng.randbytes(n))
    ua = st.begin(a, wa, cuts_for(lanes, len(wa)))
    ub = st.begin(b, wb, cuts_for(lanes, len(wb)))
    st.more(ua)
    st.stag(12, 0x32, 6, REMOTE_WRITE, 0, 4096, 0x2000, fence=(0x1000, 0x2000))  # another key
    st.more(ub)
    st.stag(13, 0x41, 7, REMOTE_WRITE, 0, 4096, 0x4000, fence=(0x3000, 0x4000))  # same key, another PD
    st.more(ua)
    st.more(ub)
    resp = await st.run("overwrite between a ULPDU's pieces")
    ev = sorted((e["conn"], e["kind"], e["layer"], e["etype"], e["code"]) for e in resp["events"])
    assert ev == [(a, "error", 1, 1, 0), (b, "error", 1, 1, 0)], ev
    assert lean.mem[0x2000:0x2100] == bytes(0x100) and lean.mem[0x4000:0x4100] == bytes(0x100)


@cocotb.test()
async def corner_reset_mid_traffic(dut):
    """Reset in the middle of traffic, at random clocks (DDP_RX_RESET_ROUNDS
    rounds, default 3), as corners.corner_reset_quiet (whose checks it
    makes too: nothing written or reported after the reset for the traffic
    before it). After reset the block must be a fresh one (what a driver
    that resets the device assumes: nothing of the old connections, STags
    or posted buffers may act on new traffic); compared with a fresh Go
    session, without configuring anything first: a piece of a connection
    enabled before the reset is dropped (m_drop), a Write through an STag
    registered before it reports Invalid STag on a re-enabled connection,
    a Send on a re-enabled connection whose buffers were posted before it
    reports no buffer (1/2/2), and a fresh post and Send complete with
    MSN 1."""
    lean, _ = await lean_steps(dut, "corner_reset_unused")
    rng = random.Random(random.getrandbits(64))
    a, b, c = 1, 2, 3
    for rnd in range(int(os.environ.get("DDP_RX_RESET_ROUNDS", "3"))):
        await reset_mid_traffic(lean, rng, rnd)
        # A fresh block, and a fresh Go session.
        st = Steps(lean, f"corner_reset_after{rnd}", 1 << 16)
        st.ulpdu(a, hdr_tagged(WRITE, 30 << 8 | 0x61, 0, b"stale conn" * 4))
        st.conn(b, 8)
        st.ulpdu(b, hdr_untagged(SEND, 0, 1, 0, b"stale post" * 3))
        st.conn(c, 8)
        st.ulpdu(c, hdr_tagged(WRITE, 31 << 8 | 0x62, 0, b"stale stag" * 3))
        d = 4
        st.conn(d, 8)
        st.post(d, 0, 0x6000, 0x40, 99)
        st.ulpdu(d, hdr_untagged(SEND, 0, 1, 0, b"fresh" * 4))
        resp = await st.run(f"after reset, round {rnd}")
        kinds = sorted((e["conn"], e["kind"], e["layer"], e["etype"], e["code"]) for e in resp["events"])
        assert kinds == [(b, "error", 1, 2, 2), (c, "error", 1, 1, 0), (d, "completion", 0, 0, 0)], kinds
        assert [x["conn"] for x in resp["drops"]] == [a], resp["drops"]


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
    old ULPDUs never got a verdict: they report nothing). Then connection
    B, whose Write is among those waiting, is restarted too: its old
    Write reports as Go says, before B's handshake."""
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
    # A second restart, of b, while a's old records wait: it waits for them
    # (one restart at a time), so b's Write, taken in before it, completes
    # before it.
    st.conn(b, 2)
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
