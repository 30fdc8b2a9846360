"""Protocol checkers for the testbenches' ports: AXI4-Stream, the AXI4
write channels, the write-request stream, and the valid/ready handshakes
of configuration and report ports.

Two halves. The rules are pure Python, fed one sample per clock (the
values a rising edge takes), so tests/test_protocol.py proves each rule on
synthetic sequences without a simulator:

  Channel       valid/ready (AXI4 A3.2.1, AXI4-Stream 2.2.1): once valid is
                high it stays high until the clock where ready is high too,
                and every payload field keeps its value while valid is high
                and ready low.
  Stream        a Channel carrying AXI4-Stream frames (tdata, tkeep, tlast,
                tuser, ...), with the block's tkeep convention where it
                promises one (hw/README.md, "Conventions"):
                  LANE0        lane-0 aligned: every beat full but a frame's
                               last, whose tkeep is a run from lane 0, not
                               empty;
                  LANE0_EMPTY  the same, but the last beat may be empty
                               (mpa_rx's pieces, rx_join, ddp_rx's input,
                               mpa_rx_ooo's early ULPDUs);
                  RUN          a frame's kept octets are one contiguous run
                               (crc32c's input: null octets before and after).
  AxiWrite      the AW, W and B channels of an AXI4 write master (each a
                Channel), and per burst: AWBURST and AWSIZE as the block
                documents (INCR, full-width beats) and its fixed AWID,
                AWCACHE, AWPROT; no burst across a 4 KiB boundary (A3.4.1)
                nor, where the block promises it, across a block of BURST
                beats; WLAST on exactly the burst's last beat, AWLEN + 1
                (A3.4.1); WSTRB only on the byte lanes the beat's address
                makes valid (A3.4.3), and, where the block writes one
                contiguous payload a beat, one run of lanes; W beats may
                come before their AW (A3.3.1) and are checked when it
                comes; no B response before its burst's AW and last W
                beat have both been taken (A3.3.1).
  AxiRead       the AR and R channels of an AXI4 read master (each a
                Channel): per burst AWBURST/ARSIZE/fixed fields and no 4 KiB
                crossing as for AxiWrite; RLAST on exactly the burst's last
                beat, no R beat before its burst's AR was taken (bursts
                answered in AR order: one ID).
  WriteRequest  ddp_rx's write-request stream (tests/wrreq.py): a Channel
                whose address is a multiple of the line (half the data
                width), whose strobes are one run, and whose strobed octets
                stay in one 4 KiB page (and BURST block) but for the one
                case ddp_rx.v documents: a burst's last request whose
                second line is the payload's last octets, at the first line
                of the next block.

PROTOCOL_CHECKS=0 in the environment turns the simulation half off (the
Monitor attaches nothing, ddp_rx's Lean bench feeds no checker): for
measuring what the checkers cost, never for a test run.

A broken rule raises ProtocolError (an AssertionError, so the cocotb test
fails) naming the port, the clock (counted from the monitor's start, as the
testbenches' own monitors count) and what was violated.

Ports of several clients in flat vectors (the DMA engines' client ports:
client i's valid, ready and fields in slice i, kinds "handshake_vec" and
"stream_vec", the stream with plain valid/ready/data/keep/last names) get
one checker per client.

The other half, Monitor, attaches checkers to a design's ports from PORTS
(per top-level module: which ports, of which kind, with which rules) and
samples them every rising edge while reset is low. Every valid/ready pair
of every testbench's top-level module is in PORTS (tests/test_protocol.py
checks that against the RTL), but for ddp_rx_fifo2's, whose push and pop
may change any clock: a FIFO's ports, not an AXI interface.
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

LANE0 = "lane0"
LANE0_EMPTY = "lane0_empty"
RUN = "run"
KEEP_RULES = (None, LANE0, LANE0_EMPTY, RUN)

INCR = 1
PAGE = 4096

# PROTOCOL_CHECKS=0: no checker in a simulation (see the docstring).
ENABLED = os.environ.get("PROTOCOL_CHECKS", "1") != "0"


class ProtocolError(AssertionError):
    pass


def _show(v) -> str:
    """A sampled value for a message: ints and binary strings in hex."""
    if isinstance(v, str) and v and set(v) <= {"0", "1"}:
        return hex(int(v, 2))
    if isinstance(v, int):
        return hex(v)
    return repr(v)


def _run_of_ones(x: int) -> bool:
    """x's set bits are one contiguous run (or x is 0)."""
    if x == 0:
        return True
    x >>= (x & -x).bit_length() - 1
    return x & (x + 1) == 0


class Channel:
    """Valid/ready: valid held until ready, the payload stable meanwhile.

    step() takes one clock's sample: valid and ready as truth values, and
    the payload as a tuple in the order of `fields` (or a callable that
    returns it: it is read only on the clocks that need it, valid high and
    ready low, or the clock after one). Returns whether a transfer took
    place.
    """

    __slots__ = ("port", "fields", "held", "held_at")

    def __init__(self, port: str, fields: Sequence[str] = ()):
        self.port = port
        self.fields = tuple(fields)
        self.held = None
        self.held_at = 0

    def fail(self, cycle: int, what: str):
        raise ProtocolError(f"{self.port}: clock {cycle}: {what}")

    def reset(self):
        self.held = None

    def step(self, cycle: int, valid, ready, payload=()) -> bool:
        held = self.held
        if held is not None:
            if not valid:
                self.fail(cycle, f"valid fell before ready (valid and not ready since clock {self.held_at})")
            p = payload() if callable(payload) else payload
            if p != held:
                changed = [f"{n} {_show(a)} -> {_show(b)}" for n, a, b in zip(self.fields, held, p) if a != b]
                self.fail(cycle, "changed while valid and not ready (since clock "
                          f"{self.held_at}): {', '.join(changed) or 'payload'}")
            if ready:
                self.held = None
            return bool(ready)
        if valid and not ready:
            self.held = payload() if callable(payload) else payload
            self.held_at = cycle
            return False
        return bool(valid and ready)


