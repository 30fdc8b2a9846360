// ddp_rx_place: stage D1 of ddp_rx's placement, with D2 to D4 behind it
// in ddp_rx_retire (instantiated here; hw/rtl/ddp_rx.v has the interface
// and the map of the stages).
//
// D1: one input beat a clock from df_fifo (ddp_rx_intake), rotated to the
// host address (R from D0, ddp_rx_setup); bursts of at most BURST beats,
// aligned to BURST beats, with their AW into aw_fifo and W beats into the
// W queue (ddp_rx_wport); a Read Request's body is captured on the way
// (rr_capture). A piece loaded while D1 is idle whose first input beat
// writes nothing takes that beat with the load (d_prime). D1 ends a piece
// (d_end_w) when D2 takes it (d2_free). D2..D4 (ddp_rx_retire.v): the
// piece's end: a ULPDU's last piece leaves its delivery record (rf_in_*);
// for another, D3 works out where the ULPDU's next piece goes on and D4
// writes it to the placement context (dx_wr_*, by ddp_rx_tables).
//
// Cycle behaviour: one input beat a clock while the write port keeps up;
// a piece that ends its ULPDU needs no extra clock unless its payload
// spills into one more output beat.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_place #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter BQ_AW = 4,
    parameter WR_REQ = 0
) (
    clk,
    rst,
    df_out,
    df_out_valid,
    aw_in_ready,
    w_in_ready,
    w_in_ready2,
    rf_in_ready,
    bq_in_ready,
    d0_valid_reg,
    d0_first_reg,
    d0_en_reg,
    d0_place_reg,
    d0_early_reg,
    d0_conn_reg,
    d0_dest_reg,
    d0_s_reg,
    d0_remain_reg,
    d0_rec_reg,
    d0_rr_reg,
    d0_r_reg,
    d0_win0_reg,
    d0_win1_reg,
    d0_lo_reg,
    d0_hi_reg,
    d0_wz_reg,
    d0_lhne_reg,
    d0_q0_reg,
    d0_q1_reg,
    d0_left_reg,
    d0_waddr_reg,
    d0_bofs_reg,
    d0_wst_reg,
    df_out_ready,
    aw_in_valid,
    aw_in_data,
    w_in_valid,
    w_in_data,
    w2_in_valid,
    w2_in_data,
    w_in_half,
    w2_in_half,
    d_conn_reg,
    d1_active_reg,
    d2_valid_reg,
    d3_valid_reg,
    d4_valid_reg,
    d0_take,
    d_end_w,
    e2_last_reg,
    e2_en_reg,
    e2_early_reg,
    e2_conn_reg,
    e2_rec_reg,
    e2_rr_reg,
    e4_place_reg,
    e4_conn_reg,
    e4_rec_reg,
    e4_rr_reg,
    e4_nxt,
    e4_left
);
reg [CONN_W-1:0] d_conn_next;
reg d1_active_next;

