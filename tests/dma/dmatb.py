"""What the DMA engines' benches (tests/dma) share: the window table's rule
as the Go model states it, the window port driver, the client ports'
per-clock driver for flat vectors, and the refusal port's collector.

Every clock the benches drive inputs at the falling edge and sample the
outputs in the ReadOnly phase after it: a valid/ready pair high then is a
transfer at the next rising edge (inputs change only at falling edges)."""

from __future__ import annotations

import random

from cocotb.triggers import FallingEdge, ReadOnly

MASK64 = (1 << 64) - 1


class Windows:
    """The window table (docs/device.md, "DMA"; driver/model/mem.go
    inWindow): [addr, addr + n) is allowed iff it lies inside one non-empty
    window [a, a + l); an access whose end passes 2^64 never is."""

    def __init__(self, slots: int):
        self.w = [(0, 0)] * slots

    def allowed(self, addr: int, n: int) -> bool:
        if addr + n > MASK64 + 1 or (addr + n) & MASK64 < addr:
            return False
        return any(ln and a <= addr and addr + n <= a + ln for a, ln in self.w)


async def set_window(dut, windows: Windows, slot: int, addr: int, length: int):
    """One win_wr pulse (as rnic_admin gives one per DMA_WINDOW that
    succeeded: address and length multiples of 4 KiB, no carry)."""
    assert addr % 4096 == 0 and length % 4096 == 0 and addr + length <= MASK64 + 1
    await FallingEdge(dut.clk)
    dut.win_wr_valid.value = 1
    dut.win_wr_slot.value = slot
    dut.win_wr_addr.value = addr
    dut.win_wr_len.value = length
    await FallingEdge(dut.clk)
    dut.win_wr_valid.value = 0
    windows.w[slot] = (addr, length)


def vec_get(value: int, i: int, width: int) -> int:
    return (value >> (i * width)) & ((1 << width) - 1)


def bits(sig) -> int:
    return sig.value.integer


class Refusals:
    """The ref_* port: ready at random (p_stall), each report kept."""

    def __init__(self, dut, rng: random.Random, p_stall: float):
        self.dut, self.rng, self.p = dut, rng, p_stall
        self.got: list[tuple[int, int, int]] = []   # (what, addr, len)
        dut.ref_ready.value = 0

    def drive(self):
        self.dut.ref_ready.value = int(self.rng.random() >= self.p)

    def sample(self):
        d = self.dut
        if d.ref_valid.value == 1 and d.ref_ready.value == 1:
            self.got.append((bits(d.ref_what), bits(d.ref_addr), bits(d.ref_len)))


class ReqDriver:
    """A request port of n clients in flat vectors (<p>_valid, _ready and
    the fields): each client's queue sent in order, with random pauses
    (p_idle) between requests; sent() lists, per client, the requests taken."""

    def __init__(self, dut, prefix: str, n: int, fields: dict[str, int], rng: random.Random, p_idle: float):
        self.dut, self.p, self.n, self.fields, self.rng, self.p_idle = dut, prefix, n, fields, rng, p_idle
        self.queues: list[list[dict]] = [[] for _ in range(n)]
        self.cur: list[dict | None] = [None] * n
        self.taken: list[list[dict]] = [[] for _ in range(n)]
        getattr(dut, f"{prefix}_valid").value = 0
        for f in fields:
            getattr(dut, f"{prefix}_{f}").value = 0

    def busy(self) -> bool:
        return any(self.queues) or any(c is not None for c in self.cur)

    def drive(self):
        for i in range(self.n):
            if self.cur[i] is None and self.queues[i] and self.rng.random() >= self.p_idle:
                self.cur[i] = self.queues[i].pop(0)
        valid = sum(1 << i for i in range(self.n) if self.cur[i] is not None)
        getattr(self.dut, f"{self.p}_valid").value = valid
        for f, w in self.fields.items():
            v = 0
            for i in range(self.n):
                if self.cur[i] is not None:
                    v |= (self.cur[i][f] & ((1 << w) - 1)) << (i * w)
            getattr(self.dut, f"{self.p}_{f}").value = v

    def sample(self):
        valid = bits(getattr(self.dut, f"{self.p}_valid"))
        ready = bits(getattr(self.dut, f"{self.p}_ready"))
        for i in range(self.n):
            if valid >> i & ready >> i & 1:
                self.taken[i].append(self.cur[i])
                self.cur[i] = None


async def clock_loop(dut, parts, stop):
    """Every clock: each part's drive() at the falling edge, then its
    sample() in the ReadOnly phase; until stop() is true."""
    while not stop():
        await FallingEdge(dut.clk)
        for p in parts:
            p.drive()
        await ReadOnly()
        for p in parts:
            p.sample()
