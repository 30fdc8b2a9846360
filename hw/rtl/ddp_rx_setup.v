// ddp_rx_setup: stage D0 of ddp_rx's placement, a piece's set-up
// (hw/rtl/ddp_rx.v has the interface and the map of the stages).
//
// Takes a placement descriptor from dc_fifo (ddp_rx_decide) and sets the
// piece's placement up: its rotation R = (dest - S) mod N, first write
// address, and the window of output lanes it writes (q0/q1 flags, lo/hi
// lanes), from the sums pl_setup made ahead. A first piece's set-up comes
// with its descriptor; a piece that continues a ULPDU waits until
// placement is empty (pl_empty), reads where the ULPDU's last piece ended
// from the placement context (dx_rd_*, one clock: g_fetch) and works the
// same sums out (one clock: g_fetch2).
//
// A continuing piece of a tagged ULPDU whose STag entry was written (s_stag)
// since its first piece is cut (STag generations, below): it places
// nothing, its record becomes Invalid STag (1/1/0), and cut_reg stops its
// connection (to ddp_rx_decide, and here for first pieces C2 passed
// already) until s_conn.
//
// Cycle behaviour: D0 loads a first piece the clock it is at dc_fifo's
// head when D0 is free, or as D1 takes D0 (d0_take, d_end_w from
// ddp_rx_place); a continuing piece costs the fetch clocks and the drain
// (the cut's compare is in g_fetch2: no clock more).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_setup #(
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
    cf_conn,
    s_conn_conn,
    cf_stag,
    s_stag_index,
    dx_rd_data,
    dc_out,
    dc_out_valid,
    d1_active_reg,
    d2_valid_reg,
    d3_valid_reg,
    d4_valid_reg,
    d0_take,
    d_end_w,
    dx_rd_en,
    dx_rd_addr,
    dc_out_ready,
    d0_valid_reg,
    pl_empty,
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
    cut_reg,
    cut_set,
    cut_set_conn
);
reg [17:0] d0_left_next;
reg d0_wst_next;
reg [BW-1:0] d0_bofs_next;
reg [ADDR_W-1:0] d0_waddr_next;
reg [KEEP_W-1:0] d0_hi_next;
reg [KEEP_W-1:0] d0_lo_next;
reg [19:0] d0_q1_next;
reg [19:0] d0_q0_next;
reg d0_lhne_next;
reg d0_wz_next;
reg [KEEP_W-1:0] d0_win1_next;
reg [KEEP_W-1:0] d0_win0_next;
reg [LG-1:0] d0_r_next;
reg [223:0] d0_rr_next;
reg [RECC_W-1:0] d0_rec_next;
reg [15:0] d0_remain_next;
reg [4:0] d0_s_next;
reg [ADDR_W-1:0] d0_dest_next;
reg [CONN_W-1:0] d0_conn_next;
reg d0_en_next;
reg d0_early_next;
reg d0_first_next;
reg d0_valid_next;
reg [NCONN-1:0] cut_next;
reg [CONN_W-1:0] cut_set_conn_next;
reg cut_set_next;

