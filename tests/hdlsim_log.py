"""Copy cocotb's log into a file of the case's build directory.

Loaded by the simulator ahead of the testbench module (hdlsim.run() lists
it first); it has no tests of its own. A failing test's assertion and
traceback are in cocotb's log, which pytest captures and a CI summary cuts
short; hdlsim.run() reads the failures and the seed back from this file
(HDLSIM_LOG) into its own error message. cocotb logs its seed before it
imports this module, so the first line here says it again.
"""

import logging
import os

import cocotb

LOG_ENV = "HDLSIM_LOG"

_path = os.environ.get(LOG_ENV)
if _path:
    _handler = logging.FileHandler(_path, mode="w")
    _handler.setLevel(logging.INFO)
    _handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    _log = logging.getLogger("cocotb")
    _log.addHandler(_handler)
    _log.info("RANDOM_SEED=%s", cocotb.RANDOM_SEED)
