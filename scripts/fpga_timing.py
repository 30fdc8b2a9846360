"""A timing estimate for a netlist that Yosys mapped to Xilinx cells.

scripts/hw_figures.py synthesises each block with

    synth_xilinx -family xcup -abc9 -flatten -noiopad -noclkbuf -nosrl

(LUT1-6, CARRY4, MUXF7/8/9, FDRE/FDSE/FDCE/FDPE, LUT RAM, block RAM, with
sdp_ram kept whole as a block-RAM box) and hands the JSON netlist to
`analyse`, which finds the longest register-to-register path with the
delays of an UltraScale+ part of speed grade -2 (`Delays`) and a routing
allowance on every net that goes through the general interconnect.

This is an estimate, not a placed-and-routed figure: there is no
placement, so every routed net costs the same allowance (plus a term for
its fanout) whatever its length, and the figures below are typical values
read off published Vivado timing reports of UltraScale+ -2 devices, not a
vendor timing model. The allowance `route` (0.20 ns) is a short hop's
net delay. Calibrating it against PicoRV32 (`calibrate`: picorv32_axi with
TWO_CYCLE_ALU in its published Vivado benchmark wrapper, 1.4 ns on a
Kintex UltraScale+ -2 part) finds no allowance that fits: Yosys maps
PicoRV32's worst path 6 LUTs deep, 1.49 ns with no routing at all, so the
estimate (2.89 ns there) is conservative against a tuned Vivado run by up
to about 2x (hw/timing.md tells how, and what the model leaves out).

What counts as a path, as in hw_figures.py's LUT levels: a flip-flop, a
block RAM or LUT RAM output, or an input port starts one (a port stands
for a register in the block before); a flip-flop or RAM input or an output
port ends one. A path's figure is the clock period it needs:

    launch (clock to out) + cells + routing + setup + clock allowance

Yosys 0.23 maps carry chains to CARRY4, half of UltraScale+'s CARRY8 (which
Vivado packs two CARRY4s into), so CARRY4 carries half a CARRY8's delays.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field


class TimingError(Exception):
    """A netlist the model cannot time (a cell it has no delays for, a
    combinational loop)."""


@dataclass(frozen=True)
class Delays:
    """Delays in ns, UltraScale+ speed grade -2 (hw/timing.md, "The model",
    says where each comes from)."""

    ff_clk_to_q: float = 0.08      # FDRE C -> Q
    ff_setup_d: float = 0.03       # D before the clock edge
    ff_setup_ce: float = 0.06      # CE
    ff_setup_sr: float = 0.10      # synchronous R / S
    lut: float = 0.10              # any LUT1-6 input to O (0.04-0.18 by pin)
    muxf_data: float = 0.09        # MUXF7/8/9 I0, I1 -> O
    muxf_select: float = 0.15      # MUXF7/8/9 S -> O
    carry_in: float = 0.16         # CARRY4 S, DI, CYINIT -> CO, O
    carry_ci_through: float = 0.015  # CARRY4 CI -> CO[3]: half a CARRY8's CI -> CO[7]
    carry_ci_out: float = 0.10     # CARRY4 CI -> O[i], CO[0..2]
    carry_cascade: float = 0.01    # CO[3] -> the next CARRY4's CI (dedicated)
    local: float = 0.01            # LUT -> MUXF input, LUT -> its CARRY S (dedicated)
    route: float = 0.20            # general routing, one net, fanout 1 (hw/timing.md)
    route_fanout: float = 0.03     # more per doubling of the net's fanout
    bram_clk_to_out: float = 0.85  # RAMB36E2 CLK -> DOUT, no output register
    bram_clk_to_out_reg: float = 0.35  # ... with the output register
    bram_setup: float = 0.45       # address, enable, write enable, data
    bram_lutram_max_aw: int = 6    # sdp_ram this shallow is LUT RAM + a flip-flop
    lutram_clk_to_out: float = 0.80  # WCLK -> O (a write shows at the output)
    lutram_read: float = 0.15      # read address -> O, up to 64 deep
    lutram_read_wide: float = 0.30  # ... 128 to 512 deep (through MUXF7-9)
    lutram_setup: float = 0.40     # write address, write enable, data
    clock: float = 0.05            # clock uncertainty and skew

    def route_delay(self, fanout: int) -> float:
        return self.route + self.route_fanout * math.log2(max(fanout, 1))


# The figures hw_figures.py uses (hw/timing.md).
DEFAULT = Delays()

FF_TYPES = {"FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1"}
LUT_TYPES = {f"LUT{i}" for i in range(1, 7)} | {"INV", "BUF"}
MUXF_TYPES = {"MUXF7", "MUXF8", "MUXF9"}
CONST_TYPES = {"GND", "VCC"}
LUTRAM_DEPTH = {
    "RAM32M": 32, "RAM32M16": 32, "RAM64M": 64, "RAM64M8": 64,
    "RAM32X1D": 32, "RAM64X1D": 64, "RAM128X1D": 128, "RAM256X1D": 256,
    "RAM32X1S": 32, "RAM64X1S": 64, "RAM128X1S": 128, "RAM256X1S": 256, "RAM512X1S": 512,
}
BRAM_TYPES = {"RAMB18E2", "RAMB36E2"}
# Pins that take a clock: not timed as data.
CLOCK_PINS = {"C", "WCLK", "CLK", "clk", "CLKARDCLK", "CLKBWRCLK"}
# Asynchronous clear and preset: recovery timing is not modelled.
ASYNC_PINS = {"CLR", "PRE"}


def is_standin(cell_type: str) -> bool:
    """sdp_ram, kept whole (keep_hierarchy) as a block-RAM box."""
    return cell_type == "sdp_ram" or cell_type.endswith("\\sdp_ram")


def _param_int(value) -> int:
    if isinstance(value, int):
        return value
    try:
        return int(value, 2)
    except (TypeError, ValueError):
        return 0


@dataclass
class Step:
    """One cell on a path: the routing into it, then its own delay, and the
    net it drives (the launch is the first step, the capture the last)."""
    what: str        # e.g. "LUT6 I3->O", "FDRE C->Q", "FDRE D (setup)"
    net: str         # the net it drives (or, for the capture, the register)
    route: float     # routing delay into this cell
    routed: bool     # that routing went through the general interconnect
    cell: float      # the cell's own delay (clock to out, arc, or setup)
    at: float        # arrival time after this step


@dataclass
class Path:
    delay: float     # the period the path needs, clock allowance included
    start: str
    end: str
    hops: int        # nets through the general interconnect
    luts: int        # LUTs on the path
    carries: int     # CARRY4 cells on the path
    steps: list = field(default_factory=list)

    @property
    def fmax_mhz(self) -> float:
        return 1000.0 / self.delay if self.delay > 0 else float("inf")

    def as_record(self) -> dict:
        return {
            "delay_ns": round(self.delay, 3),
            "fmax_mhz": round(self.fmax_mhz, 1),
            "start": self.start,
            "end": self.end,
            "hops": self.hops,
            "luts": self.luts,
            "carry4": self.carries,
        }


class _Cell:
    __slots__ = ("name", "type", "conns", "dirs", "params", "kind")

    def __init__(self, name, cell):
        self.name = name
        self.type = cell["type"]
        self.conns = cell["connections"]
        self.dirs = cell.get("port_directions", {})
        self.params = cell.get("parameters", {})
        t = self.type
        if t in FF_TYPES:
            self.kind = "ff"
        elif t in LUT_TYPES:
            self.kind = "lut"
        elif t in MUXF_TYPES:
            self.kind = "muxf"
        elif t == "CARRY4":
            self.kind = "carry4"
        elif t in LUTRAM_DEPTH:
            self.kind = "lutram"
        elif t in BRAM_TYPES:
            self.kind = "bram"
        elif is_standin(t):
            self.kind = "standin"
        elif t in CONST_TYPES:
            self.kind = "const"
        else:
            raise TimingError(
                f"no timing for cell {name} of type {t}: scripts/fpga_timing.py models "
                "LUTs, CARRY4, MUXF7-9, FD*E flip-flops, LUT RAM, RAMB18E2/36E2 and the "
                "sdp_ram box; add its delays there, or keep it out of the flow "
                "(synth_xilinx options such as -nodsp, -nosrl)")

    def direction(self, port: str) -> str:
        d = self.dirs.get(port)
        if d:
            return d
        # Netlists without port_directions (hand-made ones): by name.
        outs = {"O", "Q", "CO", "DPO", "SPO", "rd_data"}
        if port in outs or port.startswith("DO") or port.startswith("DOUT"):
            return "output"
        return "input"


class Netlist:
    """The timing graph of one module of a Yosys JSON netlist."""

    def __init__(self, netlist: dict, top: str, d: Delays = DEFAULT, ports: bool = True):
        if top not in netlist.get("modules", {}):
            raise TimingError(f"the netlist has no module {top}")
        mod = netlist["modules"][top]
        self.d = d
        self.names: dict = {}
        for name, net in mod.get("netnames", {}).items():
            for i, bit in enumerate(net["bits"]):
                if isinstance(bit, int) and (bit not in self.names or "$" in self.names[bit][0]):
                    self.names[bit] = (name.lstrip("\\"), i, len(net["bits"]))
        self.cells = [_Cell(n, c) for n, c in mod.get("cells", {}).items()]
        self.driver: dict = {}       # bit -> (cell, port, index)
        self.fanout: dict = {}       # bit -> data sink pins (output ports count)
        self.in_ports: dict = {}     # bit -> port name
        self.out_ports: list = []    # (port name, index, bit)
        for c in self.cells:
            for port, bits in c.conns.items():
                out = c.direction(port) == "output"
                for i, b in enumerate(bits):
                    if not isinstance(b, int):
                        continue
                    if out:
                        self.driver[b] = (c, port, i)
                    elif port not in CLOCK_PINS:
                        self.fanout[b] = self.fanout.get(b, 0) + 1
        for pname, port in mod.get("ports", {}).items():
            bits = port["bits"]
            for i, b in enumerate(bits):
                if not isinstance(b, int):
                    continue
                if port["direction"] == "input":
                    if ports:
                        self.in_ports[b] = pname if len(bits) == 1 else f"{pname}[{i}]"
                elif ports:
                    self.out_ports.append((pname if len(bits) == 1 else f"{pname}[{i}]", b))
                    self.fanout[b] = self.fanout.get(b, 0) + 1
        self.memo: dict = {}

    # --- names ---------------------------------------------------------------

    def net_name(self, bit) -> str:
        if bit not in self.names:
            return f"bit {bit}"
        n, i, w = self.names[bit]
        return n if w == 1 else f"{n}[{i}]"

    def register_name(self, c: _Cell) -> str:
        if c.kind == "ff":
            return self.net_name(c.conns["Q"][0])
        kind = {"standin": "block RAM", "bram": "block RAM", "lutram": "LUT RAM"}[c.kind]
        if c.kind == "standin" and self._standin_lutram(c):
            kind = "LUT RAM"
        name = c.name.lstrip("\\")
        return f"{name} ({kind})"

    # --- the cells' timing ---------------------------------------------------

    def launch(self, c: _Cell, port: str) -> float | None:
        """Clock-to-out of a sequential output pin, None for a combinational one."""
        d = self.d
        if c.kind == "ff":
            return d.ff_clk_to_q
        if c.kind == "standin":
            # A shallow table (or one asking for it, LUTRAM = 1) is LUT RAM
            # read into a flip-flop, a deep one a block RAM.
            return d.ff_clk_to_q if self._standin_lutram(c) else d.bram_clk_to_out
        if c.kind == "bram":
            reg = "DOA_REG" if port.startswith(("DOUTADOUT", "DOUTPADOUTP")) else "DOB_REG"
            if _param_int(c.params.get(reg, 0)):
                return d.bram_clk_to_out_reg
            return d.bram_clk_to_out
        if c.kind == "lutram":
            return d.lutram_clk_to_out
        return None

    def setup(self, c: _Cell, port: str) -> float | None:
        """Setup of an input pin that captures data at the clock edge."""
        d = self.d
        if port in CLOCK_PINS or port in ASYNC_PINS:
            return None
        if c.kind == "ff":
            return {"D": d.ff_setup_d, "CE": d.ff_setup_ce, "R": d.ff_setup_sr, "S": d.ff_setup_sr}.get(port)
        if c.kind == "standin" and _param_int(c.params.get("LUTRAM", 0)):
            return self._lutram_box_setup(c, port)
        if c.kind in ("standin", "bram"):
            return d.bram_setup
        if c.kind == "lutram":
            return d.lutram_setup if self._lutram_write_pin(c, port) else None
        return None

    def _standin_lutram(self, c: _Cell) -> bool:
        aw = len(c.conns.get("rd_addr", []))
        return aw <= self.d.bram_lutram_max_aw or bool(_param_int(c.params.get("LUTRAM", 0)))

    def _lutram_box_setup(self, c: _Cell, port: str) -> float:
        """Setup of an sdp_ram box with LUTRAM = 1: its write pins are the
        LUT RAM's; its read address goes through the RAM's read port (and,
        past 512 words, a LUT6 4:1 mux with its routing for every 4x of
        depth) into the rd_data flip-flop's D, and rd_en is that flip-flop's
        CE."""
        d = self.d
        if port.startswith("wr_"):
            return d.lutram_setup
        if port == "rd_en":
            return d.ff_setup_ce
        depth = 1 << len(c.conns.get("rd_addr", []))
        t = d.lutram_read if depth <= 64 else d.lutram_read_wide
        reach = 512
        while depth > reach:
            t += d.route + d.lut
            reach *= 4
        return t + d.ff_setup_d

    @staticmethod
    def _lutram_write_pin(c: _Cell, port: str) -> bool:
        if port in ("WE", "D") or port.startswith("DI"):
            return True
        if c.type.startswith("RAM32M") or c.type.startswith("RAM64M"):
            return port == "ADDRH" if c.type in ("RAM32M16", "RAM64M8") else port == "ADDRD"
        return port == "A" or (port.startswith("A") and port[1:].isdigit())

    def arcs(self, c: _Cell, port: str, idx: int):
        """(input port, input index, delay) for every combinational arc into
        output pin port[idx]."""
        d = self.d
        k = c.kind
        if k == "lut":
            return [(p, 0, d.lut) for p in c.conns if p != "O"]
        if k == "muxf":
            return [("I0", 0, d.muxf_data), ("I1", 0, d.muxf_data), ("S", 0, d.muxf_select)]
        if k == "carry4":
            arcs = []
            # Bit j of CO or O depends on S and DI of bits up to j, and on
            # the chain's input; O[j] on S[j] too.
            for i in range(idx + 1):
                arcs.append(("S", i, d.carry_in))
                if i < idx or port == "CO":
                    arcs.append(("DI", i, d.carry_in))
            arcs.append(("CYINIT", 0, d.carry_in))
            ci = d.carry_ci_through if (port == "CO" and idx == 3) else d.carry_ci_out
            arcs.append(("CI", 0, ci))
            return arcs
        if k == "lutram":
            depth = LUTRAM_DEPTH[c.type]
            t = d.lutram_read if depth <= 64 else d.lutram_read_wide
            if c.type.startswith("RAM32M") or c.type.startswith("RAM64M"):
                addr = ["ADDR" + port[2:]]       # DOA <- ADDRA, ...
            elif port == "DPO":
                addr = [p for p in c.conns if p.startswith("DPRA")]
            else:
                addr = [p for p in c.conns if p == "A" or (p.startswith("A") and p[1:].isdigit())]
            return [(p, i, t) for p in addr for i in range(len(c.conns.get(p, [])))]
        return []

    def wire(self, bit: int, sink: _Cell | None, port: str) -> tuple[float, bool]:
        """Routing delay from bit's driver to one sink pin, and whether it
        goes through the general interconnect."""
        d = self.d
        drv = self.driver.get(bit)
        if sink is not None and drv is not None:
            dc, dport, didx = drv
            if sink.kind == "carry4" and port == "CI" and dc.kind == "carry4" and dport == "CO" and didx == 3:
                return d.carry_cascade, False
            if sink.kind == "muxf" and port in ("I0", "I1") and dc.kind in ("lut", "muxf"):
                return d.local, False
            if sink.kind == "carry4" and port == "S" and dc.kind == "lut" and self.fanout.get(bit, 0) == 1:
                return d.local, False
        return d.route_delay(self.fanout.get(bit, 1)), True

    # --- arrival times -------------------------------------------------------

    def arrival(self, bit) -> tuple | None:
        """(time, hops, predecessor) at which bit settles after the clock
        edge, None for a constant or undriven bit. predecessor is None at a
        launch, else (input bit, wire delay, routed, cell, arc label, arc
        delay) of the arc the latest input comes through."""
        if not isinstance(bit, int):
            return None
        memo = self.memo
        stack = [bit]
        while stack:
            b = stack[-1]
            state = memo.get(b, _NEW)
            if state is not _NEW and state is not _PENDING:
                stack.pop()
                continue
            if b in self.in_ports:
                memo[b] = (self.d.ff_clk_to_q, 0, None)
                stack.pop()
                continue
            drv = self.driver.get(b)
            if drv is None:
                memo[b] = None
                stack.pop()
                continue
            c, port, idx = drv
            ins = []
            for p, i, t in self.arcs(c, port, idx):
                bits = c.conns.get(p, [])
                if i < len(bits) and isinstance(bits[i], int):
                    ins.append((bits[i], p, i, t))
            if state is _NEW:
                # First visit: settle the inputs first. Everything pushed
                # above b is reached from b, so an input still pending
                # when b is worked out is a loop back into b's cone.
                memo[b] = _PENDING
                todo = [ib for ib, *_ in ins if memo.get(ib, _NEW) is _NEW]
                if todo:
                    stack.extend(todo)
                    continue
            best = None
            start = self.launch(c, port)
            if start is not None:
                best = (start, 0, None)
            for ib, p, i, t in ins:
                a = memo[ib]
                if a is _PENDING:
                    raise TimingError(f"combinational loop through {self.net_name(ib)} "
                                      f"(cell {c.name}, {c.type}); the estimate needs every "
                                      "loop to pass through a register")
                if a is None:
                    continue
                w, routed = self.wire(ib, c, p)
                at = a[0] + w + t
                if best is None or at > best[0]:
                    label = f"{p}{'' if len(c.conns[p]) == 1 else f'[{i}]'}->{port}"
                    best = (at, a[1] + routed, (ib, w, routed, c, label, t))
            memo[b] = best
            stack.pop()
        return memo[bit]

    def endpoints(self):
        """(required period, end name, pin label, input bit, wire, routed,
        setup, key) for every capturing pin and output port; key names the
        register, RAM or port the pin belongs to."""
        d = self.d
        for c in self.cells:
            for port, bits in c.conns.items():
                if c.direction(port) != "input":
                    continue
                s = self.setup(c, port)
                if s is None:
                    continue
                for i, b in enumerate(bits):
                    a = self.arrival(b)
                    if a is None:
                        continue
                    w, routed = self.wire(b, c, port)
                    pin = port if len(bits) == 1 else f"{port}[{i}]"
                    reg = self.register_name(c)
                    if c.kind == "ff":
                        # A multi-bit register counts once: r_reg[3] -> r_reg.
                        yield (a[0] + w + s + d.clock, reg, f"{c.type} {pin} (setup)", b, w, routed, s,
                               re.sub(r"\[\d+\]$", "", reg))
                    else:
                        yield (a[0] + w + s + d.clock, f"{reg} {pin}", f"{c.type} {pin} (setup)", b, w,
                               routed, s, reg)
        for name, b in self.out_ports:
            a = self.arrival(b)
            if a is None:
                continue
            w, routed = self.wire(b, None, "")
            yield (a[0] + w + d.ff_setup_d + d.clock, f"port {name}", "output port (setup)", b, w, routed,
                   d.ff_setup_d, "port " + re.sub(r"\[\d+\]$", "", name))

    def trace(self, end) -> Path:
        total, end_name, label, bit, w, routed, s, _ = end
        a = self.arrival(bit)
        steps = [Step(label, end_name, w, routed, s, total - self.d.clock)]
        luts = carries = 0
        b = bit
        while True:
            at, hops, pred = self.memo[b]
            if pred is None:
                if b in self.in_ports:
                    steps.append(Step("input port", f"port {self.in_ports[b]}", 0.0, False, at, at))
                    start = f"port {self.in_ports[b]}"
                else:
                    c, port, _ = self.driver[b]
                    clk = "WCLK" if c.kind == "lutram" else "C" if c.kind == "ff" else "CLK"
                    steps.append(Step(f"{c.type} {clk}->{port}", self.net_name(b), 0.0, False, at, at))
                    start = self.register_name(c)
                break
            ib, pw, prouted, c, plabel, t = pred
            steps.append(Step(f"{c.type} {plabel}", self.net_name(b), pw, prouted, t, at))
            luts += c.kind == "lut"
            carries += c.kind == "carry4"
            b = ib
        steps.reverse()
        return Path(total, start, end_name, a[1] + routed, luts, carries, steps)


_PENDING = object()
_NEW = object()


def analyse(netlist: dict, top: str, d: Delays = DEFAULT, ports: bool = True, paths: int = 1) -> list[Path]:
    """The `paths` worst paths of module top, worst first, one per end
    (register or port; a multi-bit register counts once). ports=False leaves
    out paths that start or end at a port."""
    nl = Netlist(netlist, top, d, ports)
    best: dict = {}
    for e in nl.endpoints():
        key = e[7]
        if key not in best or e[0] > best[key][0]:
            best[key] = e
    worst = sorted(best.values(), key=lambda e: -e[0])[:paths]
    return [nl.trace(e) for e in worst]


def format_path(p: Path) -> str:
    lines = [f"{p.delay:.3f} ns ({p.fmax_mhz:.0f} MHz): {p.start} -> {p.end}, "
             f"{p.hops} routed nets, {p.luts} LUTs, {p.carries} CARRY4",
             f"  {'route':>6} {'cell':>6} {'at':>6}  cell / arc                      net"]
    for s in p.steps:
        r = f"{s.route:.3f}" + ("" if s.routed or s.route == 0 else "*")
        lines.append(f"  {r:>6} {s.cell:6.3f} {s.at:6.3f}  {s.what:<30} {s.net}")
    lines.append(f"  clock allowance (uncertainty, skew) included; * dedicated routing")
    return "\n".join(lines)


def step_record(s: Step) -> dict:
    """One step of a path for a JSON report."""
    return {"cell": s.what, "net": s.net, "route_ns": round(s.route, 3),
            "routed": s.routed, "cell_ns": round(s.cell, 3), "at_ns": round(s.at, 3)}


# --- command line --------------------------------------------------------------

XILINX_SYNTH = "synth_xilinx -family xcup -abc9 -flatten -noiopad -noclkbuf -nosrl"
# PicoRV32's published Vivado figure for a Kintex UltraScale+ -2 part
# (xcku3p-ffva676-2-e): picorv32_axi with TWO_CYCLE_ALU inside the
# register wrapper of its scripts/vivado/tabtest.v, 1.4 ns.
PICORV32_NS = 1.4


def calibrate(src: str, out: str, target: float = PICORV32_NS) -> int:
    """Synthesise PicoRV32 (a checkout at src: picorv32.v and
    scripts/vivado/tabtest.v) with the blocks' flow into out/, and print its
    estimate for a range of routing allowances and the allowance that meets
    target (hw/timing.md, "Calibration")."""
    import dataclasses
    import json
    import os
    import subprocess
    os.makedirs(out, exist_ok=True)
    netlist = os.path.join(out, "picorv32-xcup.json")
    files = [os.path.join(src, "picorv32.v"), os.path.join(src, "scripts", "vivado", "tabtest.v")]
    subprocess.run(["yosys", "-q", "-l", os.path.join(out, "picorv32-xcup.log"), "-p",
                    f"read_verilog {' '.join(files)}; {XILINX_SYNTH} -top top; stat; write_json {netlist}"],
                   check=True)
    nl = json.load(open(netlist))

    def at(route: float) -> Path:
        return analyse(nl, "top", dataclasses.replace(DEFAULT, route=route))[0]

    for r in (0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30):
        p = at(r)
        print(f"route {r:.2f} ns: {p.delay:.3f} ns ({p.fmax_mhz:.0f} MHz), {p.luts} LUTs, {p.carries} CARRY4, "
              f"{p.hops} routed nets: {p.start} -> {p.end}")
    if at(0.0).delay > target:
        print(f"no allowance >= 0 meets {target} ns: the cells alone need {at(0.0).delay:.3f} ns")
    else:
        lo, hi = 0.0, 1.0
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if at(mid).delay <= target else (lo, mid)
        print(f"allowance meeting {target} ns: {lo:.3f} ns")
    print(format_path(at(DEFAULT.route)))
    return 0


def main(argv=None) -> int:
    import argparse
    import json
    ap = argparse.ArgumentParser(description="FPGA timing estimate of a Yosys synth_xilinx JSON netlist")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("paths", help="print the worst paths of a netlist")
    p.add_argument("netlist")
    p.add_argument("top")
    p.add_argument("-n", type=int, default=3, help="how many (one per end register)")
    p.add_argument("--no-ports", action="store_true", help="leave out paths from or to a port")
    p = sub.add_parser("calibrate", help="PicoRV32 against its published period (hw/timing.md)")
    p.add_argument("picorv32", help="a PicoRV32 checkout (picorv32.v, scripts/vivado/tabtest.v)")
    p.add_argument("--out", default="build/calib")
    args = ap.parse_args(argv)
    if args.cmd == "calibrate":
        return calibrate(args.picorv32, args.out)
    for path in analyse(json.load(open(args.netlist)), args.top, ports=not args.no_ports, paths=args.n):
        print(format_path(path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
