"""Testbench scaffolding the cocotb benches share: clock and reset, random
pause generators for cocotbext-axi's sources and sinks, and the transfer
digest that a Verilog block and its VHDL twin must agree on."""

from __future__ import annotations

import random
from typing import Iterable, Iterator

from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge
import cocotb


async def clock_and_reset(dut, period_ns: int, low: Iterable[str] = (), high: Iterable[str] = (),
                          cycles: int = 3) -> None:
    """Hold dut.rst high with the named inputs at 0 (low) or 1 (high), start
    dut.clk, release reset at a falling edge after `cycles` clocks, and
    return at the next rising edge."""
    dut.rst.value = 1
    for sig in low:
        getattr(dut, sig).value = 0
    for sig in high:
        getattr(dut, sig).value = 1
    cocotb.start_soon(Clock(dut.clk, period_ns, units="ns").start())
    await ClockCycles(dut.clk, cycles)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)


async def wait_ready(dut, names: Iterable[str] = ("s_conn_ready",)) -> None:
    """Wait for the rising edge at which every named output is 1: after
    reset, a block that clears its tables first (ddp_rx: 2^max(CONN_W,
    STAG_AW) clocks) holds its ready outputs low until it is done, so a
    bench waits for them rather than counting clocks."""
    while not all(getattr(dut, n).value == 1 for n in names):
        await RisingEdge(dut.clk)


# The benches (the cocotb tests that write build/bench records) draw their
# traffic from this seed, not from cocotb's: their figures are then a
# function of the RTL and the bench alone, the same on every run and seed,
# so that hw/bench-baseline.json can hold them exactly (a marker position
# or a host offset drawn at random moves a figure in its third digit).
BENCH_SEED = 0x2029


def bench_rng() -> random.Random:
    """The random generator a bench's traffic comes from (BENCH_SEED)."""
    return random.Random(BENCH_SEED)


def pauses(rng: random.Random, p: float) -> Iterator[bool]:
    """A pause generator: each clock paused with probability p, from its own
    generator seeded by rng (so the seed cocotb prints replays it). The seed
    is drawn now, not at the first pause, so the stalls do not depend on
    when the first one is asked for (nor on what else draws from rng by
    then): the Verilog and its VHDL twin get the same stalls."""
    r = random.Random(rng.getrandbits(64))
    return (r.random() < p for _ in iter(int, 1))


def strobe_runs(strb: int) -> Iterator[tuple[int, int]]:
    """The runs of set bits in a strobe (byte-enable) mask, lowest first, as
    [lo, hi) lane ranges."""
    while strb:
        lo = (strb & -strb).bit_length() - 1
        hi = lo + ((~(strb >> lo)) & ((strb >> lo) + 1)).bit_length() - 1  # lowest clear bit above the run
        yield lo, hi
        strb &= ~(((1 << (hi - lo)) - 1) << lo)


def first_piece_min(head: bytes, ulen: int | None = None) -> int:
    """The octets a ULPDU's first piece must hold on the way into ddp_rx
    (hw/README.md, "MPA receive path and the interface to placement";
    rx_join makes it so): all of the header that ddp_rx reads, min(H,
    ULPDU_Length), with H = 46 for an untagged RDMAP Read Request or
    Terminate (opcode 1 or 7 in octet 1), 14 for a tagged ULPDU (octet 0
    bit 7), 18 for every other untagged one, and 46
    when head (the ULPDU's first octets; ulen its length, len(head) if not
    given) holds fewer than its two control octets. This is the blocks'
    interface, not the protocol: the Go stack checks what the octets mean."""
    n = len(head) if ulen is None else ulen
    if len(head) < 2:
        return min(n, 46)
    if head[0] & 0x80:
        return min(n, 14)
    return min(n, 46 if head[1] & 0x0F in (1, 7) else 18)
