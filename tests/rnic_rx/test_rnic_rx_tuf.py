"""The receive datapath rnic_rx with connections in TUF mode (tuf_rx beside
mpa_rx), end to end against the Go stack.

The testbench machinery is tests/rnic_rx/test_rnic_rx.py's (TB, Conn,
setup_conns, messages): the same host memory model, protocol checkers,
completions and errors compared with Go's ddp_place. What is new is the
framing of some connections and the host's part:

  * RDMAP messages from the Go stack (rdmap_segments, DDP segments of at
    most TUF's MULPDU for a 1460-octet EMSS, 1448 octets) framed as TUF
    FPDUs by iwarp/tuf's Sender (rnic-oracle tuf_frames: one FPDU a
    segment, the CRC32c trailer), on connections configured with cfg_tuf
    and the key, beside MPA connections (one with markers, one without) in
    the same run, their segments interleaved;
  * the paths: FPDU-aligned segments (all taken in order), a re-segmenting
    middlebox at 536 octets, random cuts and joins (segments cut inside
    FPDUs and several FPDUs in one), and FPDU-aligned segments duplicated
    and reordered (early placement through tuf_rx's m_early);
  * the host: the segments rnic_rx passes on m_exc are collected (their
    octets as the block hands them over), and from where the block stopped
    the bench delineates them with Go's tuf.Receiver (rnic-oracle
    tuf_receive) and gives the FPDUs back on s_axis, one a segment with its
    own sequence number (docs/tuf.md, "What rnic_rx must do to use it");
  * the model of the block's decisions is iwarp/tuf's Seam (rnic-oracle
    tuf_seam) over every segment the connection got, in order: which are
    taken (their ULPDU and the trailer's verdict go to ddp_place as the
    connection's ULPDUs, in that order), which go to the exception path and
    with which reason (compared with m_exc segment by segment, octets
    included), which out-of-order ones are placed early (an "early" op for
    ddp_place where the block did not report the candidate skipped on
    m_skip; the m_early count per connection must match);
  * ground truth beside the model: every segment rnic_rx takes as contained
    (every one not on m_exc) is one the sender sent whole at that sequence
    number: no false positive;
  * a bad trailer: the aligned TUF connection's last FPDU has its trailer
    damaged, as the MPA connection without markers has its last CRC: both
    end with the same LLP CRC error report (the verdict 2 path), each as
    Go's model says.

The whole host memory, every completion and error per connection, the
exception count and the early count are checked as in test_rnic_rx.py.
Verilator, Icarus and GHDL (the VHDL twin) at W=64 and W=512, the twins'
transactions compared clock for clock (tests/transactions.py). Run with
`.venv/bin/pytest tests/rnic_rx -k tuf`; RNIC_RX_TUF_MSGS sets the messages
per connection.
"""

from __future__ import annotations

import os
from collections import defaultdict

import cocotb
import pytest
from cocotbext.axi import AxiStreamFrame

import hdlsim
import tbutil
from rdmap_tx import WRITE
from test_rnic_rx import CONN_W, SLICE, TB, Conn, messages, run, setup_conns

EMSS = 1460
TUF_MULPDU = EMSS - 12          # tuf.MaxULPDU: DDP's MULPDU over TUF (docs/tuf.md)
SEQ = 0xFFFFFFFF
PATHS = ("mpa_markers", "mpa", "tuf_aligned", "tuf_middlebox536", "tuf_cuts", "tuf_ooo")


def tuf_frame(tb: TB, c: Conn, corrupt_last: bool) -> list[bytes]:
    """c.ulpdus framed by Go's TUF Sender, one FPDU a segment; the stream,
    the FPDUs' offsets and the ground truth {seq: FPDU} on c. Go's
    Receiver must read the sender's ULPDUs back (up to the damaged trailer)."""
    fpdus = [bytes.fromhex(s) for s in tb.oracle.request(
        "tuf_frames", key=c.key, emss=EMSS, ulpdus=[u.hex() for u in c.ulpdus])["segments"]]
    assert len(fpdus) == len(c.ulpdus), "the TUF sender packed or cut a ULPDU"
    if corrupt_last:
        w = bytearray(fpdus[-1])
        w[-1 - tb.rng.randrange(4)] ^= 1 << tb.rng.randrange(8)      # in the trailer
        fpdus[-1] = bytes(w)
    c.fpdu_starts, pos = [], 0
    c.truth = {}
    for f in fpdus:
        c.fpdu_starts.append(pos)
        c.truth[(c.base + pos) & SEQ] = f
        pos += len(f)
    c.stream = b"".join(fpdus)
    rx = tb.oracle.request("tuf_receive", key=c.key, stream=c.stream.hex())
    got = [bytes.fromhex(f["ulpdus"]) for f in rx["fpdus"]]
    assert got == c.ulpdus[:len(got)], f"connection {c.num}: Go's TUF Receiver reads other ULPDUs"
    err = rx["stream_error"]
    if corrupt_last:
        assert err is not None and err["code"] == 2 and err["off"] == c.fpdu_starts[-1], err
    else:
        assert err is None and len(got) == len(c.ulpdus), err
    return fpdus


