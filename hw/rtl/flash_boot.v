// flash_boot: the boot logic (docs/firmware-update.md). At reset, and at
// each start pulse (a warm reboot), it reads the three slots' header
// sectors and payloads from the configuration flash through the shared
// controller (spi_flash_ctrl; rnic_flash locks the host out meanwhile),
// decides which image boots and why, records a trial attempt in flash when
// it boots an unconfirmed slot, and reports the decision.
//
// A slot (golden at 0, A at 1 << SLOT_LOG2, B at 2 << SLOT_LOG2) is valid
// when its header sector holds:
//   - the signed image header (image-format: magic "RIMG", format version
//     1, signed header length 256, flags 0, payload length 1 .. slot size
//     minus the header sector), octets 0x000..0x13F;
//   - the commit marker at 0x200: magic "RCMT", sequence number, CRC32c
//     of the 320 header octets, CRC32c of the payload, CRC32c of the
//     marker's first 16 octets;
// and the CRC32c of the payload (from the next sector on) matches. The
// updater writes payload, header, marker in that order, after erasing the
// header sector first, so a slot an update or a power cut left torn fails
// one of these checks (a partly erased or programmed header or marker
// changes its CRC). The signature is the loader's business, checked before
// any erase; the CRCs here catch what power cuts and bit rot do.
//
// Trial state, in the header sector, written by programming 1 to 0 only:
// the confirm octet at 0x220 (0x00: the driver confirmed the image) and
// TRIALS attempt octets at 0x240 (each not 0xFF: one boot tried). The
// decision: the valid update slot with the higher sequence number is the
// newest; confirmed, it boots; unconfirmed with attempts left, it boots as
// a trial (an attempt octet is programmed to 0x00 first); unconfirmed with
// none left, the other update slot boots if it is valid and confirmed,
// else golden; with no valid update slot, golden; with golden invalid too,
// nothing (SLOT none). Reasons: flash_defs.vh's FWHY_*.
//
// Latency: three header sector reads (608 + TRIALS octets each) and the
// valid slots' payloads at the controller's read rate (quad: an octet
// every 2 SCK), plus one page program for a trial.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module flash_boot #(
    parameter SLOT_LOG2 = 22,
    parameter TRIALS    = 1,
    parameter QUAD      = 1
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        start,
    output wire        busy,

    output wire        c_valid,
    input  wire        c_ready,
    output reg  [2:0]  c_op,
    output wire        c_quad,
    output reg  [23:0] c_addr,
    output reg  [23:0] c_len,
    input  wire        c_done,
    input  wire        c_rd_valid,
    input  wire [7:0]  c_rd_data,

    output reg         res_done,
    output reg  [1:0]  res_slot,
    output reg  [3:0]  res_reason,
    output reg  [2:0]  res_valid,
    output reg  [2:0]  res_present,
    output reg  [2:0]  res_confirmed,
    output reg  [2:0]  res_tried,
    output reg  [31:0] res_version,
    output reg  [31:0] res_security,
    output reg  [31:0] res_build,
    output reg  [31:0] res_seq,
    output reg  [31:0] res_addr
);
/* verilator lint_off UNUSEDPARAM */
`include "flash_defs.vh"
/* verilator lint_on UNUSEDPARAM */

initial begin
    if (SLOT_LOG2 < 13 || SLOT_LOG2 > 22) begin
        $error("flash_boot: SLOT_LOG2 must be 13 to 22 (three slots in a 16 MiB part), got %0d", SLOT_LOG2);
        $finish;
    end
    if (TRIALS < 1 || TRIALS > 8) begin
        $error("flash_boot: TRIALS must be 1 to 8, got %0d", TRIALS);
        $finish;
    end
end

localparam [31:0] MAGIC_IMG = 32'h474D4952;   // "RIMG" read little-endian
localparam [31:0] MAGIC_CMT = 32'h544D4352;   // "RCMT"
localparam [31:0] FMT_LEN   = {16'd256, 16'd1};   // signed header length, format version
localparam [23:0] HDR_LEN   = 24'd320;
localparam [23:0] HS_LEN    = FHS_TRIALS + TRIALS;  // octets of the header sector read
localparam [31:0] PAY_MAX   = (32'd1 << SLOT_LOG2) - {8'd0, FHS_PAYLOAD};
localparam [31:0] CRC_POLY  = 32'h82F63B78;   // CRC32c, reflected (as iwarp/crc32c)

localparam [2:0] BT_IDLE = 3'd0, BT_HDR = 3'd1, BT_HDR_WAIT = 3'd2, BT_PAY = 3'd3, BT_PAY_WAIT = 3'd4,
                 BT_DECIDE = 3'd5, BT_MARK = 3'd6, BT_MARK_WAIT = 3'd7;

// One octet into a reflected CRC32c register: the loop is the GF(2) map,
// computed, not written out.
function [31:0] crc_octet(input [31:0] c, input [7:0] d);
    integer i;
    reg [31:0] x;
    begin
        x = c ^ {24'd0, d};
        for (i = 0; i < 8; i = i + 1) x = x[0] ? (x >> 1) ^ CRC_POLY : x >> 1;
        crc_octet = x;
    end
endfunction

reg  [2:0]  st_reg;
reg  [1:0]  slot_reg;               // the slot being read: 0 golden, 1 A, 2 B
reg  [23:0] idx_reg;                // octet of the current read
/* verilator lint_off UNUSEDSIGNAL */
reg  [31:0] sh_reg;                 // the last four octets, little-endian ([7:0] leaves with the next)
/* verilator lint_on UNUSEDSIGNAL */
reg  [31:0] crc_reg;
// What the header sector read found.
reg  [31:0] h_magic, h_fmt, h_flags, h_paylen, m_magic, m_hcrc, m_pcrc, m_mcrc;
reg  [31:0] c_hcrc, c_mcrc;         // the CRCs computed
reg  [7:0]  h_confirm;
reg  [7:0]  h_used;                 // attempt octets not 0xFF
// Per slot.
reg  [2:0]  valid_reg, present_reg, conf_reg, tried_reg;
reg  [31:0] ver_mem [0:2];
reg  [31:0] sec_mem [0:2];
reg  [31:0] bld_mem [0:2];
reg  [31:0] seq_mem [0:2];
reg  [2:0]  free_mem [0:2];         // the first unused attempt octet

wire [31:0] w_next = {c_rd_data, sh_reg[31:8]};
wire        in_pay = st_reg == BT_PAY_WAIT;
wire [31:0] crc_in = (idx_reg == 24'd0 || (!in_pay && idx_reg == FHS_MARKER)) ? 32'hFFFFFFFF : crc_reg;
wire [31:0] crc_next = crc_octet(crc_in, c_rd_data);
wire [23:0] base = {slot_reg, 22'd0} >> (22 - SLOT_LOG2);

assign busy = st_reg != BT_IDLE;
// The command's arguments are registered in the state's first clock;
// it is offered from the second (arm_reg).
reg arm_reg;
assign c_valid = arm_reg && (st_reg == BT_HDR || st_reg == BT_PAY || st_reg == BT_MARK);
assign c_quad = QUAD != 0 && c_op == FOP_READ;

wire hdr_ok = h_magic == MAGIC_IMG && h_fmt == FMT_LEN && h_flags == 32'd0 && h_paylen != 32'd0 &&
              h_paylen <= PAY_MAX;
wire mark_ok = m_magic == MAGIC_CMT && m_mcrc == c_mcrc && m_hcrc == c_hcrc;
wire [7:0] tried_mask = (TRIALS >= 8) ? 8'hFF : ((8'd1 << TRIALS) - 8'd1);

// The decision, from what the three reads found.
wire       newest_b = valid_reg[2] && (!valid_reg[1] || seq_mem[2] > seq_mem[1]);
wire [1:0] newest = newest_b ? FSLOT_B : FSLOT_A;
wire [1:0] other = newest_b ? FSLOT_A : FSLOT_B;
wire       any_update = valid_reg[1] || valid_reg[2];
wire       torn = (present_reg[1] && !valid_reg[1]) || (present_reg[2] && !valid_reg[2]);
reg  [1:0] d_slot;
reg  [3:0] d_reason;
reg        d_trial;
always @(*) begin
    d_trial = 1'b0;
    d_slot = valid_reg[0] ? FSLOT_GOLDEN : FSLOT_NONE;
    d_reason = valid_reg[0] ? FWHY_GOLDEN : FWHY_NOTHING;
    if (any_update) begin
        if (conf_reg[newest]) begin
            d_slot = newest;
            d_reason = torn ? FWHY_INVALID : FWHY_CONFIRMED;
        end else if (!tried_reg[newest]) begin
            d_slot = newest;
            d_reason = FWHY_TRIAL;
            d_trial = 1'b1;
        end else if (valid_reg[other] && conf_reg[other]) begin
            d_slot = other;
            d_reason = FWHY_UNCONFIRMED;
        end else begin
            d_slot = valid_reg[0] ? FSLOT_GOLDEN : FSLOT_NONE;
            d_reason = valid_reg[0] ? FWHY_UNCONFIRMED : FWHY_NOTHING;
        end
    end
end
wire [23:0] d_base = {d_slot, 22'd0} >> (22 - SLOT_LOG2);

always @(posedge clk) begin
    case (st_reg)
    BT_IDLE: begin
        arm_reg <= 1'b0;
        if (start) begin
            st_reg <= BT_HDR;
            slot_reg <= 2'd0;
        end
    end
    BT_HDR: begin
        c_op <= FOP_READ;
        c_addr <= base;
        c_len <= HS_LEN;
        idx_reg <= 24'd0;
        h_used <= 8'd0;
        arm_reg <= 1'b1;
        if (c_valid && c_ready) begin
            arm_reg <= 1'b0;
            st_reg <= BT_HDR_WAIT;
        end
    end
    BT_HDR_WAIT, BT_PAY_WAIT: begin
        if (c_rd_valid) begin
            idx_reg <= idx_reg + 24'd1;
            sh_reg <= w_next;
            crc_reg <= crc_next;
            if (!in_pay) begin
                case (idx_reg)
                24'd3: h_magic <= w_next;
                24'd7: h_fmt <= w_next;
                24'd11: h_flags <= w_next;
                24'd15: ver_mem[slot_reg] <= w_next;
                24'd19: bld_mem[slot_reg] <= w_next;
                24'd23: sec_mem[slot_reg] <= w_next;
                24'd27: h_paylen <= w_next;
                FHS_MARKER + 24'd3: m_magic <= w_next;
                FHS_MARKER + 24'd7: seq_mem[slot_reg] <= w_next;
                FHS_MARKER + 24'd11: m_hcrc <= w_next;
                FHS_MARKER + 24'd15: m_pcrc <= w_next;
                FHS_MARKER + 24'd19: m_mcrc <= w_next;
                FHS_CONFIRM: h_confirm <= c_rd_data;
                default: ;
                endcase
                if (idx_reg == HDR_LEN - 24'd1) c_hcrc <= ~crc_next;
                if (idx_reg == FHS_MARKER + 24'd15) c_mcrc <= ~crc_next;
                if (idx_reg >= FHS_TRIALS && c_rd_data != 8'hFF) h_used[idx_reg[2:0]] <= 1'b1;
            end
        end
        if (c_done && !in_pay) begin
            present_reg[slot_reg] <= h_magic != 32'hFFFFFFFF || m_magic != 32'hFFFFFFFF;
            conf_reg[slot_reg] <= h_confirm == 8'h00;
            tried_reg[slot_reg] <= (h_used & tried_mask) == tried_mask;
            free_mem[slot_reg] <= !h_used[0] ? 3'd0 : !h_used[1] ? 3'd1 : !h_used[2] ? 3'd2 : !h_used[3] ? 3'd3 :
                                  !h_used[4] ? 3'd4 : !h_used[5] ? 3'd5 : !h_used[6] ? 3'd6 : 3'd7;
            valid_reg[slot_reg] <= 1'b0;
            if (hdr_ok && mark_ok) st_reg <= BT_PAY;
            else if (slot_reg == 2'd2) st_reg <= BT_DECIDE;
            else begin
                slot_reg <= slot_reg + 2'd1;
                st_reg <= BT_HDR;
            end
        end
        if (c_done && in_pay) begin
            valid_reg[slot_reg] <= ~crc_reg == m_pcrc;
            if (slot_reg == 2'd2) st_reg <= BT_DECIDE;
            else begin
                slot_reg <= slot_reg + 2'd1;
                st_reg <= BT_HDR;
            end
        end
    end
    BT_PAY: begin
        c_op <= FOP_READ;
        c_addr <= base + FHS_PAYLOAD;
        c_len <= h_paylen[23:0];
        idx_reg <= 24'd0;
        arm_reg <= 1'b1;
        if (c_valid && c_ready) begin
            arm_reg <= 1'b0;
            st_reg <= BT_PAY_WAIT;
        end
    end
    BT_DECIDE: begin
        res_slot <= d_slot;
        res_reason <= d_reason;
        res_valid <= valid_reg;
        res_present <= present_reg;
        res_confirmed <= conf_reg & 3'b110;
        res_tried <= tried_reg & 3'b110;
        res_addr <= d_slot == FSLOT_NONE ? 32'd0 : {8'd0, d_base + FHS_PAYLOAD};
        res_version <= d_slot == FSLOT_NONE ? 32'd0 : ver_mem[d_slot];
        res_security <= d_slot == FSLOT_NONE ? 32'd0 : sec_mem[d_slot];
        res_build <= d_slot == FSLOT_NONE ? 32'd0 : bld_mem[d_slot];
        res_seq <= d_slot == FSLOT_NONE ? 32'd0 : seq_mem[d_slot];
        c_op <= FOP_PROGRAM;
        c_addr <= d_base + FHS_TRIALS + {21'd0, free_mem[d_slot]};
        c_len <= 24'd1;
        arm_reg <= 1'b1;
        if (d_trial) st_reg <= BT_MARK;
        else begin
            st_reg <= BT_IDLE;
            res_done <= 1'b1;
        end
    end
    BT_MARK: if (c_ready) begin
        arm_reg <= 1'b0;
        st_reg <= BT_MARK_WAIT;
    end
    default: begin  // BT_MARK_WAIT
        if (c_done) begin
            st_reg <= BT_IDLE;
            res_done <= 1'b1;
        end
    end
    endcase
    if (rst) begin
        // Every reset is a power-on: the boot logic runs first.
        st_reg <= BT_HDR;
        slot_reg <= 2'd0;
        arm_reg <= 1'b0;
        c_op <= 3'd0;
        res_done <= 1'b0;
        res_slot <= FSLOT_NONE;
        res_reason <= FWHY_NONE;
        res_valid <= 3'd0;
        res_present <= 3'd0;
        res_confirmed <= 3'd0;
        res_tried <= 3'd0;
        res_version <= 32'd0;
        res_security <= 32'd0;
        res_build <= 32'd0;
        res_seq <= 32'd0;
        res_addr <= 32'd0;
    end
end

endmodule

`resetall