`include "ddp_rx_defs.vh"

// Ports (declared after the localparams of ddp_rx_defs.vh their widths use).
input  wire                        clk;
input  wire                        rst;
input  wire [DF_W-1:0]             df_out;
input  wire                        df_out_valid;
input  wire                        aw_in_ready;
input  wire                        w_in_ready;
input  wire                        w_in_ready2;
input  wire                        rf_in_ready;
input  wire                        bq_in_ready;
input  wire                        d0_valid_reg;
input  wire                        d0_first_reg;
input  wire                        d0_en_reg;
input  wire                        d0_place_reg;
input  wire                        d0_early_reg;
input  wire [CONN_W-1:0]           d0_conn_reg;
input  wire [ADDR_W-1:0]           d0_dest_reg;
input  wire [4:0]                  d0_s_reg;
input  wire [15:0]                 d0_remain_reg;
input  wire [RECC_W-1:0]           d0_rec_reg;
input  wire [223:0]                d0_rr_reg;
input  wire [LG-1:0]               d0_r_reg;
input  wire [KEEP_W-1:0]           d0_win0_reg;
input  wire [KEEP_W-1:0]           d0_win1_reg;
input  wire [KEEP_W-1:0]           d0_lo_reg;
input  wire [KEEP_W-1:0]           d0_hi_reg;
input  wire                        d0_wz_reg;
input  wire                        d0_lhne_reg;
input  wire [19:0]                 d0_q0_reg;
input  wire [19:0]                 d0_q1_reg;
input  wire [17:0]                 d0_left_reg;
input  wire [ADDR_W-1:0]           d0_waddr_reg;
input  wire [BW-1:0]               d0_bofs_reg;
input  wire                        d0_wst_reg;
output wire                        df_out_ready;
output reg                         aw_in_valid;
output reg  [ADDR_W+8-1:0]         aw_in_data;
output reg                         w_in_valid;
output reg  [DATA_W+KEEP_W:0]      w_in_data;
output reg                         w2_in_valid;
output reg  [DATA_W+KEEP_W:0]      w2_in_data;
output wire                        w_in_half;
output wire                        w2_in_half;
output reg  [CONN_W-1:0]           d_conn_reg;
output reg                         d1_active_reg = 1'b0;
output wire                        d2_valid_reg;
output wire                        d3_valid_reg;
output wire                        d4_valid_reg;
output wire                        d0_take;
output wire                        d_end_w;
output wire                        e2_last_reg;
output wire                        e2_en_reg;
output wire                        e2_early_reg;
output wire [CONN_W-1:0]           e2_conn_reg;
output wire [RECC_W-1:0]           e2_rec_reg;
output wire [223:0]                e2_rr_reg;
output wire                        e4_place_reg;
output wire [CONN_W-1:0]           e4_conn_reg;
output wire [RECC_W-1:0]           e4_rec_reg;
output wire [223:0]                e4_rr_reg;
output wire [ADDR_W-1:0]           e4_nxt;
output wire [15:0]                 e4_left;

wire                   d2_free;              // D2 can take a piece end this clock

// D1: the piece being placed. Its control comes from registers only: the
// window masks of the current and the next output beat (advanced a beat
// at a time by the counts q0, q1 to the window's ends), flags of the
// counts of output beats left (left) and of beats left in the open burst
// (bleft), and the block offset of the output beat (bofs).
reg [1:0]              d_state_reg = D_DATA, d_state_next;
reg                    d_first_reg, d_first_next;
reg                    d_en_reg, d_en_next;
reg                    d_place_reg, d_place_next;
reg                    d_last_reg, d_last_next;
reg                    d_early_reg, d_early_next;
reg [ADDR_W-1:0]       d_dest_reg, d_dest_next;
reg [4:0]              d_s_reg, d_s_next;
reg [15:0]             d_remain_reg, d_remain_next;
reg [RECC_W-1:0]       d_rec_reg, d_rec_next;
reg [223:0]            d_rr_reg, d_rr_next;
reg [LG-1:0]           d_r_reg, d_r_next;
reg [KEEP_W-1:0]       d_win_reg, d_win_next;
reg [KEEP_W-1:0]       d_winn_reg, d_winn_next;
reg [KEEP_W-1:0]       d_lo_reg, d_lo_next;
reg [KEEP_W-1:0]       d_hi_reg, d_hi_next;
reg                    d_wne_reg, d_wne_next;    // the masks are not empty
reg                    d_wnen_reg, d_wnen_next;
reg                    d_lhne_reg, d_lhne_next;               // |(d_lo_reg & d_hi_reg)
reg [19:0]             d_q0_reg, d_q0_next;       // window ends minus (output beat + 2)
reg [19:0]             d_q1_reg, d_q1_next;
reg [ADDR_W-1:0]       d_waddr_reg, d_waddr_next;
reg [ADDR_W-LG-1:0]    d_wan_reg, d_wan_next;        // d_waddr_reg / N + 1, kept beside it
reg                    d_wst_reg, d_wst_next;       // the output beat is the window's first (m0) or later
reg [BW-1:0]           d_bofs_reg, d_bofs_next;      // output beat's place in its BURST block
reg [17:0]             d_left_reg, d_left_next;       // output beats to the end of the ULPDU's payload
reg [BW-1:0]           d_bleft_reg = {BW{1'b0}}, d_bleft_next;   // beats left in the open burst (< BURST)
reg [12:0]             d_k_reg, d_k_next;          // input beat index (a piece of 65535 octets: 8192 at W=64)
reg [DATA_W-1:0]       d_prev_reg, d_prev_next;
reg [KEEP_W-1:0]       d_prevk_reg, d_prevk_next;
reg [16:0]             d_octs_reg, d_octs_next;       // octets of the piece

wire [DATA_W-1:0]      d_cur_data = df_out[DF_DATA +: DATA_W];
wire [KEEP_W-1:0]      d_cur_keep = df_out[DF_KEEP +: KEEP_W];
wire                   d_cur_tlast = df_out[DF_TLAST];
wire                   d_cur_ulast = df_out[DF_ULAST];
wire                   out_ok = aw_in_ready && w_in_ready && bq_in_ready;

// Output beat: lanes at or above the rotation from the current beat,
// below it from the previous one, each rotated up by R lanes.
reg [2*DATA_W-1:0]     rot_d_cur;
reg [2*DATA_W-1:0]     rot_d_prev;
reg [2*KEEP_W-1:0]     rot_k_cur;
reg [2*KEEP_W-1:0]     rot_k_prev;
reg [KEEP_W-1:0]       hi_lanes;
reg [DATA_W-1:0]       fl_data;
reg [KEEP_W-1:0]       fl_strb;

// The W beat (w_in_data): the output beat, a ULPDU's flush beat alone
// (wb_fl, d_t_fl's case) or a pad beat. Which lanes come from the current
// beat (uc) and the previous one (up), and which of them write (sc, sp),
// are worked out per lane from registers, so that a data bit is one LUT
// behind the rotations (hw/README.md, "LUT levels").
wire                   wb_data_st = d_state_reg == D_DATA;
wire                   wb_pad = d_state_reg != D_DATA && d_state_reg != D_FLUSH;
wire                   wb_fl = wb_data_st && d_cur_tlast && d_cur_ulast && d_place_reg && !d_wne_reg
                               && !f_left0 && f_bl0 && f_left1;
reg [KEEP_W-1:0]       uc_lanes;
reg [KEEP_W-1:0]       up_lanes;
reg [KEEP_W-1:0]       sc_lanes;
reg [KEEP_W-1:0]       sp_lanes;
reg [DATA_W-1:0]       wb_data;
reg [KEEP_W-1:0]       wb_strb;

always @* begin
    rot_d_cur = {d_cur_data, d_cur_data} << (8 * d_r_reg);
    rot_k_cur = {d_cur_keep, d_cur_keep} << d_r_reg;
    rot_d_prev = {d_prev_reg, d_prev_reg} << (8 * d_r_reg);
    rot_k_prev = {d_prevk_reg, d_prevk_reg} << d_r_reg;
    hi_lanes = lane_window({1'b0, d_r_reg}, KEEP_WI[LG:0]);
    // The flush beat of the current input beat (the next output beat: its
    // lanes below the rotation), for a piece's tlast beat.
    fl_data = rot_d_cur[2*DATA_W-1:DATA_W] & expand(~hi_lanes);
    fl_strb = rot_k_cur[2*KEEP_W-1:KEEP_W] & ~hi_lanes & d_winn_reg & {KEEP_W{d_place_reg}};
    // The W beat, as lanes: the output beat takes the current beat's lanes
    // at or above the rotation (none in a flush beat: it has no current
    // input beat) and the previous one's below it; a flush beat alone the
    // current beat's below it; a pad beat none.
    uc_lanes = wb_pad ? {KEEP_W{1'b0}} : wb_fl ? ~hi_lanes : wb_data_st ? hi_lanes : {KEEP_W{1'b0}};
    up_lanes = (wb_pad || wb_fl) ? {KEEP_W{1'b0}} : ~hi_lanes;
    sc_lanes = uc_lanes & (wb_fl ? d_winn_reg : d_win_reg) & {KEEP_W{d_place_reg}};
    sp_lanes = up_lanes & d_win_reg & {KEEP_W{d_place_reg}};
    wb_data = (rot_d_cur[2*DATA_W-1:DATA_W] & expand(uc_lanes)) | (rot_d_prev[2*DATA_W-1:DATA_W] & expand(up_lanes));
    wb_strb = (rot_k_cur[2*KEEP_W-1:KEEP_W] & sc_lanes) | (rot_k_prev[2*KEEP_W-1:KEEP_W] & sp_lanes);
end

// Octets 18..45 of a first piece from its input beat k.
function [223:0] rr_capture(input [223:0] rr, input [DATA_W-1:0] beat, input [12:0] k);
    integer j;
    begin
        rr_capture = rr;
        for (j = 0; j < 28; j = j + 1) begin
            // (k counts the beats queued: at W=64 beat 0, all header, was not.)
            if ({19'd0, k} == (18 + j) / KEEP_W - DROP0) begin
                rr_capture[8*j +: 8] = beat[8*((18 + j) % KEEP_W) +: 8];
            end
        end
    end
endfunction

// Flags of the counts, from registers. A new burst (at an output beat
// with no burst open) runs to the end of its BURST block or to the end of
// the ULPDU's payload: nbm1 = min(left - 1, BURST - 1 - bofs) beats after
// its first.
// (left - 1 >= BURST - 1 - bofs, the wrapped left - 1 of left = 0
// included, is worked out on left's low BW + 1 bits: any higher bit set
// makes left >= 2 BURST. No carry chain: the flags are a LUT level or two
// from the registers.)
// left = 0, 1, 2 and bleft = 0, 1, 2 are registers of their own, kept
// with the counts.
reg                    f_left0 = 1'b1, f_left1 = 1'b0, f_left2 = 1'b0, f_left0_next, f_left1_next, f_left2_next;
reg                    f_bl0 = 1'b1, f_bl1 = 1'b0, f_bl2 = 1'b0, f_bl0_next, f_bl1_next, f_bl2_next;
wire                   f_left3 = d_left_reg == 18'd3;
wire                   f_left4 = d_left_reg == 18'd4;
wire                   f_bl3 = d_bleft_reg == 3;
wire [BW-1:0]          f_nb = ~d_bofs_reg;                    // BURST - 1 - bofs
wire                   f_bend = d_bofs_reg == {BW{1'b1}};     // last beat of a block
wire                   f_bend1 = d_bofs_reg == {{(BW-1){1'b1}}, 1'b0};
wire [BW:0]            f_llo = d_left_reg[BW:0];
wire [BW:0]            f_llom1 = f_llo - 1'b1;
wire                   f_lge = d_left_reg[17:BW+1] != 0 || f_llo == 0 || f_llom1 >= {1'b0, f_nb};
wire [7:0]             f_nbm1 = f_lge ? {{(8-BW){1'b0}}, f_nb} : {{(8-BW){1'b0}}, f_llom1[BW-1:0]};
wire                   f_nbm1_0 = f_left1 || f_bend;
wire                   f_nbm1_1 = (f_left2 && !f_bend) || (f_bend1 && !f_left0 && !f_left1);
wire                   f_nbm1_2 = f_nbm1 == 8'd2;

// The counters' steps, from their registers alone (rnic_incdec:
// no carry chain), so that the control only picks them.
wire [17:0]            d_leftm1;
wire [16:0]            d_leftm2h;
wire [17:0]            d_leftm2 = {d_leftm2h, d_left_reg[0]};
wire [12:0]            d_k1;
wire [19:0]            d_q0m1;
wire [19:0]            d_q1m1;
wire [ADDR_W-LG-1:0]   d_wan1;
rnic_incdec #(.W(18), .DEC(1)) u_leftm1 (.x(d_left_reg), .y(d_leftm1));
rnic_incdec #(.W(17), .DEC(1)) u_leftm2 (.x(d_left_reg[17:1]), .y(d_leftm2h));
rnic_incdec #(.W(13), .DEC(0)) u_k1 (.x(d_k_reg), .y(d_k1));
rnic_incdec #(.W(20), .DEC(1)) u_q0m1 (.x(d_q0_reg), .y(d_q0m1));
rnic_incdec #(.W(20), .DEC(1)) u_q1m1 (.x(d_q1_reg), .y(d_q1m1));
rnic_incdec #(.W(ADDR_W-LG), .DEC(0)) u_wan1 (.x(d_wan_reg), .y(d_wan1));
// The next output beat's address: waddr + N from the window's first beat
// on (d_wst), before it the first beat's address.
// (d_wan_reg is waddr / N + 1, stepped beside waddr by its own increment.)
wire [ADDR_W-1:0]      d_waddr_n = d_wst_reg ? {d_wan_reg, {LG{1'b0}}} : d_waddr_reg;
wire [ADDR_W-LG-1:0]   d_wan_n = d_wst_reg ? d_wan1 : d_wan_reg;

reg                    d_beat;      // an input beat taken
reg                    d_wr;        // a W beat of the payload's window (and maybe an AW) queued
reg                    d_aw;
reg                    d_go;
reg [1:0]              d_state_step;
reg [223:0]            d_rr_step;
reg [16:0]             d_octs;
reg [LG:0]             d_kc;

assign d0_take = d0_valid_reg && (!d1_active_reg || d_end_w);
// A piece that D1 takes while idle whose first input beat writes nothing
// (its output beat is outside the write window: the payload's first
// output beat needs the next input beat too) takes that beat at the load
// (d_prime): D1 starts as it would be a clock later, after a beat that
// only fills d_prev. Not for a tlast beat, nor behind a piece still in D1
// (its beat at df_out would be that piece's).
wire                   d_prime = d0_valid_reg && !d1_active_reg && df_out_valid && !d_cur_tlast
                                 && d0_wz_reg;
assign df_out_ready = d_beat || d_prime;
// D1's step over that beat, from D0's registers.
wire [19:0]            d0_q0m1;
wire [19:0]            d0_q1m1;
wire [ADDR_W-LG-1:0]   d0_wan;
wire [ADDR_W-LG-2:0]   d0_wan2h;         // (waddr / N + 2) / 2: + 2 is + 1 above bit 0
rnic_incdec #(.W(20), .DEC(1)) u_d0_q0m1 (.x(d0_q0_reg), .y(d0_q0m1));
rnic_incdec #(.W(20), .DEC(1)) u_d0_q1m1 (.x(d0_q1_reg), .y(d0_q1m1));
rnic_incdec #(.W(ADDR_W-LG), .DEC(0)) u_d0_wan (.x(d0_waddr_reg[ADDR_W-1:LG]), .y(d0_wan));
rnic_incdec #(.W(ADDR_W-LG-1), .DEC(0)) u_d0_wan2 (.x(d0_waddr_reg[ADDR_W-1:LG+1]), .y(d0_wan2h));
wire [KEEP_W-1:0]      d0_win2 = win_mask(d0_q0_reg, d0_q1_reg, d0_lo_reg, d0_hi_reg);

// What a data or flush beat would do, from registers alone (the handshakes
// only AND it in): it writes (wrx; a pad beat never does), and then left
// is 0 (lft_n0x), bleft is 0 or 1 (bl_n0x, bl_n1x). A ULPDU's last input
// beat, when taken, ends the piece with nothing more to write (t_end1),
// with a flush beat behind its own in the same clock (t_w2 in the same
// burst; t_w2b as a burst of one behind this beat's, which ends its burst
// at a BURST block's end), or with a flush beat alone (t_fl); otherwise a
// flush beat follows. They are nets of their own, worked out beside the
// handshakes.
wire                   d_wrx = d_place_reg && d_wne_reg;
wire                   d_lft_n0x = d_wrx ? f_left1 : f_left0;
wire                   d_bl_n0x = d_wrx ? (f_bl0 ? f_nbm1_0 : f_bl1) : f_bl0;
wire                   d_bl_n1x = d_wrx ? (f_bl0 ? f_nbm1_1 : f_bl2) : f_bl1;
wire                   d_t_end1;
wire                   d_t_w2;
wire                   d_t_w2b;
wire                   d_t_fl;
assign d_t_end1 = d_cur_ulast && (!d_place_reg || d_lft_n0x);
assign d_t_w2 = d_cur_ulast && !d_t_end1 && d_wrx && w_in_ready2 && d_bl_n1x;
assign d_t_w2b = d_cur_ulast && !d_t_end1 && d_wrx && w_in_ready2 && (f_bl1 || (WR_REQ != 0 && f_bl0 && f_bend));
assign d_t_fl = d_cur_ulast && !d_t_end1 && !d_wrx && f_bl0 && f_left1;

// The piece ends this clock (d_end_w): a ULPDU's last input beat taken
// that leaves no flush beat or queues it now (d_t_end1, d_t_w2, d_t_w2b, d_t_fl,
// below), a piece's flush beat that ends its burst, or its last pad beat.
// One AND of the handshakes and what the state would do, from registers:
// d0_take and the descriptor queue's ready hang on it.
wire                   d_endx = (d_state_reg == D_DATA) ? (df_out_valid && d_cur_tlast && (d_t_end1 || d_t_w2 || d_t_w2b || d_t_fl))
                              : (d_state_reg == D_FLUSH) ? d_bl_n0x : f_bl1;
assign d_end_w = d1_active_reg && out_ok && d2_free && d_endx;

always @* begin
    d_beat = 1'b0;
    d_wr = 1'b0;
    d_aw = 1'b0;
    d_go = 1'b0;
    d_state_step = d_state_reg;
    d_octs = d_octs_reg;
    d_kc = {(LG+1){1'b0}};
    d_rr_step = d_rr_reg;
    aw_in_valid = 1'b0;
    aw_in_data = {d_waddr_reg, f_nbm1};
    w_in_valid = 1'b0;
    w_in_data = {wb_data, wb_strb, wb_pad ? f_bl1 : wb_fl ? 1'b1 : f_bl0 ? f_nbm1_0 : f_bl1};
    w2_in_valid = 1'b0;
    w2_in_data = {fl_data, fl_strb, 1'b1};
    // A piece's end waits for D2 (d2_free): the tlast beat, a flush beat
    // and the last pad beat.
    case (d_state_reg)
        D_DATA: d_go = d1_active_reg && out_ok && df_out_valid && (!d_cur_tlast || d2_free);
        D_FLUSH: d_go = d1_active_reg && out_ok && d2_free;
        default: d_go = d1_active_reg && out_ok && (!f_bl1 || d2_free);
    endcase
    d_beat = d_go && d_state_reg == D_DATA;
    d_wr = d_go && d_state_reg != D_PAD && d_wrx;
    d_aw = d_wr && f_bl0;
    if (d_wr) begin
        w_in_valid = 1'b1;
        aw_in_valid = d_aw;
    end
    if (d_beat && d_first_reg) begin
        d_rr_step = rr_capture(d_rr_reg, d_cur_data, d_k_reg);
    end
    if (d_beat && d_cur_tlast) begin
        // k N + the beat's octets, N of them or fewer (no carry chain)
        d_kc = keep_count(d_cur_keep);
        d_octs = d_kc[LG] ? ({4'd0, d_k1} << LG) : (({4'd0, d_k_reg} << LG) | {{(17-LG){1'b0}}, d_kc[LG-1:0]});
    end
    case (d_state_reg)
    D_DATA: begin
        if (d_beat && d_cur_tlast) begin
            // A flush beat follows when the last input beat leaves
            // octets of the payload for the next output beat: always for a
            // piece that does not end its ULPDU, otherwise when output
            // beats of the payload are left. For a ULPDU's last piece it
            // goes into the W queue in this clock, behind this beat's,
            // when it ends the burst this beat's is in, or as a burst of
            // one of its own when this beat's burst ends before it (at a
            // BURST block's end); or alone, as a burst of one, when this
            // beat writes nothing.
            if (d_t_w2) begin
                w2_in_valid = 1'b1;
            end else if (d_t_w2b) begin
                // (With the write-request stream it goes as a continuation
                // of this beat, without an AW (reqport), also when this
                // beat is a burst of one at a block's end.)
                w2_in_valid = 1'b1;
                if (WR_REQ == 0) begin
                    aw_in_valid = 1'b1;
                    aw_in_data = {d_waddr_n, 8'd0};
                end
            end else if (d_t_fl) begin
                w_in_valid = 1'b1;            // (w_in_data: the flush beat)
                aw_in_valid = 1'b1;
                aw_in_data = {d_waddr_n, 8'd0};
            end else if (!d_t_end1) begin
                d_state_step = D_FLUSH;
            end
        end
    end
    D_FLUSH: begin
        if (d_go && !d_bl_n0x) begin
            d_state_step = D_PAD;
        end
    end
    default: begin
        // The piece ended inside a burst: the rest of it, no strobes.
        if (d_go) begin
            w_in_valid = 1'b1;                // (w_in_data: a pad beat)
        end
    end
    endcase
    if (d_end_w) begin
        d_state_step = D_DATA;
    end
end

assign w_in_half = wb_fl ? d_waddr_n[LG] : d_waddr_reg[LG];
assign w2_in_half = d_waddr_n[LG];

// Output beats (W beats pushed, from the data path: not the pad beats).
wire [1:0]             d_nw = {1'b0, d_wr} + {1'b0, w2_in_valid}
                             + {1'b0, !d_wr && w_in_valid && d_state_reg == D_DATA};

always @* begin
    d1_active_next = d1_active_reg;
    d_state_next = d_state_reg;
    d_conn_next = d_conn_reg;
    d_first_next = d_first_reg;
    d_early_next = d_early_reg;
    d_en_next = d_en_reg;
    d_place_next = d_place_reg;
    d_dest_next = d_dest_reg;
    d_s_next = d_s_reg;
    d_remain_next = d_remain_reg;
    d_rec_next = d_rec_reg;
    d_r_next = d_r_reg;
    d_lo_next = d_lo_reg;
    d_hi_next = d_hi_reg;
    d_lhne_next = d_lhne_reg;
    d_rr_next = d_rr_reg;
    d_win_next = d_win_reg;
    d_winn_next = d_winn_reg;
    d_wne_next = d_wne_reg;
    d_wnen_next = d_wnen_reg;
    d_q0_next = d_q0_reg;
    d_q1_next = d_q1_reg;
    d_waddr_next = d_waddr_reg;
    d_wan_next = d_wan_reg;
    d_bofs_next = d_bofs_reg;
    d_wst_next = d_wst_reg;
    d_left_next = d_left_reg;
    f_left0_next = f_left0;
    f_left1_next = f_left1;
    f_left2_next = f_left2;
    d_bleft_next = d_bleft_reg;
    f_bl0_next = f_bl0;
    f_bl1_next = f_bl1;
    f_bl2_next = f_bl2;
    d_k_next = d_k_reg;
    d_prev_next = d_prev_reg;
    d_prevk_next = d_prevk_reg;
    d_last_next = d_last_reg;
    d_octs_next = d_octs_reg;
    if (d0_take) begin
        d1_active_next = 1'b1;
        d_state_next = D_DATA;
        d_conn_next = d0_conn_reg;
        d_first_next = d0_first_reg;
        d_early_next = d0_early_reg;
        d_en_next = d0_en_reg;
        d_place_next = d0_place_reg;
        d_dest_next = d0_dest_reg;
        d_s_next = d0_s_reg;
        d_remain_next = d0_remain_reg;
        d_rec_next = d0_rec_reg;
        d_r_next = d0_r_reg;
        d_lo_next = d0_lo_reg;
        d_hi_next = d0_hi_reg;
        d_lhne_next = d0_lhne_reg;
        if (d_prime) begin
            // (as a D1 beat that writes nothing: see there)
            d_rr_next = d0_first_reg ? rr_capture(d0_rr_reg, d_cur_data, 13'd0) : d0_rr_reg;
            d_win_next = d0_win1_reg;
            d_winn_next = d0_win2;
            d_wne_next = |d0_win1_reg;
            d_wnen_next = win_ne(d0_q0_reg, d0_q1_reg, d0_lhne_reg);
            d_q0_next = d0_q0m1;
            d_q1_next = d0_q1m1;
            d_waddr_next = d0_wst_reg ? {d0_wan, {LG{1'b0}}} : d0_waddr_reg;
            d_wan_next = d0_wst_reg ? {d0_wan2h, d0_waddr_reg[LG]} : d0_wan;
            d_bofs_next = d0_bofs_reg + 1'b1;
            d_wst_next = d0_q0_reg[19];
        end else begin
            d_rr_next = d0_rr_reg;
            d_win_next = d0_win0_reg;
            d_winn_next = d0_win1_reg;
            d_wne_next = |d0_win0_reg;
            d_wnen_next = |d0_win1_reg;
            d_q0_next = d0_q0_reg;
            d_q1_next = d0_q1_reg;
            d_waddr_next = d0_waddr_reg;
            d_wan_next = d0_wan;
            d_bofs_next = d0_bofs_reg;
            d_wst_next = d0_wst_reg;
        end
        d_left_next = d0_left_reg;
        f_left0_next = d0_left_reg == 18'd0;
        f_left1_next = d0_left_reg == 18'd1;
        f_left2_next = d0_left_reg == 18'd2;
        d_bleft_next = {BW{1'b0}};
        {f_bl0_next, f_bl1_next, f_bl2_next} = 3'b100;
        d_k_next = d_prime ? 13'd1 : 13'd0;
        d_prev_next = d_prime ? d_cur_data : {DATA_W{1'b0}};
        d_prevk_next = d_prime ? d_cur_keep : {KEEP_W{1'b0}};
    end else begin
        if (d_end_w) begin
            d1_active_next = 1'b0;
        end
        d_state_next = d_state_step;
        d_rr_next = d_rr_step;
        if (d_go) begin
            if (d_state_reg == D_PAD || (d_wr && !d_aw)) begin
                d_bleft_next = d_bleft_reg - 1'b1;
                {f_bl0_next, f_bl1_next, f_bl2_next} = {f_bl1, f_bl2, f_bl3};
            end else if (d_wr) begin
                d_bleft_next = f_nbm1[BW-1:0];
                {f_bl0_next, f_bl1_next, f_bl2_next} = {f_nbm1_0, f_nbm1_1, f_nbm1_2};
            end
        end
        // left - d_nw: both differences worked out from the register, one
        // picked by d_nw.
        if (d_nw == 2'd1) begin
            d_left_next = d_leftm1;
            {f_left0_next, f_left1_next, f_left2_next} = {f_left1, f_left2, f_left3};
        end else if (d_nw == 2'd2) begin
            d_left_next = d_leftm2;
            {f_left0_next, f_left1_next, f_left2_next} = {f_left2, f_left3, f_left4};
        end
        if (d_beat) begin
            d_prev_next = d_cur_data;
            d_prevk_next = d_cur_keep;
            d_k_next = d_k1;
            d_waddr_next = d_waddr_n;
            d_wan_next = d_wan_n;
            d_wst_next = d_q0_reg[19];
            d_bofs_next = d_bofs_reg + 1'b1;
            d_win_next = d_winn_reg;
            d_wne_next = d_wnen_reg;
            d_winn_next = win_mask(d_q0_reg, d_q1_reg, d_lo_reg, d_hi_reg);
            d_wnen_next = win_ne(d_q0_reg, d_q1_reg, d_lhne_reg);
            d_q0_next = d_q0m1;
            d_q1_next = d_q1m1;
        end
    end
    if (d_beat && d_cur_tlast) begin
        d_last_next = d_cur_ulast;
        d_octs_next = d_octs;
    end
end

always @(posedge clk) begin
    d1_active_reg <= d1_active_next;
    d_state_reg <= d_state_next;
    d_conn_reg <= d_conn_next;
    d_first_reg <= d_first_next;
    d_early_reg <= d_early_next;
    d_en_reg <= d_en_next;
    d_place_reg <= d_place_next;
    d_dest_reg <= d_dest_next;
    d_s_reg <= d_s_next;
    d_remain_reg <= d_remain_next;
    d_rec_reg <= d_rec_next;
    d_r_reg <= d_r_next;
    d_lo_reg <= d_lo_next;
    d_hi_reg <= d_hi_next;
    d_lhne_reg <= d_lhne_next;
    d_rr_reg <= d_rr_next;
    d_win_reg <= d_win_next;
    d_winn_reg <= d_winn_next;
    d_wne_reg <= d_wne_next;
    d_wnen_reg <= d_wnen_next;
    d_q0_reg <= d_q0_next;
    d_q1_reg <= d_q1_next;
    d_waddr_reg <= d_waddr_next;
    d_wan_reg <= d_wan_next;
    d_bofs_reg <= d_bofs_next;
    d_wst_reg <= d_wst_next;
    d_left_reg <= d_left_next;
    f_left0 <= f_left0_next;
    f_left1 <= f_left1_next;
    f_left2 <= f_left2_next;
    d_bleft_reg <= d_bleft_next;
    f_bl0 <= f_bl0_next;
    f_bl1 <= f_bl1_next;
    f_bl2 <= f_bl2_next;
    d_k_reg <= d_k_next;
    d_prev_reg <= d_prev_next;
    d_prevk_reg <= d_prevk_next;
    d_last_reg <= d_last_next;
    d_octs_reg <= d_octs_next;
    if (rst) begin
        d1_active_reg <= 1'b0;
        d_state_reg <= D_DATA;
        d_bleft_reg <= {BW{1'b0}};
        {f_bl0, f_bl1, f_bl2} <= 3'b100;
    end
end

// D2..D4, the piece's end: ddp_rx_retire.v.
wire                   d_end_last = (d_state_reg == D_DATA) ? d_cur_ulast : d_last_reg;
ddp_rx_retire #(.DATA_W(DATA_W), .CONN_W(CONN_W), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W), .ID_W(ID_W), .BURST(BURST), .BQ_AW(BQ_AW)) u_retire (
    .clk(clk), .rst(rst), .rf_in_ready(rf_in_ready), .d_end_w(d_end_w), .d_end_last(d_end_last),
    .d_en_reg(d_en_reg), .d_early_reg(d_early_reg), .d_place_reg(d_place_reg), .d_conn_reg(d_conn_reg),
    .d_dest_reg(d_dest_reg), .d_s_reg(d_s_reg), .d_octs(d_octs), .d_remain_reg(d_remain_reg), .d_rec_reg(d_rec_reg),
    .d_rr_step(d_rr_step), .d2_free(d2_free), .d2_valid_reg(d2_valid_reg), .d3_valid_reg(d3_valid_reg),
    .d4_valid_reg(d4_valid_reg), .e2_last_reg(e2_last_reg), .e2_en_reg(e2_en_reg), .e2_early_reg(e2_early_reg),
    .e2_conn_reg(e2_conn_reg), .e2_rec_reg(e2_rec_reg), .e2_rr_reg(e2_rr_reg), .e4_place_reg(e4_place_reg),
    .e4_conn_reg(e4_conn_reg), .e4_rec_reg(e4_rec_reg), .e4_rr_reg(e4_rr_reg), .e4_nxt(e4_nxt), .e4_left(e4_left)
);

// Not needed here: rot_d_cur[DATA_W-1:0], rot_d_prev[DATA_W-1:0], rot_k_cur[KEEP_W-1:0], rot_k_prev[KEEP_W-1:0].
wire unused_ok = &{1'b0, rot_d_cur[DATA_W-1:0], rot_d_prev[DATA_W-1:0], rot_k_cur[KEEP_W-1:0], rot_k_prev[KEEP_W-1:0]};
endmodule

`resetall
