"""The generated register block, hw/rtl/rnic_regs.v, over AXI4-Lite.

The block is generated from hw/regs/rnic.rdl (scripts/regs.py,
peakrdl-etana). The pytest side compiles the same RDL and derives from it
everything the bench expects: the chain of blocks (base, type, version, next
pointer), the ID block's constants, the counters and their offsets, and a
small wrapper top, rnic_regs_tb (written into the case's build directory),
that ties every hardware-driven field to a parameter of the wrapper and
brings every counter's increment out to one input vector (and each octet
counter's increment value to an input of its own). Nothing the bench checks
is a second hand-written copy of the map.

The cocotb tests, through cocotbext-axi's AxiLiteMaster:
  walk_chain        from offset 0, every block's header against the RDL,
                    to the end of the chain; the ID block's constants and
                    the parameter-driven words (build hash, data width,
                    capabilities)
  counters          random increment pulses on every counter at once (one
                    a clock, several clocks in a row, octet counters by
                    random amounts), each 64-bit counter read back low word
                    first; reads do not clear; a write to a counter changes
                    nothing; reset clears every counter
  torn_read         an octet counter taken to 0xffff_fff0, its low word
                    read, then a carry into the high word: the high word
                    read next is the one latched with the low word
  read_only_writes  a write to every register of the map changes nothing
                    (headers, ID, counters), with an OKAY response
  outside_the_map   reads of addresses no register occupies (the gaps
                    inside blocks and past the last block, within the
                    block's address range) return 0 with OKAY; writes there
                    answer OKAY and change nothing (peakrdl-etana's default
                    cpuif: no SLVERR/DECERR; the device top decodes the BAR
                    above the block's address width)
"""

from __future__ import annotations

import json
import os
import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp

import hdlsim

CLK_PERIOD_NS = 10
TB_TOP = "rnic_regs_tb"
MAP_ENV = "REGS_TB_MAP"

# The values the wrapper drives into the ID block, as a device build would
# from its parameters.
PARAMS = {"BUILD_HASH": 0x7D6E9301, "DATA_W": 512, "CONNS": 1024, "STAGS": 4096,
          "SQ_LOG2": 10, "RQ_LOG2": 11, "CQ_LOG2": 12}
# Which hardware-written field of the RDL each parameter drives. A field the
# RDL gains without an entry here fails the wrapper's generation.
HW_FIELDS = {
    ("id", "build_hash", "value"): "BUILD_HASH",
    ("id", "data_width", "value"): "DATA_W",
    ("id", "cap_conns", "value"): "CONNS",
    ("id", "cap_stags", "value"): "STAGS",
    ("id", "cap_queues", "sq_log2"): "SQ_LOG2",
    ("id", "cap_queues", "rq_log2"): "RQ_LOG2",
    ("id", "cap_queues", "cq_log2"): "CQ_LOG2",
}


# --- the cocotb side ---------------------------------------------------------------


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.map = json.loads(os.environ[MAP_ENV])
        self.counters = self.map["counters"]
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        dut.incr.value = 0
        for c in self.counters:
            if c["incrvalue"]:
                getattr(dut, c["incrvalue"]).value = 0
        cocotb.start_soon(Clock(dut.clk, CLK_PERIOD_NS, units="ns").start())

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    async def read(self, addr: int) -> int:
        r = await self.axil.read(addr, 4)
        assert r.resp == AxiResp.OKAY, f"read at {addr:#x}: {r.resp}"
        return int.from_bytes(r.data, "little")

    async def write(self, addr: int, value: int):
        r = await self.axil.write(addr, value.to_bytes(4, "little"))
        assert r.resp == AxiResp.OKAY, f"write at {addr:#x}: {r.resp}"

    async def read64(self, addr: int) -> int:
        lo = await self.read(addr)
        hi = await self.read(addr + 4)
        return hi << 32 | lo

    async def counter_values(self) -> dict[str, int]:
        return {c["name"]: await self.read64(c["offset"]) for c in self.counters}

    async def snapshot(self) -> dict[int, int]:
        """Every 32-bit word of the block's address range, low words of
        counters before their high words."""
        return {a: await self.read(a) for a in range(0, self.map["addr_span"], 4)}


