"""The data widths each simulator runs in `make test` (tests/hdlsim.py's
width_cases), with no dependencies so that scripts/hw_figures.py's bench
check (system python3) reads the same table: a baseline figure of a width
make test does not run is "not run", not missing.

Every simulator runs the two ends of the range, which is where
width-dependent code differs most (a header across beats at 64, whole
headers and several FPDUs in one beat at 512), and the Verilog/VHDL twin
comparison pairs them. The middle widths (128, 256) run under
HW_ALL_WIDTHS=1 (`make test-hw-full`), on every simulator; a testbench may
ask for more in make test (crc32c runs every width everywhere).
"""

from __future__ import annotations

import os

DEFAULT_SIM_WIDTHS = {
    "verilator": (64, 512),
    "icarus": (64, 512),
    "ghdl": (64, 512),
}


def all_widths_requested() -> bool:
    return os.environ.get("HW_ALL_WIDTHS", "") not in ("", "0")


def runs_by_default(sim: str, width: int) -> bool:
    """Whether make test runs width on sim unless a testbench asks for more."""
    return all_widths_requested() or width in DEFAULT_SIM_WIDTHS.get(sim, (width,))