class Stream(Channel):
    """An AXI4-Stream port: Channel rules, and tkeep per keep_rule (see the
    module's docstring) for a port `lanes` octets wide."""

    __slots__ = ("keep_rule", "lanes", "full", "phase", "beat_no")

    def __init__(self, port: str, fields: Sequence[str] = (), keep_rule: str | None = None, lanes: int = 0):
        super().__init__(port, fields)
        if keep_rule not in KEEP_RULES:
            raise ValueError(f"{port}: keep rule {keep_rule!r}, not one of {KEEP_RULES}")
        if keep_rule is not None and lanes <= 0:
            raise ValueError(f"{port}: a keep rule needs the port's width in lanes")
        self.keep_rule = keep_rule
        self.lanes = lanes
        self.full = (1 << lanes) - 1
        self.phase = 0  # RUN: 0 no kept octet yet, 1 inside the run (open at the top lane), 2 run over
        self.beat_no = 0  # beats of the frame so far

    def reset(self):
        super().reset()
        self.phase = 0
        self.beat_no = 0

    def beat(self, cycle: int, valid, ready, keep: int | None, last, payload=()) -> bool:
        """One clock: keep and last are tkeep and tlast (read when valid;
        None without such a signal)."""
        if not self.step(cycle, valid, ready, payload):
            return False
        rule = self.keep_rule
        if rule is not None and keep is not None:
            if rule == RUN:
                self._run(cycle, keep)
            elif not last:
                if keep != self.full:
                    self.fail(cycle, f"tkeep {keep:#x} on beat {self.beat_no} of a frame, before its last: "
                              f"lane-0 aligned frames fill every beat but the last ({self.full:#x})")
            elif keep & (keep + 1):
                self.fail(cycle, f"tkeep {keep:#x} on a frame's last beat is not a run from lane 0")
            elif keep == 0 and rule == LANE0:
                self.fail(cycle, "tkeep 0 on a frame's last beat: this port's frames end with a kept octet")
        if last:
            self.phase = 0
            self.beat_no = 0
        else:
            self.beat_no += 1
        return True

    def _run(self, cycle: int, keep: int):
        if keep == 0:
            if self.phase == 1:
                self.phase = 2
            return
        if not _run_of_ones(keep):
            self.fail(cycle, f"tkeep {keep:#x}: kept octets with a gap inside one beat (the frame's kept "
                      "octets must be one contiguous run)")
        if self.phase == 2 or (self.phase == 1 and not keep & 1):
            self.fail(cycle, f"tkeep {keep:#x}: kept octets after a gap in the frame (they must be one "
                      "contiguous run)")
        self.phase = 1 if keep >> (self.lanes - 1) & 1 else 2


@dataclass
class _Burst:
    addr: int
    beats: int      # AWLEN + 1
    size: int       # octets a beat, 2^AWSIZE
    cycle: int      # clock its AW was taken
    done: int = 0   # W beats taken