@cocotb.test()
async def walk_chain(dut):
    tb = TB(dut)
    await tb.reset()
    want = tb.map["blocks"]
    off, seen = 0, []
    while True:
        assert len(seen) < len(want), f"the chain goes on past {len(want)} blocks (at {off:#x})"
        b = want[len(seen)]
        assert off == b["base"], f"block {len(seen)} at {off:#x}, the RDL puts {b['name']} at {b['base']:#x}"
        typ, ver, nxt = await tb.read(off), await tb.read(off + 4), await tb.read(off + 8)
        assert typ == b["type"], f"{b['name']}: type {typ:#010x}, want {b['type']:#010x}"
        assert ver == b["major"] << 16 | b["minor"], f"{b['name']}: version {ver:#010x}"
        assert nxt == b["next"], f"{b['name']}: next {nxt:#x}, want {b['next']:#x}"
        seen.append(b["name"])
        if nxt == 0:
            break
        off = nxt
    assert len(seen) == len(want), f"chain ended after {seen}"
    for name, (addr, value) in tb.map["id_words"].items():
        got = await tb.read(addr)
        assert got == value, f"ID block {name} at {addr:#x}: {got:#x}, want {value:#x}"
    dut._log.info("walked %s; ID block as built", " -> ".join(seen))


async def pulse_counters(tb: TB, cycles: int) -> dict[str, int]:
    """Random increments on every counter for `cycles` clocks; returns the
    amount each counter was given."""
    dut = tb.dut
    added = {c["name"]: 0 for c in tb.counters}
    for cyc in range(cycles):
        await FallingEdge(dut.clk)
        vec = 0
        for i, c in enumerate(tb.counters):
            # Runs of pulses on some counters, single pulses on others.
            on = random.random() < (0.9 if i % 3 == 0 else 0.3)
            if on:
                vec |= 1 << c["bit"]
                amount = 1
                if c["incrvalue"]:
                    amount = random.choice((0, 1, 64, random.randrange(1 << c["incrwidth"])))
                    getattr(dut, c["incrvalue"]).value = amount
                added[c["name"]] += amount
            elif c["incrvalue"]:
                # The increment value matters only with incr high.
                getattr(dut, c["incrvalue"]).value = random.randrange(1 << c["incrwidth"])
        dut.incr.value = vec
    await FallingEdge(dut.clk)
    dut.incr.value = 0
    return added


@cocotb.test()
async def counters(dut):
    tb = TB(dut)
    await tb.reset()
    assert await tb.counter_values() == {c["name"]: 0 for c in tb.counters}, "counters not 0 after reset"
    total = {c["name"]: 0 for c in tb.counters}
    for _ in range(3):
        for k, v in (await pulse_counters(tb, random.randrange(1, 200))).items():
            total[k] += v
        assert await tb.counter_values() == total
    assert all(total.values()), f"a counter was never incremented: {total}"
    # Reading does not clear.
    assert await tb.counter_values() == total, "a read changed a counter"
    # Writing does not change a counter (sw = r).
    for c in tb.counters:
        await tb.write(c["offset"], 0)
        await tb.write(c["offset"] + 4, 0xFFFFFFFF)
    assert await tb.counter_values() == total, "a write changed a counter"
    # Reset clears them.
    await tb.reset()
    assert await tb.counter_values() == {c["name"]: 0 for c in tb.counters}, "reset did not clear"


