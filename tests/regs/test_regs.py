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
  read_only_writes  a write to every read-only register of the map changes
                    nothing (headers, ID, counters, admin status), with an
                    OKAY response
  admin_arguments   the mailbox's ARG words: a driver's write reads back, a
                    device write (hw we) replaces it, nothing else changes
  external_regions  admin CMD, the vectors and both doorbell regions: each
                    write reaches the device (the wrapper's responder) as
                    one strobe with its offset within the region and its
                    data; each read is the device's answer
  outside_the_map   reads of addresses no register occupies (the gaps
                    inside blocks and past the last block, within the
                    block's address range) return 0 with OKAY; writes there
                    answer OKAY and change nothing (peakrdl-etana's default
                    cpuif: no SLVERR/DECERR; the device top decodes the BAR
                    above the block's address width); every unused word in
                    the first 4 KiB and the doorbells' header page, and 256
                    others drawn at random
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
          "SQ_LOG2": 10, "RQ_LOG2": 11, "CQ_LOG2": 12, "CQS": 256, "VECTORS": 16, "WINDOWS": 8,
          "ADMIN_BUSY": 1, "ADMIN_CODE": 0x5A,
          # The flash block's hardware-written fields: distinct values, so
          # that a field read from the wrong bits or register shows.
          "FL_SIZE": 24, "FL_SECTOR": 12, "FL_PAGE": 8, "FL_QUAD": 1,
          "FL_BUSY": 1, "FL_BOOT": 0, "FL_CODE": 0xA5,
          "BT_SLOT": 2, "BT_DONE": 1, "BT_REASON": 0xC, "BT_VALID": 5, "BT_PRESENT": 6, "BT_CONFIRMED": 3,
          "BT_TRIED": 4, "BT_VERSION": 0x01020003, "BT_SECURITY": 0x33, "BT_BUILD": 0xB00D, "BT_SEQ": 0x5E9,
          "BT_ADDR": 0x400000, "FL_PROTECT": 0x3FFFFF}
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
    ("id", "cap_cqs", "value"): "CQS",
    ("id", "cap_vectors", "value"): "VECTORS",
    ("id", "cap_windows", "value"): "WINDOWS",
    ("admin", "status", "busy"): "ADMIN_BUSY",
    ("admin", "status", "code"): "ADMIN_CODE",
    ("flash", "geometry", "size_log2"): "FL_SIZE",
    ("flash", "geometry", "sector_log2"): "FL_SECTOR",
    ("flash", "geometry", "page_log2"): "FL_PAGE",
    ("flash", "geometry", "quad"): "FL_QUAD",
    ("flash", "status", "busy"): "FL_BUSY",
    ("flash", "status", "boot"): "FL_BOOT",
    ("flash", "status", "code"): "FL_CODE",
    ("flash", "boot_status", "slot"): "BT_SLOT",
    ("flash", "boot_status", "done"): "BT_DONE",
    ("flash", "boot_status", "reason"): "BT_REASON",
    ("flash", "boot_status", "valid"): "BT_VALID",
    ("flash", "boot_status", "present"): "BT_PRESENT",
    ("flash", "boot_status", "confirmed"): "BT_CONFIRMED",
    ("flash", "boot_status", "tried"): "BT_TRIED",
    ("flash", "boot_version", "value"): "BT_VERSION",
    ("flash", "boot_security", "value"): "BT_SECURITY",
    ("flash", "boot_build", "value"): "BT_BUILD",
    ("flash", "boot_seq", "value"): "BT_SEQ",
    ("flash", "boot_addr", "value"): "BT_ADDR",
    ("flash", "protect", "value"): "FL_PROTECT",
}
# Each external region's responder in the wrapper answers a read at region
# offset a with EXT_READ_TAG + index << 20 + a (index: the region's place in
# the map's list), so a read that reaches the wrong region or offset shows.
EXT_READ_TAG = 0xE0000000


# --- the cocotb side ---------------------------------------------------------------


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.map = json.loads(os.environ[MAP_ENV])
        self.counters = self.map["counters"]
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        dut.incr.value = 0
        if self.map["we_ports"]:
            dut.hw_we.value = 0
            dut.hw_value.value = 0
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

    def holes(self) -> list[int]:
        """Addresses no register and no external region occupies: every one
        in the first 0x1000 octets and the doorbells' header page (where the
        registers are), and 256 of the rest (the map spans 128 KiB; reading
        it all on every snapshot would make the case slow on Icarus)."""
        regs = set(self.map["registers"])
        ext = [(e["base"], e["base"] + e["size"]) for e in self.map["externals"]]
        free = [a for a in range(0, self.map["addr_span"], 4)
                if a not in regs and not any(lo <= a < hi for lo, hi in ext)]
        dense = [a for a in free if a < 0x1000 or any(b["base"] <= a < b["base"] + 0x1000
                                                      for b in self.map["blocks"])]
        rest = [a for a in free if a not in set(dense)]
        return dense + sorted(random.sample(rest, min(256, len(rest))))

    async def snapshot(self, extra=()) -> dict[int, int]:
        """Every register, low words of counters before their high words,
        and the addresses in extra."""
        return {a: await self.read(a) for a in list(self.map["registers"]) + list(extra)}


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
    writable = set(tb.map["writable"])
    ro = [a for a in tb.map["registers"] if a not in writable]
    for addr in ro:
        await tb.write(addr, 0xFFFFFFFF)
        await tb.write(addr, 0x00000000)
    after = await tb.snapshot()
    changed = {hex(a): (before[a], after[a]) for a in before if before[a] != after[a]}
    assert not changed, f"writes changed {changed}"
    dut._log.info("%d read-only words: writes ignored", len(ro))


@cocotb.test()
async def admin_arguments(dut):
    """The mailbox's argument words: the driver's writes read back and reach
    the device (hw_out), and the device's writes (hw_we, the command's
    outputs) replace them; nothing else changes."""
    tb = TB(dut)
    await tb.reset()
    we = tb.map["we_ports"]
    assert we, "the map has no device-written argument words"
    plain = {int(k): v for k, v in tb.map["plain"].items()}
    assert {w["offset"] for w in we} | set(plain) == set(tb.map["writable"]), "writable words other than the arguments"
    assert not {w["offset"] for w in we} & set(plain)
    before = await tb.snapshot()
    # The plain driver registers (the flash block's ADDR and LEN): they
    # keep exactly their fields' bits, and change nothing else.
    for off, mask in sorted(plain.items()):
        for v in (0xFFFFFFFF, 0x5A5A5A5A, 0):
            await tb.write(off, v)
            assert await tb.read(off) == v & mask, f"register at {off:#x} keeps {v & mask:#x} of {v:#x}"
        before[off] = 0
    for w in we:
        v = random.getrandbits(32)
        await tb.write(w["offset"], v)
        assert await tb.read(w["offset"]) == v, f"argument at {w['offset']:#x}: the driver's write"
        got = getattr(dut, f"hw_out{w['bit']}").value.integer
        assert got == v, f"argument at {w['offset']:#x}: the device sees {got:#x}, the driver wrote {v:#x}"
        before[w["offset"]] = v
        out = random.getrandbits(32)
        await FallingEdge(dut.clk)
        dut.hw_value.value = out
        dut.hw_we.value = 1 << w["bit"]
        await FallingEdge(dut.clk)
        dut.hw_we.value = 0
        assert await tb.read(w["offset"]) == out, f"argument at {w['offset']:#x}: the device's write"
        before[w["offset"]] = out
    assert await tb.snapshot() == before, "an argument write changed another register"


@cocotb.test()
async def external_regions(dut):
    """The admin CMD, the vectors and the doorbells are the device's: each
    write reaches it as one strobe with the offset within the region and
    the data, and each read is answered by it (the wrapper's responder),
    never by storage in the block."""
    tb = TB(dut)
    await tb.reset()
    exts = tb.map["externals"]
    names = {e["name"] for e in exts}
    assert {"admin.cmd", "vectors.vec", "doorbells.cq_db", "doorbells.qp_db"} <= names, names
    writes = [0] * len(exts)
    for i, e in enumerate(exts):
        words = e["size"] // 4
        for off in sorted({0, 4 * (words - 1), 4 * random.randrange(words)}):
            v = random.getrandbits(32)
            await tb.write(e["base"] + off, v)
            writes[i] += 1
            for j in range(len(exts)):
                got = getattr(dut, f"ext{j}_writes").value.integer
                assert got == writes[j], f"{exts[j]['name']}: {got} write strobes, want {writes[j]}"
            assert getattr(dut, f"ext{i}_addr").value.integer == off, f"{e['name']}: offset"
            assert getattr(dut, f"ext{i}_data").value.integer == v, f"{e['name']}: data"
            got = await tb.read(e["base"] + off)
            want = EXT_READ_TAG | i << 20 | off
            assert got == want, f"{e['name']} +{off:#x}: read {got:#x}, want {want:#x}"
    dut._log.info("external regions: %s", ", ".join(f"{e['name']} at {e['base']:#x}" for e in exts))


@cocotb.test()
async def outside_the_map(dut):
    tb = TB(dut)
    await tb.reset()
    await pulse_counters(tb, 20)
    holes = tb.holes()
    assert holes, "the map has no unused address"
    before = await tb.snapshot(holes)
    for a in holes:
        r = await tb.axil.read(a, 4)
        assert r.resp == AxiResp.OKAY, f"read at {a:#x}: {r.resp}"
        assert int.from_bytes(r.data, "little") == 0, f"read at {a:#x}: {r.data.hex()}"
        await tb.write(a, 0xA5A5A5A5)
    assert await tb.snapshot(holes) == before, "a write outside the map changed a register"
    dut._log.info("%d unused words: read 0, OKAY; writes OKAY and ignored", len(holes))


# --- the pytest side ---------------------------------------------------------------


def describe_map():
    """Everything the bench expects, from the compiled RDL."""
    import sys

    from systemrdl.node import RegfileNode, RegNode

    sys.path.insert(0, str(hdlsim.REPO_ROOT / "scripts"))
    import regs  # scripts/regs.py

    top = regs.compile_map()
    regs.check_chain(top)
    blocks, counters, registers, id_words, hw_ports, incr_ports = [], [], [], {}, [], []
    writable, we_ports, externals = [], [], []
    plain: dict[int, int] = {}
    plain_ports: list[str] = []
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
            if reg.external:
                # A region (or register) the device implements: the block
                # passes each access through (req, addr, data) and waits for
                # the device's acknowledge.
                size = reg.total_size if isinstance(reg, RegfileNode) else reg.size
                externals.append({
                    "name": f"{blk.inst_name}.{reg.inst_name}", "base": reg.absolute_address,
                    "size": size, "port": f"{blk.inst_name}_{reg.inst_name}",
                    "addr_w": (size - 1).bit_length() if isinstance(reg, RegfileNode) else 0,
                })
                continue
            assert isinstance(reg, RegNode), f"{reg.get_path()}: the bench knows registers and external regions"
            for w in range(0, reg.size, 4):
                registers.append(reg.absolute_address + w)
            if reg.has_sw_writable:
                writable.append(reg.absolute_address)
                if not any(f.get_property("we") for f in reg.fields()):
                    # A plain driver register (sw rw, hw r): what it keeps.
                    plain[reg.absolute_address] = sum(((1 << f.width) - 1) << f.low
                                                      for f in reg.fields() if f.is_sw_writable)
                    # Its outputs to the device, left open in the wrapper
                    # (peakrdl-etana: one port for a one-field register).
                    fs = [f for f in reg.fields() if f.is_sw_writable]
                    plain_ports += ([f"hwif_out_{blk.inst_name}_{reg.inst_name}"] if len(fs) == 1 else
                                    [f"hwif_out_{blk.inst_name}_{reg.inst_name}_{f.inst_name}" for f in fs])
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
                elif f.get_property("we"):
                    # Written by the device under a write enable (the admin
                    # mailbox's outputs): the wrapper's hw_value, hw_we[k].
                    fixed = False
                    we_ports.append({"port": port, "width": f.width, "bit": len(we_ports),
                                     "offset": reg.absolute_address})
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
            "addr_span": 1 << (top.size - 1).bit_length(), "hw_ports": hw_ports,
            "writable": writable, "we_ports": we_ports, "externals": externals,
            "plain": {str(k): v for k, v in plain.items()}, "plain_ports": plain_ports}


