"""ddp_rx's corners (issue 29 item 4), on the lean bench of test_ddp_rx.py,
checked against the Go oracle (cmd/rnic-oracle ddp_place_stream).

The cocotb tests here are those that today's RTL passes; they run in every
case of test_ddp_rx.py and test_ddp_rx_wr_req (CORNER_TESTS there, after
the others). The corners that expose a bug of the RTL are in
pending_corners.py (the same bench, not collected by pytest), each with the
command that runs it and the design of its fix.

  corner_cut_other_conn  an invalidation taken between the pieces of a
                         ULPDU of one connection does not touch another
                         connection's ULPDU through another STag, nor an
                         untagged one (placed whole, reported as Go does).
  corner_fence_between   the fence for ULPDUs that ended before the
                         invalidation: RDMA Writes through an STag, whole,
                         then its entry invalidated: every write of them
                         comes before the s_stag handshake.
"""

from __future__ import annotations

import random

import cocotb

from rdmap_tx import SEND, WRITE
from test_ddp_rx import REMOTE_WRITE, hdr_tagged, hdr_untagged, lean_steps

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
