"""pytest hooks for the hardware testbenches: the longest cases first, and
the oracle_path fixture every testbench that asks the Go oracle uses.

`make test-hw` runs the cases on two pytest-xdist workers (`-n 2 --dist
load`), which take the cases in collection order. A long case picked up
last would leave one worker busy while the other idles, so the cases are
sorted by how long they take, longest first.

COST holds the wall time, in seconds, of the cases that take longer than
about 20 s, from `pytest --durations=0 tests/` on the CI machine (two
cores, with other suites running beside it). It only orders the cases; a
stale figure costs a little wall time, never a result. Cases not listed
count as DEFAULT_COST.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest

import hdlsim
import oracle
import transactions

DEFAULT_COST = 10.0

COST = {
    "rnic_rx/test_rnic_rx.py::test_rnic_rx[ghdl-W64]": 179,
    "rnic_rx/test_rnic_rx.py::test_rnic_rx_wr_req[ghdl-W64]": 167,
    "rnic_rx/test_rnic_rx_tuf.py::test_rnic_rx_tuf[ghdl-W64]": 60,
    "rnic_rx/test_rnic_rx_tuf.py::test_rnic_rx_tuf[icarus-W512]": 34,
    "rnic_rx/test_rnic_rx_tuf.py::test_rnic_rx_tuf[ghdl-W512]": 32,
    "rnic_rx/test_rnic_rx_tuf.py::test_rnic_rx_tuf[icarus-W64]": 31,
    "tuf_tx/test_tuf_tx.py::test_tuf_tx[verilator-W512]": 40,
    "tuf_tx/test_tuf_tx.py::test_tuf_tx[verilator-W64]": 28,
    "tuf_tx/test_tuf_tx.py::test_tuf_tx[icarus-W64]": 24,
    "tuf_tx/test_tuf_tx.py::test_tuf_tx[icarus-W512]": 15,
    "tuf_tx/test_tuf_tx.py::test_tuf_tx[ghdl-W512]": 11,
    "tuf_tx/test_tuf_tx.py::test_tuf_tx[ghdl-W64]": 10,
    "ddp_rx/test_ddp_rx.py::test_ddp_rx_security_soak[verilator]": 190,
    "mpa_rx/test_mpa_rx.py::test_mpa_rx[verilator-W128]": 150,
    "mpa_rx/test_mpa_rx.py::test_mpa_rx[verilator-W64]": 120,
    "mpa_rx/test_mpa_rx.py::test_mpa_rx[verilator-W512]": 95,
    "ddp_rx/test_ddp_rx.py::test_ddp_rx[verilator-W512]": 75,
    "mpa_rx/test_mpa_rx.py::test_mpa_rx[verilator-W256]": 55,
    "ddp_tx/test_ddp_tx.py::test_ddp_tx[verilator-W128]": 48,
    "ddp_tx/test_ddp_tx.py::test_ddp_tx[verilator-W512]": 48,
    "mpa_tx/test_mpa_tx.py::test_mpa_tx[icarus-W64]": 46,
    "ddp_tx/test_ddp_tx.py::test_ddp_tx[verilator-W64]": 46,
    "ddp_rx/test_ddp_rx.py::test_ddp_rx[verilator-W128]": 43,
    "rnic_tx/test_rnic_tx.py::test_rnic_tx[ghdl-W512]": 40,
    "rnic_tx/test_rnic_tx.py::test_rnic_tx[icarus-W64]": 45,
    "rnic_tx/test_rnic_tx.py::test_rnic_tx[icarus-W512]": 32,
    "rnic_tx/test_rnic_tx.py::test_rnic_tx[ghdl-W64]": 70,
    "ddp_tx/test_ddp_tx.py::test_ddp_tx[verilator-W256]": 40,
    "rnic_rx/test_rnic_rx.py::test_rnic_rx[verilator-W512]": 37,
    "mpa_tx/test_mpa_tx.py::test_mpa_tx[verilator-W64]": 36,
    "ddp_rx/test_ddp_rx.py::test_ddp_rx[verilator-W256]": 36,
    "mpa_rx/test_mpa_rx.py::test_mpa_rx[icarus-W64]": 33,
    "mpa_rx/test_mpa_rx.py::test_mpa_rx[ghdl-W64]": 40,
    "mpa_rx/test_mpa_rx.py::test_mpa_rx[ghdl-W512]": 45,
    "mpa_rx_ooo/test_mpa_rx_ooo.py::test_mpa_rx_ooo[icarus-W64]": 120,
    "mpa_rx_ooo/test_mpa_rx_ooo.py::test_mpa_rx_ooo[verilator-W64]": 110,
    "mpa_rx_ooo/test_mpa_rx_ooo.py::test_mpa_rx_ooo[verilator-W512]": 120,
    "mpa_rx_ooo/test_mpa_rx_ooo.py::test_mpa_rx_ooo[ghdl-W64]": 40,
    "mpa_rx_ooo/test_mpa_rx_ooo.py::test_mpa_rx_ooo[ghdl-W512]": 21,
    "rnic_rx/test_rnic_rx.py::test_rnic_rx[verilator-W64]": 31,
    "rx_join/test_rx_join.py::test_rx_join[verilator-W64]": 30,
    "rx_join/test_rx_join.py::test_rx_join[ghdl-W64]": 35,
    "ddp_rx/test_ddp_rx.py::test_ddp_rx[verilator-W64]": 28,
    "rnic_tx/test_rnic_tx.py::test_rnic_tx[verilator-W64]": 45,
    "rnic_tx/test_rnic_tx.py::test_rnic_tx[verilator-W256]": 27,
    "mpa_tx/test_mpa_tx.py::test_mpa_tx[verilator-W128]": 27,
    "mpa_tx/test_mpa_tx.py::test_mpa_tx[verilator-W512]": 26,
    "mpa_tx/test_mpa_tx.py::test_mpa_tx[verilator-W256]": 26,
    "rnic_tx/test_rnic_tx.py::test_rnic_tx[verilator-W512]": 35,
    "crc/test_crc32c.py::test_crc32c[verilator-W512]": 25,
    "ddp_tx/test_ddp_tx.py::test_ddp_tx[ghdl-W64]": 25,
    "rnic_tx/test_rnic_tx.py::test_rnic_tx[verilator-W128]": 25,
    "mpa_tx/test_mpa_tx.py::test_mpa_tx[icarus-W512]": 22,
    "ddp_tx/test_ddp_tx.py::test_ddp_tx[ghdl-W512]": 20,
    "rx_join/test_rx_join.py::test_rx_join[icarus-W64]": 20,
    # Almost all of it the C++ build (admin, CQ writer, event writer, vectors).
    "cq/test_rnic_cq.py::test_rnic_cq[verilator-W64]": 35,
    "cq/test_rnic_cq.py::test_rnic_cq[verilator-W512]": 35,
    # tests/exc: almost all of it the C++ build (admin, exception writer);
    # 18 s each without ccache.
    "exc/test_rnic_exc.py::test_rnic_exc[verilator-W64]": 18,
    "exc/test_rnic_exc.py::test_rnic_exc[verilator-W256]": 18,
    # Almost all of it the C++ build of the generated register block.
    "regs/test_regs.py::test_regs[verilator]": 40,
    # tests/rresp: almost all of it the C++ build (admin, rnic_tx).
    "rresp/test_rnic_rresp.py::test_rnic_rresp[verilator-W64]": 40,
    # tests/dma, measured on 2 cores shared with other simulations.
    "dma/test_rnic_dma_wr.py::test_rnic_dma_wr[verilator-W64]": 50,
    "dma/test_rnic_dma_rd.py::test_rnic_dma_rd[verilator-W64]": 39,
    "dma/test_rnic_dma_wr.py::test_rnic_dma_wr[verilator-W512]": 31,
    "dma/test_rnic_dma_rd.py::test_rnic_dma_rd[verilator-W512]": 28,
}


def cost(nodeid: str) -> float:
    # Node ids are relative to the rootdir: "tests/<dir>/<file>::<case>".
    return COST.get(nodeid.split("tests/", 1)[-1], DEFAULT_COST)


def pytest_collection_modifyitems(session, config, items):
    # A stable sort: cases of equal cost keep their collection order, and
    # every xdist worker (which collects on its own) gets the same list.
    items.sort(key=lambda item: -cost(item.nodeid))


@pytest.fixture(scope="session")
def oracle_path() -> Path:
    """The Go oracle (cmd/rnic-oracle), built once per pytest process."""
    return oracle.build()


# --- equivalence of the Verilog and its VHDL twin (tests/transactions.py) ---

# "[verilator-W64]", "[W64-ghdl]", "[ghdl]": the simulator in a case's id.
_SIM_IN_ID = re.compile(r"(?<=[\[-])(%s)(?=[\]-])" % "|".join(transactions.PAIR))


def _twin_key(nodeid: str) -> str | None:
    head, sep, ids = nodeid.partition("[")
    if not sep or not _SIM_IN_ID.search("[" + ids):
        return None
    return head + "[" + _SIM_IN_ID.sub("*", "[" + ids)[1:]


def pytest_configure(config):
    # One id for the whole session, inherited by the xdist workers: a twin's
    # log from an earlier run is never compared.
    os.environ.setdefault(transactions.SESSION_ENV, uuid.uuid4().hex[:12])


def pytest_collection_finish(session):
    # After -k and the like deselected: the cases whose twin runs too.
    # HDLSIM_EQUIV=0 turns the comparison (and its recording) off.
    if os.environ.get("HDLSIM_EQUIV", "") == "0":
        return
    keys: dict[str, list[str]] = {}
    for item in session.items:
        key = _twin_key(item.nodeid)
        if key:
            keys.setdefault(key, []).append(item.nodeid)
    hdlsim.TWINNED.clear()
    for ids in keys.values():
        if len(ids) == 2:
            hdlsim.TWINNED.update(ids)


_PASSED: set[str] = set()
_EQUIV: list[str] = []


def pytest_runtest_logreport(report):
    # In the xdist controller too: every case's outcome.
    if report.when == "call" and report.passed:
        _PASSED.add(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    """Fail the session when a pair's two cases both passed but fewer
    comparisons than such pairs were made: the comparison must never be
    skipped silently."""
    if hasattr(session.config, "workerinput") or os.environ.get("HDLSIM_EQUIV", "") == "0":
        return
    path = transactions.EQUIV_DIR / f"{os.environ.get(transactions.SESSION_ENV, '')}.txt"
    _EQUIV[:] = sorted(path.read_text().splitlines()) if path.exists() else []
    pairs: dict[str, list[str]] = {}
    for nodeid in _PASSED:
        key = _twin_key(nodeid)
        if key:
            pairs.setdefault(key, []).append(nodeid)
    both = sum(1 for ids in pairs.values() if len(ids) == 2)
    equal = sum(1 for x in _EQUIV if x.startswith("EQUAL"))
    if equal < both:
        _EQUIV.append(f"FAILED: {both} Verilog/VHDL pairs passed, only {equal} compared equal")
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _EQUIV:
        terminalreporter.section("Verilog/VHDL equivalence (tests/transactions.py)")
        for line in _EQUIV:
            terminalreporter.write_line(line)
