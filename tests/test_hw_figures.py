"""scripts/hw_figures.py's bench part on synthetic records (no simulator):
the record shape (bench_record, check_record), the comparison with the
baseline and its verdicts, --update, and the command's exit status and
output, end to end through the script as make runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cocotb
import pytest

import hdlsim

hw = hdlsim.hw_figures()
SCRIPT = hdlsim.REPO_ROOT / "scripts" / "hw_figures.py"


def rec(block="crc32c", width=64, sim="Verilator", bpc=1.0, lat=7, higher=None, lower=None, details=None):
    return hw.bench_record(block, width, sim, bpc, lat, higher=higher, lower=lower, details=details)


def write(d: Path, r: dict) -> Path:
    suffix = "" if r["simulator"] == "verilator" else "-" + r["simulator"]
    p = d / f"{r['block'].replace('/', '-')}-W{r['width']}{suffix}.json"
    p.write_text(json.dumps(r))
    return p


def run(bench_dir: Path, baseline: Path, *args, sims: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SIMS"}
    if sims:
        env["SIMS"] = sims
    return subprocess.run([sys.executable, str(SCRIPT), "bench", "--dir", str(bench_dir),
                           "--baseline", str(baseline), *args], capture_output=True, text=True, env=env)


# --- the record's shape -----------------------------------------------------


def test_record_joins_headline_figures():
    r = rec(higher={"64.fpdus_per_clock": 0.5}, lower={"64.latency_clocks": 9}, details={"beats": 3})
    assert r["simulator"] == "verilator"
    assert r["figures"] == {
        "64.fpdus_per_clock": {"value": 0.5, "better": "higher"},
        "64.latency_clocks": {"value": 9, "better": "lower"},
        "beats_per_clock": {"value": 1.0, "better": "higher"},
        "latency_clocks": {"value": 7, "better": "lower"},
    }
    assert r["details"] == {"beats": 3}
    assert hw.check_record(r) == []


def test_record_without_headline():
    r = rec(block="mpa_rx_ooo", bpc=None, lat=None, higher={"1460.octets_per_clock": 3.8})
    assert r["beats_per_clock"] is None and set(r["figures"]) == {"1460.octets_per_clock"}


@pytest.mark.parametrize("kw,problem", [
    (dict(higher={"Bad Name": 1.0}), "figure name 'Bad Name'"),
    (dict(higher={"x": float("nan")}), "figure 'x': value nan is not a number"),
    (dict(higher={"x": "1.0"}), "figure 'x': value '1.0' is not a number"),
    (dict(higher={"x": 1.0}, lower={"x": 2.0}), "both higher- and lower-is-better"),
    (dict(sim="ModelSim"), "unknown simulator 'ModelSim'"),
    (dict(bpc=None, lat=None), "figures is not a non-empty object"),
    (dict(width=0), "width is 0"),
])
def test_record_refuses_bad_shapes(kw, problem):
    with pytest.raises(hw.BenchError, match=problem.replace("(", r"\(")):
        rec(**kw)


def test_check_record_names_each_problem():
    r = rec()
    r["sizes"] = {"64": 1.0}
    r["figures"]["latency_clocks"]["better"] = "higher"
    problems = hw.check_record(r)
    assert any("fields outside the schema: ['sizes']" in p for p in problems), problems
    assert any("headline latency_clocks is not the figure" in p for p in problems), problems


def test_write_bench_writes_a_valid_record(tmp_path, monkeypatch):
    """tests/hdlsim.py's writer, as every bench calls it, gives a record
    the reader takes, named as before."""
    monkeypatch.setattr(hdlsim, "BENCH_DIR", tmp_path)
    monkeypatch.setattr(cocotb, "SIM_NAME", "GHDL", raising=False)
    p = hdlsim.write_bench("ddp_rx/2x", 512, beats_per_clock=1.0, latency_clocks=7,
                           higher={"64.fpdus_per_clock": 0.787}, lower={"latency_aw_clocks": 7},
                           details={"axi_width": 1024})
    assert p.name == "ddp_rx-2x-W512-ghdl.json"
    (r,) = hw.load_records(tmp_path)
    assert r["simulator"] == "ghdl" and r["figures"]["latency_aw_clocks"] == {"value": 7, "better": "lower"}


# --- the AttributeError of issue 29 -------------------------------------------

# Records as today's main wrote them before the schema (abridged from a
# fresh-clone `make test`): ddp_tx's "sizes" held plain numbers, mpa_rx's
# objects, and the table code read every "sizes" as objects.
OLD_DDP_TX = {"block": "ddp_tx", "width": 64, "beats_per_clock": 1.0, "latency_clocks": 11,
              "sizes": {"64": 1.0, "128": 1.0}, "cases": [], "one_beat_segments_per_clock": {},
              "simulator": "Verilator"}
OLD_MPA_RX = {"block": "mpa_rx", "width": 64, "beats_per_clock": 1.0, "latency_clocks": 9,
              "sizes": {"64": {"beats_per_clock": 1.0, "fpdus_per_clock": 0.1238}}, "simulator": "Verilator"}


def test_old_records_are_refused_not_a_crash(tmp_path):
    """Regression: `hw_figures.py bench` died with AttributeError ('float'
    object has no attribute 'get') on ddp_tx's record. Records not in the
    schema are now refused by name, with what to do. (Run as make runs it,
    with no options, from a copy of the script in a scratch tree whose
    build/bench holds the two records.)"""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "hw_figures.py").write_text(SCRIPT.read_text())
    # (and the timing model it imports, scripts/fpga_timing.py)
    (tmp_path / "scripts" / "fpga_timing.py").write_text((SCRIPT.parent / "fpga_timing.py").read_text())
    # (and tests/widths.py)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "widths.py").write_text((SCRIPT.parent.parent / "tests" / "widths.py").read_text())
    d = tmp_path / "build" / "bench"
    d.mkdir(parents=True)
    (d / "ddp_tx-W64.json").write_text(json.dumps(OLD_DDP_TX))
    (d / "mpa_rx-W64.json").write_text(json.dumps(OLD_MPA_RX))
    p = subprocess.run([sys.executable, str(tmp_path / "scripts" / "hw_figures.py"), "bench"],
                       capture_output=True, text=True)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 2
    assert "ddp_tx-W64.json: \"schema\" is None, not 1" in p.stderr
    assert "mpa_rx-W64.json" in p.stderr and "rerun the benches" in p.stderr


def test_ddp_tx_and_mpa_rx_records_side_by_side(tmp_path):
    """The two shapes that crashed the table, as the benches write them now."""
    write(tmp_path, rec("ddp_tx", lat=11, higher={"mulpdu1460.64.beats_per_clock": 1.0}))
    write(tmp_path, rec("mpa_rx", lat=9, higher={"64.fpdus_per_clock": 0.1238, "64_markers_off.fpdus_per_clock": 0.125},
                        lower={"64.latency_crc_verdict_clocks": 15}))
    base = tmp_path / "b.json"
    assert run(tmp_path, base, "--update").returncode == 0
    p = run(tmp_path, base)
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("mpa_rx"))
    assert "0.124 / 0.125 off" in line and "5 ok" in line


# --- comparison -------------------------------------------------------------------


def base_of(*records, tolerance=0.0):
    b, _ = hw.updated_baseline(list(records), {})
    for figs in b.values():
        for f in figs.values():
            f["tolerance"] = tolerance
    return b


def statuses(rows):
    return {(r.key, r.figure): r.status for r in rows}


def test_equal_is_ok_and_improvements_are_better():
    b = base_of(rec(higher={"x": 0.5}, lower={"y": 10}))
    rows = hw.compare([rec(higher={"x": 0.5}, lower={"y": 10})], b)
    assert set(statuses(rows).values()) == {"ok"}
    rows = hw.compare([rec(higher={"x": 0.6}, lower={"y": 9})], b)
    s = statuses(rows)
    assert s[("crc32c W64 verilator", "x")] == s[("crc32c W64 verilator", "y")] == "better"
    assert not any(r.failed for r in rows)


@pytest.mark.parametrize("higher,lower,bad", [
    ({"x": 0.4999}, {"y": 10}, "x"),         # a rate fell
    ({"x": 0.5}, {"y": 11}, "y"),            # a latency grew by a clock
])
def test_worse_fails(higher, lower, bad):
    b = base_of(rec(higher={"x": 0.5}, lower={"y": 10}))
    rows = hw.compare([rec(higher=higher, lower=lower)], b)
    failed = [(r.figure, r.status) for r in rows if r.failed]
    assert failed == [(bad, "WORSE")]


def test_one_beat_a_clock_must_match_exactly():
    b = base_of(rec())
    rows = hw.compare([rec(bpc=0.9999)], b)
    assert [(r.figure, r.status) for r in rows if r.failed] == [("beats_per_clock", "WORSE")]


def test_tolerance_is_a_fraction_of_the_value():
    b = base_of(rec(higher={"x": 0.8}, lower={"y": 100}), tolerance=0.05)
    assert not any(r.failed for r in hw.compare([rec(higher={"x": 0.761}, lower={"y": 105})], b))
    s = statuses(hw.compare([rec(higher={"x": 0.759}, lower={"y": 105.1})], b))
    assert s[("crc32c W64 verilator", "x")] == s[("crc32c W64 verilator", "y")] == "WORSE"


def test_missing_figures_and_records_fail_new_ones_do_not():
    b = base_of(rec(higher={"x": 0.5}), rec(width=512), rec(sim="GHDL"))
    rows = hw.compare([rec(higher={"z": 1.0}), rec(sim="GHDL")], b)
    s = statuses(rows)
    assert s[("crc32c W64 verilator", "x")] == "MISSING"
    assert s[("crc32c W512 verilator", "beats_per_clock")] == "MISSING"
    assert s[("crc32c W64 verilator", "z")] == "new"
    assert not any(r.failed for r in rows if r.key == "crc32c W64 ghdl")


def test_simulators_left_out_by_sims_are_not_run():
    b = base_of(rec(), rec(sim="GHDL"))
    s = statuses(hw.compare([rec()], b, sims={"verilator"}))
    assert s[("crc32c W64 ghdl", "beats_per_clock")] == "not run"
    s = statuses(hw.compare([rec()], b, sims=None))
    assert s[("crc32c W64 ghdl", "beats_per_clock")] == "MISSING"


def test_widths_make_test_does_not_run_are_not_run(monkeypatch):
    # tests/widths.py: the middle widths run under HW_ALL_WIDTHS=1 only;
    # their baseline records are "not run" then, and kept by --update.
    monkeypatch.delenv("HW_ALL_WIDTHS", raising=False)
    b = base_of(rec(), rec(width=128), rec(width=256, sim="GHDL"))
    s = statuses(hw.compare([rec()], b))
    assert s[("crc32c W128 verilator", "beats_per_clock")] == "not run"
    assert s[("crc32c W256 ghdl", "beats_per_clock")] == "not run"
    new, dropped = hw.updated_baseline([rec()], b)
    assert "crc32c W128 verilator" in new and not dropped
    # Measured anyway (a bench that asks for every width): compared.
    s = statuses(hw.compare([rec(), rec(width=128, bpc=0.5)], b))
    assert s[("crc32c W128 verilator", "beats_per_clock")] == "WORSE"
    monkeypatch.setenv("HW_ALL_WIDTHS", "1")
    s = statuses(hw.compare([rec()], b))
    assert s[("crc32c W128 verilator", "beats_per_clock")] == "MISSING"


def test_direction_change_fails():
    b = base_of(rec(higher={"x": 5}))
    rows = hw.compare([rec(lower={"x": 5})], b)
    assert [(r.figure, r.status) for r in rows if r.failed] == [("x", "DIRECTION")]


def test_update_keeps_tolerances_and_other_simulators():
    old = base_of(rec(higher={"x": 0.5}), rec(sim="GHDL"), rec(block="mpa_tx"), tolerance=0.02)
    new, dropped = hw.updated_baseline([rec(higher={"x": 0.6, "w": 2.0})], old, sims={"verilator"})
    figs = new["crc32c W64 verilator"]
    assert figs["x"] == {"value": 0.6, "better": "higher", "tolerance": 0.02}
    assert figs["w"]["tolerance"] == 0.0
    assert "crc32c W64 ghdl" in new                      # not run: kept
    assert dropped == ["mpa_tx W64 verilator"]           # run, not measured: dropped


def test_baseline_refuses_bad_tolerance(tmp_path):
    p = tmp_path / "b.json"
    p.write_text(json.dumps({"schema": 1, "records": {"crc32c W64 verilator": {
        "beats_per_clock": {"value": 1.0, "better": "higher", "tolerance": 1.5}}}}))
    with pytest.raises(hw.BenchError, match="tolerance"):
        hw.load_baseline(p)


# --- the command, as make runs it ---------------------------------------------------


def test_command_fails_naming_every_worse_and_missing_figure(tmp_path):
    d = tmp_path / "bench"
    d.mkdir()
    base = tmp_path / "b.json"
    write(d, rec(higher={"64.fpdus_per_clock": 0.8}))
    write(d, rec(block="mpa_tx", lat=12))
    assert run(d, base, "--update").returncode == 0
    saved = json.loads(base.read_text())
    assert saved["records"]["crc32c W64 verilator"]["64.fpdus_per_clock"] == {
        "value": 0.8, "better": "higher", "tolerance": 0.0}
    write(d, rec(higher={"64.fpdus_per_clock": 0.7}, lat=8))
    (d / "mpa_tx-W64.json").unlink()
    (d / "ddp_rx-soak-W512.json").write_text(json.dumps({"ulpdus": 5}))  # not a bench record: left alone
    p = run(d, base)
    assert p.returncode == 1
    err = p.stderr
    assert "crc32c W64 verilator 64.fpdus_per_clock 0.7 (baseline 0.8, higher is better)" in err
    assert "crc32c W64 verilator latency_clocks 8 (baseline 7, lower is better)" in err
    assert "mpa_tx W64 verilator beats_per_clock" in err and "mpa_tx W64 verilator latency_clocks" in err
    assert "bench --update" in err
    report = json.loads((d / "hw.json").read_text())
    assert set(report["failed"]) == {"crc32c W64 verilator 64.fpdus_per_clock", "crc32c W64 verilator latency_clocks",
                                     "mpa_tx W64 verilator beats_per_clock", "mpa_tx W64 verilator latency_clocks"}
    # Each figure that is not ok is listed with its status; --all lists every one.
    assert "WORSE" in p.stdout and "MISSING" in p.stdout
    assert "crc32c W64 verilator      beats_per_clock" not in p.stdout
    p = run(d, base, "--all")
    assert "beats_per_clock" in p.stdout and " ok" in p.stdout


def test_command_passes_with_sims_narrowed(tmp_path):
    base = tmp_path / "b.json"
    write(tmp_path, rec())
    write(tmp_path, rec(sim="GHDL"))
    assert run(tmp_path, base, "--update").returncode == 0
    (tmp_path / "crc32c-W64-ghdl.json").unlink()
    assert run(tmp_path, base).returncode == 1
    p = run(tmp_path, base, sims="verilator")
    assert p.returncode == 0, p.stderr
    assert "not run" in p.stdout


def test_command_without_records_says_what_to_run(tmp_path):
    p = run(tmp_path, tmp_path / "b.json")
    assert p.returncode == 1 and "make test-hw" in p.stderr


# --- the committed baseline, and a CI run's records ------------------------------

# tests/fixtures/bench-ci/: build/bench/ as a full `make test` on CI left it
# (before the records had a schema): the 66 records the default test-hw
# writes, the two security soaks' and hw.json.
CI_BENCH = Path(__file__).resolve().parent / "fixtures" / "bench-ci"


def ci_record_keys() -> set[str]:
    """The record keys of the CI run's files: <block>[-<variant>]-W<w>[-icarus|-ghdl].json."""
    keys = set()
    for p in CI_BENCH.glob("*.json"):
        if p.name == "hw.json" or "soak" in p.name:
            continue
        stem, sim = p.stem, "verilator"
        for s in ("icarus", "ghdl"):
            if stem.endswith("-" + s):
                stem, sim = stem[: -len(s) - 1], s
        block, width = stem.rsplit("-W", 1)
        if "-" in block and not block.startswith("mpa_rx_ooo"):
            block = block.replace("-", "/", 1)
        keys.add(f"{block} W{int(width)} {sim}")
    return keys


