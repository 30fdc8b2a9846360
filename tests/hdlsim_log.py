"""Copy cocotb's log into a file of the case's build directory.

Loaded by the simulator ahead of the testbench module (hdlsim.run() lists
it first); it has no tests of its own. cocotb's JUnit file says only that a
test failed and with which seed; the assertion and its traceback are in the
log, which pytest captures and a CI summary cuts short. hdlsim.run() reads
the failures back from this file (HDLSIM_LOG) into its own error message.
"""

import logging
import os

LOG_ENV = "HDLSIM_LOG"

_path = os.environ.get(LOG_ENV)
if _path:
    _handler = logging.FileHandler(_path, mode="w")
    _handler.setLevel(logging.INFO)
    _handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.getLogger("cocotb").addHandler(_handler)