@dataclass
class AxiWrite:
    """The write half of an AXI4 master port (AW, W, B). data_bytes: the
    bus width in octets. Per the block's documentation: burst_types (the
    AWBURST values it may use), size (AWSIZE; default the full width),
    fixed (other AW fields and their only value), block (octets: no burst
    crosses a multiple of it; 0: none promised), contiguous (each W beat's
    strobes one run: a beat writes part of one contiguous payload).

    Each clock, call b(), then aw(), then w() (a B response may not come in
    the clock of its burst's last W beat, nor before it)."""

    port: str
    data_bytes: int
    aw_fields: Sequence[str] = ()
    w_fields: Sequence[str] = ()
    b_fields: Sequence[str] = ()
    burst_types: tuple = (INCR,)
    size: int | None = None
    fixed: dict = field(default_factory=dict)
    block: int = 0
    contiguous: bool = False

    def __post_init__(self):
        if self.size is None:
            self.size = self.data_bytes.bit_length() - 1
        self.aw_ch = Channel(self.port + " AW", self.aw_fields)
        self.w_ch = Channel(self.port + " W", self.w_fields)
        self.b_ch = Channel(self.port + " B", self.b_fields)
        self.bursts: deque[_Burst] = deque()   # AWs taken whose last W beat is not
        self.early: list[tuple[int, int, int]] = []  # W beats ahead of their AW: (cycle, strb, last)
        self.answerable = 0    # bursts with AW and last W taken, not yet answered on B

    def reset(self):
        for ch in (self.aw_ch, self.w_ch, self.b_ch):
            ch.reset()
        self.bursts.clear()
        self.early.clear()
        self.answerable = 0

    def b(self, cycle: int, valid, ready, payload=()):
        if self.b_ch.step(cycle, valid, ready, payload):
            if self.answerable == 0:
                self.b_ch.fail(cycle, "B response with no burst to answer (its AW and last W beat not both "
                               "taken at an earlier clock)")
            self.answerable -= 1

    def aw(self, cycle: int, valid, ready, get_fields, payload=()):
        """get_fields: when the AW is taken, called for a dict of ints with
        at least addr, len, size, burst and the fixed fields."""
        if not self.aw_ch.step(cycle, valid, ready, payload):
            return
        f = get_fields() if callable(get_fields) else get_fields
        fail = self.aw_ch.fail
        if f["burst"] not in self.burst_types:
            fail(cycle, f"AWBURST {f['burst']}, the block documents {self.burst_types} (1: INCR)")
        if f["size"] != self.size:
            fail(cycle, f"AWSIZE {f['size']} ({1 << f['size']} octets a beat), the block documents {self.size} "
                 f"({1 << self.size} octets, the bus is {self.data_bytes})")
        for name, want in self.fixed.items():
            if f[name] != want:
                fail(cycle, f"AW{name.upper()} {f[name]:#x}, the block documents {want:#x}")
        addr, beats, size = f["addr"], f["len"] + 1, 1 << f["size"]
        end = (addr & ~(size - 1)) + beats * size - 1   # its last octet's address (INCR)
        what = f"burst at {addr:#x}, {beats} beats of {size} octets (to {end:#x})"
        if addr // PAGE != end // PAGE:
            fail(cycle, f"{what} crosses a 4 KiB boundary at {(end // PAGE) * PAGE:#x}")
        if self.block and addr // self.block != end // self.block:
            fail(cycle, f"{what} crosses a {self.block}-octet BURST block at {(end // self.block) * self.block:#x}")
        self.bursts.append(_Burst(addr, beats, size, cycle))
        self._feed()

    def w(self, cycle: int, valid, ready, strb: int, last, payload=()):
        """strb, last: WSTRB and WLAST (read when valid)."""
        if not self.w_ch.step(cycle, valid, ready, payload):
            return
        self.early.append((cycle, strb, bool(last)))
        self._feed()

    def _feed(self):
        """The W beats taken, to the bursts taken (W beats go in AW order),
        as far as both go."""
        while self.early and self.bursts:
            self._beat(*self.early.pop(0))

    def _beat(self, cycle: int, strb: int, last: bool):
        fail = self.w_ch.fail
        b = self.bursts[0]
        i = b.done
        size, n = b.size, self.data_bytes
        # Beat i's address (INCR, A3.4.1): the start address for the
        # first, aligned to the size for the others; its valid lanes run
        # from that address to the end of its size-aligned slot.
        beat_addr = b.addr if i == 0 else (b.addr & ~(size - 1)) + i * size
        lo = beat_addr % n
        hi = (beat_addr & ~(size - 1)) % n + size
        legal = ((1 << hi) - 1) & ~((1 << lo) - 1)
        where = f"W beat {i + 1} of {b.beats} of the burst at {b.addr:#x} (AW at clock {b.cycle})"
        if strb & ~legal:
            fail(cycle, f"{where}: WSTRB {strb:#x} has lanes outside {lo}..{hi - 1}, the beat's address "
                 f"{beat_addr:#x} (mask {legal:#x})")
        if self.contiguous and not _run_of_ones(strb):
            fail(cycle, f"{where}: WSTRB {strb:#x} is not one run of lanes (the block writes one contiguous "
                 "payload a beat)")
        if last != (i == b.beats - 1):
            if last:
                fail(cycle, f"{where}: WLAST, but AWLEN {b.beats - 1} makes it {b.beats} beats")
            fail(cycle, f"{where}: no WLAST on the burst's last beat (AWLEN {b.beats - 1})")
        b.done += 1
        if last:
            self.bursts.popleft()
            self.answerable += 1


@dataclass
class AxiRead:
    """The read half of an AXI4 master port (AR, R): AR as AxiWrite's AW
    (burst_types, size, fixed, block), R beats counted against the bursts
    taken, in AR order (one ID). Each clock, call r(), then ar() (an R beat
    may not come in the clock its AR is taken)."""

    port: str
    data_bytes: int
    ar_fields: Sequence[str] = ()
    r_fields: Sequence[str] = ()
    burst_types: tuple = (INCR,)
    size: int | None = None
    fixed: dict = field(default_factory=dict)
    block: int = 0

    def __post_init__(self):
        if self.size is None:
            self.size = self.data_bytes.bit_length() - 1
        self.ar_ch = Channel(self.port + " AR", self.ar_fields)
        self.r_ch = Channel(self.port + " R", self.r_fields)
        self.bursts: deque[_Burst] = deque()

    def reset(self):
        self.ar_ch.reset()
        self.r_ch.reset()
        self.bursts.clear()

    def ar(self, cycle: int, valid, ready, get_fields, payload=()):
        if not self.ar_ch.step(cycle, valid, ready, payload):
            return
        f = get_fields() if callable(get_fields) else get_fields
        fail = self.ar_ch.fail
        if f["burst"] not in self.burst_types:
            fail(cycle, f"ARBURST {f['burst']}, the block documents {self.burst_types} (1: INCR)")
        if f["size"] != self.size:
            fail(cycle, f"ARSIZE {f['size']} ({1 << f['size']} octets a beat), the block documents {self.size}")
        for name, want in self.fixed.items():
            if f[name] != want:
                fail(cycle, f"AR{name.upper()} {f[name]:#x}, the block documents {want:#x}")
        addr, beats, size = f["addr"], f["len"] + 1, 1 << f["size"]
        end = (addr & ~(size - 1)) + beats * size - 1
        what = f"burst at {addr:#x}, {beats} beats of {size} octets (to {end:#x})"
        if addr // PAGE != end // PAGE:
            fail(cycle, f"{what} crosses a 4 KiB boundary at {(end // PAGE) * PAGE:#x}")
        if self.block and addr // self.block != end // self.block:
            fail(cycle, f"{what} crosses a {self.block}-octet block at {(end // self.block) * self.block:#x}")
        self.bursts.append(_Burst(addr, beats, size, cycle))

    def r(self, cycle: int, valid, ready, last, payload=()):
        """last: RLAST (read when valid)."""
        if not self.r_ch.step(cycle, valid, ready, payload):
            return
        fail = self.r_ch.fail
        if not self.bursts:
            fail(cycle, "R beat with no burst to answer (no AR taken at an earlier clock)")
        b = self.bursts[0]
        b.done += 1
        where = f"R beat {b.done} of {b.beats} of the burst at {b.addr:#x} (AR at clock {b.cycle})"
        if bool(last) != (b.done == b.beats):
            fail(cycle, f"{where}: " + ("RLAST before the burst's last beat" if last
                                        else "no RLAST on the burst's last beat"))
        if last:
            self.bursts.popleft()