def test_ci_records_of_the_old_shape_are_refused_by_name(tmp_path):
    """Regression, on a CI run's build/bench: `hw_figures.py bench` died
    with AttributeError there (ddp_tx's per-size figures); now it exits 2
    naming each file not in the schema, and no Traceback."""
    d = tmp_path / "bench"
    d.mkdir()
    for p in CI_BENCH.glob("*.json"):
        (d / p.name).write_bytes(p.read_bytes())
    p = run(d, tmp_path / "b.json")
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 2, p.stderr
    for name in ("ddp_tx-W64.json", "mpa_rx-W512-ghdl.json", "rnic_rx-req-W64.json"):
        assert f"{name}: \"schema\" is None, not 1" in p.stderr


def test_committed_baseline_holds_records_ci_writes():
    """hw/bench-baseline.json is a valid baseline of records the default
    `make test-hw` writes (the CI run's files), with every W=64 record of
    every block and simulator among them: a bench that stopped writing one
    fails the check as MISSING. (Records it does not hold yet are "new",
    never a failure; `bench --update` after a full make test-hw adds them.)"""
    base = hw.load_baseline(hw.BASELINE)
    ci = ci_record_keys()
    assert len(ci) == 66
    assert set(base) <= ci, sorted(set(base) - ci)
    w64 = {k for k in ci if " W64 " in k}
    assert len(w64) == 28 and w64 <= set(base), sorted(w64 - set(base))
    for key, figs in base.items():
        block = key.split(" ")[0]
        assert hw.block_named(block) is not None, key
        assert figs, key


