"""tests/transactions.py on its own: the handshakes it finds in a port list,
and the comparison of two transaction logs (no simulator)."""

from __future__ import annotations

from pathlib import Path

import transactions
from transactions import compare, handshakes, ports

HEAD = ("# case t/{sim}-W64 session s1 seed 7\n"
        "# stream o m_axis_t: m_axis_tdata m_axis_tlast\n"
        "# stream i s_axis_t: s_axis_tdata\n"
        "# levels busy\n")


def write(tmp_path: Path, sim: str, sections: dict[str, list[str]]) -> Path:
    p = tmp_path / f"{sim}.log"
    text = HEAD.format(sim=sim)
    for name, lines in sections.items():
        text += f"# test {name}\n" + "".join(x + "\n" for x in lines)
    p.write_text(text)
    return p


def test_handshakes_rx_join():
    streams, levels = handshakes(*ports("rx_join"))
    got = {(s.direction, s.name, s.ready, tuple(s.payload)) for s in streams}
    assert ("o", "m_axis_t", "m_axis_tready",
            ("m_axis_tdata", "m_axis_tkeep", "m_axis_tlast", "m_axis_tuser")) in got
    assert ("i", "clr_", "clr_ready", ("clr_conn",)) in got
    assert ("o", "m_verdict_t", "m_verdict_tready", ("m_verdict_tdata", "m_verdict_tuser")) in got
    assert levels == []


def test_handshakes_numbered_and_pulses():
    # ddp_rx_fifo2: out_data2 belongs to out_valid2, not to out_valid.
    streams, _ = handshakes(*ports("ddp_rx_fifo2"))
    by = {s.valid: s for s in streams}
    assert by["out_valid"].payload == ["out_data"] and by["out_valid2"].payload == ["out_data2"]
    assert by["out_valid2"].ready == "out_ready2"
    # ddp_tx: err_valid has no ready (a pulse); mpa_rx_ooo's busy is a level.
    streams, _ = handshakes(*ports("ddp_tx"))
    err = [s for s in streams if s.valid == "err_valid"][0]
    assert err.ready is None and err.payload == ["err_code", "err_ctx"]
    assert "busy" in handshakes(*ports("mpa_rx_ooo"))[1]


def test_equal_logs(tmp_path):
    lines = ["3 v s_axis_t 1", "3 i s_axis_t ab", "5 o m_axis_t ab 1", "6 o busy 1"]
    res = compare("t", "W64", write(tmp_path, "a", {"x": lines}), write(tmp_path, "b", {"x": lines}))
    assert res.equal and res.transactions == 2


def test_first_output_difference(tmp_path):
    a = ["3 i s_axis_t ab", "5 o m_axis_t ab 0", "6 o m_axis_t cd 1", "9 o m_axis_t ee 1"]
    b = ["3 i s_axis_t ab", "5 o m_axis_t ab 0", "7 o m_axis_t cd 1", "9 o m_axis_t ff 1"]
    res = compare("t", "W64", write(tmp_path, "a", {"x": a}), write(tmp_path, "b", {"x": b}))
    assert not res.equal
    assert "RANDOM_SEED=7" in res.message and "cocotb test x: first difference" in res.message
    assert "(Verilog): clock 6 output m_axis_t m_axis_tdata=cd m_axis_tlast=1" in res.message
    assert "(VHDL):    clock 7 output m_axis_t m_axis_tdata=cd m_axis_tlast=1" in res.message


def test_missing_transaction(tmp_path):
    a = ["5 o m_axis_t ab 0", "6 o m_axis_t cd 1"]
    res = compare("t", "W64", write(tmp_path, "a", {"x": a}), write(tmp_path, "b", {"x": a[:1]}))
    assert not res.equal and "(no transaction: the log ends)" in res.message


def test_stimulus_apart_fails_unless_excepted(tmp_path, monkeypatch):
    outs = [f"{10 + k} o m_axis_t {k:x} 0" for k in range(60)]
    a = ["3 i s_axis_t 1"] + outs + ["90 i s_axis_t 2", "95 o m_axis_t 77 1"]
    b = ["3 i s_axis_t 1"] + outs + ["95 o m_axis_t 66 1"]
    pa, pb = write(tmp_path, "a", {"x": a}), write(tmp_path, "b", {"x": b})
    res = compare("t", "W64", pa, pb)
    assert not res.equal and "first difference" in res.message
    assert "clock 90 input taken s_axis_t s_axis_tdata=2" in res.message
    monkeypatch.setitem(transactions.STIMULUS_EXCEPTIONS, ("t", "x"), "less traffic on GHDL")
    res = compare("t", "W64", pa, pb)
    assert res.equal and res.transactions == 60 and "x up to clock 90 (less traffic on GHDL)" in res.message
    # The same input taken at another clock is the block's doing.
    late = b[:1] + outs + ["91 i s_axis_t 2", "95 o m_axis_t 66 1"]
    res = compare("t", "W64", pa, write(tmp_path, "b", {"x": late}))
    assert not res.equal and "clock 91 input taken s_axis_t s_axis_tdata=2" in res.message
    # An output before the inputs part still counts.
    b[5] = "15 o m_axis_t 99 0"
    assert not compare("t", "W64", pa, write(tmp_path, "b", {"x": b})).equal
    # Too short a compared part fails.
    res = compare("t", "W64", write(tmp_path, "a", {"x": a[:5] + a[-2:]}), write(tmp_path, "b", {"x": b[:5] + b[-1:]}))
    assert not res.equal and "too little compared" in res.message


def test_seeds_and_tests_must_match(tmp_path):
    pa = write(tmp_path, "a", {"x": [], "y": []})
    assert "cocotb tests differ" in compare("t", "W64", pa, write(tmp_path, "b", {"x": []})).message
    pb = write(tmp_path, "b", {"x": [], "y": []})
    pb.write_text(pb.read_text().replace("seed 7", "seed 8"))
    assert "different seeds" in compare("t", "W64", pa, pb).message


def test_not_compared_is_checked(tmp_path, monkeypatch):
    monkeypatch.setitem(transactions.NOT_COMPARED, ("t", "W64", "x"), "big run on Verilator")
    a = ["3 i s_axis_t 1", "5 o m_axis_t 1 0"]
    b = ["3 i s_axis_t 2", "5 o m_axis_t 9 0"]
    res = compare("t", "W64", write(tmp_path, "a", {"x": a, "y": a}), write(tmp_path, "b", {"x": b, "y": a}))
    assert res.equal and "x not compared (big run on Verilator)" in res.message
    # The other cocotb tests still count.
    assert not compare("t", "W64", write(tmp_path, "a", {"x": a, "y": a}), write(tmp_path, "b", {"x": b, "y": b})).equal
    # A stale entry (the same stimulus) fails.
    res = compare("t", "W64", write(tmp_path, "a", {"x": a}), write(tmp_path, "b", {"x": a}))
    assert not res.equal and "compare it" in res.message
