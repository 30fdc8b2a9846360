"""What the transmit testbenches (tests/ddp_tx, tests/rnic_tx) share about
RDMAP messages: the opcodes, the header sizes, and ddp_tx's error codes
named by the Go stack's refusals (the oracle's rdmap_segments answers a
refused message with the Go error text; hw/rtl/ddp_tx.v's header lists the
codes)."""

from __future__ import annotations

import re

# RDMAP opcodes (RFC 5040).
WRITE, READ_REQ, READ_RESP, SEND, SEND_INV, SEND_SE, SEND_SE_INV, TERMINATE = range(8)
TAGGED = (WRITE, READ_RESP)
INVALIDATES = (SEND_INV, SEND_SE_INV)
# DDP header octets, tagged and untagged (RFC 5041 4.2, 4.3), and a Read
# Request's whole segment (18 + 28, RFC 5040 4.4).
TAGGED_HDR, UNTAGGED_HDR, READ_REQ_SEG = 14, 18, 46

ERROR_CODES = [
    (re.compile(r"^rdmap: cannot send opcode "), 1),
    (re.compile(r"^rdmap: .* cannot carry an Invalidate STag$"), 2),
    (re.compile(r"^rdmap: malformed Terminate: "), 3),
    (re.compile(r"^rdmap: (RDMA Read Request|Terminate) of \d+ octets does not fit one segment"), 4),
    (re.compile(r"^ddp: MULPDU \d+ leaves no room for payload"), 5),
    (re.compile(r"^ddp: \d+ octets at TO 0x[0-9a-f]+ wrap the 64-bit TO$"), 6),
]


def error_code(refused: str) -> int:
    """ddp_tx's err_code for a message the Go stack refused with `refused`."""
    for pattern, code in ERROR_CODES:
        if pattern.search(refused):
            return code
    raise AssertionError(f"the Go stack refused with {refused!r}, which no error code names")