class WriteRequest(Channel):
    """ddp_rx's write-request stream: line is N octets (half the data
    width); block, as in AxiWrite, for the BURST block ddp_rx keeps its
    requests in (0: none)."""

    __slots__ = ("line", "block")

    def __init__(self, port: str, fields: Sequence[str], line: int, block: int = 0):
        super().__init__(port, fields)
        self.line = line
        self.block = block

    def request(self, cycle: int, valid, ready, addr: int, strb: int, last, payload=()) -> bool:
        if not self.step(cycle, valid, ready, payload):
            return False
        n = self.line
        if addr % n:
            self.fail(cycle, f"request at {addr:#x}: not a multiple of the line ({n} octets)")
        if not strb:
            return True
        if not _run_of_ones(strb):
            self.fail(cycle, f"request at {addr:#x}: strobes {strb:#x} are not one run (a request writes part "
                      "of one contiguous payload)")
        first = addr + (strb & -strb).bit_length() - 1
        end = addr + strb.bit_length() - 1
        for span, what in ((PAGE, "4 KiB page"), (self.block, f"{self.block}-octet BURST block")):
            if not span or first // span == end // span:
                continue
            # ddp_rx.v: a payload's last octets at the next block go as a
            # continuation in the request of the beat before, one line up.
            if (addr + n) % span == 0 and last:
                continue
            self.fail(cycle, f"request at {addr:#x} writes {first:#x}..{end:#x}, across a {what} boundary "
                      f"(allowed only between its two lines in a burst's last request{'' if last else '; m_wr_last is 0'})")
        return True


# --- which ports each testbench's module has ----------------------------------

RTL_DIR = Path(__file__).resolve().parent.parent / "hw" / "rtl"
TESTS_DIR = Path(__file__).resolve().parent
_PORT_RE = re.compile(r"^\s*(input|output)\s+(?:wire|reg)?\s*(?:signed\s*)?(?:\[[^\]]*\]\s*)?(\w+)\s*,?", re.M)


def rtl_ports(top: str) -> dict[str, str]:
    """The ports of hw/rtl/<top>.v (or of a test-only top, tests/*/<top>.v):
    name -> "input" or "output"."""
    path = RTL_DIR / f"{top}.v"
    if not path.exists():
        found = sorted(Path(__file__).resolve().parent.glob(f"*/{top}.v"))
        if len(found) != 1:
            raise FileNotFoundError(f"no hw/rtl/{top}.v and not exactly one tests/*/{top}.v: {found}")
        path = found[0]
    text = path.read_text()
    head = text[text.index(f"module {top}"):]
    head = head[: head.index(");")]
    return {m.group(2): m.group(1) for m in _PORT_RE.finditer(head)}


def channels(ports: dict[str, str]) -> list[str]:
    """The valid/ready pairs among ports, each as its names' common part:
    "s_axis_t" (s_axis_tvalid, s_axis_tready), "cfg_", "m_axi_aw"."""
    return sorted(n[:-5] for n in ports if n.endswith("valid") and n[:-5] + "ready" in ports)


@dataclass(frozen=True)
class Port:
    """One port of a module: kind "stream", "handshake", "axi_write" or
    "write_request", with its options."""
    prefix: str
    kind: str
    keep: str | None = None
    # axi_write / axi_read: the fixed fields ((name, value) pairs) and the
    # block in beats that no burst crosses (0: none); None: ddp_rx's.
    fixed: tuple | None = None
    block_beats: int | None = None

    def channels(self) -> list[str]:
        """Its valid/ready pairs, named as channels() names them."""
        if self.kind == "stream":
            return [self.prefix + "_t"]
        if self.kind == "axi_write":
            return [self.prefix + c for c in ("_aw", "_w", "_b")]
        if self.kind == "axi_read":
            return [self.prefix + c for c in ("_ar", "_r")]
        return [self.prefix + "_"]


def stream(prefix, keep=None):
    return Port(prefix, "stream", keep)


