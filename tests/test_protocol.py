"""The protocol checkers of tests/protocol.py, proven on synthetic
sequences without a simulator: each rule lets a legal sequence through and
raises ProtocolError, naming the port, the clock and the rule, on a sequence
that breaks it. Also: the PORTS table covers every valid/ready pair of
every testbench's top-level module (read from the RTL), and the Monitor's
probes read a design's ports as the rules expect (on a stand-in design of
plain Python values)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import protocol
from protocol import LANE0, LANE0_EMPTY, RUN, AxiRead, AxiWrite, Channel, ProtocolError, Stream, WriteRequest

TESTS = Path(__file__).resolve().parent


def fails(pattern: str):
    return pytest.raises(ProtocolError, match=pattern)


# --- Channel: valid held until ready, payload stable meanwhile --------------------


def test_channel_legal_sequence_passes():
    ch = Channel("s_desc", ("len", "op"))
    seq = [  # (valid, ready, payload)
        (0, 0, (0, 0)), (0, 1, (9, 9)),      # idle: anything goes
        (1, 0, (5, 1)), (1, 0, (5, 1)), (1, 1, (5, 1)),   # stalled twice, then taken
        (1, 1, (6, 2)),                      # back to back
        (1, 0, (7, 3)), (1, 1, (7, 3)),
        (0, 0, (1, 1)), (1, 1, (8, 0)),
    ]
    taken = [ch.step(i, v, r, p) for i, (v, r, p) in enumerate(seq)]
    assert taken == [False, False, False, False, True, True, False, True, False, True]


def test_channel_valid_dropped_before_ready():
    ch = Channel("s_desc", ("len",))
    ch.step(1, 1, 0, (5,))
    ch.step(2, 1, 0, (5,))
    with fails(r"^s_desc: clock 3: valid fell before ready \(valid and not ready since clock 1\)"):
        ch.step(3, 0, 0, (5,))


def test_channel_payload_changed_while_stalled():
    ch = Channel("m_cpl", ("conn", "len"))
    ch.step(10, 1, 0, (3, 64))
    with fails(r"^m_cpl: clock 11: changed while valid and not ready \(since clock 10\): len 0x40 -> 0x41$"):
        ch.step(11, 1, 1, (3, 65))  # even in the clock it is taken


def test_channel_payload_read_lazily():
    """A callable payload is read only when a stall needs it."""
    reads = []

    def payload():
        reads.append(1)
        return (1,)

    ch = Channel("x", ("a",))
    ch.step(0, 1, 1, payload)
    ch.step(1, 0, 0, payload)
    assert reads == []
    ch.step(2, 1, 0, payload)
    ch.step(3, 1, 1, payload)
    assert len(reads) == 2


def test_channel_reset_forgets_a_stall():
    ch = Channel("cfg", ())
    ch.step(0, 1, 0)
    ch.reset()
    ch.step(1, 0, 0)  # valid low after a reset: no violation


# --- Stream: tkeep conventions ---------------------------------------------------


def frames(chk: Stream, beats):
    """beats: (keep, last) taken back to back."""
    for i, (keep, last) in enumerate(beats):
        assert chk.beat(i, 1, 1, keep, last, (keep, last))


def test_stream_lane0_legal():
    frames(Stream("m_axis", ("tkeep", "tlast"), LANE0, 8), [(0xff, 0), (0xff, 0), (0x07, 1), (0xff, 1), (0x01, 1)])


def test_stream_lane0_partial_beat_before_last():
    with fails(r"^m_axis: clock 1: tkeep 0x7f on beat 1 of a frame, before its last"):
        frames(Stream("m_axis", ("tkeep", "tlast"), LANE0, 8), [(0xff, 0), (0x7f, 0), (0xff, 1)])


def test_stream_lane0_last_not_from_lane0():
    with fails(r"^m_axis: clock 1: tkeep 0xe on a frame's last beat is not a run from lane 0"):
        frames(Stream("m_axis", ("tkeep", "tlast"), LANE0, 8), [(0xff, 0), (0x0e, 1)])


def test_stream_lane0_empty_last():
    with fails(r"^m_axis: clock 1: tkeep 0 on a frame's last beat"):
        frames(Stream("m_axis", ("tkeep", "tlast"), LANE0, 8), [(0xff, 0), (0x00, 1)])
    # ... which LANE0_EMPTY allows
    frames(Stream("m_axis", ("tkeep", "tlast"), LANE0_EMPTY, 8), [(0xff, 0), (0x00, 1), (0x00, 1)])


def test_stream_run_rule():
    frames(Stream("s_axis", ("tkeep", "tlast"), RUN, 4), [(0x0, 0), (0xc, 0), (0xf, 0), (0x1, 0), (0x0, 1)])
    frames(Stream("s_axis", ("tkeep", "tlast"), RUN, 4), [(0x6, 1), (0x0, 0), (0xf, 1)])
    with fails(r"^s_axis: clock 0: tkeep 0x5: kept octets with a gap inside one beat"):
        frames(Stream("s_axis", ("tkeep", "tlast"), RUN, 4), [(0x5, 1)])
    with fails(r"^s_axis: clock 1: tkeep 0x3: kept octets after a gap"):
        frames(Stream("s_axis", ("tkeep", "tlast"), RUN, 4), [(0x1, 0), (0x3, 1)])   # run ended at lane 0
    with fails(r"^s_axis: clock 2: tkeep 0xf: kept octets after a gap"):
        frames(Stream("s_axis", ("tkeep", "tlast"), RUN, 4), [(0xc, 0), (0x0, 0), (0xf, 1)])
    with fails(r"^s_axis: clock 1: tkeep 0x2: kept octets after a gap"):
        frames(Stream("s_axis", ("tkeep", "tlast"), RUN, 4), [(0x8, 0), (0x2, 1)])   # not from lane 0


def test_stream_handshake_rules_apply():
    s = Stream("m_verdict", ("tdata",))
    s.beat(0, 1, 0, None, True, (1,))
    with fails(r"^m_verdict: clock 1: changed while valid and not ready"):
        s.beat(1, 1, 0, None, True, (2,))


def test_stream_unknown_keep_rule():
    with pytest.raises(ValueError):
        Stream("x", (), "lane1", 8)


# --- AxiWrite: bursts, WLAST, 4 KiB, strobes, B ------------------------------------


def axi(**kw) -> AxiWrite:
    kw.setdefault("fixed", {"id": 0})
    return AxiWrite("m_axi", 8, ("addr", "len"), ("strb", "last"), ("resp",), **kw)


def aw(addr, len_, size=3, burst=1, id_=0):
    return {"addr": addr, "len": len_, "size": size, "burst": burst, "id": id_}


def run_axi(chk: AxiWrite, clocks):
    """clocks: per clock a dict with optional "aw" (fields dict, ready),
    "w" (strb, last, ready), "b" (ready); valid high where given."""
    for i, c in enumerate(clocks):
        if "b" in c:
            chk.b(i, 1, c["b"], (0,))
        else:
            chk.b(i, 0, 0)
        if "aw" in c:
            f, r = c["aw"]
            chk.aw(i, 1, r, f, (f["addr"], f["len"]))
        else:
            chk.aw(i, 0, 0, None)
        if "w" in c:
            s, last, r = c["w"]
            chk.w(i, 1, r, s, last, (s, last))
        else:
            chk.w(i, 0, 0, 0, 0)


def test_axi_legal_sequence_passes():
    chk = axi(block=64, contiguous=True)
    run_axi(chk, [
        {"aw": (aw(0x1003, 2), 0)},                       # AW stalled
        {"aw": (aw(0x1003, 2), 1), "w": (0xf8, 0, 0)},    # taken; W stalled
        {"w": (0xf8, 0, 1)},                               # beat 1: lanes 3..7
        {"w": (0xff, 0, 1)},
        {"w": (0x0f, 1, 1)},                               # WLAST on beat 3 of 3
        {"b": 0},                                          # B stalled
        {"b": 1, "w": (0xff, 0, 1)},                       # W ahead of its AW (A3.3.1)
        {"w": (0x01, 1, 1)},
        {"aw": (aw(0x1ff0, 1), 1)},                        # its AW, 2 beats, ends at 0x1fff
        {"b": 1},
    ])
    assert not chk.bursts and not chk.early and chk.answerable == 0


def test_axi_wlast_early():
    chk = axi()
    with fails(r"^m_axi W: clock 2: W beat 2 of 3 of the burst at 0x100 \(AW at clock 0\): WLAST, but AWLEN 2 "
               r"makes it 3 beats"):
        run_axi(chk, [{"aw": (aw(0x100, 2), 1), "w": (0xff, 0, 0)}, {"w": (0xff, 0, 1)}, {"w": (0xff, 1, 1)}])


def test_axi_wlast_late():
    chk = axi()
    with fails(r"^m_axi W: clock 2: W beat 2 of 2 of the burst at 0x100 .*: no WLAST on the burst's last beat "
               r"\(AWLEN 1\)"):
        run_axi(chk, [{"aw": (aw(0x100, 1), 1)}, {"w": (0xff, 0, 1)}, {"w": (0xff, 0, 1)}])


def test_axi_wlast_checked_when_w_comes_before_aw():
    chk = axi()
    # (checked when the AW comes, named by the W beat's clock)
    with fails(r"^m_axi W: clock 0: W beat 1 of 2 .*: WLAST, but AWLEN 1"):
        run_axi(chk, [{"w": (0xff, 1, 1)}, {}, {"aw": (aw(0x100, 1), 1)}])


def test_axi_4k_crossing():
    chk = axi()
    with fails(r"^m_axi AW: clock 0: burst at 0xff8, 2 beats of 8 octets \(to 0x1007\) crosses a 4 KiB boundary "
               r"at 0x1000"):
        run_axi(chk, [{"aw": (aw(0xff8, 1), 1)}])
    axi().aw(0, 1, 1, aw(0xff0, 1))  # ending at 0xfff: legal


def test_axi_block_crossing():
    with fails(r"^m_axi AW: clock 0: .* crosses a 64-octet BURST block at 0x40"):
        axi(block=64).aw(0, 1, 1, aw(0x38, 1))
    axi().aw(0, 1, 1, aw(0x38, 1))  # no block promised: legal


def test_axi_strobes_outside_the_beat_address():
    chk = axi()
    with fails(r"^m_axi W: clock 1: W beat 1 of 2 of the burst at 0x1003 .*: WSTRB 0xfc has lanes outside 3..7"):
        run_axi(chk, [{"aw": (aw(0x1003, 1), 1)}, {"w": (0xfc, 0, 1)}])


def test_axi_strobes_narrow_burst():
    """AWSIZE below the bus width (a block documenting it): each beat's
    lanes are its slot's."""
    chk = axi(size=1)
    run_axi(chk, [{"aw": (aw(0x2, 1, size=1), 1)}, {"w": (0x0c, 0, 1)}, {"w": (0x30, 1, 1)}])
    with fails(r"WSTRB 0xc has lanes outside 4..5"):
        run_axi(chk, [{"aw": (aw(0x2, 1, size=1), 1)}, {"w": (0x0c, 0, 1)}, {"w": (0x0c, 1, 1)}])