def valid_writes(tb: TB, c: Conn, count: int, mulpdu: int):
    """count RDMA Writes into c's own STags, in bounds: a stream whose only
    error is the damaged CRC or trailer at its end."""
    rng = tb.rng
    for _ in range(count):
        stag, base, length = rng.choice(c.stags)
        n = rng.choice([0, rng.randint(1, 64), rng.randint(1, length)])
        c.ulpdus += tb.segments(WRITE, rng.choice([rng.randint(46, mulpdu), mulpdu]), stag=stag,
                                to=(base + rng.randint(0, length - n)) % 2**64, payload=rng.randbytes(n))


def tuf_cut(tb: TB, c: Conn, path: str) -> list[tuple[int, int]]:
    """(offset, length) segments of c's stream as the path delivers it."""
    rng, n = tb.rng, len(c.stream)
    if path in ("tuf_aligned", "tuf_ooo"):
        segs = [(s, e - s) for s, e in zip(c.fpdu_starts, c.fpdu_starts[1:] + [n])]
        if path == "tuf_ooo":
            # Duplicates, and reordering within windows of 4.
            out = []
            for s in segs:
                out.append(s)
                if rng.random() < 0.15:
                    out.append(s)
            for i in range(0, len(out), 4):
                w = out[i:i + 4]
                rng.shuffle(w)
                out[i:i + 4] = w
            segs = out
        return segs
    if path == "tuf_middlebox536":
        return [(o, min(536, n - o)) for o in range(0, n, 536)]
    segs, off = [], 0
    while off < n:
        k = rng.choice((1, 3, 9, 40, 300, 1460, 3000)) if rng.random() < 0.7 else rng.randint(1, 4000)
        k = min(n - off, k)
        segs.append((off, k))
        off += k
    return segs


class Host:
    """What the host does with a TUF connection's exception segments
    (docs/tuf.md): keeps their octets, and gives the stream back from where
    the block stopped, delineated by Go's tuf.Receiver, one FPDU a segment."""

    def __init__(self, tb: TB):
        self.tb = tb
        self.sent: dict[int, list[dict]] = defaultdict(list)   # conn -> segments as tuf_seam takes them

    def send(self, c: Conn, off: int, octets: bytes):
        seq = (c.base + off) & SEQ
        self.sent[c.num].append({"conn": c.num, "seq": seq, "octets": octets.hex()})
        user = (c.num << 48) | (seq << 16) | len(octets)
        self.tb.source.send_nowait(AxiStreamFrame(octets, tuser=user))

    def give_back(self, c: Conn) -> int:
        """The FPDUs from where the block stopped on: the stream's tail
        that the exception segments cover without a gap (past the last
        octet the block took and no exception carried), rebuilt from their
        octets alone, delineated by Go's Receiver. Returns how many went
        back."""
        n = len(c.stream)
        buf, have = bytearray(n), bytearray(n)
        for _, seq, length, _, octets in (x for x in self.tb.exc_segs if x[0] == c.num):
            off = (seq - c.base) & SEQ
            assert len(octets) == length and off + length <= n, f"connection {c.num}: exception at {seq:#x}"
            buf[off:off + length] = octets
            have[off:off + length] = b"\1" * length
        start = n - have[::-1].index(0) if 0 in have else 0
        if start == n:
            return 0
        rx = self.tb.oracle.request("tuf_receive", key=c.key, stream=bytes(buf[start:]).hex())
        assert rx["stream_error"] is None, rx["stream_error"]
        for f in rx["fpdus"]:
            self.send(c, start + f["off"], bytes(buf[start + f["off"]:start + f["off"] + f["len"]]))
        return len(rx["fpdus"])


