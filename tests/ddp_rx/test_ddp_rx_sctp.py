"""The placement block does not care what carried its DDP segments:
hw/rtl/ddp_rx.v fed the segments recovered from a DDP/SCTP path.

RDMA Writes and Sends are cut into DDP segments by the Go stack (the oracle's
rdmap_segments, at the MULPDU of a DDP/SCTP session), sent as DDP Segment
Chunks through iwarp/ddpsctp and recovered at the other end in DDP-SSN order
(the oracle's ddpsctp_path): on one connection over the userspace SCTP
association on loopback UDP (iwarp/sctp), on another over an in-memory
association that delivers the chunks out of order. The recovered segments
must be the segments sent, octet for octet, and the chunk payloads DDP-SSN
and segment (docs/ddp-sctp.md). The block then gets them as it gets MPA's
ULPDUs: pieces on s_axis, each ULPDU's verdict good (SCTP's CRC32c checked
the packets that carried them; there is no MPA CRC). Memory, completions and
m_done are checked against the oracle's ddp_place for the same ULPDUs, as
test_ddp_rx.py checks MPA's.

Run with `.venv/bin/pytest tests/ddp_rx/test_ddp_rx_sctp.py` (SIMS=...,
RANDOM_SEED=... as in tests/hdlsim.py).
"""

from __future__ import annotations

import cocotb
import pytest

import hdlsim
import oracle
from rdmap_tx import SEND, WRITE
from test_ddp_rx import REMOTE_WRITE, RTL_SOURCES, TB, Ulpdu, VHDL_SOURCES, axi_width

# The SCTP packet size of the udp path: the userspace association's default
# (iwarp/sctp DefaultMTU), whose MULPDU is what a session across hosts uses.
SCTP_MTU = 1200


def recovered(tb: TB, segs: list[bytes], **path) -> list[bytes]:
    """The segments as the far end of the DDP/SCTP path hands them to DDP,
    checked against what was sent."""
    rep = tb.oracle.request("ddpsctp_path", segments=[s.hex() for s in segs], **path)
    got = [bytes.fromhex(h) for h in rep["segments"]]
    assert got == segs, f"{path}: the recovered segments differ from those sent"
    for i, (c, s) in enumerate(zip(rep["chunks"], segs)):
        chunk = bytes.fromhex(c)
        assert chunk[:2] == (i + 1).to_bytes(2, "big") and chunk[2:] == s, f"{path}: chunk {i} is not DDP-SSN {i + 1} and the segment"
    return got


@cocotb.test()
async def sctp_placement(dut):
    """Writes and Sends on two connections, one per DDP/SCTP path,
    interleaved at piece boundaries, placed as Go places them."""
    tb = TB(dut)
    await tb.start()
    mulpdu = tb.oracle.request("ddpsctp_path", segments=[], path="udp", mtu=SCTP_MTU)["mulpdu"]
    pd = 7
    plans = {
        # conn: (path, STag index, key, TO base, host of the region, host of the receive buffers)
        3: ({"path": "udp", "mtu": SCTP_MTU}, 5, 0x21, 0x100000, 0x1000, 0x8000),
        4: ({"path": "pipe", "reorder": 8, "seed": tb.rng.getrandbits(32)}, 6, 0x22, 0x200000, 0x10000, 0x18000),
    }
    per_conn = {}
    for conn, (path, index, key, base, host, rbufs) in plans.items():
        await tb.conn(conn, pd)
        await tb.stag(index, key, pd, REMOTE_WRITE, base, 0x4000, host)
        for i in range(4):
            await tb.post(conn, 0, rbufs + i * 0x1000, 0x1000, i)
        stag = index << 8 | key
        rnd = tb.rng.randbytes
        segs = []
        for op, n, kw in ((WRITE, 6000, {"stag": stag, "to": base}),
                          (SEND, 2500, {"msn": 1}),
                          (WRITE, 300, {"stag": stag, "to": base + 0x2000 + 3}),
                          (SEND, 40, {"msn": 2}),
                          (WRITE, 1, {"stag": stag, "to": base + 0x3fff}),
                          (SEND, 1, {"msn": 3})):
            segs += tb.segments(op, mulpdu, payload=rnd(n), **kw)
        assert max(len(s) for s in segs) <= mulpdu
        us = [Ulpdu(conn, s) for s in recovered(tb, segs, **path)]
        for u in us:
            tb.cut(u)
        per_conn[conn] = us
        dut._log.info("conn %d: %d DDP segments (MULPDU %d) recovered from the %s path", conn, len(segs), mulpdu,
                      path["path"])
    await tb.send(per_conn)
    events = await tb.check()
    for conn in plans:
        # No error, and the three Sends complete in order.
        assert all(e[0] == "completion" for e in events[conn]), f"conn {conn}: {events[conn]}"
        sends = [e[5] for e in events[conn] if e[1] == SEND]
        assert sends == [1, 2, 3], f"conn {conn}: Send completions for MSNs {sends}"


CASES = hdlsim.width_cases((64, 512), langs=("verilog", "vhdl"), sim_widths={"icarus": (64,), "ghdl": (64,)})


@pytest.mark.parametrize("sim,width", CASES)
def test_ddp_rx_sctp(sim, width, oracle_path):
    axi = axi_width(width)
    hdlsim.run(
        test="ddp_rx",
        sim=sim,
        tag=f"W{width}-A{axi}-sctp",
        toplevel="ddp_rx",
        test_module=__name__,
        verilog_sources=RTL_SOURCES,
        vhdl_sources=VHDL_SOURCES,
        parameters={"DATA_W": width, "AXI_W": axi},
        extra_env={oracle.ENV_VAR: str(oracle_path), "DDP_RX_WIDTH": str(width), "DDP_RX_BIG": "0",
                   "TESTCASE": "sctp_placement"},
    )