def handshake(prefix):
    return Port(prefix, "handshake")


def handshake_vec(prefix):
    """A handshake per client, in flat vectors (slice i: client i)."""
    return Port(prefix, "handshake_vec")


def stream_vec(prefix, keep=None):
    """A stream per client in flat vectors, named <prefix>_valid, _ready,
    _data, _keep, _last (and other fields)."""
    return Port(prefix, "stream_vec", keep)


# The DMA engines' AXI4 ports (rnic_dma_rd.v, rnic_dma_wr.v): ID 0, ARCACHE/
# AWCACHE 0011, PROT 010; no block but the 4 KiB page.
DMA_FIXED = (("id", 0), ("cache", 0b0011), ("prot", 0b010))


# Per top-level module, every port with a valid/ready handshake (an AXI4
# write port counts its AW, W and B). Stream tkeep rules as each block's
# header and hw/README.md promise them; inputs whose tkeep the block does
# not look at have none.
PORTS: dict[str, list[Port]] = {
    "crc32c": [stream("s_axis", RUN), stream("m_axis_crc")],
    "mpa_tx": [stream("s_axis", LANE0), handshake("cfg"), stream("m_axis", LANE0)],
    "tuf_tx": [stream("s_axis", LANE0), handshake("cfg"), stream("m_axis", LANE0)],
    "ddp_tx": [handshake("s_desc"), stream("s_axis"), stream("m_axis", LANE0)],
    "rnic_tx": [handshake("s_desc"), stream("s_axis"), handshake("cfg"), stream("m_axis", LANE0)],
    "mpa_rx": [handshake("cfg"), handshake("fail"), stream("s_axis"), stream("m_axis", LANE0_EMPTY), stream("m_verdict"),
               stream("m_exc")],
    "rx_join": [stream("s_axis", LANE0_EMPTY), stream("m_axis", LANE0_EMPTY), stream("s_verdict"),
                stream("m_verdict"), handshake("clr")],
    "tuf_rx": [handshake("cfg"), handshake("fail"), stream("s_axis"), stream("m_axis", LANE0_EMPTY), stream("m_verdict"),
               stream("m_exc"), stream("m_early", LANE0_EMPTY)],
    "mpa_rx_ooo": [handshake("cfg"), stream("s_exc"), stream("m_exc"), stream("m_early", LANE0_EMPTY)],
    "ddp_rx": [stream("s_axis", LANE0_EMPTY), stream("s_verdict"), handshake("s_conn"), handshake("s_stag"),
               handshake("s_post"), Port("m_axi", "axi_write"), Port("m_wr", "write_request"),
               handshake("m_cpl"), handshake("m_err")],
    "rnic_dma_rd": [handshake_vec("rd_req"), stream_vec("rd", LANE0_EMPTY), handshake("ref"),
                    Port("m_axi", "axi_read", fixed=DMA_FIXED, block_beats=0)],
    "rnic_dma_wr": [handshake_vec("wr_req"), stream_vec("wr"), handshake_vec("wr_done"), handshake("ref"), handshake("pref"),
                    Port("s_axi", "axi_write", fixed=DMA_FIXED, block_beats=0),
                    Port("m_axi", "axi_write", fixed=DMA_FIXED, block_beats=0)],
    "rnic_rx": [handshake("cfg"), handshake("fail"), stream("s_axis"), stream("m_exc"), handshake("s_conn"), handshake("s_stag"),
                handshake("s_post"), Port("m_axi", "axi_write"), Port("m_wr", "write_request"),
                handshake("m_cpl"), handshake("m_err")],
    # tests/sq's top (rnic_admin + rnic_sq + rnic_tx): rnic_sq's ports to
    # the DMA engine, the receive side, the CQ and event writers, and
    # rnic_tx's FPDU stream.
    "sq_top": [handshake("rr_done"), handshake("wqe_rd_req"), handshake("wqe_rd"), handshake("pay_rd_req"),
               handshake("pay_rd"), stream("m_axis", LANE0), handshake("cq"), handshake("ev")],
    # tests/rq's top (rnic_admin + rnic_rq): rnic_rq's ports to the DMA
    # engine, ddp_rx (posts, Send completions), the lead (QP failure), the
    # CQ and event writers.
    "rq_top": [handshake("wqe_rd_req"), handshake("wqe_rd"), handshake("post"), handshake("rcpl"),
               handshake("fail"), handshake("cq"), handshake("ev")],
    # tests/rresp's top (rnic_admin + rnic_rresp + rnic_tx): the Read
    # Requests in, the posts, the DMA read client port, the failure reports
    # and rnic_tx's FPDU stream.
    "rr_top": [handshake("rreq"), handshake("post"), handshake("pay_rd_req"), handshake("pay_rd"),
               handshake("fail"), stream("m_axis", LANE0)],
    # tests/cq's wrapper: completion records and another engine's events
    # in, the CQ writer's and the event writer's DMA write client ports
    # (request, data, done) out, the overrun report, the interrupt messages.
    "rnic_cq_tb": [handshake("cpl"), handshake("xev"), handshake("cqwr"), handshake("cqwd"), handshake("cqwb"),
                   handshake("evwr"), handshake("evwd"), handshake("evwb"), handshake("ovf"), handshake("irq")],
    # tests/exc's top (rnic_admin + rnic_exc): rnic_rx's exception stream
    # in, the exception writer's DMA write client port (request, data,
    # done) and its event records out.
    "exc_top": [stream("s_exc"), handshake("exwr"), handshake("exwd"), handshake("exwb"), handshake("ev")],
    # The device's record merge (tests/arb): N inputs in flat vectors, one
    # output.
    "rnic_recmux": [handshake_vec("s"), handshake("m")],
    # The sink of the device's own receive buffers (tests/arb): ddp_rx's
    # placement writes in, the DMA write engine's placement port out.
    "rnic_axisink": [Port("s_axi", "axi_write"), Port("m_axi", "axi_write")],
    # The transmit arbiter (tests/arb): descriptors and payload frames of N
    # sources in flat vectors, rnic_tx's two ports out.
    "rnic_txarb": [handshake_vec("s_desc"), stream_vec("s_pay"), handshake("m_desc"), stream("m_axis")],
}
# Modules with valid/ready pairs that are not AXI interfaces: their
# testbench drives them as a FIFO's push and pop, which may change any clock.
NOT_AXI = {"ddp_rx_fifo2": "a FIFO's push and pop ports (in_*, out_*), which may change any clock"}