def tuf_expect(tb: TB, host: Host, c: Conn) -> tuple[list[dict], list[tuple], int]:
    """The model's outcome for every segment c got (tuf_seam, in order):
    the ddp_place ops (ULPDUs taken with their verdicts, early ones), the
    exception segments, and the early count. Checks the skips against the
    out-of-order candidates and the ground truth against what was taken."""
    segs = host.sent[c.num]
    outs = tb.oracle.request("tuf_seam", conns=[{"conn": c.num, "key": c.key, "next": c.base & SEQ}],
                             segments=segs)["outcomes"]
    ops, exc, early = [], [], 0
    skips = [s for s in tb.skips if s[0] == c.num]
    for seg, out in zip(segs, outs):
        octets = bytes.fromhex(seg["octets"])
        if out["reason"] == 0:
            ops.append({"ulpdu": {"conn": c.num, "data": out["ulpdus"], "verdict": 0 if out["crc_good"] else 2}})
            assert c.truth.get(seg["seq"]) == octets, (
                f"connection {c.num}: the segment at seq {seg['seq']:#x} ({len(octets)} octets) is taken, "
                "but the sender did not send it whole there (a false positive)")
            continue
        exc.append((c.num, seg["seq"], len(octets), out["reason"], octets))
        if out["reason"] != 3:
            continue
        # An out-of-order candidate (one whole FPDU with the key) the block
        # passed without the copy is reported on m_skip; copies of one
        # segment are alike, so the first skip of that seq stands for it.
        if skips and skips[0][1] == seg["seq"]:
            skips.pop(0)
        elif out["early"]:
            ops.append({"early": {"conn": c.num, "data": out["ulpdus"]}})
            early += 1
    assert not skips, f"connection {c.num}: m_skip pulses for no out-of-order segment: {skips}"
    return ops, exc, early