`include "ddp_rx_defs.vh"

// Ports (declared after the localparams of ddp_rx_defs.vh their widths use).
input  wire                        clk;
input  wire                        rst;
input  wire [NCONN-1:0]            herr_reg;
input  wire                        herr_set;
input  wire [CONN_W-1:0]           herr_set_conn;
input  wire                        cf_conn;
input  wire [CONN_W-1:0]           s_conn_conn;
input  wire                        cf_stag;
input  wire [STAG_AW-1:0]          s_stag_index;
input  wire [DX_W-1:0]             dx_rd_data;
input  wire [DC_W-1:0]             dc_out;
input  wire                        dc_out_valid;
input  wire                        d1_active_reg;
input  wire                        d2_valid_reg;
input  wire                        d3_valid_reg;
input  wire                        d4_valid_reg;
input  wire                        d0_take;
input  wire                        d_end_w;
output reg                         dx_rd_en;
output reg  [CONN_W-1:0]           dx_rd_addr;
output wire                        dc_out_ready;
output reg                         d0_valid_reg = 1'b0;
output wire                        pl_empty;
output reg                         d0_first_reg;
output reg                         d0_en_reg;
output wire                        d0_place_reg;
output reg                         d0_early_reg;
output reg  [CONN_W-1:0]           d0_conn_reg;
output reg  [ADDR_W-1:0]           d0_dest_reg;
output reg  [4:0]                  d0_s_reg;
output reg  [15:0]                 d0_remain_reg;
output reg  [RECC_W-1:0]           d0_rec_reg;
output reg  [223:0]                d0_rr_reg;
output reg  [LG-1:0]               d0_r_reg;
output reg  [KEEP_W-1:0]           d0_win0_reg;
output reg  [KEEP_W-1:0]           d0_win1_reg;
output reg  [KEEP_W-1:0]           d0_lo_reg;
output reg  [KEEP_W-1:0]           d0_hi_reg;
output reg                         d0_wz_reg;
output reg                         d0_lhne_reg;
output reg  [19:0]                 d0_q0_reg;
output reg  [19:0]                 d0_q1_reg;
output reg  [17:0]                 d0_left_reg;
output reg  [ADDR_W-1:0]           d0_waddr_reg;
output reg  [BW-1:0]               d0_bofs_reg;
output reg                         d0_wst_reg;
output reg  [NCONN-1:0]            cut_reg = {NCONN{1'b0}};
output reg                         cut_set = 1'b0;
output reg  [CONN_W-1:0]           cut_set_conn;

// --- placement: D0 (set-up), D1 (one input beat a clock), D2 (piece end) ----

// A descriptor's fields.
wire                   g_early = dc_out[DC_EARLY];
wire [CONN_W-1:0]      g_conn = dc_out[DC_CONN +: CONN_W];
wire                   g_first = dc_out[DC_FIRST];
wire                   g_en = dc_out[DC_EN];
wire                   g_dplace = dc_out[DC_PLACE];
wire [ADDR_W-1:0]      g_ddest = dc_out[DC_DEST +: ADDR_W];
wire [4:0]             g_ds = dc_out[DC_S +: 5];
wire [15:0]            g_dremain = dc_out[DC_REMAIN +: 16];
wire [RECC_W-1:0]      g_drec = dc_out[DC_REC +: RECC_W];
wire [SU_W-1:0]        g_dsu = dc_out[DC_SU +: SU_W];

// A later piece waits for placement to be empty, then reads where its
// ULPDU's last piece ended (g_fetch, one clock) and works out its set-up
// from that (g_fetch2, one clock).
reg                    g_fetch_reg = 1'b0, g_fetch_next;
reg                    g_fetch2_reg = 1'b0, g_fetch2_next;
reg [CONN_W-1:0]       g_fconn_reg, g_fconn_next;
reg                    g_fen_reg, g_fen_next;
reg                    gx_place_reg, gx_place_next;
reg                    gx_hlk_reg, gx_hlk_next;       // herr_reg[g_fconn_reg] at the fetch
wire                   gx_hlk;
rnic_pick #(.AW(CONN_W)) u_gx_hlk (.v(herr_reg), .a(g_fconn_reg), .y(gx_hlk));
reg [ADDR_W-1:0]       gx_dest_reg, gx_dest_next;
reg [15:0]             gx_remain_reg, gx_remain_next;
reg [RECC_W-1:0]       gx_rec_reg, gx_rec_next;
reg [223:0]            gx_rr_reg, gx_rr_next;
reg [SU_W-1:0]         gx_su_reg, gx_su_next;
reg                    gx_tag_reg, gx_tag_next;       // the ULPDU is tagged
reg [GEN_W-1:0]        gx_gen_reg, gx_gen_next;       // its STag entry's generation at its first piece

// STag generations: the cut of a ULPDU between its pieces (RFC 5041 7.1,
// 8.1, draft-ietf-rddp-ddp-07 in /work/shared/spec: a tagged segment's
// STag is validated before anything is placed through it; an entry
// invalidated or overwritten after a ULPDU's first piece passed its checks
// is not the one its later pieces were validated against). sg_gen_reg counts the s_stag writes; stgen_ram
// keeps, for each STag index, the count at its last write. The count of
// a tagged ULPDU's entry is read as its first piece is loaded into D0 and
// kept for its connection in tgen_ram (written the clock after); a later
// piece reads it with the placement context (g_fetch), then its entry's
// count now (stgen_ram at the STag index of the context's record, in the
// g_fetch clock), and compares the two in g_fetch2: a difference is a
// write of the entry since the first piece (the s_stag handshake waits
// for an empty pipeline, so it is always between two pieces). The cut
// piece places nothing and its record becomes Invalid STag (1/1/0),
// which V0 delivers as any error (the stream ends there); cut_reg marks
// the connection (a clock later: cut_set), so that none of its later
// ULPDUs places (those C2 passed already, at D0: d0_cut_reg, the bit
// looked up as the piece loads, or d0_cutf_reg, cut_set that clock; the
// others fail at C2, with herr_reg) until s_conn restarts it. Not seen: 2^GEN_W s_stag writes between two pieces
// of one ULPDU. (A Send with Invalidate's invalidation, at C2, does not
// count: a ULPDU of another connection finishes through it, ddp_rx.v.)
reg [GEN_W-1:0]        sg_gen_reg = {GEN_W{1'b0}}, sg_gen_next;
wire [GEN_W-1:0]       sg_rd_data;
wire [GEN_W-1:0]       tg_rd_data;
reg                    tg_wr_reg = 1'b0, tg_wr_next;
reg [CONN_W-1:0]       tg_conn_reg, tg_conn_next;
wire [STAG_AW-1:0]     sg_rd_addr = g_fetch_reg ? dx_rd_data[DX_REC + REC_STAG + 8 +: STAG_AW]
                                                : g_drec[REC_STAG + 8 +: STAG_AW];
wire                   g_cut = gx_place_reg && !gx_hlk_reg && gx_tag_reg && sg_rd_data != gx_gen_reg;
wire                   g_cutlk;          // cut_reg[g_conn]: a first piece's connection was cut
reg                    d0_cut_reg, d0_cut_next;       // g_cutlk as D0 loaded (for a first piece)
reg                    d0_cutf_reg, d0_cutf_next;      // the same from cut_set (cut_reg's bit set at that edge)
reg                    d0_place_q, d0_place_q_next;       // D0's place bit, for a first piece before the cut's mask

sdp_ram #(.WIDTH(GEN_W), .ADDR_W(STAG_AW)) stgen_ram (
    .clk(clk),
    .wr_en(cf_stag), .wr_addr(s_stag_index), .wr_data(sg_gen_reg),
    .rd_en(1'b1), .rd_addr(sg_rd_addr), .rd_data(sg_rd_data)
);

sdp_ram #(.WIDTH(GEN_W), .ADDR_W(CONN_W)) tgen_ram (
    .clk(clk),
    .wr_en(tg_wr_reg), .wr_addr(tg_conn_reg), .wr_data(sg_rd_data),
    .rd_en(dx_rd_en), .rd_addr(dx_rd_addr), .rd_data(tg_rd_data)
);

rnic_pick #(.AW(CONN_W)) u_g_cutlk (.v(cut_reg), .a(g_conn), .y(g_cutlk));

// A first piece's cut bit masks its place bit as D1 takes it (registered
// here: the 1024-bit pick and a mask after it would be a LUT level more).
assign d0_place_reg = d0_place_q && !(d0_first_reg && (d0_cut_reg || d0_cutf_reg));

always @* begin
    sg_gen_next = sg_gen_reg;
    tg_wr_next = tg_wr_reg;
    tg_conn_next = tg_conn_reg;
    cut_set_next = cut_set;
    cut_set_conn_next = cut_set_conn;
    cut_next = cut_reg;
    if (cf_stag) begin
        sg_gen_next = sg_gen_reg + 1'b1;
    end
    tg_wr_next = !g_fetch2_reg && dc_out_ready && g_first && !g_early;
    tg_conn_next = g_conn;
    cut_set_next = g_fetch2_reg && g_cut;
    cut_set_conn_next = g_fconn_reg;
    if (cut_set) begin
        cut_next[cut_set_conn] = 1'b1;
    end
    if (cf_conn) begin
        cut_next[s_conn_conn] = 1'b0;
    end
end

always @(posedge clk) begin
    sg_gen_reg <= sg_gen_next;
    tg_wr_reg <= tg_wr_next;
    tg_conn_reg <= tg_conn_next;
    cut_set <= cut_set_next;
    cut_set_conn <= cut_set_conn_next;
    cut_reg <= cut_next;
    if (rst) begin
        sg_gen_reg <= {GEN_W{1'b0}};
        tg_wr_reg <= 1'b0;
        cut_set <= 1'b0;
        cut_reg <= {NCONN{1'b0}};
    end
end

assign pl_empty = !d0_valid_reg && !d1_active_reg && !d2_valid_reg && !d3_valid_reg && !d4_valid_reg
                                  && !g_fetch_reg && !g_fetch2_reg;

reg                    g_load;               // D0 loads this clock
reg                    g_pfirst;
reg                    g_pen;
reg                    g_place;
reg                    g_pearly;
reg [CONN_W-1:0]       g_pconn;
reg [ADDR_W-1:0]       g_dest;
reg [4:0]              g_s;
reg [15:0]             g_remain;
reg [RECC_W-1:0]       g_rec;
reg [223:0]            g_rr;
reg [SU_W-1:0]         g_su;

// (d0_take = d0_valid && (!d1_active || d_end_w), spelled out so that
// d_end_w, the deepest of the terms, comes in last.)
wire                   dc_rdy_a = dc_out_valid && !g_fetch_reg && !g_fetch2_reg
                                  && (g_first ? (!d0_valid_reg || !d1_active_reg) : pl_empty);
wire                   dc_rdy_b = dc_out_valid && !g_fetch_reg && !g_fetch2_reg && g_first;
assign dc_out_ready = dc_rdy_a || (dc_rdy_b && d_end_w);

always @* begin
    g_load = 1'b0;
    g_pconn = g_conn;
    g_pfirst = g_first;
    g_pearly = g_early;
    g_pen = g_en;
    g_place = g_dplace;
    g_dest = g_ddest;
    g_s = g_ds;
    g_remain = g_dremain;
    g_rec = g_drec;
    g_rr = 224'd0;
    g_su = g_dsu;
    dx_rd_en = 1'b0;
    dx_rd_addr = g_conn;
    if (g_fetch2_reg) begin
        // A later piece: carry on where the last piece ended (and stop if
        // a B error response of the stream comes in meanwhile, or at the
        // cut: its STag entry was written since the first piece).
        g_load = 1'b1;
        g_pconn = g_fconn_reg;
        g_pfirst = 1'b0;
        g_pearly = 1'b0;
        g_pen = g_fen_reg;
        g_place = gx_place_reg && !gx_hlk_reg && !(herr_set && herr_set_conn == g_fconn_reg) && !g_cut;
        g_dest = gx_dest_reg;
        g_s = 5'd0;
        g_remain = gx_remain_reg;
        g_rec = gx_rec_reg;
        if (g_cut) begin
            g_rec[REC_KIND_MSB -: 2] = K_ERR;
            g_rec[REC_ERR +: 16] = ERR_DDP_INVALID_STAG;    // DDP tagged: invalid STag
            // The cut's mark, bit 0 of inv_stag (0 in every tagged
            // record else): its error copies no header (ddp_rx's te_own).
            g_rec[REC_CPL] = 1'b1;
        end
        g_rr = gx_rr_reg;
        g_su = gx_su_reg;
    end else if (dc_out_ready && g_first) begin
        g_load = 1'b1;
    end else if (dc_out_ready) begin
        dx_rd_en = 1'b1;
    end
end

// D0: the piece's rotation R = (dest - S) mod N (output beat m holds the
// octets whose g = piece octet + R is in m*N .. m*N + N-1), its write
// window as lane masks of output beats 0 and 1 and the counts to the
// window's first and last beats, the first write address and the output
// beats to the end of the ULPDU's payload. The sums are pl_setup's, made
// ahead (C2 for a first piece, g_fetch for a later one); D0 turns them
// into masks and flags.
reg [LG-1:0]           g_r;
reg [LG-1:0]           g_ylo;
reg [2:0]              g_m0;
reg [BW+2:0]           g_bofs;
reg [17:0]             g_left;
reg [19:0]             g_q1;
reg [19:0]             g_q0;
reg [KEEP_W-1:0]       g_lo;
reg [KEEP_W-1:0]       g_hi;
reg [KEEP_W-1:0]       g_win0;
reg [KEEP_W-1:0]       g_win1;
reg                    g_m0z;
reg                    g_m0p;
reg                    g_m0o;
reg                    g_m0g;
reg                    g_m1z;
reg                    g_m1n;
reg                    g_m1o;
reg                    g_m1l;


always @* begin : setup
    integer b;
    {g_r, g_m0, g_ylo, g_left, g_q1} = g_su;
    for (b = 0; b < KEEP_W; b = b + 1) begin
        g_lo[b] = b >= g_dest[LG-1:0];
        g_hi[b] = b <= g_ylo;
    end
    // Beats 0 and 1 against the window: m0 = 0, > 0, = 1, > 1; m1 = q1 + 2
    // = 0, < 0 (q1 = -3: no payload), = 1, < 1.
    g_m0z = g_m0 == 3'd0;
    g_m0p = g_m0 != 3'd0;
    g_m0o = g_m0 == 3'd1;
    g_m0g = g_m0 > 3'd1;
    g_m1z = g_q1 == 20'hffffe;
    g_m1n = g_q1 == 20'hffffd;
    g_m1o = g_q1 == 20'hfffff;
    g_m1l = g_m1z || g_m1n;
    g_win0 = win_flags(g_m0z, g_m0p, g_m1z, g_m1n, g_lo, g_hi);
    g_win1 = win_flags(g_m0o, g_m0g, g_m1o, g_m1l, g_lo, g_hi);
    g_q0 = {{17{1'b0}}, g_m0} - 20'd2;
    g_bofs = {3'd0, g_dest[LG +: BW]} - {{BW{1'b0}}, g_m0};
end

always @* begin
    g_fetch2_next = g_fetch2_reg;
    g_fetch_next = g_fetch_reg;
    gx_place_next = gx_place_reg;
    gx_dest_next = gx_dest_reg;
    gx_remain_next = gx_remain_reg;
    gx_rec_next = gx_rec_reg;
    gx_rr_next = gx_rr_reg;
    gx_hlk_next = gx_hlk_reg;
    gx_su_next = gx_su_reg;
    gx_tag_next = gx_tag_reg;
    gx_gen_next = gx_gen_reg;
    g_fconn_next = g_fconn_reg;
    g_fen_next = g_fen_reg;
    d0_valid_next = d0_valid_reg;
    d0_first_next = d0_first_reg;
    d0_early_next = d0_early_reg;
    d0_en_next = d0_en_reg;
    d0_place_q_next = d0_place_q;
    d0_cut_next = d0_cut_reg;
    d0_cutf_next = d0_cutf_reg;
    d0_conn_next = d0_conn_reg;
    d0_dest_next = d0_dest_reg;
    d0_s_next = d0_s_reg;
    d0_remain_next = d0_remain_reg;
    d0_rec_next = d0_rec_reg;
    d0_rr_next = d0_rr_reg;
    d0_r_next = d0_r_reg;
    d0_win0_next = d0_win0_reg;
    d0_win1_next = d0_win1_reg;
    d0_wz_next = d0_wz_reg;
    d0_lhne_next = d0_lhne_reg;
    d0_q0_next = d0_q0_reg;
    d0_q1_next = d0_q1_reg;
    d0_lo_next = d0_lo_reg;
    d0_hi_next = d0_hi_reg;
    d0_waddr_next = d0_waddr_reg;
    d0_bofs_next = d0_bofs_reg;
    d0_wst_next = d0_wst_reg;
    d0_left_next = d0_left_reg;
    if (g_fetch2_reg) begin
        g_fetch2_next = 1'b0;
    end
    if (g_fetch_reg) begin
        g_fetch_next = 1'b0;
        g_fetch2_next = 1'b1;
        {gx_place_next, gx_dest_next, gx_remain_next, gx_rec_next, gx_rr_next} = dx_rd_data;
        gx_place_next = dx_rd_data[DX_PLACE] && g_fen_reg && !(herr_set && herr_set_conn == g_fconn_reg);
        gx_hlk_next = gx_hlk;         // (a register's input alone: see V0)
        gx_su_next = pl_setup(dx_rd_data[DX_NXT +: LG], 5'd0, dx_rd_data[DX_REMAIN +: 16]);
        gx_tag_next = dx_rd_data[DX_REC + REC_TAGGED];
        gx_gen_next = tg_rd_data;
    end else if (dc_out_ready && !g_first) begin
        g_fetch_next = 1'b1;
        g_fconn_next = g_conn;
        g_fen_next = g_en;
    end
    if (g_load) begin
        d0_valid_next = 1'b1;
        d0_first_next = g_pfirst;
        d0_early_next = g_pearly;
        d0_en_next = g_pen;
        d0_place_q_next = g_place;
        d0_cut_next = g_cutlk;
        d0_cutf_next = cut_set && cut_set_conn == g_conn;
        d0_conn_next = g_pconn;
        d0_dest_next = g_dest;
        d0_s_next = g_s;
        d0_remain_next = g_remain;
        d0_rec_next = g_rec;
        d0_rr_next = g_rr;
        d0_r_next = g_r;
        d0_win0_next = g_win0;
        d0_win1_next = g_win1;
        // win0 is empty when beat 0 is outside the window, or when the
        // window starts and ends in it and its ends cross (lo_m, the lanes
        // >= dest's, and hi_m, <= ylo, are never empty alone).
        d0_wz_next = g_m0p || g_m1n || (g_m0z && g_m1z && g_dest[LG-1:0] > g_ylo);
        d0_lhne_next = g_dest[LG-1:0] <= g_ylo;
        d0_q0_next = g_q0;
        d0_q1_next = g_q1;
        d0_lo_next = g_lo;
        d0_hi_next = g_hi;
        // The first written output beat, m0, is at dest rounded down to
        // N; output beat k at (dest / N - m0 + k) N. D1 counts the address
        // from m0 on (wst), and its place in the burst block from 0.
        d0_waddr_next = g_dest & {{(ADDR_W-LG){1'b1}}, {LG{1'b0}}};
        d0_bofs_next = g_bofs[BW-1:0];
        d0_wst_next = g_m0 == 3'd0;
        d0_left_next = g_left;
    end else if (d0_take) begin
        d0_valid_next = 1'b0;
    end
end

always @(posedge clk) begin
    g_fetch2_reg <= g_fetch2_next;
    g_fetch_reg <= g_fetch_next;
    gx_place_reg <= gx_place_next;
    gx_dest_reg <= gx_dest_next;
    gx_remain_reg <= gx_remain_next;
    gx_rec_reg <= gx_rec_next;
    gx_rr_reg <= gx_rr_next;
    gx_hlk_reg <= gx_hlk_next;
    gx_su_reg <= gx_su_next;
    gx_tag_reg <= gx_tag_next;
    gx_gen_reg <= gx_gen_next;
    g_fconn_reg <= g_fconn_next;
    g_fen_reg <= g_fen_next;
    d0_valid_reg <= d0_valid_next;
    d0_first_reg <= d0_first_next;
    d0_early_reg <= d0_early_next;
    d0_en_reg <= d0_en_next;
    d0_place_q <= d0_place_q_next;
    d0_cut_reg <= d0_cut_next;
    d0_cutf_reg <= d0_cutf_next;
    d0_conn_reg <= d0_conn_next;
    d0_dest_reg <= d0_dest_next;
    d0_s_reg <= d0_s_next;
    d0_remain_reg <= d0_remain_next;
    d0_rec_reg <= d0_rec_next;
    d0_rr_reg <= d0_rr_next;
    d0_r_reg <= d0_r_next;
    d0_win0_reg <= d0_win0_next;
    d0_win1_reg <= d0_win1_next;
    d0_wz_reg <= d0_wz_next;
    d0_lhne_reg <= d0_lhne_next;
    d0_q0_reg <= d0_q0_next;
    d0_q1_reg <= d0_q1_next;
    d0_lo_reg <= d0_lo_next;
    d0_hi_reg <= d0_hi_next;
    d0_waddr_reg <= d0_waddr_next;
    d0_bofs_reg <= d0_bofs_next;
    d0_wst_reg <= d0_wst_next;
    d0_left_reg <= d0_left_next;
    if (rst) begin
        g_fetch_reg <= 1'b0;
        g_fetch2_reg <= 1'b0;
        d0_valid_reg <= 1'b0;
    end
end

// Not needed here: g_bofs[BW+2:BW].
wire unused_ok = &{1'b0, g_bofs[BW+2:BW]};
endmodule

`resetall