@cocotb.test()
async def torn_read(dut):
    tb = TB(dut)
    await tb.reset()
    c = next(c for c in tb.counters if c["incrvalue"])
    inc = getattr(dut, c["incrvalue"])

    async def add(amount):
        await FallingEdge(dut.clk)
        dut.incr.value = 1 << c["bit"]
        inc.value = amount
        await FallingEdge(dut.clk)
        dut.incr.value = 0

    value = (1 << 32) - 0x10  # just below the carry into the high word
    await add(value)
    assert await tb.read64(c["offset"]) == value, f"{c['name']} after one increment of {value:#x}"
    lo = await tb.read(c["offset"])
    assert lo == value
    await add(0x20)  # a carry into the high word between the two reads
    hi = await tb.read(c["offset"] + 4)
    assert hi == 0, f"high word {hi:#x}: read after the low word {lo:#x}, it must be the one latched with it, 0"
    assert await tb.read64(c["offset"]) == value + 0x20, "the next low-then-high read"
    assert (value + 0x20) >> 32 == 1


@cocotb.test()
async def read_only_writes(dut):
    tb = TB(dut)
    await tb.reset()
    await pulse_counters(tb, 20)
    before = await tb.snapshot()
    for addr in tb.map["registers"]:
        await tb.write(addr, 0xFFFFFFFF)
        await tb.write(addr, 0x00000000)
    after = await tb.snapshot()
    changed = {hex(a): (before[a], after[a]) for a in before if before[a] != after[a]}
    assert not changed, f"writes changed {changed}"


@cocotb.test()
async def outside_the_map(dut):
    tb = TB(dut)
    await tb.reset()
    await pulse_counters(tb, 20)
    regs = set(tb.map["registers"])
    holes = [a for a in range(0, tb.map["addr_span"], 4) if a not in regs]
    assert holes, "the map has no unused address"
    before = await tb.snapshot()
    for a in holes:
        r = await tb.axil.read(a, 4)
        assert r.resp == AxiResp.OKAY, f"read at {a:#x}: {r.resp}"
        assert int.from_bytes(r.data, "little") == 0, f"read at {a:#x}: {r.data.hex()}"
        await tb.write(a, 0xA5A5A5A5)
    assert await tb.snapshot() == before, "a write outside the map changed a register"
    dut._log.info("%d unused words: read 0, OKAY; writes OKAY and ignored", len(holes))


# --- the pytest side ---------------------------------------------------------------


def describe_map():
    """Everything the bench expects, from the compiled RDL."""
    import sys

    sys.path.insert(0, str(hdlsim.REPO_ROOT / "scripts"))
    import regs  # scripts/regs.py

    top = regs.compile_map()
    regs.check_chain(top)
    blocks, counters, registers, id_words, hw_ports, incr_ports = [], [], [], {}, [], []
    for blk in top.children():
        hdr = {n: blk.get_child_by_name(n) for n in regs.HEADER}
        ver = hdr["blk_version"]
        blocks.append({
            "name": blk.inst_name, "base": blk.absolute_address,
            "type": regs.constant(hdr["blk_type"], "blk_type"),
            "major": regs.constant(ver, "major"), "minor": regs.constant(ver, "minor"),
            "next": regs.constant(hdr["blk_next"], "blk_next"),
        })
        for reg in blk.children():
            for w in range(0, reg.size, 4):
                registers.append(reg.absolute_address + w)
            value, fixed = 0, True
            for f in reg.fields():
                port = f"hwif_in_{blk.inst_name}_{reg.inst_name}_{f.inst_name}"
                if f.get_property("counter"):
                    fixed = False
                    iw = f.get_property("incrwidth") or 0
                    counters.append({
                        "name": reg.inst_name, "offset": reg.absolute_address, "bit": len(counters),
                        "incrvalue": f"incrvalue_{reg.inst_name}" if iw else None, "incrwidth": iw,
                        "port": port, "width": f.width,
                    })
                elif f.is_hw_writable:
                    key = (blk.inst_name, reg.inst_name, f.inst_name)
                    if key not in HW_FIELDS:
                        raise AssertionError(f"no wrapper parameter drives {'.'.join(key)}")
                    hw_ports.append((port, f.width, HW_FIELDS[key]))
                    value |= (PARAMS[HW_FIELDS[key]] & ((1 << f.width) - 1)) << f.low
                else:
                    value |= f.get_property("reset") << f.low
            if fixed and blk.inst_name == "id":
                id_words[reg.inst_name] = (reg.absolute_address, value)
    driven = {p for _, _, p in hw_ports}
    assert driven == set(HW_FIELDS.values()), f"parameters that drive nothing: {set(HW_FIELDS.values()) - driven}"
    return {"blocks": blocks, "counters": counters, "registers": registers, "id_words": id_words,
            "addr_span": 1 << (top.size - 1).bit_length(), "hw_ports": hw_ports}