def test_axi_strobes_not_one_run():
    run_axi(axi(), [{"aw": (aw(0x0, 0), 1)}, {"w": (0x81, 1, 1)}])  # legal in AXI4
    with fails(r"^m_axi W: clock 1: .*: WSTRB 0x81 is not one run of lanes"):
        run_axi(axi(contiguous=True), [{"aw": (aw(0x0, 0), 1)}, {"w": (0x81, 1, 1)}])


def test_axi_documented_fields():
    with fails(r"^m_axi AW: clock 0: AWSIZE 2 \(4 octets a beat\), the block documents 3"):
        axi().aw(0, 1, 1, aw(0, 0, size=2))
    with fails(r"^m_axi AW: clock 0: AWBURST 2"):
        axi().aw(0, 1, 1, aw(0, 0, burst=2))
    with fails(r"^m_axi AW: clock 0: AWID 0x1, the block documents 0x0"):
        axi().aw(0, 1, 1, aw(0, 0, id_=1))


def test_axi_b_before_its_burst():
    with fails(r"^m_axi B: clock 0: B response with no burst to answer"):
        run_axi(axi(), [{"b": 1}])
    with fails(r"^m_axi B: clock 1: B response with no burst"):  # last W taken, AW not yet
        run_axi(axi(), [{"w": (0xff, 1, 1)}, {"b": 1}])


