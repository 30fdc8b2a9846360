"""The receive datapath, hw/rtl/rnic_rx.v (mpa_rx -> rx_join -> ddp_rx), end to end.

Every expected value comes from the Go stack through the oracle: each
connection's RDMAP messages are cut into DDP segments by iwarp/rdmap
(rdmap_segments), framed by iwarp/mpa's Framer (mpa_fpdus, markers and CRC
on or off per connection), read back by iwarp/mpa's Receiver (mpa_receive:
which ULPDUs arrive and the MPA verdict on each), and the host memory,
completions and errors come from ddp_place run over the configuration and
those ULPDUs. The testbench only cuts each connection's octet stream into
TCP segments (1 octet to 9000, many of them ending inside a DDP/RDMAP
header, so that rx_join has first pieces to join), interleaves the
connections' segments and compares: the WHOLE host memory (AxiRamWrite of
cocotbext-axi; a stray write anywhere fails), the completions and errors of
each connection in order, and no exception, dropped piece, refused post or
bad B response.

The cocotb tests:
  random_messages  a few connections, RDMA Writes into registered STags and
                   Sends into posted buffers and Read Requests, with
                   invalid ones mixed in (a foreign or stale STag, out of
                   bounds, a Send too long for its buffer), and now and then
                   a corrupted CRC field on a connection's last FPDU;
                   random segment cuts, gaps on the input, back-pressure on
                   the AXI channels and the event outputs.
  out_of_order     a hole in each connection's stream, the segment past it
                   sent first: what mpa_rx_ooo finds (m_early) against the
                   OOOReceiver, placed early by ddp_rx (memory and reports
                   against ddp_place right then), then the hole and the
                   segment in order (against ddp_place again).
  bench            latency from the first octet of an FPDU entering the
                   block to its first AW, and input beats per clock for
                   back-to-back 1460-octet RDMA Writes (one FPDU per
                   segment, markers and CRC on, always-ready memory);
                   then as many again with the stream cut into 1460-octet
                   segments wherever it falls (split_1460: FPDUs cross
                   segments, as from a peer whose segments ignore FPDU
                   boundaries); then (writes_64) 64-octet FPDUs, 44-octet
                   Writes at every 8-octet offset of a 1024-bit host beat,
                   22 to a segment: FPDUs and W beats per clock, on the
                   connection with markers, then on a second one without
                   (writes_64_markers_off); written to
                   build/bench/rnic_rx-W<w>.json (rnic_rx-2x-W512.json
                   with the 1024-bit write port, rnic_rx-req-W<w>.json with
                   the write-request stream).
  config_fence     configuration requests (s_stag, s_conn restarts)
                   raised while ULPDUs are in flight, which ddp_rx holds
                   for its fence and a restart until earlier records are
                   delivered: every request is taken, one at least while
                   a ULPDU was delivered, and the results are Go's (a
                   verdict must never wait for the input held behind a
                   request).

Every test runs on rnic_rx.v (Verilator, Icarus) and on its VHDL-2008 twin
hw/rtl/vhdl/rnic_rx.vhd (GHDL, on the twins of its blocks); with one seed the
two end on the same clock. test_rnic_rx_wr_req runs them all with ddp_rx's
write-request stream in place of the AXI4 port (WR_REQ = 1; Verilator at 64
and 512, GHDL at 64), through tests/wrreq.py's memory model.

Run with `.venv/bin/pytest tests/rnic_rx` (SIMS=..., WAVES=1, RANDOM_SEED=...
as in tests/hdlsim.py). RNIC_RX_MSGS sets the messages per connection.
"""

from __future__ import annotations

import logging
import os
import random
from collections import defaultdict

import cocotb
import pytest
from cocotb.triggers import FallingEdge, RisingEdge
from cocotbext.axi import AxiRamWrite, AxiStreamBus, AxiStreamFrame, AxiStreamSource, AxiWriteBus

import ddp_reports
import hdlsim
import protocol
import tbutil
import oracle
from rdmap_tx import READ_REQ, SEND, SEND_SE, WRITE
from wrreq import WriteRequestRam

CLK_PERIOD_NS = 4
CONN_W = 10
MEM_SIZE = 1 << 18
SLICE = 1 << 15
RQ_DEPTH = 8
HDR = 46
# Read Requests in the mix (RNIC_RX_READ_REQ=0 leaves them out). Their
# 46-octet ULPDU often comes as one piece and then the empty last piece
# mpa_rx sends when a segment ends between the ULPDU and its CRC: ddp_rx
# lost the request's body that way until it kept it per connection
# (RANDOM_SEED=1795390268, Verilator, W=64 showed it).
READ_REQS = os.environ.get("RNIC_RX_READ_REQ", "1") == "1"