def test_committed_baseline_fails_a_worse_figure(tmp_path):
    """The committed baseline against records made from it: equal passes;
    one figure a little worse in its bad direction fails naming block,
    width, simulator, figure, measured and recorded value; better passes."""
    base = hw.load_baseline(hw.BASELINE)
    key = "ddp_tx W64 verilator"
    d = tmp_path / "bench"
    d.mkdir()

    def records(change: float):
        for f in d.glob("*.json"):
            f.unlink()
        for k, figs in base.items():
            block, width, sim = k.split(" ")
            higher = {n: f["value"] for n, f in figs.items() if f["better"] == "higher"}
            lower = {n: f["value"] for n, f in figs.items() if f["better"] == "lower"}
            if k == key:
                higher["beats_per_clock"] *= 1 + change
            r = rec(block, int(width[1:]), sim, higher.pop("beats_per_clock", None), lower.pop("latency_clocks", None),
                    higher=higher, lower=lower)
            write(d, r)

    records(0.0)
    p = run(d, hw.BASELINE)
    assert p.returncode == 0, p.stderr
    records(-0.01)
    p = run(d, hw.BASELINE)
    assert p.returncode == 1
    was = base[key]["beats_per_clock"]["value"]
    assert (f"{key} beats_per_clock {hw._fmt(was * 0.99)} (baseline {hw._fmt(was)}, higher is better)"
            in p.stderr), p.stderr
    records(+0.01)
    assert run(d, hw.BASELINE).returncode == 0
