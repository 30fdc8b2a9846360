// ddp_rx_decide: stage C2 of ddp_rx's check pipeline, the decision
// (hw/rtl/ddp_rx.v has the interface and the map of the stages).
//
// Takes C1b's results (b_*, bs_* from ddp_rx_check) and decides, in the
// order of ddp_rx.v's list of checks, whether the piece is placed, what it
// reports (K_* kind and ERR_* word in its delivery record) and the
// connection's new check context (r_cx, written back by ddp_rx_tables). A
// piece's table reads miss the effects of the three pieces ahead of it: C2
// takes those from the last three decisions instead (the context, the
// deliveries of each queue, the invalidated STag indexes), and looks the
// connection's B-response error bit up over C1b and C2 (herr_* from
// ddp_rx_deliver), with its cut bit (cut_* from ddp_rx_setup). Out: one placement descriptor per piece into dc_fifo
// (DC in ddp_rx_defs.vh; dc_out* to ddp_rx_setup), with the set-up sums
// for both addresses the decision may pick (pl_setup).
//
// Cycle behaviour: one decision a clock (c2_go); C2 holds only when
// dc_fifo is full (c_adv low).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_decide #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter STAG_AW = 12,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter BQ_AW = 4
) (
    clk,
    rst,
    herr_reg,
    herr_set,
    herr_set_conn,
    cut_reg,
    cut_set,
    cut_set_conn,
    c_adv,
    p1_conn,
    b_valid_reg,
    b_conn_reg,
    b_first_reg,
    b_early_reg,
    b_cx_reg,
    b_t_reg,
    b_l_reg,
    b_op_reg,
    b_stag_reg,
    b_msn_reg,
    b_msn1_reg,
    b_qn_reg,
    b_n_reg,
    b_hlen_reg,
    b_cerr_reg,
    b_cerr_code_reg,
    b_stag_bad_reg,
    b_assoc_bad_reg,
    b_acc_reg,
    b_wrap_reg,
    b_mo_gt_reg,
    b_rr_eq_reg,
    b_z_reg,
    b_id_reg,
    b_st_reg,
    bs_lt,
    bs_gt,
    bs_dt,
    bs_du,
    bs_mon,
    bs_long,
    bs_nobuf,
    bs_behind,
    dc_out_ready,
    dc_in_ready,
    c2_valid_reg,
    c2_conn_reg,
    c2_first_reg,
    c2_early_reg,
    e_st_reg,
    k_idx,
    r_inval,
    c_en,
    r_cx,
    c2_go,
    c2_decide,
    c2_err,
    c2_err_code,
    dc_out,
    dc_out_valid
);
reg [ST_W-2:0] e_st_next;
reg c2_early_next;
reg c2_first_next;
reg [CONN_W-1:0] c2_conn_next;
reg c2_valid_next;