class Conn:
    def __init__(self, num: int, pd: int, mem: int, markers: bool, crc: bool, base: int,
                 tuf: bool = False, key: int = 0):
        self.num, self.pd, self.mem = num, pd, mem
        self.markers, self.crc, self.base = markers, crc, base
        self.tuf, self.key = tuf, key                 # TUF mode and the peer's 48-bit key
        self.stags: list[tuple[int, int, int]] = []   # (stag, base TO, len) it may write
        self.foreign: list[int] = []                  # STags it may not use
        self.ulpdus: list[bytes] = []
        self.stream = b""
        self.fpdu_starts: list[int] = []


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.width = len(dut.s_axis_tdata)
        self.lanes = self.width // 8
        assert self.width == int(os.environ["RNIC_RX_WIDTH"])
        self.rng = random.Random(random.getrandbits(64))  # seeded by cocotb
        self.icarus = cocotb.SIM_NAME.lower().startswith("icarus")
        self.oracle = oracle.shared()
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.ram = AxiRamWrite(AxiWriteBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=MEM_SIZE)
        for model in (self.source, self.ram):
            model.log.setLevel(logging.WARNING)
        # With the write-request stream (WR_REQ = 1) the writes come there,
        # into the same memory; the AXI4 port must stay idle.
        self.req = WriteRequestRam(dut, "m_wr", self.ram) if os.environ.get("RNIC_RX_WR_REQ") == "1" else None
        if self.req is None:
            dut.m_wr_ready.value = 0
        self.ops: list[dict] = []
        self.events: dict[int, list] = defaultdict(list)
        self.status: dict[str, int] = defaultdict(int)
        self.exceptions = 0
        self.exc_segs: list[tuple] = []               # (conn, seq, len, reason, octets)
        self._x = None
        self.early_count = 0
        self.early_by_conn: dict[int, int] = defaultdict(int)
        self.skips: list[tuple] = []                  # m_skip: (conn, seq, reason)
        self.stat_verdicts: dict[int, list[int]] = defaultdict(list)   # m_stat_verdict codes per conn
        self.stat_places = 0                          # m_stat_place pulses
        self.p_event_stall = 0.0
        self.cycle = 0
        self.in_beats: list[int] = []
        self.seg_starts: list[int] = []
        self.aw_cycles: list[int] = []
        self.w_cycles: list[int] = []
        self.activity = 0
        self.trace = int(os.environ.get("RNIC_RX_TRACE", "0") or 0)
        self.tr: dict[str, int] = defaultdict(int)

    async def start(self):
        await tbutil.clock_and_reset(self.dut, CLK_PERIOD_NS,
                                      low=("cfg_valid", "fail_valid", "s_conn_valid", "s_stag_valid", "s_post_valid"),
                                      high=("m_cpl_ready", "m_err_ready", "m_exc_tready"))
        # ddp_rx clears its tables after reset (its ready outputs low meanwhile).
        await tbutil.wait_ready(self.dut, ("s_conn_ready",))
        cocotb.start_soon(self._clock_loop())
        # Every port's handshake and format rules (tests/protocol.py).
        self.protocol = protocol.Monitor(self.dut, "rnic_rx")

    def pause(self, p: float):
        return tbutil.pauses(self.rng, p)

    def stall_everywhere(self):
        """Random gaps on the input, back-pressure on the write port and
        on every output (completions, errors, exceptions)."""
        self.source.set_pause_generator(self.pause(0.1))
        for ch in (self.ram.aw_channel, self.ram.w_channel):
            ch.set_pause_generator(self.pause(0.15))
        if self.req is not None:
            self.req.set_pause_generator(self.pause(0.15))
        self.p_event_stall = 0.2

    async def _clock_loop(self):
        dut = self.dut
        rng = random.Random(self.rng.getrandbits(64))
        sof = True
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            if dut.s_axis_tvalid.value and dut.s_axis_tready.value:
                self.in_beats.append(self.cycle)
                if sof:
                    self.seg_starts.append(self.cycle)
                sof = bool(dut.s_axis_tlast.value)
            if self.req is not None:
                assert not dut.m_axi_awvalid.value and not dut.m_axi_wvalid.value, "AXI4 port used with WR_REQ = 1"
                if dut.m_wr_valid.value and dut.m_wr_ready.value:
                    # A request is the AW and the W beat at once.
                    self.aw_cycles.append(self.cycle)
                    self.w_cycles.append(self.cycle)
                    self.activity += 1
            elif dut.m_wr_valid.value:
                raise AssertionError("write-request stream used with WR_REQ = 0")
            if dut.m_axi_awvalid.value and dut.m_axi_awready.value:
                self.aw_cycles.append(self.cycle)
                self.activity += 1
            if dut.m_axi_wvalid.value and dut.m_axi_wready.value:
                self.w_cycles.append(self.cycle)
            if self.trace:
                self._trace()
            if dut.m_cpl_valid.value and dut.m_cpl_ready.value:
                self.events[int(dut.m_cpl_conn.value)].append(ddp_reports.completion(dut))
                self.activity += 1
            if dut.m_err_valid.value and dut.m_err_ready.value:
                self.events[int(dut.m_err_conn.value)].append(ddp_reports.error(dut))
                self.activity += 1
            if dut.m_exc_tvalid.value and dut.m_exc_tready.value:
                self._exc_beat()
            if dut.m_early_valid.value:
                self.early_count += 1
                self.early_by_conn[int(dut.m_early_conn.value)] += 1
                self.activity += 1
            if dut.ooo_busy.value:
                self.activity += 1
            if dut.m_stat_verdict_valid.value:
                self.stat_verdicts[int(dut.m_stat_verdict_conn.value)].append(int(dut.m_stat_verdict_code.value))
            if dut.m_stat_place.value:
                self.stat_places += 1
            if dut.m_skip_valid.value:
                self.skips.append((int(dut.m_skip_conn.value), int(dut.m_skip_seq.value),
                                   int(dut.m_skip_reason.value)))
            for name in ("m_drop_valid", "m_post_err_valid", "m_berr_valid"):
                if getattr(dut, name).value:
                    self.status[name] += 1
            if self.p_event_stall:
                ready = 0 if rng.random() < self.p_event_stall else 1
                dut.m_cpl_ready.value = ready
                dut.m_err_ready.value = ready
                # (and the exception stream, every output under back-pressure)
                dut.m_exc_tready.value = 0 if rng.random() < self.p_event_stall else 1

    def _exc_beat(self):
        """An m_exc beat: the segment's octets, and with its tlast the
        segment, tuser {conn, seq, len, reason} (mpa_rx's format)."""
        dut = self.dut
        user = int(dut.m_exc_tuser.value)
        keep = int(dut.m_exc_tkeep.value)
        raw = int(dut.m_exc_tdata.value).to_bytes(self.lanes, "little")
        if self._x is None:
            self._x = (user, bytearray())
        assert self._x[0] == user, "m_exc tuser changed within a segment"
        self._x[1].extend(b for i, b in enumerate(raw) if keep >> i & 1)
        if dut.m_exc_tlast.value:
            self.exceptions += 1
            self.exc_segs.append((user >> 51, (user >> 19) & 0xFFFFFFFF, (user >> 3) & 0xFFFF, user & 7,
                                  bytes(self._x[1])))
            self._x = None

    # --- configuration -----------------------------------------------------------

    async def _cfg(self, prefix: str, **fields):
        dut = self.dut
        await FallingEdge(dut.clk)
        for k, v in fields.items():
            getattr(dut, f"{prefix}_{k}").value = v
        getattr(dut, f"{prefix}_valid").value = 1
        while True:
            await RisingEdge(dut.clk)
            if getattr(dut, f"{prefix}_ready").value:
                break
        await FallingEdge(dut.clk)
        getattr(dut, f"{prefix}_valid").value = 0

    async def conn(self, c: Conn):
        await self._cfg("cfg", conn=c.num, en=1, mrk_en=int(c.markers), crc_en=int(c.crc), base=c.base,
                        tuf=int(c.tuf), key=c.key)
        await self._cfg("s_conn", conn=c.num, enable=1, pd=c.pd)
        self.ops.append({"conn": {"conn": c.num, "pd": c.pd}})

    async def stag(self, index, key, pd, access, base, length, host, bound=None):
        await self._cfg("s_stag", index=index, entry_valid=1, key=key, pd=pd, bound=int(bound is not None),
                        conn=bound or 0, access=access, base=base, len=length, addr=host)
        e = {"index": index, "valid": True, "key": key, "pd": pd, "access": access, "base": base,
             "len": length, "host": host}
        if bound is not None:
            e["conn"] = bound
        self.ops.append({"stag": e})

    async def post(self, conn, qn, addr, length, id_):
        await self._cfg("s_post", conn=conn, qn=qn, addr=addr, len=length, id=id_)
        self.ops.append({"post": {"conn": conn, "qn": qn, "addr": addr, "len": length, "id": id_}})

    # --- stimulus ---------------------------------------------------------------

    def segments(self, opcode: int, mulpdu: int, **kw) -> list[bytes]:
        resp = self.oracle.rdmap_segments(opcode, mulpdu, **kw)
        assert resp["refused"] is None, f"Go refused opcode {opcode} {kw}: {resp['refused']}"
        return resp["segments"]

    def frame(self, c: Conn, corrupt_last_crc: bool = False):
        """The connection's wire stream (Go's Framer) and what Go's Receiver
        makes of it: the ULPDUs for ddp_place, each with its verdict."""
        fpdus = self.oracle.mpa_fpdus(c.ulpdus, markers=c.markers, base=c.base, crc=c.crc)
        wires = [f["wire"] for f in fpdus]
        if corrupt_last_crc:
            w = bytearray(wires[-1])
            w[-1 - self.rng.randrange(4)] ^= 1 << self.rng.randrange(8)   # in the CRC field
            wires[-1] = bytes(w)
        c.fpdu_starts, pos = [], 0
        for w in wires:
            c.fpdu_starts.append(pos)
            pos += len(w)
        c.stream = b"".join(wires)
        rx = self.oracle.mpa_receive(c.stream, markers=c.markers, base=c.base, crc=c.crc)
        got = [u for _, u in rx["ulpdus"]]
        assert got == c.ulpdus[: len(got)], f"connection {c.num}: Go's Receiver returns other ULPDUs"
        verdicts = [0] * len(got)
        if rx["mpa_error"] is not None:
            verdicts.append(rx["mpa_error"]["code"])
        else:
            assert len(got) == len(c.ulpdus)
        for u, v in zip(c.ulpdus, verdicts):
            self.ops.append({"ulpdu": {"conn": c.num, "data": u.hex(), "verdict": v}})
        return rx["mpa_error"]

    def cut(self, c: Conn) -> list[tuple[int, int]]:
        """TCP segments over the stream: random cuts, plus cuts inside the
        first 2 + 46 octets of many FPDUs (ULPDU_Length and the header)."""
        return self.cut_range(c, 0, len(c.stream))

    def cut_range(self, c: Conn, lo: int, n: int) -> list[tuple[int, int]]:
        """cut() over stream octets lo..n-1 only."""
        rng = self.rng
        cuts = set()
        for s in c.fpdu_starts:
            if rng.random() < 0.6:
                cuts.add(s + rng.randint(1, 2 + HDR))
            if rng.random() < 0.2:
                cuts.add(s + rng.randint(1, 2 + HDR))
        pos = lo
        while pos < n:
            r = rng.random()
            pos += rng.randint(1, 8) if r < 0.1 else rng.randint(9, 700) if r < 0.6 else rng.randint(701, 9000)
            cuts.add(pos)
        points = sorted(x for x in cuts if lo < x < n) + [n] if n > lo else []
        segs, start = [], lo
        for p in points:
            while p - start > 9000:
                segs.append((start, 9000))
                start += 9000
            segs.append((start, p - start))
            start = p
        return segs

    def send_segment(self, c: Conn, off: int, length: int):
        user = (c.num << 48) | (((c.base + off) & 0xFFFFFFFF) << 16) | length
        self.source.send_nowait(AxiStreamFrame(c.stream[off:off + length], tuser=user))

    async def drain(self, quiet: int = 300, limit: int = 400000):
        still, last = 0, -1
        for _ in range(limit):
            if still >= quiet:
                break
            await RisingEdge(self.dut.clk)
            busy = not self.source.empty() or self.source.active
            now = (self.activity, len(self.in_beats))
            still = 0 if busy or now != last else still + 1
            last = now
        else:
            d = self.dut
            raise AssertionError(
                f"no end in {limit} clocks: {len(self.in_beats)} beats in, input "
                f"{'empty' if self.source.empty() else 'queued'}, s_axis_tvalid {d.s_axis_tvalid.value} "
                f"tready {d.s_axis_tready.value}, awvalid {d.m_axi_awvalid.value}, wvalid {d.m_axi_wvalid.value}, "
                f"cpl_valid {d.m_cpl_valid.value}, err_valid {d.m_err_valid.value}" + self._inside())

    def _trace(self):
        """RNIC_RX_TRACE=1 (Icarus): count what passes between the blocks."""
        d, t = self.dut, self.tr
        if d.j_tvalid.value and d.j_tready.value and d.j_tlast.value:
            t["j_pieces"] += 1
            u = int(d.j_tuser.value)
            t["j_lasts"] += u & 1
            if self.trace > 1:
                d._log.info("c%d piece to ddp_rx: user %x", self.cycle, u)
        if d.jv_tvalid.value and d.jv_tready.value:
            t["j_verdicts"] += 1
            if self.trace > 1:
                d._log.info("c%d verdict to ddp_rx: %s conn %s", self.cycle, d.jv_tdata.value, d.jv_tuser.value)
        if d.ddp.rf_in_valid.value == 1 and d.ddp.rf_in_ready.value == 1:
            t["records"] += 1
            if self.trace > 1:
                d._log.info("c%d record: en %s", self.cycle, d.ddp.c_en_reg.value)
        if self.trace > 2 and self.cycle < 400 and str(d.ddp.state_reg.value) != "0000":
            d._log.info("c%d ddp state %s drop %s en %s p_last %s", self.cycle, d.ddp.state_reg.value,
                        d.m_drop_valid.value, d.ddp.c_en_reg.value, d.ddp.p_last_reg.value)
        if self.trace > 2 and 15 < self.cycle < 30:
            j = d.joiner
            d._log.info("c%d j_tvalid %s j_tready %s j_tlast %s j_tuser %s | join a_valid %s act %s q %s o_valid %s"
                        " | p_tvalid %s s_axis_tvalid %s", self.cycle, d.j_tvalid.value, d.j_tready.value,
                        d.j_tlast.value, d.j_tuser.value, j.a_valid_reg.value, j.act_reg.value, j.q_cnt_reg.value,
                        j.o_valid_reg.value, d.p_tvalid.value, d.s_axis_tvalid.value)
        if str(d.ddp.rf_out_valid.value) == "1":
            t["rf_out_clocks"] += 1
        if d.p_tvalid.value and d.p_tready.value and d.p_tlast.value:
            t["p_pieces"] += 1
            u = int(d.p_tuser.value)
            t["p_lasts"] += u & 1
            if self.trace > 1:
                d._log.info("c%d piece from mpa_rx: user %x keep %s", self.cycle, u, d.p_tkeep.value)
        if d.pv_tvalid.value and d.pv_tready.value:
            t["p_verdicts"] += 1
            if self.trace > 1:
                d._log.info("c%d verdict from mpa_rx: %s", self.cycle, d.pv_tdata.value)

    def _inside(self) -> str:
        """Internal handshakes, where the simulator shows them (Icarus)."""
        try:
            d = self.dut
            names = ("p_tvalid", "p_tready", "pv_tvalid", "pv_tready", "j_tvalid", "j_tready", "jv_tvalid", "jv_tready")
            j = d.joiner
            return (f" | {dict(self.tr)} | " + " ".join(f"{n} {getattr(d, n).value}" for n in names)
                    + f" | join act {j.act_reg.value} endf {j.endf_reg.value} q {j.q_cnt_reg.value} a_valid {j.a_valid_reg.value}"
                    f" v_valid {j.v_valid_reg.value} in_lasts {j.in_lasts_reg.value} out_lasts {j.out_lasts_reg.value} tgt {j.v_tgt_reg.value}"
                    + f" | ddp state {d.ddp.state_reg.value} rf_out_valid {d.ddp.rf_out_valid.value} bdone {d.ddp.dv_bdone.value}"
                    f" rf_in_ready {d.ddp.rf_in_ready.value} rf_in_valid {d.ddp.rf_in_valid.value}")
        except AttributeError as e:
            return f" (no internals: {e})"

    async def check(self, exceptions: int = 0, skips: bool = False):
        await self.drain()
        assert self.exceptions == exceptions, f"{self.exceptions} segments on the exception stream, want {exceptions}"
        assert not self.status, f"status pulses: {dict(self.status)}"
        assert skips or not self.skips, f"m_skip pulses: {self.skips}"
        resp = self.oracle.request("ddp_place", mem_size=MEM_SIZE, ring_depth=RQ_DEPTH, ops=self.ops)
        want = defaultdict(list)
        for e in resp["events"]:
            want[e["conn"]].append(ddp_reports.from_oracle(e))
        details = {(e["conn"], e["ulpdu"]): e.get("detail", "") for e in resp["events"] if e["kind"] == "error"}
        for conn in sorted(set(want) | set(self.events)):
            got, w = self.events.get(conn, []), want.get(conn, [])
            if got != w:
                for i, (g, x) in enumerate(zip(got + [None] * len(w), w + [None] * len(got))):
                    if g != x:
                        raise AssertionError(
                            f"conn {conn}: event {i}: got {g}, want {x} ({len(got)} got, {len(w)} wanted; "
                            f"Go errors: {[d for (c, _), d in details.items() if c == conn]})")
        want_mem = bytes.fromhex(resp["mem"])
        got_mem = self.ram.read(0, MEM_SIZE)
        if got_mem != want_mem:
            diffs = [i for i in range(MEM_SIZE) if got_mem[i] != want_mem[i]]
            raise AssertionError(
                f"host memory differs from Go's at {len(diffs)} octets, first at {diffs[0]:#x}: "
                f"got {got_mem[diffs[0]:diffs[0] + 16].hex()} want {want_mem[diffs[0]:diffs[0] + 16].hex()}")
        return want