@cocotb.test()
async def tuf_mixed(dut):
    """MPA and TUF connections in one run: aligned, middlebox, cut and
    joined, reordered and duplicated TUF paths; the host's give-back."""
    tb = TB(dut)
    await tb.start()
    rng = tb.rng
    # (GHDL draws the same stimulus as Verilator: the twins are compared.)
    msgs = int(os.environ.get("RNIC_RX_TUF_MSGS", "0")) or (8 if tb.icarus else 12)
    tb.stall_everywhere()
    conns = []
    for i, (num, path) in enumerate(zip(rng.sample(range(1 << CONN_W), len(PATHS)), PATHS)):
        tuf = path.startswith("tuf")
        # One TUF connection's sequence numbers wrap.
        base = (1 << 32) - rng.randint(1, 3000) if path == "tuf_cuts" else rng.getrandbits(32)
        c = Conn(num, rng.getrandbits(32), i * SLICE, markers=path == "mpa_markers", crc=True, base=base,
                 tuf=tuf, key=rng.getrandbits(48) if tuf else 0)
        c.path = path
        conns.append(c)
    await setup_conns(tb, conns)
    host = Host(tb)
    queues = {}
    for c in conns:
        if not c.tuf:
            if c.path == "mpa":
                # The bad CRC's connection: no other error before it.
                valid_writes(tb, c, msgs, 1460)
            else:
                messages(tb, c, msgs)
            tb.frame(c, corrupt_last_crc=c.path == "mpa")
            queues[c.num] = (c, tb.cut(c))
            continue
        # Invalid messages on the middlebox connection only. Where ULPDUs
        # are placed early (reordering, random cuts), Go places them at
        # their turn in the connection's ops, which the block keeps only
        # while the connection's checks do not depend on the order; the
        # aligned connection's only error is to be its bad trailer.
        if c.path == "tuf_aligned":
            valid_writes(tb, c, msgs, TUF_MULPDU)
        else:
            messages(tb, c, msgs, p_bad=1.0 if c.path == "tuf_middlebox536" else 0.0,
                     mulpdus=[rng.randint(46, 200), rng.randint(200, TUF_MULPDU), TUF_MULPDU])
        tuf_frame(tb, c, corrupt_last=c.path == "tuf_aligned")
        queues[c.num] = (c, tuf_cut(tb, c, c.path))
    live = list(queues)
    while live:
        k = rng.choice(live)
        c, segs = queues[k]
        off, n = segs.pop(0)
        if c.tuf:
            host.send(c, off, c.stream[off:off + n])
        else:
            tb.send_segment(c, off, n)
        if not segs:
            live.remove(k)
    await tb.drain()
    tuf_conns = [c for c in conns if c.tuf]
    aligned = next(c for c in tuf_conns if c.path == "tuf_aligned")
    assert not [x for x in tb.exc_segs if x[0] == aligned.num], "an FPDU-aligned segment went to the exception path"
    back = {c.path: host.give_back(c) for c in tuf_conns}
    await tb.drain()
    # The model, connection by connection; the exception segments in order.
    nexc, reasons = 0, defaultdict(int)
    verdicts = {c.num: [op["ulpdu"]["verdict"] for op in tb.ops if "ulpdu" in op and op["ulpdu"]["conn"] == c.num]
                for c in conns}
    for c in tuf_conns:
        ops, exc, early = tuf_expect(tb, host, c)
        got = [x for x in tb.exc_segs if x[0] == c.num]
        assert len(got) == len(exc), f"connection {c.num} ({c.path}): {len(got)} exception segments, model {len(exc)}"
        for i, (g, w) in enumerate(zip(got, exc)):
            assert g == w, f"connection {c.num} ({c.path}): exception {i}: {g[:4]}, model {w[:4]}"
        assert tb.early_by_conn[c.num] == early, (
            f"connection {c.num} ({c.path}): {tb.early_by_conn[c.num]} early ULPDUs into ddp_rx, model {early}")
        taken = b"".join(bytes.fromhex(op["ulpdu"]["data"]) for op in ops if "ulpdu" in op)
        assert taken == b"".join(c.ulpdus), f"connection {c.num} ({c.path}): the ULPDUs taken are not the stream's"
        tb.ops += ops
        verdicts[c.num] = [op["ulpdu"]["verdict"] for op in ops if "ulpdu" in op]
        nexc += len(exc)
        for x in exc:
            reasons[(c.path, x[3])] += 1
    want = await tb.check(exceptions=nexc, skips=True)
    # The counters' pulses count TUF connections as MPA ones: a verdict
    # per ULPDU taken in order, with its code, and a placement per one
    # with a payload past its DDP header (14 octets tagged, 18 untagged).
    for c in conns:
        assert tb.stat_verdicts[c.num] == verdicts[c.num], (
            f"connection {c.num} ({c.path}): m_stat_verdict codes {tb.stat_verdicts[c.num]}, want {verdicts[c.num]}")
    in_order = [bytes.fromhex(op["ulpdu"]["data"]) for op in tb.ops if "ulpdu" in op]
    places = sum(1 for u in in_order if len(u) > (14 if u[0] & 0x80 else 18))
    assert tb.stat_places == places, f"{tb.stat_places} m_stat_place pulses, want {places}"
    # A bad trailer ends a TUF stream as a bad MPA CRC ends an MPA one:
    # verdict 2 on the last ULPDU, and the stream's one error, its last
    # report, the LLP CRC error (layer 2, type 0, MPA's code 2: RFC 5044
    # 8, RFC 5040 4.8) alike.
    mpa = next(c for c in conns if c.path == "mpa")
    for c in (aligned, mpa):
        errs = [e for e in want[c.num] if e[0] == "error"]
        assert verdicts[c.num][-1] == 2 and errs == [want[c.num][-1]] and errs[0][1:4] == (2, 0, 2), (
            c.path, verdicts[c.num][-3:], errs)
    dut._log.info("tuf_mixed: %d ULPDUs on %d connections; exceptions by (path, reason) %s; FPDUs given back %s; "
                  "early %s; skips %d", sum(len(c.ulpdus) for c in conns), len(conns), dict(reasons), back,
                  dict(tb.early_by_conn), len(tb.skips))
    assert reasons[("tuf_middlebox536", 6)] > 0 and back["tuf_middlebox536"] > 0, reasons
    assert reasons[("tuf_ooo", 3)] > 0, reasons
    assert tb.early_count > 0, "no TUF segment placed early"
    # fail_* reaches the block of either mode, and lands after a cfg_*
    # written just before it: two fresh connections, one in each mode,
    # each configured and at once failed, then sent an FPDU at its base
    # that would be taken: both go to m_exc with reason 2 (in error).
    spare = [n for n in range(1 << CONN_W) if n not in {c.num for c in conns}]
    x0, sent = len(tb.exc_segs), []
    for num, tuf in zip(rng.sample(spare, 2), (True, False)):
        base, key = rng.getrandbits(32), rng.getrandbits(48)
        u = tb.segments(WRITE, TUF_MULPDU, stag=0x100, to=0, payload=rng.randbytes(100))[0]
        if tuf:
            fpdu = bytes.fromhex(tb.oracle.request("tuf_frames", key=key, emss=EMSS, ulpdus=[u.hex()])["segments"][0])
        else:
            fpdu = tb.oracle.mpa_fpdus([u], markers=False, base=base, crc=True)[0]["wire"]
        await tb._cfg("cfg", conn=num, en=1, mrk_en=0, crc_en=1, base=base, tuf=int(tuf), key=key)
        await tb._cfg("fail", conn=num)
        user = (num << 48) | (base << 16) | len(fpdu)
        tb.source.send_nowait(AxiStreamFrame(fpdu, tuser=user))
        sent.append((num, base, len(fpdu), 2, fpdu))
    await tb.drain()
    assert tb.exc_segs[x0:] == sent, (
        f"failed connections: exceptions {[x[:4] for x in tb.exc_segs[x0:]]}, want {[x[:4] for x in sent]}")
    assert not tb.status, dict(tb.status)