# ddp_rx's BURST, as every testbench builds it (the default): bursts and
# requests stay inside blocks of BURST beats of DATA_W/8 octets.
DDP_RX_BURST = 8
# The AXI4 write port's documented constants (ddp_rx.v): AWID 0, AWBURST
# INCR, AWCACHE 0011, AWPROT 010.
DDP_RX_AW_FIXED = {"id": 0, "cache": 0b0011, "prot": 0b010}

AXI_STREAM_FIELDS = ("tdata", "tkeep", "tlast", "tuser", "tid", "tdest")


def port_fields(ports: dict[str, str], port: Port) -> list[str]:
    """The payload fields of a port (names without the prefix), from the
    module's port list."""
    p = port.prefix
    if port.kind == "stream":
        return [f for f in AXI_STREAM_FIELDS if f"{p}_{f}" in ports]
    if port.kind == "write_request":
        return ["addr", "data", "strb", "last"]
    # (Not a handshake's own valid or ready; s_stag_entry_valid, with no
    # ready beside it, is a field.)
    # Nor the fields of a longer port under the same prefix (rd_req_* are
    # not fields of rd_*).
    controls = {c + s for c in channels(ports) for s in ("valid", "ready")}
    longer = tuple(c for c in channels(ports) if c.startswith(p + "_") and c != p + "_")
    return [n[len(p) + 1:] for n in ports
            if n.startswith(p + "_") and n not in controls and not (longer and n.startswith(longer))]


# --- sampling the ports in a simulation ----------------------------------------


def _reader(handle) -> Callable[[], str]:
    """The signal's value as a binary string, through the simulator handle
    (cocotb's value objects cost more than the checks)."""
    return handle._handle.get_signal_val_binstr


def _bit(read: Callable[[], str], what: str, port: str):
    """A 1-bit control read as True/False; X, Z or U out of reset is a
    violation in itself."""
    def get(cycle: int) -> bool:
        v = read()
        if v == "1":
            return True
        if v == "0":
            return False
        raise ProtocolError(f"{port}: clock {cycle}: {what} is {v!r} out of reset")
    return get


def _int(read: Callable[[], str], what: str, port: str):
    def get(cycle: int) -> int:
        v = read()
        try:
            return int(v, 2)
        except ValueError:
            raise ProtocolError(f"{port}: clock {cycle}: {what} is {v!r} while valid") from None
    return get


class _Probe:
    """One valid/ready port's readers: valid and ready as bits, the payload
    fields as a tuple of raw values, and the checker (`chk`) they feed."""

    def __init__(self, dut, prefix: str, valid: str, ready: str, fields):
        self.valid = _bit(_reader(getattr(dut, f"{prefix}_{valid}")), valid, prefix)
        self.ready = _bit(_reader(getattr(dut, f"{prefix}_{ready}")), ready, prefix)
        self.reads = [_reader(getattr(dut, f"{prefix}_{f}")) for f in fields]
        self.payload = lambda: tuple(r() for r in self.reads)

    def reset(self):
        self.chk.reset()


class _StreamProbe(_Probe):
    def __init__(self, dut, port: Port, fields: list[str]):
        p = port.prefix
        super().__init__(dut, p, "tvalid", "tready", fields)
        self.keep = _int(_reader(getattr(dut, f"{p}_tkeep")), "tkeep", p) if "tkeep" in fields else None
        self.last = _bit(_reader(getattr(dut, f"{p}_tlast")), "tlast", p) if "tlast" in fields else None
        lanes = len(getattr(dut, f"{p}_tkeep")) if "tkeep" in fields else 0
        self.chk = Stream(p, fields, port.keep if "tkeep" in fields else None, lanes)

    def sample(self, cycle: int):
        chk = self.chk
        v = self.valid(cycle)
        if not v and chk.held is None:
            return
        r = self.ready(cycle)
        if v and r:
            keep = self.keep(cycle) if self.keep is not None else None
            last = self.last(cycle) if self.last is not None else True
        else:
            keep, last = None, False
        chk.beat(cycle, v, r, keep, last, self.payload)


class _HandshakeProbe(_Probe):
    def __init__(self, dut, port: Port, fields: list[str]):
        super().__init__(dut, port.prefix, "valid", "ready", fields)
        self.chk = Channel(port.prefix, fields)

    def sample(self, cycle: int):
        v = self.valid(cycle)
        if not v and self.chk.held is None:
            return
        self.chk.step(cycle, v, self.ready(cycle), self.payload)