# --- random messages ------------------------------------------------------------


async def setup_conns(tb: TB, conns: list[Conn]):
    """Configure the connections, their STags (three of their own in the
    second half of the slice, one of another PD, one without write access)
    and posted buffers (all of QN 0's ring, two Read Request buffers)."""
    rng = tb.rng
    for c in conns:
        await tb.conn(c)
    indices = iter(rng.sample(range(1, 1 << 12), 5 * len(conns)))
    for c in conns:
        for j in range(5):
            idx, key = next(indices), rng.getrandbits(8)
            length = rng.choice([rng.randint(64, 512), rng.randint(512, SLICE // 2 // 3)])
            host = c.mem + SLICE // 2 + j * (SLICE // 2 // 5)
            length = min(length, SLICE // 2 // 5)
            base = rng.choice([rng.getrandbits(20), rng.getrandbits(63)])
            pd = c.pd if j != 3 else c.pd ^ 1
            access = 1 if j != 4 else 2
            await tb.stag(idx, key, pd, access, base, length, host, bound=c.num if j == 0 else None)
            if j < 3:
                c.stags.append((idx << 8 | key, base, length))
            else:
                c.foreign.append(idx << 8 | key)
        for k in range(RQ_DEPTH):
            await tb.post(c.num, 0, c.mem + k * (SLICE // 2 // RQ_DEPTH), rng.randint(16, SLICE // 2 // RQ_DEPTH),
                          rng.getrandbits(32))
        for k in range(2):
            await tb.post(c.num, 1, c.mem + SLICE // 2 - 64 * (k + 1), 28, rng.getrandbits(32))


def messages(tb: TB, c: Conn, msgs: int, p_bad: float = 1.0, mulpdus=None):
    """A random RDMAP message mix for c.ulpdus: RDMA Writes into its
    STags, Sends into its posted buffers, Read Requests; p_bad scales the
    invalid ones (a foreign or stale STag, out of bounds, a Send too long
    for its buffer)."""
    rng = tb.rng
    msn = [1, 1]
    for _ in range(msgs):
        r = rng.random()
        mulpdu = rng.choice(mulpdus or [rng.randint(46, 200), rng.randint(200, 1460), 1460, 4000, 9000])
        if r < 0.55:
            stag, base, length = rng.choice(c.stags)
            n = rng.choice([0, rng.randint(1, 64), rng.randint(1, length)])
            off = rng.randint(0, length - n)
            if rng.random() < 0.06 * p_bad:
                stag = rng.choice(c.foreign + [stag ^ 0x01])           # not ours, or a stale key
            elif rng.random() < 0.04 * p_bad:
                off = length - n + rng.randint(1, 50)                   # past the end
            c.ulpdus += tb.segments(WRITE, mulpdu, stag=stag, to=(base + off) % 2**64,
                                    payload=rng.randbytes(n))
        elif r < 0.9 and msn[0] <= RQ_DEPTH:
            size = rng.choice([0, rng.randint(1, 100), rng.randint(1, 600)])
            if rng.random() < 0.05 * p_bad:
                size = SLICE // 2 // RQ_DEPTH + 1                      # longer than any buffer
            c.ulpdus += tb.segments(rng.choice([SEND, SEND_SE]), mulpdu, msn=msn[0], payload=rng.randbytes(size))
            msn[0] += 1
        elif READ_REQS and msn[1] <= 2:
            rr = {k: rng.getrandbits(64 if k.endswith("_to") else 32)
                  for k in ("sink_stag", "sink_to", "size", "src_stag", "src_to")}
            c.ulpdus += tb.segments(READ_REQ, max(mulpdu, 46), msn=msn[1], rr=rr)
            msn[1] += 1


@cocotb.test()
async def random_messages(dut):
    """RDMAP message mixes on a few connections, segments cut anywhere."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    nconn = 3 if tb.icarus else 4
    msgs = int(os.environ.get("RNIC_RX_MSGS", "0")) or (10 if tb.icarus else 24)
    tb.stall_everywhere()
    conns = [Conn(num, rng.getrandbits(32), i * SLICE, markers=i % 2 == 0, crc=i != 1, base=rng.getrandbits(32))
             for i, num in enumerate(rng.sample(range(1 << CONN_W), nconn))]
    await setup_conns(tb, conns)
    errors = []
    for c in conns:
        messages(tb, c, msgs)
        err = tb.frame(c, corrupt_last_crc=c.crc and rng.random() < 0.3)
        errors.append(err)
    # Segments, interleaved over the connections.
    queues = {c.num: (c, tb.cut(c)) for c in conns}
    nseg = sum(len(q[1]) for q in queues.values())
    inside = sum(1 for c, segs in queues.values() for off, n in segs
                 for s in c.fpdu_starts if s < off + n < s + 2 + HDR)
    live = [k for k in queues]
    while live:
        k = rng.choice(live)
        c, segs = queues[k]
        off, n = segs.pop(0)
        tb.send_segment(c, off, n)
        if not segs:
            live.remove(k)
    want = await tb.check()
    nerr = sum(1 for v in want.values() for e in v if e[0] == "error")
    dut._log.info("%d ULPDUs on %d connections in %d segments (%d segment ends inside an FPDU's first 48 octets); "
                  "%d events, %d errors (MPA errors %s)", sum(len(c.ulpdus) for c in conns), nconn, nseg, inside,
                  sum(len(v) for v in want.values()), nerr, errors)
    assert inside > 0


# --- out of order: early placement ---------------------------------------------


@cocotb.test()
async def out_of_order(dut):
    """Segments past a hole: placed early through their markers, then
    again in order when the host gives them back.

    Each round, on every connection that has stream left: the segments up
    to an FPDU boundary go in (and through: the block drains), then a
    segment from past a hole (the hole: the FPDUs' next 1..3000 octets);
    mpa_rx passes it to the exception stream and mpa_rx_ooo finds the
    FPDUs wholly inside it through their markers (connections with
    markers; the others only pass it on). The block drains again, then the
    hole and the segment past it go in, in order, as the host's
    reassembly would give them. The oracle: iwarp/mpa's OOOReceiver on the
    segment (mpa_ooo) names the ULPDUs placed early; ddp_place places
    them at their place in the connection's ops (after every ULPDU before
    the hole: the block had drained; before the rest: the hole held them
    back), with Sink.Place's checks against the state then, and the
    ULPDUs in order as usual. The whole host memory, every report, the
    exception count and the m_early count must match, both once the early
    ULPDUs are placed (before their in-order copies write the same
    octets again) and at the end."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    nconn = 3
    msgs = int(os.environ.get("RNIC_RX_MSGS", "0")) or (12 if tb.icarus else 30)
    tb.stall_everywhere()
    # Markers on all but the last connection (mpa_rx_ooo needs them).
    conns = [Conn(num, rng.getrandbits(32), i * SLICE, markers=i < nconn - 1, crc=True, base=rng.getrandbits(32))
             for i, num in enumerate(rng.sample(range(1 << CONN_W), nconn))]
    await setup_conns(tb, conns)
    plans = {}
    for c in conns:
        messages(tb, c, msgs, p_bad=0.5, mulpdus=[rng.randint(46, 200), rng.randint(200, 1460), 1460, 3000])
        assert tb.frame(c) is None
        plans[c.num] = []
    # Rounds: (prefix segments, the FPDU index k at the hole, hole, past).
    ops_of = {c.num: [op for op in tb.ops if "ulpdu" in op and op["ulpdu"]["conn"] == c.num] for c in conns}
    tb.ops = [op for op in tb.ops if "ulpdu" not in op]
    expect_early = 0
    expect_exc = 0
    pos = {c.num: 0 for c in conns}     # stream offset sent so far
    nxt = {c.num: 0 for c in conns}     # ULPDU ops told to the oracle
    rounds = 0
    early_planned = False
    while any(pos[c.num] < len(c.stream) for c in conns):
        rounds += 1
        round_plan = []
        for c in conns:
            if pos[c.num] >= len(c.stream):
                continue
            # The hole starts at an FPDU boundary a few FPDUs on.
            ks = [k for k, s in enumerate(c.fpdu_starts) if s > pos[c.num]]
            if len(ks) < 2:
                round_plan.append((c, tb.cut_range(c, pos[c.num], len(c.stream)), None))
                pos[c.num] = len(c.stream)
                continue
            for attempt in range(20):
                k = ks[min(len(ks) - 2, rng.randint(0, 3))]
                hole0 = c.fpdu_starts[k]
                hole1 = min(len(c.stream) - 1, hole0 + rng.randint(1, 3000))
                past = min(len(c.stream) - hole1, rng.randint(600, 9000))
                # Until something has been placed early, a connection with
                # markers draws its hole again (up to 20 times) until Go's
                # OOOReceiver finds an FPDU past it: short streams (Icarus)
                # would otherwise at times place nothing early at all.
                if not c.markers or early_planned or tb.oracle.mpa_ooo(
                        c.stream, [(c.base + hole1, past, c.base + hole0)], markers=True,
                        base=c.base, crc=c.crc)[0]["placed"]:
                    early_planned = early_planned or c.markers
                    break
            round_plan.append((c, tb.cut_range(c, pos[c.num], hole0), (k, hole0, hole1, past)))
            pos[c.num] = hole1 + past
        # In order up to the holes, interleaved; then drain.
        queues = [list(segs) for _, segs, _ in round_plan]
        while any(queues):
            q = rng.choice([q for q in queues if q])
            c = round_plan[queues.index(q)][0]
            off, n = q.pop(0)
            tb.send_segment(c, off, n)
        await tb.drain()
        # Past the holes: out of order, one at a time (mpa_rx_ooo searches
        # one segment at a time and passes on unsearched what comes while
        # it is busy: m_skip). What Go places early from them.
        for c in conns:
            if all(c is not x for x, _, h in round_plan if h is not None):
                # All its stream is in, in order.
                tb.ops += ops_of[c.num][nxt[c.num]:]
                nxt[c.num] = len(ops_of[c.num])
        for c, _, hole in round_plan:
            if hole is None:
                continue
            k, hole0, hole1, past = hole
            tb.ops += ops_of[c.num][nxt[c.num]:k]
            nxt[c.num] = max(nxt[c.num], k)
            res = tb.oracle.mpa_ooo(c.stream, [(c.base + hole1, past, c.base + hole0)], markers=c.markers,
                                    base=c.base, crc=c.crc)[0]
            placed = sorted(res["placed"], key=lambda p: (p[0] - c.base) % 2**32)
            for _, u in placed:
                tb.ops.append({"early": {"conn": c.num, "data": u.hex()}})
            expect_early += len(placed)
            expect_exc += 1
            tb.send_segment(c, hole1, past)
            await tb.drain()
            assert tb.early_count == expect_early, (
                f"round {rounds}, connection {c.num}: {tb.early_count} early ULPDUs taken into ddp_rx so far, "
                f"Go's OOOReceiver places {expect_early}")
        # Placed early, and nothing else: the whole memory and every report
        # so far, before the in-order copies overwrite them.
        await tb.check(exceptions=expect_exc)
        # The holes, then the segments past them again, in order.
        for c, _, hole in round_plan:
            if hole is None:
                continue
            k, hole0, hole1, past = hole
            for off, n in tb.cut_range(c, hole0, hole1) + [(hole1, past)]:
                tb.send_segment(c, off, n)
        await tb.drain()
    for c in conns:
        tb.ops += ops_of[c.num][nxt[c.num]:]
    want = await tb.check(exceptions=expect_exc)
    dut._log.info("%d rounds, %d ULPDUs on %d connections, %d segments out of order, %d ULPDUs placed early; "
                  "%d events", rounds, sum(len(c.ulpdus) for c in conns), nconn, expect_exc, expect_early,
                  sum(len(v) for v in want.values()))
    assert expect_early > 0


# --- bench ------------------------------------------------------------------------


@cocotb.test()
async def bench(dut):
    """Latency to the first AW, and input beats per clock for back-to-back
    1460-octet RDMA Writes, and FPDUs per clock for 64-octet ones
    (measured; the data checked as everywhere)."""
    tb = TB(dut)
    tb.rng = tbutil.bench_rng()
    await tb.start()
    rng = tb.rng
    c = Conn(rng.randrange(1 << CONN_W), 5, 0, markers=True, crc=True, base=rng.getrandbits(32))
    await tb.conn(c)
    await tb.stag(9, 0x42, c.pd, 1, 0, 1 << 17, 0)
    stag = 9 << 8 | 0x42
    # Latency: an idle block, one FPDU in one segment.
    c.ulpdus = tb.segments(WRITE, 1460, stag=stag, to=64, payload=rng.randbytes(1000))
    tb.frame(c)
    tb.send_segment(c, 0, len(c.stream))
    await tb.drain(100)
    latency = tb.aw_cycles[0] - tb.seg_starts[0]
    count = 40 if tb.icarus else 120

    async def more_writes(split: bool, payload: int = 1460, n: int = count, c: Conn = c) -> tuple[float, float, float]:
        """n more Writes of payload octets back to back on connection c:
        input beats, FPDUs and write-port W beats (requests) a clock.
        One FPDU a Write; FPDU-aligned segments of up to 1460 octets (one
        FPDU each when larger), or the stream cut every 1460 octets."""
        start = len(c.stream)
        more = []
        for i in range(n):
            # 1460-octet payloads one after the other in the buffer; short
            # ones at every 8-octet offset of a 1024-bit host beat.
            to = 2048 + (i % 60) * 1460 if payload >= 1460 else 2048 + (i % 16) * 128 + 8 * (i % 16)
            more += tb.segments(WRITE, payload + 14, stag=stag, to=to, payload=rng.randbytes(payload))
        prev = len(c.ulpdus)
        c.ulpdus += more
        tb.ops = [op for op in tb.ops if "ulpdu" not in op or op["ulpdu"]["conn"] != c.num]
        old = c.stream
        tb.frame(c)
        assert c.stream[:start] == old, "the Framer framed the earlier Writes differently"
        tb.in_beats.clear()
        if split:
            for off in range(start, len(c.stream), 1460):
                tb.send_segment(c, off, min(1460, len(c.stream) - off))
        else:
            starts = c.fpdu_starts[prev:] + [len(c.stream)]
            k = 0
            while k < len(starts) - 1:
                j = k + 1
                while j < len(starts) - 1 and starts[j + 1] - starts[k] <= 1460:
                    j += 1
                tb.send_segment(c, starts[k], starts[j] - starts[k])
                k = j
        await tb.drain(100)
        clocks = tb.in_beats[-1] - tb.in_beats[0] + 1
        w = sum(1 for t in tb.w_cycles if tb.in_beats[0] <= t <= tb.in_beats[-1])
        return round(len(tb.in_beats) / clocks, 3), round(n / clocks, 3), round(w / clocks, 3)

    # Back to back: the connection goes on with 1460-octet Writes, one
    # FPDU per segment; then as many cut into 1460-octet segments wherever
    # the stream falls (each FPDU is over 1480 octets with its header,
    # markers and CRC, so nearly every segment ends inside one).
    aligned, _, _ = await more_writes(False)
    split, _, _ = await more_writes(True)
    # 64-octet FPDUs (44-octet Writes), 22 to a segment: FPDUs a clock.
    # At W=512 ddp_rx's write port sets it (README, "ddp_rx/2x": a 44-octet
    # payload at these offsets needs two 1024-bit beats about a quarter of
    # the time, and two Writes never share one).
    small_beats, small_fpdus, small_w = await more_writes(False, payload=44, n=4 * count)
    # The same on a connection with markers off: 22 FPDUs and their markers
    # fill 23 beats at W=512 (mpa_rx's bound, 0.957), without them 22.
    c2 = Conn(c.num ^ 1, c.pd, 0, markers=False, crc=True, base=rng.getrandbits(32))
    await tb.conn(c2)
    off_beats, off_fpdus, off_w = await more_writes(False, payload=44, n=4 * count, c=c2)
    await tb.check()
    axi = len(dut.m_axi_wdata)
    # As scripts/hw_figures.py names the build.
    block = "rnic_rx/req" if tb.req is not None else "rnic_rx/2x" if axi == 2 * tb.width else "rnic_rx"
    # Headline: input beats a clock for 1460-octet Writes in FPDU-aligned
    # segments, latency from a segment's first beat to AW valid. Figures
    # "<case>.<quantity>": split_1460 (the same Writes cut every 1460
    # octets), 64 and 64_markers_off (64-octet FPDUs, 44-octet Writes).
    higher = {"split_1460.beats_per_clock": split,
              "64.beats_per_clock": small_beats, "64.fpdus_per_clock": small_fpdus,
              "64_markers_off.beats_per_clock": off_beats, "64_markers_off.fpdus_per_clock": off_fpdus}
    hdlsim.write_bench(
        block, tb.width, beats_per_clock=aligned, latency_clocks=latency, higher=higher,
        details={"axi_width": axi, "write_port": "request stream" if tb.req is not None else "AXI4",
                 "latency_what": "first s_axis beat of a segment to AW valid", "writes_1460": count,
                 "writes_64": 4 * count, "w_beats_per_clock": {"64": small_w, "64_markers_off": off_w}},
    )
    dut._log.info("bench: beats per clock %.3f, latency %d, %s", aligned, latency, higher)


# --- configuration fences under traffic ------------------------------------------


@cocotb.test()
async def config_fence(dut):
    """Configuration requests that ddp_rx holds for its fence (s_stag and
    s_conn), raised while ULPDUs are in flight. ddp_rx takes such a request
    only between pieces with every write answered (ddp_rx_tables.v, "The
    fence"), and holds the input at its next piece meanwhile; a restart
    (s_conn) also waits until the records queued at the last restart are
    delivered (rs_busy, ddp_rx_deliver.v), that is for their verdicts,
    which come from mpa_rx through rx_join: a verdict that waited for the
    input held behind the request, or for the handshake, would hang the
    block.

    Two connections with a short mix of Writes, Sends and Read Requests
    (no invalid ones), their segments all queued; meanwhile, each once
    the input has taken a random number of beats, an STag registered at a free index, the same invalidated, and
    two restarts back to back of a connection no segment carries, three
    times over: things the traffic does not use, so that Go's ddp_place
    gives the same results wherever they fall. Checked: every request is
    taken, at least one of them while the block delivered a ULPDU (a
    completion or an error while it waited), and the whole memory and
    every report against Go, as everywhere. (With the verdict held while
    a request is pending, the second restart of a pair is never taken.)"""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    tb.stall_everywhere()
    nums = rng.sample(range(1 << CONN_W), 3)
    conns = [Conn(num, rng.getrandbits(32), i * SLICE, markers=i == 0, crc=True, base=rng.getrandbits(32))
             for i, num in enumerate(nums[:2])]
    spare_conn = nums[2]
    await setup_conns(tb, conns)
    taken = {op["stag"]["index"] for op in tb.ops if "stag" in op}
    spare_idx = rng.choice([i for i in range(1, 1 << 12) if i not in taken])
    for c in conns:
        messages(tb, c, 10, p_bad=0.0, mulpdus=[rng.randint(46, 200), rng.randint(200, 1460), 1460])
        assert tb.frame(c) is None
    queues = {c.num: (c, tb.cut(c)) for c in conns}
    live = list(queues)
    while live:
        k = rng.choice(live)
        c, segs = queues[k]
        off, n = segs.pop(0)
        tb.send_segment(c, off, n)
        if not segs:
            live.remove(k)

    frng = random.Random(rng.getrandbits(64))
    waits = []                                   # (clocks held, reports delivered meanwhile)
    NREQ = 9

    def delivered() -> int:
        return sum(len(v) for v in tb.events.values())

    async def restart():
        pd = frng.getrandbits(32)
        await tb._cfg("s_conn", conn=spare_conn, enable=1, pd=pd)
        tb.ops.append({"conn": {"conn": spare_conn, "pd": pd}})

    # Each request once the input has taken a random number of beats (of
    # about all it takes), so that they fall among the traffic at every
    # width.
    beats = sum(len(c.stream) for c in conns) // tb.lanes
    marks = sorted(frng.sample(range(1, beats), NREQ))

    async def requests():
        for i in range(NREQ):
            while len(tb.in_beats) < marks[i]:
                await RisingEdge(dut.clk)
            t0, e0 = tb.cycle, delivered()
            if i % 3 == 0:
                await tb.stag(spare_idx, frng.getrandbits(8), frng.getrandbits(32), 1, frng.getrandbits(32),
                              frng.randint(1, 4096), conns[0].mem + SLICE // 2)
            elif i % 3 == 1:
                await tb._cfg("s_stag", index=spare_idx, entry_valid=0, key=0, pd=0, bound=0, conn=0, access=0,
                              base=0, len=0, addr=0)
                tb.ops.append({"stag": {"index": spare_idx, "valid": False}})
            else:
                # Two restarts back to back: the second waits until the
                # records queued at the first are delivered (rs_busy).
                await restart()
                waits.append((tb.cycle - t0, delivered() - e0))
                t0, e0 = tb.cycle, delivered()
                await restart()
            waits.append((tb.cycle - t0, delivered() - e0))

    task = cocotb.start_soon(requests())
    for _ in range(200000):
        if task.done():
            break
        await RisingEdge(dut.clk)
    else:
        raise AssertionError(f"a configuration request was never taken ({len(waits)} of {NREQ + NREQ // 3} were): "
                             f"{len(tb.in_beats)} input beats in, {delivered()} reports out")
    want = await tb.check()
    dut._log.info("config_fence: %d ULPDUs; requests held (clocks, reports delivered meanwhile): %s; %d reports",
                  sum(len(c.ulpdus) for c in conns), waits, sum(len(v) for v in want.values()))
    assert any(e > 0 for _, e in waits), f"no request waited while a ULPDU was delivered: {waits}"


# --- pytest ------------------------------------------------------------------

# Verilator at both ends of the width range, Icarus and GHDL (the VHDL-2008
# twin, hw/rtl/vhdl/rnic_rx.vhd) at 64 (run time).
PARAMS = hdlsim.width_cases((64, 512), langs=("verilog", "vhdl"), sim_widths={"icarus": (64,), "ghdl": (64,)})


RTL = [hdlsim.RTL_DIR / f for f in ("rnic_rx.v", "rx_merge.v", "tuf_rx.v", "rx_join.v", "mpa_rx.v", "mpa_rx_align.v", "mpa_rx_walk.v",
                                     "mpa_rx_lane.v", "mpa_rx_ooo.v", "crc32c.v", "ddp_rx.v", "ddp_rx_intake.v",
                                     "ddp_rx_check.v", "ddp_rx_decide.v", "ddp_rx_wport.v", "ddp_rx_setup.v",
                                     "ddp_rx_retire.v", "ddp_rx_place.v", "ddp_rx_tables.v", "ddp_rx_deliver.v",
                                     "ddp_rx_fifo.v", "ddp_rx_fifo2.v", "sdp_ram.v", "rnic_add.v", "rnic_incdec.v",
                                     "rnic_pick.v")]
VHDL = [hdlsim.VHDL_DIR / f for f in ("sdp_ram.vhd", "crc32c.vhd", "ddp_rx_fifo.vhd", "mpa_rx_lane.vhd",
                                      "mpa_rx_align.vhd", "mpa_rx_walk.vhd", "mpa_rx.vhd", "mpa_rx_ooo.vhd",
                                      "rx_join.vhd", "ddp_rx_fifo2.vhd", "ddp_rx_intake.vhd", "ddp_rx_check.vhd",
                                      "ddp_rx_decide.vhd", "ddp_rx_wport.vhd", "ddp_rx_setup.vhd", "ddp_rx_retire.vhd",
                                      "ddp_rx_place.vhd", "ddp_rx_tables.vhd", "ddp_rx_deliver.vhd", "ddp_rx.vhd",
                                      "tuf_rx.vhd", "rx_merge.vhd", "rnic_rx.vhd")]


def run(sim: str, width: int, oracle_path, *, test: str = "rnic_rx", test_module: str = __name__,
        axi: int | None = None, req: bool = False):
    """rnic_rx at DATA_W = width on sim with the cocotb tests of
    test_module: the host write port AXI_W = axi (default DATA_W), on the
    write-request stream with req."""
    axi = axi or width
    params = {"DATA_W": width, "CONN_W": CONN_W, "AXI_W": axi}
    env = {oracle.ENV_VAR: str(oracle_path), "RNIC_RX_WIDTH": str(width)}
    if req:
        params["WR_REQ"] = 1
        env["RNIC_RX_WR_REQ"] = "1"
    hdlsim.run(test=test, sim=sim, tag=f"W{width}-A{axi}" + ("-req" if req else ""), toplevel="rnic_rx",
               test_module=test_module, verilog_sources=RTL, vhdl_sources=VHDL, parameters=params,
               extra_env=env)


@pytest.mark.parametrize("sim,width", PARAMS)
def test_rnic_rx(sim, width, oracle_path):
    # The 512-bit build with the 1024-bit host write port a 100 Gb/s design
    # uses (ddp_rx.v: short payloads at any host offset keep up); 64 narrow.
    run(sim, width, oracle_path, axi=2 * width if width == 512 else width)


# With the write-request stream (WR_REQ = 1, two DATA_W lines a request):
# Verilator at 512 (the 100 Gb/s build's other host port) and 64, GHDL at 64
# (the VHDL twin, clock for clock the same as the Verilog).
REQ_PARAMS = hdlsim.width_cases((64, 512), langs=("verilog", "vhdl"),
                                sim_widths={"verilator": (64, 512), "icarus": (), "ghdl": (64,)})


@pytest.mark.parametrize("sim,width", REQ_PARAMS)
def test_rnic_rx_wr_req(sim, width, oracle_path):
    run(sim, width, oracle_path, axi=2 * width, req=True)
