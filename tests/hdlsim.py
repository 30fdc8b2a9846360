"""Build and run one cocotb testbench on one simulator, from a pytest test.

Every hardware block gets a pytest test that is parameterised over simulators
(and widths), and calls run() once per case. Each case builds in its own
directory, build/cocotb/<test>/<sim>-<tag>/, so cases never share objects and
a failing case can be rerun and inspected on its own.

Simulators: Verilator and Icarus run the Verilog in hw/rtl/, GHDL runs the
VHDL-2008 twin in hw/rtl/vhdl/. The set can be narrowed with the SIMS
environment variable (comma-separated, e.g. SIMS=icarus,ghdl).

Waveforms: WAVES=1 makes every case record a trace in its build directory:
<toplevel>.vcd (Verilator), <toplevel>.fst (Icarus), <toplevel>.ghw (GHDL).

Random stimulus: every case draws a fixed seed, derived from the test and
its tag (never from the simulator: a block's Verilator and GHDL cases run
the same stimulus, tests/transactions.py), printed as "hdlsim: <test>
<sim>-<tag> RANDOM_SEED=<seed>" and by cocotb ("Seeding Python random
module with ..."); RANDOM_SEED=<seed> in the environment replaces it for
every case.

Equivalence: a Verilator case and the GHDL case of the same test and tag,
both collected in one pytest session, record their transactions, and the
one that ends second compares them clock for clock (tests/transactions.py).
HDLSIM_EQUIV=0 turns that off; HDLSIM_RECORD=1 records every Verilator and
GHDL case.

Coverage: HW_COVERAGE=1 builds every Verilator case with line and toggle
coverage (--coverage-line --coverage-toggle) into build/coverage/<test>/
instead, and its run writes coverage.dat there; `make coverage-hw` runs
the Verilator cases so and scripts/hw_coverage.py reports per block. Icarus
and GHDL cases run as usual under it.

Failures: cocotb's log of each case also goes to sim.log in its build
directory (tests/hdlsim_log.py), and a failing case's pytest error names
each failing cocotb test with the end of its traceback (the assertion) and
the RANDOM_SEED to replay it with, so that a cut-short CI log still says
what failed.

Verilator 5.006 with cocotb 1.9.2 needs two things the stock runner does not
do: OPT_FAST for the C++ compile (below), and binding the top-level ports by
name before a testbench lists the design's children, without which writes to
inputs are lost (tests/verilator_top_ports.py explains).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
import zlib
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import cocotb
import pytest
from cocotb.runner import Simulator, Verilator, get_runner

import transactions
from widths import DEFAULT_SIM_WIDTHS, all_widths_requested

REPO_ROOT = Path(__file__).resolve().parent.parent
RTL_DIR = REPO_ROOT / "hw" / "rtl"
# HDLSIM_VHDL_DIR replaces hw/rtl/vhdl with a copy (`make equiv-mutation`
# runs a changed twin from build/ this way, never touching hw/).
VHDL_DIR = Path(os.environ.get("HDLSIM_VHDL_DIR") or RTL_DIR / "vhdl")


def _package_order(paths: list[Path]) -> list[Path]:
    """The packages in an order GHDL can analyse them in: each after the
    packages of this set it names in a `use work.<name>` clause (e.g.
    ddp_rx_pkg after rnic_pkg), otherwise by name."""
    left = sorted(paths)
    uses = {p: set(re.findall(r"\buse\s+work\.(\w+)\.", p.read_text(), re.IGNORECASE)) for p in left}
    done: list[Path] = []
    while left:
        names = {p.stem for p in left}
        ready = [p for p in left if not ({u.lower() for u in uses[p]} & {n.lower() for n in names} - {p.stem.lower()})]
        nxt = ready[0] if ready else left[0]  # a cycle: let GHDL report it
        done.append(nxt)
        left.remove(nxt)
    return done


# VHDL packages the twins share; every VHDL build analyses them first, each
# after the packages it uses.
VHDL_PACKAGES = _package_order(list(VHDL_DIR.glob("*_pkg.vhd")))
BUILD_ROOT = REPO_ROOT / "build" / "cocotb"
COVERAGE_ROOT = REPO_ROOT / "build" / "coverage"

# Which HDL each simulator is given.
SIM_LANG = {
    "verilator": "verilog",
    "icarus": "verilog",
    "ghdl": "vhdl",
}

# C++ optimisation for the Verilator model. verilated.mk compiles the
# per-cycle ("fast") code with -Os by default; -O2 runs faster. The knob is a
# make variable, and -CFLAGS would not do: those flags come before
# $(OPT_FAST) on the compiler's command line, so -Os would still win.
VERILATOR_OPT_FAST = "-O2"


class _VerilatorFast(Verilator):
    """cocotb 1.9's Verilator runner, with OPT_FAST and parallel C++ compiles.

    cocotb 1.9.2's runner has no make_args; its build is a verilator command
    followed by `make -f Vtop.mk VM_TRACE=...`, and the make variables are
    appended to that second command here.
    """

    def _build_command(self):
        cmds = super()._build_command()
        make = cmds[-1]
        if make[:1] != ["make"] or "Vtop.mk" not in make:
            raise RuntimeError(
                "cocotb's Verilator runner changed its build commands; "
                "revisit tests/hdlsim.py (last command: %r)" % (make,)
            )
        jobs = os.environ.get("VERILATOR_JOBS") or str(os.cpu_count() or 1)
        make += [f"OPT_FAST={VERILATOR_OPT_FAST}", f"-j{jobs}"]
        if CCACHE:
            make += ["OBJCACHE=ccache"]
        return cmds


# Every Verilator model compiles the same runtime (verilated.cpp,
# verilated_dpi.cpp, verilated_threads.cpp, verilated_vpi.cpp) with the same
# flags: about 15 s of CPU a model, some 60 models in make test. ccache
# (scripts/deps.sh installs it) compiles them once per cache; the cache is
# build/ccache unless CCACHE_DIR says otherwise, so a fresh clone's run fills
# its own and `make clean` empties it. Without ccache the build is as before.
CCACHE = shutil.which("ccache") is not None and os.environ.get("HDLSIM_CCACHE", "1") != "0"
if CCACHE:
    os.environ.setdefault("CCACHE_DIR", str(Path(__file__).resolve().parent.parent / "build" / "ccache"))


# Ports as Verilator 5.006 declares them in the model's header, Vtop.h:
#   VL_IN8(&clk,0,0);  VL_OUTW(&m_axis_tdata,511,0,16);
_VTOP_PORT = re.compile(r"^\s*VL_(?:IN|OUT|INOUT)(?:8|16|64|W)?\(&(\w+),", re.M)


BENCH_DIR = REPO_ROOT / "build" / "bench"


def write_bench(block: str, width: int, *, beats_per_clock: float | None, latency_clocks: float | None,
                higher: Mapping[str, float] | None = None, lower: Mapping[str, float] | None = None,
                details: Mapping | None = None) -> Path:
    """Write a testbench's measurement to build/bench/<block>-W<width>.json
    as a bench record (scripts/hw_figures.py, "bench": the one shape
    every bench writes and `make test-hw` compares with
    hw/bench-baseline.json). beats_per_clock and latency_clocks are the
    block's headline figures (None where the bench has none); higher and
    lower name the other figures, where a higher and where a lower value
    is better ("<case>.<quantity>", e.g. "64.fpdus_per_clock"); details is
    anything else worth keeping, never compared. Verilator's figures are
    the ones the README quotes; Icarus's and GHDL's (the VHDL twin's) go
    beside them under their own suffix, never over them. Called from
    inside a cocotb test."""
    record = hw_figures().bench_record(block, width, cocotb.SIM_NAME, beats_per_clock, latency_clocks,
                                       higher=dict(higher or {}), lower=dict(lower or {}),
                                       details=dict(details or {}))
    suffix = "" if record["simulator"] == "verilator" else "-" + record["simulator"]
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    # (A variant, <block>/<variant> as scripts/hw_figures.py names it, goes
    # to <block>-<variant>-W<width>.json.)
    path = BENCH_DIR / f"{block.replace('/', '-')}-W{width}{suffix}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


def hw_figures():
    """scripts/hw_figures.py as a module: the bench record's shape lives
    there, beside the code that reads it."""
    name = "hw_figures"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "scripts" / "hw_figures.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # (dataclasses look the module up while it loads)
        spec.loader.exec_module(mod)
    return sys.modules[name]


def verilator_top_ports(build_dir: Path) -> list[str]:
    """Names of the top-level ports of the Verilator model built in build_dir."""
    header = build_dir / "Vtop.h"
    names = _VTOP_PORT.findall(header.read_text())
    if not names:
        raise RuntimeError(
            f"no ports found in {header}: Verilator's header format changed; "
            "revisit tests/hdlsim.py and tests/verilator_top_ports.py"
        )
    return names


def _make_runner(sim: str) -> Simulator:
    if sim == "verilator":
        return _VerilatorFast()
    return get_runner(sim)


def waves_requested() -> bool:
    return os.environ.get("WAVES", "") not in ("", "0")


def coverage_requested() -> bool:
    return os.environ.get("HW_COVERAGE", "") not in ("", "0")


def simulators(langs: Iterable[str] = ("verilog", "vhdl")) -> list:
    """pytest parameters for every simulator of the given languages."""
    wanted = [s.strip() for s in os.environ.get("SIMS", "").split(",") if s.strip()]
    unknown = set(wanted) - set(SIM_LANG)
    if unknown:
        raise ValueError(f"SIMS names unknown simulators: {sorted(unknown)}")
    langs = set(langs)
    return [
        pytest.param(sim, id=sim)
        for sim, lang in SIM_LANG.items()
        if lang in langs and (not wanted or sim in wanted)
    ]


# Widths each simulator runs by default when a testbench covers every
# width: tests/widths.py (also read by the bench check).
def width_cases(
    widths: Sequence[int],
    langs: Iterable[str] = ("verilog",),
    sim_widths: Mapping[str, Sequence[int]] | None = None,
) -> list:
    """pytest parameters (sim, width), ids "<sim>-W<width>", for every
    selected simulator of the given languages and the widths it runs:
    sim_widths (default DEFAULT_SIM_WIDTHS) narrowed to `widths`, or all of
    `widths` under HW_ALL_WIDTHS=1."""
    limits = dict(DEFAULT_SIM_WIDTHS)
    limits.update(sim_widths or {})
    full = all_widths_requested()
    return [
        pytest.param(p.values[0], w, id=f"{p.values[0]}-W{w}")
        for p in simulators(langs)
        for w in widths
        if full or w in limits.get(p.values[0], widths)
    ]


def selected(sim: str) -> bool:
    """Whether SIMS (or its default, every simulator) names sim: for the
    tests that drive one simulator directly, outside run()."""
    return sim in [p.values[0] for p in simulators()]


# Node ids of the collected cases whose twin (the same test on the other
# simulator of transactions.PAIR) is collected too: tests/conftest.py fills
# it in every pytest process, after collection.
TWINNED: set[str] = set()


def case_seed(test: str, tag: str) -> int:
    """The fixed RANDOM_SEED of a case: RANDOM_SEED from the environment, or
    one derived from the test and the tag (the same on every simulator)."""
    env = os.environ.get("RANDOM_SEED", "").strip()
    if env:
        return int(env)
    return zlib.crc32(f"{test}/{tag}".encode()) & 0x7FFFFFFF


def _current_nodeid() -> str:
    # "tests/x/test_x.py::test_x[verilator-W64] (call)"
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]


def run(
    *,
    test: str,
    sim: str,
    tag: str,
    toplevel: str,
    test_module: str,
    verilog_sources: Sequence[Path] = (),
    vhdl_sources: Sequence[Path] = (),
    parameters: Mapping[str, object] | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> None:
    """Build the design for `sim` and run the cocotb tests in `test_module`.

    test        name of the testbench; the build goes to build/cocotb/<test>/
    sim         "verilator", "icarus" or "ghdl"
    tag         names the case within the test, e.g. "W8"
    toplevel    HDL top module or entity
    test_module importable Python module with the @cocotb.test() coroutines;
                the caller's directory must be on sys.path (pytest's default
                import mode puts it there)

    Raises (and so fails the pytest test) when the build fails or any cocotb
    test fails.
    """
    lang = SIM_LANG[sim]
    sources = list(verilog_sources if lang == "verilog" else vhdl_sources)
    if not sources:
        raise ValueError(f"{test}: no {lang} sources given for simulator {sim}")
    if lang == "vhdl":
        # The shared packages (hw/rtl/vhdl/*_pkg.vhd) are analysed first.
        sources = [p for p in VHDL_PACKAGES if p not in sources] + sources

    coverage = sim == "verilator" and coverage_requested()
    # A coverage build never reuses (or overwrites) the plain one.
    build_dir = (COVERAGE_ROOT if coverage else BUILD_ROOT) / test / f"{sim}-{tag}"
    waves = waves_requested()
    params = dict(parameters or {})

    # Make variables inherited from a surrounding `make -jN` name a jobserver
    # whose file descriptors this process does not have; Verilator's make
    # would warn about it and fall back to -j1.
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        os.environ.pop(var, None)

    build_args: list[str] = []
    test_args: list[str] = []
    plusargs: list[str] = []
    if sim == "ghdl":
        build_args += ["--std=08"]
        test_args += ["--std=08"]
        if waves:
            # After the unit name on `ghdl -r`, i.e. a run-time option.
            plusargs += [f"--wave={build_dir / (toplevel + '.ghw')}"]
    elif sim == "verilator" and waves:
        test_args += ["--trace-file", str(build_dir / f"{toplevel}.vcd")]
    if coverage:
        build_args += ["--coverage-line", "--coverage-toggle"]
        # cocotb's Verilator main writes coverage.dat into the directory the
        # run starts in (the build directory) when the run ends; Verilator
        # 5.006 has no run-time option to name the file. Never an earlier
        # run's file.
        (build_dir / "coverage.dat").unlink(missing_ok=True)

    runner = _make_runner(sim)
    runner.build(
        verilog_sources=sources if lang == "verilog" else [],
        vhdl_sources=sources if lang == "vhdl" else [],
        hdl_toplevel=toplevel,
        # Shared Verilog headers (hw/rtl/*.vh, e.g. rnic_arith.vh).
        includes=[RTL_DIR] if lang == "verilog" else [],
        parameters=params,
        build_args=build_args,
        build_dir=build_dir,
        # Icarus otherwise skips the compile when the sources are older than
        # its output, even if WAVES or the parameters changed.
        always=True,
        waves=waves,
    )
    env = dict(extra_env or {})
    seed = case_seed(test, tag)
    env.setdefault("RANDOM_SEED", str(seed))
    print(f"hdlsim: {test} {sim}-{tag} RANDOM_SEED={env['RANDOM_SEED']}", flush=True)
    log = build_dir / "sim.log"
    log.unlink(missing_ok=True)  # never a failure report from an earlier run
    env["HDLSIM_LOG"] = str(log)
    modules = ["hdlsim_log", test_module]
    tlog = transactions.log_path(build_dir)
    for stale in (tlog, Path(str(tlog) + ".part")):
        stale.unlink(missing_ok=True)
    # HDLSIM_RECORD=1 records every Verilator and GHDL case (to measure
    # what recording costs, or to read a log).
    record = sim in transactions.PAIR and (_current_nodeid() in TWINNED
                                           or os.environ.get("HDLSIM_RECORD", "") == "1")
    if record:
        env[transactions.LOG_ENV] = str(tlog) + ".part"
        env["HDLSIM_CASE"] = f"{test}/{sim}-{tag}"
        modules.insert(1, "transactions")
    if sim == "verilator":
        # Must run before the testbench touches the design; see the module.
        env["HDLSIM_TOP_PORTS"] = ",".join(verilator_top_ports(build_dir))
        modules.insert(0, "verilator_top_ports")

    try:
        runner.test(
            test_module=modules,
            hdl_toplevel=toplevel,
            hdl_toplevel_lang=lang,
            parameters=params,
            build_dir=build_dir,
            test_args=test_args,
            plusargs=plusargs,
            extra_env=env,
            waves=waves,
        )
    except SystemExit as exc:
        # cocotb says only "Failed 1 of 1 tests"; a CI log must say which,
        # why, and how to replay it.
        raise AssertionError(_failure_report(log, test, sim, tag) or str(exc)) from None
    if record:
        _compare_twin(test, sim, tag, build_dir, tlog)


def _compare_twin(test: str, sim: str, tag: str, build_dir: Path, tlog: Path) -> None:
    """Publish this case's transaction log and, if the twin case of this
    session has published its own, compare the two (the case that ends
    second does). Fails with the first differing transaction."""
    os.replace(str(tlog) + ".part", tlog)
    other = [s for s in transactions.PAIR if s != sim][0]
    twin = transactions.log_path(build_dir.parent / f"{other}-{tag}")
    session = os.environ.get(transactions.SESSION_ENV, "")
    try:
        if transactions.read_log(twin).session != session:
            return  # from an earlier run; the twin will compare when it ends
    except FileNotFoundError:
        return
    logs = {sim: tlog, other: twin}
    res = transactions.compare(test, tag, logs[transactions.PAIR[0]], logs[transactions.PAIR[1]])
    transactions.EQUIV_DIR.mkdir(parents=True, exist_ok=True)
    with open(transactions.EQUIV_DIR / f"{session}.txt", "a") as f:
        f.write(f"{'EQUAL' if res.equal else 'DIFFER'} {res.message.splitlines()[0]}\n")
    print("equivalence: " + res.message, flush=True)
    if not res.equal:
        raise AssertionError("Verilog and VHDL twin differ: " + res.message)


def _failure_report(log: Path, test: str, sim: str, tag: str) -> str:
    """Each failing cocotb test in a case's log (tests/hdlsim_log.py) with
    the end of its traceback, and the RANDOM_SEED that replays the run; ""
    when the log has none (the simulator stopped before a test ended)."""
    try:
        text = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    # A failure's record: "INFO cocotb.regression: <name> failed" and its
    # traceback, up to the next record.
    seed = None
    records: dict[str, list[str]] = {}
    cur = None
    for line in text:
        if re.match(r"^[A-Z]+ [\w.]+: ", line):
            cur = None
            hit = re.match(r"^[A-Z]+ cocotb\.regression: (?:\S+\.)?(\w+) failed", line)
            if hit:
                cur = records.setdefault(hit.group(1), [])
            elif seed is None:
                m = re.match(r"^[A-Z]+ cocotb: RANDOM_SEED=(\d+)$", line)
                seed = m and m.group(1)
        if cur is not None:
            cur.append(line)
    if not records:
        return ""
    head = f"{test} on {sim} ({tag}): {len(records)} cocotb test(s) failed"
    if seed is not None:
        head += f"; replay with RANDOM_SEED={seed} SIMS={sim}"
    lines = [head]
    for name, rec in records.items():
        # The assertion is at the end of the traceback.
        tail = rec if len(rec) <= 40 else rec[:1] + ["..."] + rec[-39:]
        lines.append(f"  {name}:")
        lines += ["    " + t[:500] for t in tail]
    lines.append(f"  whole log: {log}; waves: rerun with WAVES=1")
    return "\n".join(lines)