class _AxiWriteProbe:
    def __init__(self, dut, port: Port, ports: dict[str, str], block: int, fixed: dict):
        p = port.prefix
        aw = [n[len(p) + 3:] for n in ports if n.startswith(p + "_aw") and n not in (f"{p}_awvalid", f"{p}_awready")]
        w = [n[len(p) + 2:] for n in ports if n.startswith(p + "_w") and n not in (f"{p}_wvalid", f"{p}_wready")]
        b = [n[len(p) + 2:] for n in ports if n.startswith(p + "_b") and n not in (f"{p}_bvalid", f"{p}_bready")]
        rd = lambda name: _reader(getattr(dut, f"{p}_{name}"))  # noqa: E731
        self.awv, self.awr = _bit(rd("awvalid"), "AWVALID", p), _bit(rd("awready"), "AWREADY", p)
        self.wv, self.wr = _bit(rd("wvalid"), "WVALID", p), _bit(rd("wready"), "WREADY", p)
        self.bv, self.br = _bit(rd("bvalid"), "BVALID", p), _bit(rd("bready"), "BREADY", p)
        aw_reads = {f: rd("aw" + f) for f in aw}
        self.aw_payload = lambda: tuple(r() for r in aw_reads.values())
        self.aw_ints = {f: _int(r, "AW" + f.upper(), p) for f, r in aw_reads.items()}
        w_reads = [rd("w" + f) for f in w]
        self.w_payload = lambda: tuple(r() for r in w_reads)
        self.strb, self.wlast = _int(rd("wstrb"), "WSTRB", p), _bit(rd("wlast"), "WLAST", p)
        b_reads = [rd("b" + f) for f in b]
        self.b_payload = lambda: tuple(r() for r in b_reads)
        self.chk = AxiWrite(p, len(getattr(dut, f"{p}_wstrb")), aw, w, b, fixed=fixed, block=block,
                            contiguous=True)

    def reset(self):
        self.chk.reset()

    def sample(self, cycle: int):
        chk = self.chk
        bv = self.bv(cycle)
        if bv or chk.b_ch.held is not None:
            chk.b(cycle, bv, self.br(cycle), self.b_payload)
        awv = self.awv(cycle)
        if awv or chk.aw_ch.held is not None:
            chk.aw(cycle, awv, self.awr(cycle), lambda: {f: g(cycle) for f, g in self.aw_ints.items()},
                   self.aw_payload)
        wv = self.wv(cycle)
        if wv or chk.w_ch.held is not None:
            wr = self.wr(cycle)
            take = wv and wr
            chk.w(cycle, wv, wr, self.strb(cycle) if take else 0, self.wlast(cycle) if take else False,
                  self.w_payload)