def wrapper(m) -> str:
    """rnic_regs_tb: rnic_regs with its hardware-driven fields tied to
    parameters, its counter increments on the input `incr`, the device's
    writes of the mailbox outputs on hw_value/hw_we, and a responder for
    each external region that acknowledges at once, answers reads with
    EXT_READ_TAG + index << 20 + offset and records its writes
    (ext<i>_writes, ext<i>_addr, ext<i>_data)."""
    aw = (m["addr_span"] - 1).bit_length()
    n = len(m["counters"])
    params = ",\n".join(f"    parameter [31:0] {p} = 32'd{v}" for p, v in PARAMS.items())
    ports = [f"    input  wire [{n - 1}:0] incr"]
    conns = []
    body = []
    for c in m["counters"]:
        conns.append(f"        .{c['port']}_incr(incr[{c['bit']}])")
        if c["incrvalue"]:
            ports.append(f"    input  wire [{c['incrwidth'] - 1}:0] {c['incrvalue']}")
            conns.append(f"        .{c['port']}_incrvalue({{{c['width'] - c['incrwidth']}'d0, {c['incrvalue']}}})")
    for port, width, param in m["hw_ports"]:
        conns.append(f"        .{port}({param}[{width - 1}:0])")
    if m["we_ports"]:
        ports.append("    input  wire [31:0] hw_value")
        ports.append(f"    input  wire [{len(m['we_ports']) - 1}:0] hw_we")
        for w in m["we_ports"]:
            conns.append(f"        .{w['port']}(hw_value[{w['width'] - 1}:0])")
            conns.append(f"        .{w['port']}_we(hw_we[{w['bit']}])")
            # What the device reads: the argument the driver wrote.
            ports.append(f"    output wire [{w['width'] - 1}:0] hw_out{w['bit']}")
            conns.append(f"        .{w['port'].replace('hwif_in_', 'hwif_out_', 1)}(hw_out{w['bit']})")
    for port in m["plain_ports"]:
        conns.append(f"        .{port}()")
    for i, e in enumerate(m["externals"]):
        o, inp = f"hwif_out_{e['port']}", f"hwif_in_{e['port']}"
        addr = f"{o}_addr" if e["addr_w"] else "1'b0"
        aw_e = max(e["addr_w"], 1)
        body.append(
            f"wire {o}_req, {o}_req_is_wr;\n"
            + (f"wire [{aw_e - 1}:0] {o}_addr;\n" if e["addr_w"] else "")
            + f"wire [31:0] {o}_wr_data, {o}_wr_biten;\n"
            f"reg [31:0] ext{i}_writes_r, ext{i}_addr_r, ext{i}_data_r;\n"
            f"always @(posedge clk) begin\n"
            f"    if (rst) ext{i}_writes_r <= 32'd0;\n"
            f"    else if ({o}_req && {o}_req_is_wr) begin\n"
            f"        ext{i}_writes_r <= ext{i}_writes_r + 32'd1;\n"
            f"        ext{i}_addr_r <= 32'({addr});\n"
            f"        ext{i}_data_r <= {o}_wr_data;\n"
            f"    end\nend\n"
            f"assign ext{i}_writes = ext{i}_writes_r;\n"
            f"assign ext{i}_addr = ext{i}_addr_r;\n"
            f"assign ext{i}_data = ext{i}_data_r;\n")
        for sig in ("writes", "addr", "data"):
            ports.append(f"    output wire [31:0] ext{i}_{sig}")
        conns += [f"        .{o}_req({o}_req)", f"        .{o}_req_is_wr({o}_req_is_wr)",
                  f"        .{o}_wr_data({o}_wr_data)", f"        .{o}_wr_biten({o}_wr_biten)",
                  f"        .{inp}_wr_ack({o}_req && {o}_req_is_wr)",
                  f"        .{inp}_rd_ack({o}_req && !{o}_req_is_wr)",
                  f"        .{inp}_rd_data(32'h{EXT_READ_TAG | i << 20:08x} | 32'({addr}))"]
        if e["addr_w"]:
            conns.append(f"        .{o}_addr({o}_addr)")
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
        + "\n".join(body) + "\n"
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
    env_map = {k: m[k] for k in ("blocks", "counters", "registers", "id_words", "addr_span",
                                 "writable", "we_ports", "externals", "plain")}
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
