"""Work around lost writes to top-level inputs under Verilator 5.006.

Loaded by the simulator (hdlsim.run() lists it ahead of the testbench module,
for Verilator only); it has no tests of its own.

The problem: in Verilator 5.006's VPI, a handle obtained by iterating the top
module's scope (what cocotb does when it discovers the children of `dut`, and
so what cocotb-bus and cocotbext-axi trigger through dir(dut)) refers to the
module's internal copy of a port, which the model overwrites from the real
port on every evaluation. Writes through such a handle are silently lost:
an AXI-Stream source never raises tvalid, a reset never asserts. A lookup by
name finds the real port (vpi_handle_by_name searches the TOP ports first).
cocotb keeps one handle per name, the first one made, so binding every port by
name before anything iterates makes all later uses get the working handle.

hdlsim.run() reads the port names from the Verilator model's Vtop.h and
passes them in HDLSIM_TOP_PORTS; cocotb.top is already set when cocotb
imports the test modules.
"""

import os

import cocotb

PORTS_ENV = "HDLSIM_TOP_PORTS"


def bind_top_ports(top) -> None:
    names = [n for n in os.environ.get(PORTS_ENV, "").split(",") if n]
    if not names:
        raise RuntimeError(f"{PORTS_ENV} is empty: hdlsim.run() should have set it")
    for name in names:
        # Attribute access looks the port up by name and caches the handle.
        getattr(top, name)


if cocotb.top is not None:
    bind_top_ports(cocotb.top)
