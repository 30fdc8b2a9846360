"""Transaction logs of a case, and the comparison of a Verilog block with its
VHDL twin, clock for clock (issue 29).

Recording. hdlsim.run() loads this module into the simulator (ahead of the
testbench) for every Verilator and GHDL case whose twin case (the other
simulator, same test and parameters) is collected in the same pytest
session, and names the log in HDLSIM_TRANSACTIONS. The module wraps
cocotb.clock.Clock.start: whenever a cocotb test starts the top level's
`clk`, a recorder starts beside it, so the testbenches need no code of
their own (a testbench that drives clk by hand calls clock_started()
where its clock starts; ddp_rx's Lean bench does). The recorder finds the top level's handshakes from its Verilog
port list (hw/rtl/<top>.v; the VHDL twin has the same ports):

  * a stream is a `<p>valid<s>` or `<p>tvalid<s>` port with its
    `<p>[t]ready<s>` of the other direction (none: a pulse, always taken)
    and its payload, the ports of the valid's direction named `<p>...<s>`
    (each payload port belongs to the stream with the longest match);
  * the top level's other outputs (not a ready) are levels.

On every rising edge of clk with rst low it appends, for each output
stream with valid and ready high, a line `<clock> o <stream> <payload>`;
for each input stream, the same (`i`) for a transfer and
`<clock> v <stream> 0|1` when its valid changes; and for a level whose value
changed, `<clock> o <port> <value>`. <clock> counts the clock's periods
since the test started it, and each cocotb test is a section, `# test
<name>`. Values are hex (binary when they hold X/U/Z).

Comparison. Both cases of a pair draw the same RANDOM_SEED (hdlsim.run()
derives it from the test and its parameters, never from the simulator), so
their testbenches drive the same stimulus with the same random stalls.
compare() then checks each section (cocotb test): every line must be equal,
inputs too (the clock an input is taken at is the block's ready), and the
first difference is reported with its clock, port, both values, the case
and the seed. Where a testbench drives its two simulators apart on
purpose, the difference is listed and checked: STIMULUS_EXCEPTIONS (GHDL's
random traffic is the first part of Verilator's: the outputs are compared
up to the clock where the inputs part, at least MIN_PREFIX of them, and the
same input taken at another clock still fails) and NOT_COMPARED (a cocotb
test at one tag whose traffic differs from the start; its inputs must
differ, or the entry is stale).

Whichever case of a pair ends second runs the comparison (hdlsim.run()),
so it works on any number of xdist workers in any order; the logs carry
the pytest session's id, so a log left over from an earlier run is never
compared. build/equiv/<session>.txt collects one line per comparison;
tests/conftest.py prints them at the end of the session and fails the
session if a pair ran but was not compared.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

LOG_ENV = "HDLSIM_TRANSACTIONS"
SESSION_ENV = "HDLSIM_SESSION"

REPO_ROOT = Path(__file__).resolve().parent.parent
RTL_DIR = REPO_ROOT / "hw" / "rtl"
EQUIV_DIR = REPO_ROOT / "build" / "equiv"

# The simulators whose cases are compared: Verilator runs the Verilog,
# GHDL the VHDL twin.
PAIR = ("verilator", "ghdl")

# Where a testbench drives its two simulators differently on purpose: GHDL
# (mcode) is slow, and these cocotb tests give it less random traffic
# (fewer messages; the same generator, so GHDL's stimulus is the first part
# of Verilator's). Keyed by (test, cocotb test); the reason is printed with
# the comparison. Outputs are compared up to the clock where the inputs
# part. Anything else that drives the two apart fails the comparison.
STIMULUS_EXCEPTIONS = {
    ("ddp_tx", "random_mix"): "GHDL sends 40 random messages, Verilator 100",
    ("rnic_tx", "random_mix"): "GHDL sends 24 random messages, Verilator 60",
}

# cocotb tests not compared at one tag, because the testbench gives the two
# simulators different traffic from the start there: keyed by (test, tag,
# cocotb test). Checked: their inputs must differ (else the entry is stale
# and fails); their other cocotb tests are compared as usual.
NOT_COMPARED = {
    ("ddp_rx", "W512-A1024", "random_traffic"):
        "Verilator's big random run at 512 (DDP_RX_BIG: 6 rounds of 40 ULPDUs a connection; GHDL 3 of 10)",
}

# The fewest output transactions the compared part of a section with a
# stimulus exception must hold.
MIN_PREFIX = 50

_PORT = re.compile(
    r"^\s*(input|output)\s+(?:wire|reg|logic)?\s*(?:signed\s*)?(?:\[[^\]]*\])?\s*(\w+)", re.M)
_VALID = re.compile(r"^(.*?)(t?)valid(\d*)$")


@dataclass
class Stream:
    name: str            # <p>[t]valid<s> without "valid": e.g. m_axis_t
    direction: str       # "o" (the block drives valid) or "i"
    valid: str
    ready: str | None
    payload: list[str] = field(default_factory=list)


def ports(toplevel: str) -> tuple[list[str], list[str]]:
    """(inputs, outputs) of hw/rtl/<toplevel>.v, in declaration order."""
    text = (RTL_DIR / f"{toplevel}.v").read_text()
    ins, outs = [], []
    for kind, name in _PORT.findall(text):
        (ins if kind == "input" else outs).append(name)
    if not outs:
        raise RuntimeError(f"no ports found in {RTL_DIR / (toplevel + '.v')}: revisit tests/transactions.py")
    return ins, outs


def handshakes(inputs: list[str], outputs: list[str]) -> tuple[list[Stream], list[str]]:
    """The streams of a port list, and its levels (see the module's doc)."""
    streams = []
    readies = set()
    for direction, own, other in (("o", outputs, inputs), ("i", inputs, outputs)):
        for v in own:
            m = _VALID.match(v)
            if not m or v in ("clk", "rst"):
                continue
            p, t, s = m.groups()
            ready = f"{p}{t}ready{s}"
            streams.append(Stream(f"{p}{t}{s}", direction, v, ready if ready in other else None))
            readies.add(ready)
    valids = {s.valid for s in streams}
    levels = []
    for direction, own in (("o", outputs), ("i", inputs)):
        for port in own:
            if port in valids or port in readies or port in ("clk", "rst"):
                continue
            best = None
            for st in streams:
                p, _, s = _VALID.match(st.valid).groups()
                if st.direction == direction and port.startswith(p) and port.endswith(s) \
                        and len(port) > len(p) + len(s):
                    if best is None or len(p) + len(s) > best[0]:
                        best = (len(p) + len(s), st)
            if best:
                best[1].payload.append(port)
            elif direction == "o":
                levels.append(port)
    return streams, levels


def _hex(binstr: str) -> str:
    """A value as hex; as it is (binary) when it holds X, U, Z and the like."""
    try:
        return format(int(binstr, 2), "x")
    except ValueError:
        return binstr


# --- recording (inside the simulator) -------------------------------------------

def _install() -> None:
    import cocotb
    from cocotb.clock import Clock
    from cocotb.regression import RegressionManager
    from cocotb.triggers import RisingEdge
    from cocotb.utils import get_sim_time

    path = Path(os.environ[LOG_ENV])
    top = cocotb.top
    name = top._name.lower()
    inputs, outputs = ports(name)
    streams, levels = handshakes(inputs, outputs)
    out = open(path, "w", buffering=1 << 20)
    out.write(f"# case {os.environ.get('HDLSIM_CASE', '?')} session {os.environ.get(SESSION_ENV, '')} "
              f"seed {cocotb.RANDOM_SEED}\n")
    for st in streams:
        out.write(f"# stream {st.direction} {st.name}: {' '.join(st.payload)}"
                  f"{'' if st.ready else ' (no ready)'}\n")
    out.write(f"# levels {' '.join(levels)}\n")
    started = set()

    def reader(port: str):
        # The handle's binary string, without a BinaryValue per read (the
        # recorder reads every valid on every clock).
        return getattr(top, port)._handle.get_signal_val_binstr

    async def record(clk, period: int) -> None:
        rst = reader("rst") if hasattr(top, "rst") else None
        outs = [(st.name, reader(st.valid), st.ready and reader(st.ready), [reader(p) for p in st.payload])
                for st in streams if st.direction == "o"]
        ins = [(st.name, reader(st.valid), st.ready and reader(st.ready), [reader(p) for p in st.payload], [None])
               for st in streams if st.direction == "i"]
        lv = [(p, reader(p), [None]) for p in levels]
        t0 = get_sim_time("step")
        w = out.write
        edge = RisingEdge(clk)
        while True:
            await edge
            if rst is not None and rst() != "0":
                continue
            c = (get_sim_time("step") - t0) // period
            for n, v, r, pl in outs:
                if v() == "1" and (not r or r() == "1"):
                    w(f"{c} o {n} {' '.join(_hex(x()) for x in pl)}\n")
            for n, v, r, pl, last in ins:
                vb = v()
                if vb != last[0]:
                    last[0] = vb
                    w(f"{c} v {n} {vb}\n")
                if vb == "1" and (not r or r() == "1"):
                    w(f"{c} i {n} {' '.join(_hex(x()) for x in pl)}\n")
            for n, r, last in lv:
                val = r()
                if val != last[0]:
                    last[0] = val
                    w(f"{c} o {n} {_hex(val)}\n")

    def begin(signal, period: int) -> None:
        # The recorder of this cocotb test, once: from the first start of
        # the top level's clk on.
        test = cocotb.regression_manager._test if cocotb.regression_manager else None
        tname = getattr(test, "__qualname__", "?")
        if signal._name == "clk" and tname not in started:
            started.add(tname)
            out.flush()
            out.write(f"# test {tname}\n")
            cocotb.start_soon(record(signal, period))

    global _begin
    _begin = begin
    orig_start = Clock.start

    async def start(self, *args, **kwargs):
        begin(self.signal, self.period)
        return await orig_start(self, *args, **kwargs)

    Clock.start = start

    # Every line on disk before the simulator exits (it may not finalise
    # Python).
    orig_tear_down = RegressionManager._tear_down

    def tear_down(self):
        out.flush()
        return orig_tear_down(self)

    RegressionManager._tear_down = tear_down


_begin = None


def clock_started(signal, period_ns: float) -> None:
    """For a testbench that drives clk by hand rather than with a cocotb
    Clock: call it where the clock starts (the rising edges from then on are
    clocks 0, 1, ... of the log, as for a Clock started at that time). Does
    nothing when the case records no transactions."""
    if _begin is not None:
        from cocotb.utils import get_sim_steps
        _begin(signal, get_sim_steps(period_ns, "ns"))


# --- comparison (in pytest) ----------------------------------------------------

@dataclass
class Log:
    path: Path
    header: str
    session: str
    seed: str
    sections: dict[str, list[str]]


def read_log(path: Path) -> Log:
    sections: dict[str, list[str]] = {}
    header, cur = "", None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# test "):
                cur = sections.setdefault(line[7:], [])
            elif line.startswith("# case "):
                header = line
            elif not line.startswith("#") and cur is not None:
                cur.append(line)
    m = re.search(r"session (\S*) seed (\S+)", header)
    return Log(path, header, m.group(1) if m else "", m.group(2) if m else "?", sections)


def _clock(line: str) -> int:
    return int(line.split(" ", 1)[0])


def _kind(line: str) -> str:
    return line.split(" ", 2)[1]


def _describe(line: str | None, fields: dict[str, list[str]]) -> str:
    if line is None:
        return "(no transaction: the log ends)"
    c, kind, name, *vals = line.split(" ")
    names = fields.get(name)
    if names and len(names) == len(vals) and kind in "oi":
        vals = [f"{n}={v}" for n, v in zip(names, vals)]
    # An input transfer's clock is the block's ready; a valid change is the
    # testbench's.
    word = {"o": "output", "i": "input taken", "v": "input valid"}[kind]
    return f"clock {c} {word} {name} {' '.join(vals)}".rstrip()


def _fields(path: Path) -> dict[str, list[str]]:
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("# stream "):
                _, _, _, name, rest = line.rstrip("\n").split(" ", 4)
                out[name.rstrip(":")] = [p for p in rest.replace(" (no ready)", "").split(" ") if p]
            elif not line.startswith("#"):
                break
    return out


def _difference(what: str, name: str, xa: str | None, xb: str | None, fields: dict[str, list[str]],
                a_path: Path, b_path: Path) -> str:
    return (f"{what}, cocotb test {name}: first difference:\n"
            f"  {PAIR[0]:9s} (Verilog): {_describe(xa, fields)}\n"
            f"  {PAIR[1]:9s} (VHDL):    {_describe(xb, fields)}\n"
            f"  logs: {a_path} {b_path}")


@dataclass
class Result:
    equal: bool
    message: str
    transactions: int = 0


def compare(test: str, case: str, a_path: Path, b_path: Path) -> Result:
    """Compare the logs of a pair's two cases (a: Verilator, b: GHDL)."""
    a, b = read_log(a_path), read_log(b_path)
    fa = _fields(a_path)
    what = f"{test} {case} (RANDOM_SEED={a.seed})"
    if a.seed != b.seed:
        return Result(False, f"{what}: the two cases ran different seeds, {a.seed} and {b.seed}")
    if list(a.sections) != list(b.sections):
        return Result(False, f"{what}: cocotb tests differ: {list(a.sections)} on {PAIR[0]}, "
                             f"{list(b.sections)} on {PAIR[1]}")
    total = 0
    notes = []
    for name, la in a.sections.items():
        lb = b.sections[name]
        skip = NOT_COMPARED.get((test, case, name))
        if skip is not None:
            if [x for x in la if _kind(x) in "iv"] == [x for x in lb if _kind(x) in "iv"]:
                return Result(False, f"{what}, cocotb test {name}: listed in NOT_COMPARED ({skip}) "
                                     "but its stimulus is the same on both: compare it")
            notes.append(f"{name} not compared ({skip})")
            continue
        reason = STIMULUS_EXCEPTIONS.get((test, name))
        if reason is None:
            # The same stimulus: every line equal, inputs too (an input's
            # transfer clock is the block's ready).
            for k in range(max(len(la), len(lb))):
                xa = la[k] if k < len(la) else None
                xb = lb[k] if k < len(lb) else None
                if xa != xb:
                    return Result(False, _difference(what, name, xa, xb, fa, a_path, b_path))
            total += sum(1 for x in la if _kind(x) == "o")
            continue
        # A stimulus exception: the outputs up to the clock where the
        # inputs part.
        ia = [x for x in la if _kind(x) in "iv"]
        ib = [x for x in lb if _kind(x) in "iv"]
        split = None
        for k in range(max(len(ia), len(ib))):
            xa = ia[k] if k < len(ia) else None
            xb = ib[k] if k < len(ib) else None
            if xa != xb:
                if xa and xb and _kind(xa) == _kind(xb) == "i" and xa.split(" ")[2:] == xb.split(" ")[2:]:
                    # The same input taken at different clocks: the
                    # blocks' ready differs, not the stimulus.
                    return Result(False, _difference(what, name, xa, xb, fa, a_path, b_path))
                split = min(_clock(x) for x in (xa, xb) if x is not None)
                break
        oa = [x for x in la if _kind(x) == "o" and (split is None or _clock(x) < split)]
        ob = [x for x in lb if _kind(x) == "o" and (split is None or _clock(x) < split)]
        for k in range(max(len(oa), len(ob))):
            xa = oa[k] if k < len(oa) else None
            xb = ob[k] if k < len(ob) else None
            if xa != xb:
                return Result(False, _difference(what, name, xa, xb, fa, a_path, b_path))
        total += len(oa)
        if split is not None:
            if len(oa) < MIN_PREFIX:
                return Result(False, (
                    f"{what}, cocotb test {name}: the stimulus parts at clock {split}, after only "
                    f"{len(oa)} output transactions (fewer than {MIN_PREFIX}): too little compared"))
            notes.append(f"{name} up to clock {split} ({reason})")
    msg = f"{what}: {total} output transactions equal"
    if notes:
        msg += "; " + "; ".join(notes)
    return Result(True, msg, total)


def log_path(build_dir: Path) -> Path:
    return build_dir / "transactions.log"


if os.environ.get(LOG_ENV):
    _install()
