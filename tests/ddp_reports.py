"""What the placement testbenches (tests/ddp_rx, tests/rnic_rx) share: the
reports ddp_rx puts out on m_cpl and m_err (rnic_rx passes them through
under the same names), read as tuples, and the Go oracle's events
(ddp_place, ddp_place_stream) in the same form, so that the two compare
with ==."""

from __future__ import annotations

from rdmap_tx import READ_REQ


def completion(dut) -> tuple:
    """The completion on m_cpl this clock; a Read Request's 28-octet body
    (m_cpl_rr, octet j in bits 8j+7..8j) as hex, other opcodes' as ""."""
    op = int(dut.m_cpl_opcode.value)
    rr = int(dut.m_cpl_rr.value).to_bytes(28, "little").hex() if op == READ_REQ else ""
    return ("completion", op, int(dut.m_cpl_tagged.value), int(dut.m_cpl_stag.value), int(dut.m_cpl_qn.value),
            int(dut.m_cpl_msn.value), int(dut.m_cpl_len.value), int(dut.m_cpl_id.value),
            int(dut.m_cpl_inv_stag.value), rr)


def error(dut) -> tuple:
    """The stream error on m_err this clock."""
    return ("error", int(dut.m_err_layer.value), int(dut.m_err_etype.value), int(dut.m_err_code.value))


def from_oracle(e: dict) -> tuple:
    """An oracle event (kind "completion" or "error") as the tuple above."""
    if e["kind"] == "error":
        return ("error", e["layer"], e["etype"], e["code"])
    return ("completion", e["opcode"], int(e["tagged"]), e["stag"], e["qn"], e["msn"], e["len"], e["id"],
            e["inv_stag"], e["rr"])