def test_axi_channel_rules_per_channel():
    with fails(r"^m_axi AW: clock 1: valid fell before ready"):
        run_axi(axi(), [{"aw": (aw(0x100, 0), 0)}, {}])
    with fails(r"^m_axi W: clock 2: changed while valid and not ready \(since clock 1\): strb 0xff -> 0xf"):
        run_axi(axi(), [{"aw": (aw(0x100, 0), 1)}, {"w": (0xff, 1, 0)}, {"w": (0x0f, 1, 1)}])


# --- WriteRequest ----------------------------------------------------------------


def req(block=0) -> WriteRequest:
    return WriteRequest("m_wr", ("addr", "strb", "last"), 8, block)


def test_write_request_legal():
    r = req(block=64)
    for i, (addr, strb, last) in enumerate([(0x0, 0xfff0, 0), (0x10, 0xffff, 0), (0x30, 0x00ff, 1),
                                            (0x38, 0x0fff, 1),    # its second line the block's next: last
                                            (0xff8, 0x00ff, 1), (0x40, 0, 0)]):
        assert r.request(i, 1, 1, addr, strb, last, (addr, strb, last))


def test_write_request_unaligned():
    with fails(r"^m_wr: clock 0: request at 0x4: not a multiple of the line \(8 octets\)"):
        req().request(0, 1, 1, 0x4, 0xff, 1)