`include "ddp_rx_defs.vh"

// Ports (declared after the localparams of ddp_rx_defs.vh their widths use).
input  wire                        clk;
input  wire                        rst;
input  wire [NCONN-1:0]            herr_reg;
input  wire                        herr_set;
input  wire [CONN_W-1:0]           herr_set_conn;
input  wire [NCONN-1:0]            cut_reg;
input  wire                        cut_set;
input  wire [CONN_W-1:0]           cut_set_conn;
input  wire                        c_adv;
input  wire [CONN_W-1:0]           p1_conn;
input  wire                        b_valid_reg;
input  wire [CONN_W-1:0]           b_conn_reg;
input  wire                        b_first_reg;
input  wire                        b_early_reg;
input  wire [CX_W-1:0]             b_cx_reg;
input  wire                        b_t_reg;
input  wire                        b_l_reg;
input  wire [3:0]                  b_op_reg;
input  wire [31:0]                 b_stag_reg;
input  wire [31:0]                 b_msn_reg;
input  wire [31:0]                 b_msn1_reg;
input  wire [1:0]                  b_qn_reg;
input  wire [15:0]                 b_n_reg;
input  wire [4:0]                  b_hlen_reg;
input  wire                        b_cerr_reg;
input  wire [15:0]                 b_cerr_code_reg;
input  wire                        b_stag_bad_reg;
input  wire                        b_assoc_bad_reg;
input  wire                        b_acc_reg;
input  wire                        b_wrap_reg;
input  wire                        b_mo_gt_reg;
input  wire                        b_rr_eq_reg;
input  wire [3:0]                  b_z_reg;
input  wire [ID_W-1:0]             b_id_reg;
input  wire [ST_W-2:0]             b_st_reg;
input  wire [72:0]                 bs_lt;
input  wire [72:0]                 bs_gt;
input  wire [72:0]                 bs_dt;
input  wire [72:0]                 bs_du;
input  wire [72:0]                 bs_mon;
input  wire [72:0]                 bs_long;
input  wire [3:0]                  bs_nobuf;
input  wire [3:0]                  bs_behind;
input  wire                        dc_out_ready;
output wire                        dc_in_ready;
output reg                         c2_valid_reg = 1'b0;
output reg  [CONN_W-1:0]           c2_conn_reg;
output reg                         c2_first_reg;
output reg                         c2_early_reg;
output reg  [ST_W-2:0]             e_st_reg;
output wire [STAG_AW-1:0]          k_idx;
output reg                         r_inval;
output reg                         c_en;
output reg  [CX_W-1:0]             r_cx;
output wire                        c2_go;
output wire                        c2_decide;
output wire                        c2_err;        // c2_decide of an error (K_ERR): ddp_rx's te_ram
output wire [15:0]                 c2_err_code;   // its ERR_* word
output wire [DC_W-1:0]             dc_out;
output wire                        dc_out_valid;

wire                  fifo_ready2_unused;   // second push port not used

// C2 registers.
reg [CX_W-1:0]         c2_cx_reg, c2_cx_next;
reg                    k_tagged_reg, k_tagged_next;
reg                    k_l_reg, k_l_next;
reg [3:0]              k_op_reg, k_op_next;
reg [31:0]             k_stag_reg, k_stag_next;
reg [31:0]             k_msn_reg, k_msn_next;
reg [31:0]             k_msn1_reg, k_msn1_next;
reg [1:0]              k_qn_reg, k_qn_next;
reg [15:0]             k_n_reg, k_n_next;
reg [4:0]              k_hlen_reg, k_hlen_next;
reg                    k_cerr_reg, k_cerr_next;
reg [15:0]             k_cerr_code_reg, k_cerr_code_next;
reg                    e_t_inv_reg, e_t_inv_next;
reg                    e_t_assoc_reg, e_t_assoc_next;
reg                    e_t_acc_reg, e_t_acc_next;
reg                    e_t_wrap_reg, e_t_wrap_next;
reg                    e_t_bounds_reg, e_t_bounds_next;
reg [3:0]              e_u_nobuf_reg, e_u_nobuf_next;
reg [3:0]              e_u_behind_reg, e_u_behind_next;
reg [3:0]              e_u_lorder_reg, e_u_lorder_next;
reg                    e_u_mo_reg, e_u_mo_next;
reg                    e_u_long_reg, e_u_long_next;
reg                    e_i_bad_reg, e_i_bad_next;
reg                    e_rr_bad_reg, e_rr_bad_next;
reg [ADDR_W-1:0]       e_dt_reg, e_dt_next;
reg [ADDR_W-1:0]       e_du_reg, e_du_next;
reg [31:0]             e_len_reg, e_len_next;
reg [ID_W-1:0]         e_id_reg, e_id_next;

always @* begin
    c2_valid_next = c2_valid_reg;
    c2_conn_next = c2_conn_reg;
    c2_first_next = c2_first_reg;
    c2_early_next = c2_early_reg;
    c2_cx_next = c2_cx_reg;
    k_tagged_next = k_tagged_reg;
    k_l_next = k_l_reg;
    k_op_next = k_op_reg;
    k_stag_next = k_stag_reg;
    k_msn_next = k_msn_reg;
    k_msn1_next = k_msn1_reg;
    k_qn_next = k_qn_reg;
    k_n_next = k_n_reg;
    k_hlen_next = k_hlen_reg;
    k_cerr_next = k_cerr_reg;
    k_cerr_code_next = k_cerr_code_reg;
    e_t_inv_next = e_t_inv_reg;
    e_t_assoc_next = e_t_assoc_reg;
    e_t_acc_next = e_t_acc_reg;
    e_t_wrap_next = e_t_wrap_reg;
    e_t_bounds_next = e_t_bounds_reg;
    e_dt_next = e_dt_reg;
    e_u_nobuf_next = e_u_nobuf_reg;
    e_u_behind_next = e_u_behind_reg;
    e_u_lorder_next = e_u_lorder_reg;
    e_u_mo_next = e_u_mo_reg;
    e_u_long_next = e_u_long_reg;
    e_du_next = e_du_reg;
    e_len_next = e_len_reg;
    e_id_next = e_id_reg;
    e_i_bad_next = e_i_bad_reg;
    e_rr_bad_next = e_rr_bad_reg;
    e_st_next = e_st_reg;
    if (c_adv) begin
        c2_valid_next = b_valid_reg;
        c2_conn_next = b_conn_reg;
        c2_first_next = b_first_reg;
        c2_early_next = b_early_reg;
        c2_cx_next = b_cx_reg;
        k_tagged_next = b_t_reg;
        k_l_next = b_l_reg;
        k_op_next = b_op_reg;
        k_stag_next = b_stag_reg;
        k_msn_next = b_msn_reg;
        k_msn1_next = b_msn1_reg;
        k_qn_next = b_qn_reg;
        k_n_next = b_n_reg;
        k_hlen_next = b_hlen_reg;
        k_cerr_next = b_cerr_reg;
        k_cerr_code_next = b_cerr_code_reg;
        // ddp.STagTable.checkLocked (RFC 5041 7.1, 8.2) for the whole
        // segment, and ddp.Sink.checkUntagged.
        e_t_inv_next = b_stag_bad_reg;
        e_t_assoc_next = b_assoc_bad_reg;
        e_t_acc_next = b_acc_reg;
        e_t_wrap_next = b_wrap_reg;
        e_t_bounds_next = bs_lt[71] || !bs_gt[71];
        e_dt_next = bs_dt[ADDR_W-1:0];
        e_u_nobuf_next = bs_nobuf;
        e_u_behind_next = bs_behind;
        e_u_lorder_next = {4{b_l_reg}} & ~b_z_reg;
        e_u_mo_next = b_mo_gt_reg;
        e_u_long_next = !bs_long[71];
        e_du_next = bs_du[ADDR_W-1:0];
        e_len_next = bs_mon[31:0];
        e_id_next = b_id_reg;
        // rdmap.Invalidate: ddp.STagTable.InvalidateRemote's checks.
        e_i_bad_next = b_stag_bad_reg || b_assoc_bad_reg;
        e_rr_bad_next = !b_rr_eq_reg;
        e_st_next = b_st_reg;
    end
end

always @(posedge clk) begin
    c2_valid_reg <= c2_valid_next;
    c2_conn_reg <= c2_conn_next;
    c2_first_reg <= c2_first_next;
    c2_early_reg <= c2_early_next;
    c2_cx_reg <= c2_cx_next;
    k_tagged_reg <= k_tagged_next;
    k_l_reg <= k_l_next;
    k_op_reg <= k_op_next;
    k_stag_reg <= k_stag_next;
    k_msn_reg <= k_msn_next;
    k_msn1_reg <= k_msn1_next;
    k_qn_reg <= k_qn_next;
    k_n_reg <= k_n_next;
    k_hlen_reg <= k_hlen_next;
    k_cerr_reg <= k_cerr_next;
    k_cerr_code_reg <= k_cerr_code_next;
    e_t_inv_reg <= e_t_inv_next;
    e_t_assoc_reg <= e_t_assoc_next;
    e_t_acc_reg <= e_t_acc_next;
    e_t_wrap_reg <= e_t_wrap_next;
    e_t_bounds_reg <= e_t_bounds_next;
    e_dt_reg <= e_dt_next;
    e_u_nobuf_reg <= e_u_nobuf_next;
    e_u_behind_reg <= e_u_behind_next;
    e_u_lorder_reg <= e_u_lorder_next;
    e_u_mo_reg <= e_u_mo_next;
    e_u_long_reg <= e_u_long_next;
    e_du_reg <= e_du_next;
    e_len_reg <= e_len_next;
    e_id_reg <= e_id_next;
    e_i_bad_reg <= e_i_bad_next;
    e_rr_bad_reg <= e_rr_bad_next;
    e_st_reg <= e_st_next;
    if (rst) begin
        c2_valid_reg <= 1'b0;
    end
end

// The last three decisions (0 the newest): {valid, conn, context written,
// popped, popped QN, invalidated, invalidated index}; the oldest needs
// only what fs/fq/fk (below) do not say.
reg                    hs0_valid_reg = 1'b0, hs1_valid_reg = 1'b0, hs1_valid_next, hs0_valid_next;
reg [CONN_W-1:0]       hs0_conn_reg, hs0_conn_next;
reg [CONN_W-1:0]       hs1_conn_reg, hs1_conn_next;
reg [CX_W-1:0]         hs0_cx_reg, hs0_cx_next;
reg [CX_W-1:0]         hs1_cx_reg, hs1_cx_next;
reg [CX_W-1:0]         hs2_cx_reg, hs2_cx_next;
reg                    hs0_pop_reg, hs0_pop_next;
reg                    hs1_pop_reg, hs1_pop_next;
reg                    hs2_pop_reg, hs2_pop_next;
reg [1:0]              hs0_qn_reg, hs0_qn_next;
reg [1:0]              hs1_qn_reg, hs1_qn_next;
reg                    hs0_inv_reg, hs0_inv_next;
reg                    hs1_inv_reg, hs1_inv_next;
reg                    hs2_inv_reg, hs2_inv_next;
reg [STAG_AW-1:0]      hs0_idx_reg, hs0_idx_next;
reg [STAG_AW-1:0]      hs1_idx_reg, hs1_idx_next;

// Which of the last three decisions C2's piece must take in, worked out
// as the pieces move up (so C2 has no comparison of its own to make):
// fs, the decision is of the same connection; fq, and of the same queue;
// fk, it invalidated (if it did) the STag index the piece uses. Bit k is
// for hs<k> as it will be after the next move.
reg  [2:0]             fs_reg = 3'd0, fq_reg = 3'd0, fk_reg = 3'd0, fs_next, fq_next, fk_next;
wire [STAG_AW-1:0]     b_idx = b_stag_reg[8 +: STAG_AW];

// herr_reg's bit for C2's piece, looked up over two clocks as the piece
// moves up (a group of 2^HG bits at C1b, then the bit), with what is set
// meanwhile. (No bit is cleared while a piece is in the pipeline:
// configuration waits for it to empty.) The same for cut_reg (a ULPDU cut
// at D0, ddp_rx_setup): the stream has ended, nothing of it is placed;
// c2_herr_reg is the OR of the two bits.
localparam integer HG = CONN_W < 4 ? CONN_W : 4;
localparam integer NHG = 1 << HG;
localparam integer HG_MASK_I = NHG - 1;
localparam [CONN_W-1:0] HG_MASK = HG_MASK_I[CONN_W-1:0];
reg  [NHG-1:0]         b_hgrp_reg = {NHG{1'b0}}, b_hgrp_next;
reg                    c2_herr_reg = 1'b0, c2_herr_next;

function [NHG-1:0] herr_group(input [NCONN-1:0] h, input [CONN_W-1:0] c);
    herr_group = h[c & ~HG_MASK +: NHG];
endfunction

function herr_bit(input [NHG-1:0] g, input [CONN_W-1:0] c);
    integer i;
    begin
        herr_bit = 1'b0;
        for (i = 0; i < NHG; i = i + 1) begin
            if ((c & HG_MASK) == i[CONN_W-1:0]) begin
                herr_bit = g[i];
            end
        end
    end
endfunction

// The bits of c's group set at this edge.
function [NHG-1:0] herr_group_set(input [CONN_W-1:0] c);
    herr_group_set = ((herr_set && (herr_set_conn >> HG) == (c >> HG))
                      ? ({{(NHG-1){1'b0}}, 1'b1} << (herr_set_conn & HG_MASK)) : {NHG{1'b0}})
                     | ((cut_set && (cut_set_conn >> HG) == (c >> HG))
                        ? ({{(NHG-1){1'b0}}, 1'b1} << (cut_set_conn & HG_MASK)) : {NHG{1'b0}});
endfunction

always @* begin
    b_hgrp_next = b_hgrp_reg;
    c2_herr_next = c2_herr_reg;
    if (c_adv) begin
        b_hgrp_next = herr_group(herr_reg | cut_reg, p1_conn) | herr_group_set(p1_conn);
        c2_herr_next = herr_bit(b_hgrp_reg, b_conn_reg) || (herr_set && herr_set_conn == b_conn_reg)
                       || (cut_set && cut_set_conn == b_conn_reg);
    end else begin
        b_hgrp_next = b_hgrp_reg | herr_group_set(b_conn_reg);
        c2_herr_next = c2_herr_reg || (herr_set && herr_set_conn == c2_conn_reg)
                       || (cut_set && cut_set_conn == c2_conn_reg);
    end
end

always @(posedge clk) begin
    b_hgrp_reg <= b_hgrp_next;
    c2_herr_reg <= c2_herr_next;
end

// C2: decision, with the effects of the decisions the tables had not seen.
reg                    f_same0;
reg                    f_same1;
reg                    f_same2;
reg [CX_W-1:0]         f_cx;
reg [1:0]              f_pops;
reg                    f_killed;
assign k_idx = k_stag_reg[8 +: STAG_AW];
reg                    t_inv;
reg                    i_bad;
reg                    u_nobuf;
reg                    u_behind;
reg                    u_lorder;

always @* begin
    {f_same2, f_same1, f_same0} = fs_reg;
    f_cx = f_same0 ? hs0_cx_reg : f_same1 ? hs1_cx_reg : f_same2 ? hs2_cx_reg : c2_cx_reg;
    f_pops = {1'b0, fq_reg[0] && hs0_pop_reg} + {1'b0, fq_reg[1] && hs1_pop_reg}
           + {1'b0, fq_reg[2] && hs2_pop_reg};
    f_killed = (fk_reg[0] && hs0_inv_reg) || (fk_reg[1] && hs1_inv_reg) || (fk_reg[2] && hs2_inv_reg);
    t_inv = e_t_inv_reg || f_killed;
    i_bad = e_i_bad_reg || f_killed;
    u_nobuf = e_u_nobuf_reg[f_pops];
    u_behind = e_u_behind_reg[f_pops];
    u_lorder = e_u_lorder_reg[f_pops];
end

// Queue state after popping the head (a delivered untagged message): a
// pop is of the oldest MSN (the checks allow no other), so the new head is
// the message's MSN + 1 (msn1, worked out at C1), and C2 needs no sum.
function [Q_W-1:0] q_pop(input [RQ_AW:0] cnt, input [31:0] msn1);
    q_pop = {msn1, cnt - 1'b1};
endfunction

reg [1:0]              r_kind;
reg [15:0]             r_err;
reg                    r_place;
reg                    r_pop;
reg [ADDR_W-1:0]       r_dest;
reg [RECC_W-1:0]       r_rec;
reg                    c_fail;

always @* begin
    c_en = c2_cx_reg[CX_EN];
    c_fail = f_cx[CX_FAIL];
    r_kind = K_NONE;
    r_err = 16'd0;
    r_place = 1'b0;
    r_pop = 1'b0;
    r_inval = 1'b0;
    r_dest = e_du_reg;
    if (c_fail || !c_en || c2_herr_reg) begin
        r_kind = K_NONE;            // the stream has failed: dropped
    end else if (k_cerr_reg) begin
        r_kind = K_ERR;
        r_err = k_cerr_code_reg;
    end else if (k_tagged_reg) begin
        r_dest = e_dt_reg;
        if (k_n_reg != 16'd0 && t_inv) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_INVALID_STAG;       // DDP tagged: invalid STag
        end else if (k_n_reg != 16'd0 && e_t_assoc_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_STAG_NOT_ASSOCIATED;       // DDP tagged: STag not associated with stream
        end else if (k_n_reg != 16'd0 && e_t_acc_reg) begin
            r_kind = K_ERR;
            r_err = ERR_RDMAP_ACCESS_RIGHTS;       // RDMAP remote protection: access rights
        end else if (k_n_reg != 16'd0 && e_t_wrap_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_TO_WRAP;       // DDP tagged: TO wrap
        end else if (k_n_reg != 16'd0 && e_t_bounds_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_BASE_BOUNDS;       // DDP tagged: base or bounds
        end else begin
            r_place = k_n_reg != 16'd0;
            r_kind = k_l_reg ? K_CPL : K_NONE;
        end
    end else begin
        if (u_nobuf) begin
            r_kind = K_ERR;
            r_err = u_behind ? ERR_DDP_MSN_RANGE : ERR_DDP_NO_BUFFER;
        end else if (e_u_mo_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_INVALID_MO;       // DDP untagged: invalid MO
        end else if (e_u_long_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_TOO_LONG;       // DDP untagged: message too long
        end else if (u_lorder && !c2_early_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_MSN_RANGE;       // DDP untagged: MSN range
        end else begin
            r_place = k_n_reg != 16'd0;
            r_pop = k_l_reg;
            if (!k_l_reg) begin
                r_kind = K_NONE;
            end else if (k_op_reg == 4'd1 && e_rr_bad_reg) begin
                r_kind = K_ERR;
                r_err = ERR_RDMAP_STREAM_CATASTROPHIC;   // rdmap.DeliveredReadRequest: not one 28-octet segment
            end else if (k_op_reg == 4'd7) begin
                r_kind = K_TERM;
            end else if ((k_op_reg == 4'd4 || k_op_reg == 4'd6) && i_bad) begin
                r_kind = K_ERR;
                r_err = ERR_RDMAP_CANNOT_INVALIDATE;   // RDMAP remote protection: cannot invalidate
            end else begin
                r_kind = K_CPL;
                r_inval = k_op_reg == 4'd4 || k_op_reg == 4'd6;
            end
        end
    end
    if (c2_early_reg) begin
        // Placed early (ddp.Sink.Place): the checks above, but for the
        // last-segment order, decide whether it is placed, and that is
        // all. Nothing is reported, delivered or changed.
        r_kind = K_NONE;
        r_err = 16'd0;
        r_pop = 1'b0;
        r_inval = 1'b0;
    end
    r_cx = {c2_cx_reg[CX_EN], c2_cx_reg[CX_PD +: 32], c_fail || r_kind == K_ERR || r_kind == K_TERM, f_cx[CX_Q0 +: CX_QS_W]};
    if (r_pop) begin
        case (k_qn_reg)
            2'd1: r_cx[CX_Q1 +: Q_W] = q_pop(f_cx[CX_Q1 + Q_CNT +: RQ_AW+1], k_msn1_reg);
            2'd2: r_cx[CX_Q2 +: Q_W] = q_pop(f_cx[CX_Q2 + Q_CNT +: RQ_AW+1], k_msn1_reg);
            default: r_cx[CX_Q0 +: Q_W] = q_pop(f_cx[CX_Q0 + Q_CNT +: RQ_AW+1], k_msn1_reg);
        endcase
    end
    if (k_tagged_reg) begin
        r_rec = {r_kind, k_op_reg, 1'b1, 2'd0, 32'd0, 32'd0, {ID_W{1'b0}}, k_stag_reg, 32'd0, r_err};
    end else begin
        r_rec = {r_kind, k_op_reg, 1'b0, k_qn_reg, k_msn_reg, e_len_reg, e_id_reg, 32'd0,
                 r_inval ? k_stag_reg : 32'd0, r_err};
    end
end

assign c2_go = c_adv && c2_valid_reg;
assign c2_decide = c2_go && c2_first_reg;
assign c2_err = c2_decide && r_kind == K_ERR;
assign c2_err_code = r_err;

always @* begin
    hs2_cx_next = hs2_cx_reg;
    hs2_pop_next = hs2_pop_reg;
    hs2_inv_next = hs2_inv_reg;
    hs1_valid_next = hs1_valid_reg;
    hs1_conn_next = hs1_conn_reg;
    hs1_cx_next = hs1_cx_reg;
    hs1_pop_next = hs1_pop_reg;
    hs1_qn_next = hs1_qn_reg;
    hs1_inv_next = hs1_inv_reg;
    hs1_idx_next = hs1_idx_reg;
    hs0_valid_next = hs0_valid_reg;
    fs_next = fs_reg;
    fq_next = fq_reg;
    fk_next = fk_reg;
    hs0_conn_next = hs0_conn_reg;
    hs0_cx_next = hs0_cx_reg;
    hs0_pop_next = hs0_pop_reg;
    hs0_qn_next = hs0_qn_reg;
    hs0_inv_next = hs0_inv_reg;
    hs0_idx_next = hs0_idx_reg;
    if (c_adv) begin
        hs2_cx_next = hs1_cx_reg;
        hs2_pop_next = hs1_pop_reg;
        hs2_inv_next = hs1_inv_reg;
        hs1_valid_next = hs0_valid_reg;
        hs1_conn_next = hs0_conn_reg;
        hs1_cx_next = hs0_cx_reg;
        hs1_pop_next = hs0_pop_reg;
        hs1_qn_next = hs0_qn_reg;
        hs1_inv_next = hs0_inv_reg;
        hs1_idx_next = hs0_idx_reg;
        hs0_valid_next = c2_valid_reg && c2_first_reg;
        fs_next = {hs1_valid_reg && hs1_conn_reg == b_conn_reg, hs0_valid_reg && hs0_conn_reg == b_conn_reg,
                   c2_valid_reg && c2_first_reg && c2_conn_reg == b_conn_reg};
        fq_next = {hs1_valid_reg && hs1_conn_reg == b_conn_reg && hs1_qn_reg == b_qn_reg,
                   hs0_valid_reg && hs0_conn_reg == b_conn_reg && hs0_qn_reg == b_qn_reg,
                   c2_valid_reg && c2_first_reg && c2_conn_reg == b_conn_reg && k_qn_reg == b_qn_reg};
        fk_next = {hs1_valid_reg && hs1_idx_reg == b_idx, hs0_valid_reg && hs0_idx_reg == b_idx,
                   c2_valid_reg && c2_first_reg && k_idx == b_idx};
        hs0_conn_next = c2_conn_reg;
        hs0_cx_next = r_cx;
        hs0_pop_next = r_pop;
        hs0_qn_next = k_qn_reg;
        hs0_inv_next = r_inval;
        hs0_idx_next = k_idx;
    end
end

always @(posedge clk) begin
    hs2_cx_reg <= hs2_cx_next;
    hs2_pop_reg <= hs2_pop_next;
    hs2_inv_reg <= hs2_inv_next;
    hs1_valid_reg <= hs1_valid_next;
    hs1_conn_reg <= hs1_conn_next;
    hs1_cx_reg <= hs1_cx_next;
    hs1_pop_reg <= hs1_pop_next;
    hs1_qn_reg <= hs1_qn_next;
    hs1_inv_reg <= hs1_inv_next;
    hs1_idx_reg <= hs1_idx_next;
    hs0_valid_reg <= hs0_valid_next;
    fs_reg <= fs_next;
    fq_reg <= fq_next;
    fk_reg <= fk_next;
    hs0_conn_reg <= hs0_conn_next;
    hs0_cx_reg <= hs0_cx_next;
    hs0_pop_reg <= hs0_pop_next;
    hs0_qn_reg <= hs0_qn_next;
    hs0_inv_reg <= hs0_inv_next;
    hs0_idx_reg <= hs0_idx_next;
    if (rst) begin
        hs0_valid_reg <= 1'b0;
        hs1_valid_reg <= 1'b0;
        fs_reg <= 3'd0;
        fq_reg <= 3'd0;
        fk_reg <= 3'd0;
    end
end

// Descriptors to placement.
// The placement set-up of a first piece is worked out here, from the
// registers alone, for both addresses the decision may pick (a tagged
// segment's e_dt or an untagged one's e_du: the one not picked only matters
// when nothing is placed), so that D0 only selects it.
wire [SU_W-1:0]        c2_su_t = pl_setup(e_dt_reg[LG-1:0], k_hlen_reg, k_n_reg);
wire [SU_W-1:0]        c2_su_u = pl_setup(e_du_reg[LG-1:0], k_hlen_reg, k_n_reg);
wire [DC_W-1:0]        dc_in_data = {c2_early_reg, c2_conn_reg, c2_first_reg, c_en, r_place, r_dest, k_hlen_reg, k_n_reg,
                                     r_rec, k_tagged_reg ? c2_su_t : c2_su_u};

ddp_rx_fifo #(.WIDTH(DC_W), .AW(2)) dc_fifo (
    .clk(clk), .rst(rst),
    .in_data(dc_in_data), .in_valid(c2_go), .in_data2(dc_in_data), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused),
    .in_ready(dc_in_ready),
    .out_data(dc_out), .out_valid(dc_out_valid), .out_ready(dc_out_ready)
);

// Not needed here: fifo_ready2_unused, bs_lt, bs_gt, bs_dt, bs_du, bs_mon, bs_long.
wire unused_ok = &{1'b0, fifo_ready2_unused, bs_lt, bs_gt, bs_dt, bs_du, bs_mon, bs_long};
endmodule

`resetall