@cocotb.test()
async def tuf_bench(dut):
    """Latency and input beats a clock for back-to-back TUF FPDUs on one
    connection, one FPDU a segment, always-ready memory (the data checked
    as everywhere): 1460-octet FPDUs (RDMA Writes of 1434 octets), then
    64-octet ones (38-octet Writes); written as the bench record
    rnic_rx/tuf (build/bench/rnic_rx-tuf-W<w>.json)."""
    tb = TB(dut)
    tb.rng = tbutil.bench_rng()
    await tb.start()
    rng = tb.rng
    c = Conn(rng.randrange(1 << CONN_W), 5, 0, markers=False, crc=True, base=rng.getrandbits(32), tuf=True,
             key=rng.getrandbits(48))
    await tb.conn(c)
    await tb.stag(9, 0x42, c.pd, 1, 0, 1 << 17, 0)
    stag = 9 << 8 | 0x42
    # (Per segment the rates are steady from the first few: 40 suffice,
    # and keep GHDL's share of make test small.)
    count = 40
    for i in range(count + 1):
        c.ulpdus += tb.segments(WRITE, TUF_MULPDU, stag=stag, to=2048 + (i % 60) * 1434, payload=rng.randbytes(1434))
    for i in range(4 * count):
        c.ulpdus += tb.segments(WRITE, TUF_MULPDU, stag=stag, to=2048 + (i % 16) * 128 + 8 * (i % 16),
                                payload=rng.randbytes(38))
    fpdus = tuf_frame(tb, c, corrupt_last=False)
    assert len(fpdus[0]) == 1460 and len(fpdus[-1]) == 64
    for u in c.ulpdus:
        tb.ops.append({"ulpdu": {"conn": c.num, "data": u.hex(), "verdict": 0}})

    async def run(first: int, last: int) -> tuple[float, float]:
        """FPDUs first..last-1 back to back: input beats and FPDUs a clock."""
        tb.in_beats.clear()
        for k in range(first, last):
            tb.send_segment(c, c.fpdu_starts[k], len(fpdus[k]))
        await tb.drain(100)
        clocks = tb.in_beats[-1] - tb.in_beats[0] + 1
        return round(len(tb.in_beats) / clocks, 3), round((last - first) / clocks, 3)

    # Latency: an idle block, one FPDU.
    await run(0, 1)
    latency = tb.aw_cycles[0] - tb.seg_starts[0]
    aligned, _ = await run(1, count + 1)
    small_beats, small_fpdus = await run(count + 1, len(fpdus))
    await tb.check()
    assert not tb.exc_segs and tb.stat_verdicts[c.num] == [0] * len(fpdus)
    hdlsim.write_bench(
        "rnic_rx/tuf", tb.width, beats_per_clock=aligned, latency_clocks=latency,
        higher={"64.beats_per_clock": small_beats, "64.fpdus_per_clock": small_fpdus},
        details={"latency_what": "first s_axis beat of a segment to AW valid", "fpdus_1460": count,
                 "fpdus_64": 4 * count, "axi_width": len(dut.m_axi_wdata)},
    )
    dut._log.info("tuf_bench: 1460-octet FPDUs %.3f beats a clock, latency %d; 64-octet FPDUs %.3f beats, "
                  "%.3f FPDUs a clock", aligned, latency, small_beats, small_fpdus)


# --- pytest ------------------------------------------------------------------

# Every simulator at both ends of the width range (tests/widths.py): the
# Verilog on Verilator and Icarus, the VHDL twin on GHDL.
PARAMS = hdlsim.width_cases((64, 512), langs=("verilog", "vhdl"))


@pytest.mark.parametrize("sim,width", PARAMS)
def test_rnic_rx_tuf(sim, width, oracle_path):
    # (As test_rnic_rx: the 1024-bit host write port at W=512.)
    run(sim, width, oracle_path, test="rnic_rx_tuf", test_module=__name__,
        axi=2 * width if width == 512 else width)