def test_write_request_strobes_not_one_run():
    with fails(r"^m_wr: clock 0: request at 0x8: strobes 0xf0f are not one run"):
        req().request(0, 1, 1, 0x8, 0x0f0f, 1)


def test_write_request_4k_crossing():
    with fails(r"^m_wr: clock 0: request at 0xff8 writes 0xffc..0x1003, across a 4 KiB page boundary .*"
               r"m_wr_last is 0"):
        req().request(0, 1, 1, 0xff8, 0x0ff0, 0)
    with fails(r"^m_wr: clock 0: request at 0x38 writes 0x3c..0x43, across a 64-octet BURST block"):
        req(block=64).request(0, 1, 1, 0x38, 0x0ff0, 0)
    req().request(0, 1, 1, 0xff8, 0x0ff0, 1)  # the documented continuation


def test_write_request_handshake():
    r = req()
    r.request(0, 1, 0, 0, 0, 0, (0x10, 0xff, 1))
    with fails(r"^m_wr: clock 1: valid fell before ready"):
        r.request(1, 0, 0, 0, 0, 0, (0x10, 0xff, 1))


# --- AxiRead -----------------------------------------------------------------------


def axr() -> AxiRead:
    return AxiRead("m_axi", 8, ("addr", "len"), ("data", "last"), fixed={"id": 0})


def test_axi_read_legal():
    chk = axr()
    chk.r(0, 0, 0, 0)
    chk.ar(0, 1, 1, aw(0x1000, 1), (0x1000, 1))
    chk.r(1, 1, 0, 0, (5, 0))
    chk.r(2, 1, 1, 0, (5, 0))
    chk.r(3, 1, 1, 1, (6, 1))
    assert not chk.bursts


def test_axi_read_4k_crossing():
    with fails(r"^m_axi AR: clock 0: burst at 0xff8, 2 beats .* crosses a 4 KiB boundary at 0x1000"):
        axr().ar(0, 1, 1, aw(0xFF8, 1), (0xFF8, 1))


def test_axi_read_rlast():
    chk = axr()
    chk.ar(0, 1, 1, aw(0x0, 2), (0, 2))
    with fails(r"^m_axi R: clock 1: R beat 1 of 3 .*: RLAST before the burst's last beat"):
        chk.r(1, 1, 1, 1, (0, 1))
    chk = axr()
    chk.ar(0, 1, 1, aw(0x0, 0), (0, 0))
    with fails(r"^m_axi R: clock 1: R beat 1 of 1 .*: no RLAST on the burst's last beat"):
        chk.r(1, 1, 1, 0, (0, 0))


