"""rnic_txarb, the transmit side's arbiter (hw/rtl/rnic_txarb.v): message
sources, each a descriptor and (when the descriptor says so) one payload
frame, into rnic_tx's one descriptor port and one payload port.

Every source offers numbered messages (some without a payload, payloads of
1 to 6 beats), with random gaps, its payload beats offered at random times
(before its descriptor is taken too), and rnic_tx's side stalls at random.
Checked every clock: a descriptor passes only when no payload is owed; the
beats after a descriptor with a payload are exactly that message's, in
order, up to its last; each source's messages come out in order, none lost
or doubled; while a source waits with a descriptor, no rival passes two
messages; and the protocol checkers (tests/protocol.py) on every port.
"""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

import hdlsim
import protocol

CLOCKS = 20000
D_W = 24
DATA_W = 32


@cocotb.test()
async def random_messages(dut):
    n = len(dut.s_desc_valid)
    rng = random.Random(cocotb.RANDOM_SEED)
    cocotb.start_soon(Clock(dut.clk, 2, units="ns").start())
    for sig in (dut.s_desc_valid, dut.s_desc, dut.s_desc_pay, dut.s_pay_data, dut.s_pay_keep,
                dut.s_pay_valid, dut.s_pay_last, dut.m_desc_ready, dut.m_axis_tready):
        sig.value = 0
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    protocol.Monitor(dut, "rnic_txarb")
    seq = [0] * n              # each source's next message
    beats = [0] * n            # its payload's length in beats (0: none)
    desc_on = [False] * n      # its descriptor is offered
    desc_taken = [False] * n   # its descriptor passed; its payload has not
    sent = [0] * n             # beats of the payload passed
    pay_on = [False] * n       # its payload beat is offered
    owed = None                # (source, message) whose payload must come next
    waited = [[0] * n for _ in range(n)]
    msgs = [0] * n
    p_src, p_out = 0.5, 0.5

    def new_message(i):
        beats[i] = 0 if rng.random() < 0.3 else rng.randint(1, 6)
        desc_on[i], desc_taken[i], sent[i], pay_on[i] = False, False, 0, False

    for i in range(n):
        new_message(i)
    for clk in range(CLOCKS):
        if clk % 1000 == 0:
            p_src, p_out = rng.choice((0.2, 0.6, 1.0)), rng.choice((0.3, 0.7, 1.0))
        for i in range(n):
            if not desc_taken[i] and not desc_on[i] and rng.random() < p_src:
                desc_on[i] = True
            if beats[i] and sent[i] < beats[i] and not pay_on[i] and rng.random() < p_src:
                pay_on[i] = True
        desc = [i << 20 | (seq[i] & 0xfff) << 8 | beats[i] for i in range(n)]
        beat = [i << 28 | (seq[i] & 0xfff) << 16 | sent[i] for i in range(n)]
        dut.s_desc_valid.value = sum(1 << i for i in range(n) if desc_on[i])
        dut.s_desc.value = sum(desc[i] << (i * D_W) for i in range(n))
        dut.s_desc_pay.value = sum(1 << i for i in range(n) if beats[i])
        dut.s_pay_valid.value = sum(1 << i for i in range(n) if pay_on[i])
        dut.s_pay_data.value = sum(beat[i] << (i * DATA_W) for i in range(n))
        dut.s_pay_keep.value = (1 << (n * DATA_W // 8)) - 1
        dut.s_pay_last.value = sum(1 << i for i in range(n) if beats[i] and sent[i] == beats[i] - 1)
        d_ready, p_ready = rng.random() < p_out, rng.random() < p_out
        dut.m_desc_ready.value, dut.m_axis_tready.value = int(d_ready), int(p_ready)
        await ReadOnly()
        dv, dr = int(dut.m_desc_valid.value), int(dut.s_desc_ready.value)
        pv, pr = int(dut.m_axis_tvalid.value), int(dut.s_pay_ready.value)
        done_now = None
        if owed is not None:
            o = owed
            assert not dv, f"clock {clk}: a descriptor offered while source {o}'s payload is owed"
            assert pv == int(pay_on[o]), f"clock {clk}: payload valid {pv}, source {o} offers {pay_on[o]}"
            assert pr == ((1 << o) if p_ready else 0), f"clock {clk}: s_pay_ready {pr:b} for owner {o}"
            if pv:
                assert int(dut.m_axis_tdata.value) == beat[o], (
                    f"clock {clk}: beat {int(dut.m_axis_tdata.value):#x}, want {beat[o]:#x}")
                assert int(dut.m_axis_tlast.value) == (sent[o] == beats[o] - 1), f"clock {clk}: tlast"
                if p_ready:
                    pay_on[o] = False
                    sent[o] += 1
                    if sent[o] == beats[o]:
                        done_now = o
                        owed = None
        else:
            assert not pv and pr == 0, f"clock {clk}: payload passes with none owed"
            assert dv == any(desc_on), f"clock {clk}: m_desc_valid {dv} with offers {desc_on}"
            if dv:
                d = int(dut.m_desc.value)
                src = d >> 20
                assert src < n and desc_on[src] and d == desc[src], f"clock {clk}: m_desc {d:#x} is no offer"
                assert dr == ((1 << src) if d_ready else 0), f"clock {clk}: s_desc_ready {dr:b}"
                if d_ready:
                    desc_on[src], desc_taken[src] = False, True
                    msgs[src] += 1
                    waited[src] = [0] * n
                    for i in range(n):
                        if desc_on[i]:
                            waited[i][src] += 1
                            assert waited[i][src] < 2, f"clock {clk}: source {i} waits while {src} passes twice"
                    if beats[src]:
                        owed = src
                    else:
                        done_now = src
        if done_now is not None:
            seq[done_now] += 1
            new_message(done_now)
        await RisingEdge(dut.clk)
    dut._log.info("messages per source: %s", msgs)
    assert all(m > CLOCKS // (20 * n) for m in msgs), f"a source hardly passed: {msgs}"


CASES = [pytest.param(s.values[0], n, marks=s.marks, id=f"{s.values[0]}-N{n}")
         for s in hdlsim.simulators(langs=("verilog",)) for n in (2, 3) if s.values[0] != "verilator" or n == 2]


@pytest.mark.parametrize("sim,n", CASES)
def test_rnic_txarb(sim, n):
    hdlsim.run(
        test="rnic_txarb",
        sim=sim,
        tag=f"N{n}",
        toplevel="rnic_txarb",
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "rnic_txarb.v", hdlsim.RTL_DIR / "rnic_recmux.v"],
        parameters={"N": n, "D_W": D_W, "DATA_W": DATA_W},
    )