class _AxiReadProbe:
    def __init__(self, dut, port: Port, ports: dict[str, str], block: int, fixed: dict):
        p = port.prefix
        ar = [n[len(p) + 3:] for n in ports if n.startswith(p + "_ar") and n not in (f"{p}_arvalid", f"{p}_arready")]
        r = [n[len(p) + 2:] for n in ports if n.startswith(p + "_r") and n not in (f"{p}_rvalid", f"{p}_rready")]
        rd = lambda name: _reader(getattr(dut, f"{p}_{name}"))  # noqa: E731
        self.arv, self.arr = _bit(rd("arvalid"), "ARVALID", p), _bit(rd("arready"), "ARREADY", p)
        self.rv, self.rr = _bit(rd("rvalid"), "RVALID", p), _bit(rd("rready"), "RREADY", p)
        ar_reads = {f: rd("ar" + f) for f in ar}
        self.ar_payload = lambda: tuple(r_() for r_ in ar_reads.values())
        self.ar_ints = {f: _int(r_, "AR" + f.upper(), p) for f, r_ in ar_reads.items()}
        r_reads = [rd("r" + f) for f in r]
        self.r_payload = lambda: tuple(r_() for r_ in r_reads)
        self.rlast = _bit(rd("rlast"), "RLAST", p)
        self.chk = AxiRead(p, len(getattr(dut, f"{p}_rdata")) // 8, ar, r, fixed=fixed, block=block)

    def reset(self):
        self.chk.reset()

    def sample(self, cycle: int):
        chk = self.chk
        rv = self.rv(cycle)
        if rv or chk.r_ch.held is not None:
            rr = self.rr(cycle)
            chk.r(cycle, rv, rr, self.rlast(cycle) if rv and rr else False, self.r_payload)
        arv = self.arv(cycle)
        if arv or chk.ar_ch.held is not None:
            chk.ar(cycle, arv, self.arr(cycle), lambda: {f: g(cycle) for f, g in self.ar_ints.items()},
                   self.ar_payload)


class _VecProbe:
    """A port of n clients in flat vectors: one Channel (handshake_vec) or
    Stream (stream_vec) per client, fed its slice of every signal."""

    def __init__(self, dut, port: Port, fields: list[str]):
        p = port.prefix
        self.valid = _reader(getattr(dut, f"{p}_valid"))
        self.ready = _reader(getattr(dut, f"{p}_ready"))
        self.n = n = len(getattr(dut, f"{p}_valid"))
        self.port = p
        self.reads = [(_reader(getattr(dut, f"{p}_{f}")), len(getattr(dut, f"{p}_{f}")) // n) for f in fields]
        self.stream = port.kind == "stream_vec"
        if self.stream:
            self.keep_at = fields.index("keep") if "keep" in fields else None
            self.last_at = fields.index("last") if "last" in fields else None
            lanes = len(getattr(dut, f"{p}_keep")) // n if self.keep_at is not None else 0
            self.chks = [Stream(f"{p}[{i}]", fields, port.keep if lanes else None, lanes) for i in range(n)]
        else:
            self.chks = [Channel(f"{p}[{i}]", fields) for i in range(n)]

    def reset(self):
        for c in self.chks:
            c.reset()

    def _slice(self, i: int) -> tuple:
        out = []
        for read, w in self.reads:
            v = read()
            out.append(v[len(v) - (i + 1) * w: len(v) - i * w])
        return tuple(out)

    def _bit(self, bits: str, i: int, what: str, cycle: int) -> bool:
        b = bits[len(bits) - 1 - i]
        if b not in "01":
            raise ProtocolError(f"{self.port}[{i}]: clock {cycle}: {what} is {b!r} out of reset")
        return b == "1"

    def sample(self, cycle: int):
        vs, rs = self.valid(), None
        for i, chk in enumerate(self.chks):
            v = self._bit(vs, i, "valid", cycle)
            if not v and chk.held is None:
                continue
            if rs is None:
                rs = self.ready()
            r = self._bit(rs, i, "ready", cycle)
            pay = lambda i=i: self._slice(i)  # noqa: E731
            if not self.stream:
                chk.step(cycle, v, r, pay)
                continue
            keep, last = None, False
            if v and r:
                sl = self._slice(i)
                try:
                    keep = int(sl[self.keep_at], 2) if self.keep_at is not None else None
                    last = sl[self.last_at] == "1" if self.last_at is not None else True
                except ValueError:
                    raise ProtocolError(f"{self.port}[{i}]: clock {cycle}: keep {sl[self.keep_at]!r} "
                                        "while valid") from None
            chk.beat(cycle, v, r, keep, last, pay)


class _WriteRequestProbe(_Probe):
    FIELDS = ("addr", "data", "strb", "last")

    def __init__(self, dut, port: Port, line: int, block: int):
        p = port.prefix
        super().__init__(dut, p, "valid", "ready", self.FIELDS)
        self.addr, self.strb = _int(self.reads[0], "addr", p), _int(self.reads[2], "strb", p)
        self.last = _bit(self.reads[3], "last", p)
        self.chk = WriteRequest(p, self.FIELDS, line, block)

    def sample(self, cycle: int):
        chk = self.chk
        v = self.valid(cycle)
        if not v and chk.held is None:
            return
        r = self.ready(cycle)
        if v and r:
            chk.request(cycle, v, r, self.addr(cycle), self.strb(cycle), self.last(cycle), self.payload)
        else:
            chk.request(cycle, v, r, 0, 0, False, self.payload)


class Monitor:
    """Every port of PORTS[top] checked each rising edge of dut.clk while
    dut.rst is low (a reset clears every checker's state). Start it after
    reset, from the test (cocotb ends it with the test)."""

    def __init__(self, dut, top: str, exclude: Sequence[str] = ()):
        import cocotb
        from cocotb.triggers import RisingEdge

        self.probes = []
        self.cycle = 0
        if not ENABLED:
            return
        ports = rtl_ports(top)
        data_bytes = len(dut.s_axis_tdata) // 8 if "s_axis_tdata" in ports else 0
        for port in PORTS[top]:
            if port.prefix in exclude:
                continue
            if port.kind == "stream":
                self.probes.append(_StreamProbe(dut, port, port_fields(ports, port)))
            elif port.kind == "handshake":
                self.probes.append(_HandshakeProbe(dut, port, port_fields(ports, port)))
            elif port.kind in ("handshake_vec", "stream_vec"):
                self.probes.append(_VecProbe(dut, port, port_fields(ports, port)))
            elif port.kind in ("axi_write", "axi_read"):
                if port.fixed is None:
                    block, fixed = DDP_RX_BURST * data_bytes, DDP_RX_AW_FIXED
                else:
                    width = len(getattr(dut, f"{port.prefix}_{'wdata' if port.kind == 'axi_write' else 'rdata'}"))
                    block, fixed = (port.block_beats or 0) * width // 8, dict(port.fixed)
                probe = _AxiWriteProbe if port.kind == "axi_write" else _AxiReadProbe
                self.probes.append(probe(dut, port, ports, block, fixed))
            else:
                self.probes.append(_WriteRequestProbe(dut, port, data_bytes, DDP_RX_BURST * data_bytes))
        self.rst = _reader(dut.rst)
        self.edge = RisingEdge(dut.clk)
        self.task = cocotb.start_soon(self._run())

    async def _run(self):
        from cocotb.utils import get_sim_time

        probes, rst, edge = self.probes, self.rst, self.edge
        while True:
            await edge
            self.cycle += 1
            if rst() != "0":
                for p in probes:
                    p.reset()
                continue
            try:
                for p in probes:
                    p.sample(self.cycle)
            except ProtocolError as e:
                # The time, to find the clock in the waves (WAVES=1).
                raise ProtocolError(f"{e} (rising edge at {get_sim_time('ns')} ns)") from None