def test_axi_read_r_before_its_ar():
    with fails(r"^m_axi R: clock 0: R beat with no burst"):
        axr().r(0, 1, 1, 1, (0, 1))


def test_axi_read_fields_and_handshake():
    with fails(r"^m_axi AR: clock 0: ARID 0x1"):
        axr().ar(0, 1, 1, aw(0, 0, id_=1), (0, 0))
    chk = axr()
    chk.ar(0, 1, 1, aw(0, 0), (0, 0))
    chk.r(1, 1, 0, 0, (7, 1))
    with fails(r"^m_axi R: clock 2: changed while valid and not ready .*data"):
        chk.r(2, 1, 0, 0, (8, 1))


# --- the PORTS table against the RTL -----------------------------------------------


def bench_tops() -> set[str]:
    tops = set()
    for f in TESTS.glob("*/test_*.py"):
        tops |= set(re.findall(r'toplevel="(\w+)"', f.read_text()))
    return tops


def test_ports_cover_every_handshake_of_every_bench_top():
    tops = bench_tops()
    assert {"ddp_rx", "rnic_rx", "crc32c"} <= tops
    for top in sorted(tops):
        have = protocol.channels(protocol.rtl_ports(top))
        if top in protocol.NOT_AXI or not have:
            assert top not in protocol.PORTS
            continue
        listed = sorted(c for p in protocol.PORTS[top] for c in p.channels())
        assert listed == have, f"{top}: PORTS lists {listed}, the RTL has {have}"


def test_every_bench_with_ports_attaches_the_monitor():
    for f in TESTS.glob("*/test_*.py"):
        text = f.read_text()
        # A bench that reuses a sibling bench's TB (from test_x import TB)
        # attaches the checkers there.
        for mod in re.findall(r"^from (test_\w+) import", text, re.M):
            sib = f.parent / f"{mod}.py"
            if sib.exists():
                text += sib.read_text()
        for top in set(re.findall(r'toplevel="(\w+)"', text)) & set(protocol.PORTS):
            assert re.search(r'protocol\.Monitor\((self\.)?dut, "%s"' % top, text), (
                f"{f.name} does not attach the checkers to {top}")


def test_port_fields_from_the_rtl():
    ports = protocol.rtl_ports("ddp_rx")
    fields = protocol.port_fields(ports, protocol.stream("s_axis"))
    assert fields[:3] == ["tdata", "tkeep", "tlast"]
    stag = protocol.port_fields(ports, protocol.handshake("s_stag"))
    assert "entry_valid" in stag and "valid" not in stag and "ready" not in stag


# --- the Monitor's probes, on a stand-in design ------------------------------------


class FakeSignal:
    def __init__(self, width: int):
        self.width, self.v = width, 0
        self._handle = self

    def __len__(self):
        return self.width

    def get_signal_val_binstr(self):
        return format(self.v, f"0{self.width}b") if isinstance(self.v, int) else self.v


class FakeDut:
    def __init__(self, widths: dict[str, int]):
        for n, w in widths.items():
            setattr(self, n, FakeSignal(w))


def test_stream_probe_catches_a_dropped_valid():
    dut = FakeDut({"m_axis_tvalid": 1, "m_axis_tready": 1, "m_axis_tdata": 64, "m_axis_tkeep": 8,
                   "m_axis_tlast": 1})
    probe = protocol._StreamProbe(dut, protocol.stream("m_axis", LANE0), ["tdata", "tkeep", "tlast"])
    dut.m_axis_tvalid.v, dut.m_axis_tkeep.v, dut.m_axis_tdata.v = 1, 0xff, 0x1234
    probe.sample(1)                                  # stalled
    dut.m_axis_tready.v = 1
    probe.sample(2)                                  # taken
    dut.m_axis_tready.v = 0
    probe.sample(3)                                  # next beat stalled
    dut.m_axis_tvalid.v = 0
    with fails(r"^m_axis: clock 4: valid fell before ready \(valid and not ready since clock 3\)"):
        probe.sample(4)