def wrapper(m) -> str:
    """rnic_regs_tb: rnic_regs with its hardware-driven fields tied to
    parameters and its counter increments on the input `incr`."""
    aw = (m["addr_span"] - 1).bit_length()
    n = len(m["counters"])
    params = ",\n".join(f"    parameter [31:0] {p} = 32'd{v}" for p, v in PARAMS.items())
    ports = [f"    input  wire [{n - 1}:0] incr"]
    conns = []
    for c in m["counters"]:
        conns.append(f"        .{c['port']}_incr(incr[{c['bit']}])")
        if c["incrvalue"]:
            ports.append(f"    input  wire [{c['incrwidth'] - 1}:0] {c['incrvalue']}")
            conns.append(f"        .{c['port']}_incrvalue({{{c['width'] - c['incrwidth']}'d0, {c['incrvalue']}}})")
    for port, width, param in m["hw_ports"]:
        conns.append(f"        .{port}({param}[{width - 1}:0])")
    axil = []
    for name, d, w in (("awvalid", "input", 1), ("awready", "output", 1), ("awaddr", "input", aw),
                       ("awprot", "input", 3), ("wvalid", "input", 1), ("wready", "output", 1),
                       ("wdata", "input", 32), ("wstrb", "input", 4), ("bvalid", "output", 1),
                       ("bready", "input", 1), ("bresp", "output", 2), ("arvalid", "input", 1),
                       ("arready", "output", 1), ("araddr", "input", aw), ("arprot", "input", 3),
                       ("rvalid", "output", 1), ("rready", "input", 1), ("rdata", "output", 32),
                       ("rresp", "output", 2)):
        ports.append(f"    {d:<6} wire [{w - 1}:0] s_axil_{name}")
        conns.append(f"        .s_axil_{name}(s_axil_{name})")
    return (
        "// Generated by tests/regs/test_regs.py from hw/regs/rnic.rdl: the bench's top.\n"
        "`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n"
        f"module {TB_TOP} #(\n{params}\n) (\n    input  wire clk,\n    input  wire rst,\n"
        + ",\n".join(ports) + "\n);\n\n"
        "rnic_regs u_regs (\n        .clk(clk),\n        .rst(rst),\n"
        + ",\n".join(conns) + "\n);\n\nendmodule\n\n`resetall\n"
    )


@pytest.mark.parametrize("sim", hdlsim.simulators(("verilog",)))
def test_regs(sim):
    m = describe_map()
    src_dir = hdlsim.BUILD_ROOT / "regs" / f"top-{sim}"
    src_dir.mkdir(parents=True, exist_ok=True)
    top = src_dir / f"{TB_TOP}.v"
    top.write_text(wrapper(m))
    env_map = {k: m[k] for k in ("blocks", "counters", "registers", "id_words", "addr_span")}
    hdlsim.run(
        test="regs",
        sim=sim,
        tag="map",
        # TB_TOP is the generated wrapper (in the build directory, not
        # hw/rtl/), so tests/test_protocol.py's table of RTL ports does not
        # list it; AXI4-Lite has no checker there yet.
        toplevel=TB_TOP,
        test_module=__name__,
        verilog_sources=[hdlsim.RTL_DIR / "rnic_regs.v", top],
        extra_env={MAP_ENV: json.dumps(env_map)},
    )
