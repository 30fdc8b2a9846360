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


def error_tuple(layer: int, etype: int, code: int, hdrct: int, seglen: int, hdr: int) -> tuple:
    """An m_err report as a tuple: layer, etype, code, then what the
    Terminate copies (RFC 5040 4.8): M, D, the segment length (0 without
    M) and the DDP header as hex, 14 or 18 octets by its T bit ("" without
    D)."""
    m, d = hdrct >> 1 & 1, hdrct & 1
    raw = hdr.to_bytes(18, "little")
    h = raw[:14 if raw[0] & 0x80 else 18].hex() if d else ""
    return ("error", layer, etype, code, m, d, seglen, h)


def error(dut) -> tuple:
    """The stream error on m_err this clock, with m_err_hdrct/seglen/hdr."""
    return error_tuple(int(dut.m_err_layer.value), int(dut.m_err_etype.value), int(dut.m_err_code.value),
                       int(dut.m_err_hdrct.value), int(dut.m_err_seglen.value), int(dut.m_err_hdr.value))


def from_oracle(e: dict) -> tuple:
    """An oracle event (kind "completion" or "error") as the tuple above."""
    if e["kind"] == "error":
        # The Terminate the Go model sends for the error
        # (rdmap.Error.Terminate): its M and D, segment length, DDP header.
        return ("error", e["layer"], e["etype"], e["code"], int(e["term_m"]), int(e["term_d"]), e["seg_len"],
                e["ddp_hdr"])
    return ("completion", e["opcode"], int(e["tagged"]), e["stag"], e["qn"], e["msn"], e["len"], e["id"],
            e["inv_stag"], e["rr"])