def test_probe_x_on_a_control_is_a_violation():
    dut = FakeDut({"cfg_valid": 1, "cfg_ready": 1, "cfg_conn": 4})
    probe = protocol._HandshakeProbe(dut, protocol.handshake("cfg"), ["conn"])
    dut.cfg_valid.v = "x"
    with fails(r"^cfg: clock 7: valid is 'x' out of reset"):
        probe.sample(7)


def test_axi_probe_reads_a_burst():
    names = {"awvalid": 1, "awready": 1, "awaddr": 32, "awlen": 8, "awsize": 3, "awburst": 2, "awid": 1,
             "wvalid": 1, "wready": 1, "wdata": 64, "wstrb": 8, "wlast": 1, "bvalid": 1, "bready": 1, "bresp": 2}
    dut = FakeDut({"m_axi_" + n: w for n, w in names.items()})
    ports = {"m_axi_" + n: "output" for n in names}
    probe = protocol._AxiWriteProbe(dut, protocol.Port("m_axi", "axi_write"), ports, 64, {"id": 0})
    d = dut
    d.m_axi_awvalid.v, d.m_axi_awaddr.v, d.m_axi_awlen.v, d.m_axi_awsize.v, d.m_axi_awburst.v = 1, 0x38, 1, 3, 1
    d.m_axi_awready.v = 1
    with fails(r"^m_axi AW: clock 1: burst at 0x38, 2 beats .* crosses a 64-octet BURST block"):
        probe.sample(1)
    probe.reset()
    d.m_axi_awaddr.v = 0x30
    probe.sample(2)
    d.m_axi_awvalid.v = 0
    d.m_axi_wvalid.v, d.m_axi_wready.v, d.m_axi_wstrb.v, d.m_axi_wlast.v = 1, 1, 0xff, 1
    with fails(r"^m_axi W: clock 3: W beat 1 of 2 .*: WLAST, but AWLEN 1"):
        probe.sample(3)


def test_vec_probe_checks_each_client():
    """Flat vectors of two clients: client 1's dropped valid fails, named
    by its slice; client 0's lane-0 rule holds on its own slice."""
    dut = FakeDut({"rd_valid": 2, "rd_ready": 2, "rd_data": 128, "rd_keep": 16, "rd_last": 2, "rd_err": 2})
    probe = protocol._VecProbe(dut, protocol.stream_vec("rd", LANE0_EMPTY), ["data", "keep", "last", "err"])
    dut.rd_valid.v, dut.rd_ready.v, dut.rd_keep.v, dut.rd_last.v = 0b11, 0b01, 0x00FF, 0b00
    probe.sample(1)                                  # client 0 takes a full beat; client 1 stalls
    dut.rd_valid.v = 0b00
    with fails(r"^rd\[1\]: clock 2: valid fell before ready"):
        probe.sample(2)
    probe.reset()
    dut.rd_valid.v, dut.rd_ready.v, dut.rd_keep.v, dut.rd_last.v = 0b01, 0b01, 0x0006, 0b01
    with fails(r"^rd\[0\]: clock 3: tkeep 0x6 on a frame's last beat is not a run from lane 0"):
        probe.sample(3)
    probe.reset()
    dut.rd_valid.v, dut.rd_ready.v, dut.rd_keep.v, dut.rd_last.v = 0b10, 0b10, 0x0700, 0b10
    probe.sample(4)                                  # client 1: keep 0x07 in its slice, a legal last beat
    dut.rd_keep.v, dut.rd_last.v = 0x0000, 0b00
    with fails(r"^rd\[1\]: clock 5: tkeep 0x0 on beat 0 of a frame, before its last"):
        probe.sample(5)


def test_vec_handshake_payload_slice():
    dut = FakeDut({"rq_valid": 2, "rq_ready": 2, "rq_addr": 128})
    probe = protocol._VecProbe(dut, protocol.handshake_vec("rq"), ["addr"])
    dut.rq_valid.v, dut.rq_addr.v = 0b10, 5 << 64
    probe.sample(1)
    dut.rq_addr.v = (5 << 64) | 9                    # client 0's slice: not client 1's
    probe.sample(2)
    dut.rq_addr.v = 6 << 64
    with fails(r"^rq\[1\]: clock 3: changed while valid and not ready .*addr"):
        probe.sample(3)
